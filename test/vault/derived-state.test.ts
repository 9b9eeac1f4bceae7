/**
 * Nothing derived lives in a Home: after reads and writes through a real
 * server and through the local `--vault` mode, `git status` in the Home lists
 * exactly the files the actions changed (no index cache, no client-id
 * record, no scheduled state). The journal's old record in the Home is still
 * honoured, and left untouched.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { findAction } from '../../src/actions/registry.js';
import { startServer } from '../../src/server.js';
import { LocalTransport } from '../../src/surfaces/client/local.js';
import { localCacheDir } from '../../src/surfaces/client/user-dirs.js';
import { addUser } from '../../src/surfaces/cli/admin.js';
import { tempDir } from '../helpers/instance.js';

const cleanup: Array<() => unknown> = [];
afterAll(async () => {
  for (const c of cleanup.reverse()) await c();
});

const git = (dir: string, ...args: string[]) =>
  execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.org', '-c', 'init.defaultBranch=main', ...args], { cwd: dir, encoding: 'utf8' });
/** Every path git sees as changed or new, files one by one. */
const gitStatus = (dir: string) =>
  git(dir, 'status', '--porcelain', '--untracked-files=all')
    .split('\n')
    .filter(Boolean)
    .sort();

const LEGACY_BLOCK = 'k1legacy';
function seedRepo(dir: string): void {
  const put = (rel: string, text: string) => {
    fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    fs.writeFileSync(path.join(dir, rel), text);
  };
  put('Notes/Garden.md', '---\nid: garden\ntags: [garden]\n---\n# Garden\n\nSee [[Seeds]].\n');
  put('Notes/Seeds.md', '# Seeds\n\nBack to [[Garden]].\n- [ ] order seeds\n');
  put('Journal/2026-03-01.md', `## Log\n- 08:00 old entry ^${LEGACY_BLOCK}\n`);
  put('.obsidian/app.json', '{}\n');
  // The record an earlier version kept in the Home: a retry of old-op must find its entry.
  put('.quire/journal-client-ids.json', JSON.stringify({ version: 1, records: { 'log:old-op': { kind: 'log', block_id: LEGACY_BLOCK, date: '2026-03-01', at: 1 } } }));
  git(dir, 'init', '-q');
  git(dir, 'add', '-A');
  git(dir, 'commit', '-q', '-m', 'seed');
}

/** The same reads and writes on either surface; returns what the writes changed, as `git status` shows it. */
async function exercise(call: (name: string, input: Record<string, unknown>) => Promise<{ status: number; body: any }>): Promise<string[]> {
  const ok = async (name: string, input: Record<string, unknown> = {}) => {
    const r = await call(name, input);
    expect(r.status, `${name}: ${JSON.stringify(r.body)}`).toBeLessThan(300);
    return r.body;
  };
  // Reads, of every kind that builds or consults something derived.
  await ok('notes_list');
  await ok('get_note', { path: { id: 'garden' } });
  await ok('backlinks', { query: { path: 'Notes/Garden.md' } });
  await ok('notes_search', { query: { q: 'seeds' } });
  await ok('by_tag', { path: { tag: 'garden' } });
  await ok('files_list', { query: { path: '' } });
  await ok('files_read', { query: { path: 'Notes/Seeds.md' } });
  await ok('notes_journal_day', { path: { date: '2026-03-01' } });
  // A retried create whose record is the old file in the Home: no second entry, nothing written.
  const replay = await ok('notes_journal_create_log', { body: { text: 'old entry at 08:00', now: '2026-03-01T09:00', timezone: 'UTC', client_id: 'old-op' } });
  expect(replay).toMatchObject({ block_id: LEGACY_BLOCK, replayed: true });
  // Writes.
  await ok('notes_journal_create_log', { body: { text: 'new entry at 10:00', now: '2026-03-02T10:30', timezone: 'UTC', client_id: 'new-op' } });
  await ok('files_write', { query: { path: 'Attachments/list.txt' }, headers: { 'if-none-match': '*' }, body: { content: 'a list\n' } });
  return ['?? Attachments/list.txt', '?? Journal/2026-03-02.md'];
}

describe('git status after reads and writes', () => {
  it('through a real server lists only what the actions changed', async () => {
    const dataDir = tempDir('quire-derived-');
    cleanup.push(() => fs.rmSync(dataDir, { recursive: true, force: true }));
    let server = await startServer({ dataDir, host: '127.0.0.1', port: 0, log: () => undefined });
    const { user, token } = await addUser(server.services, { username: 'gwen', role: 'owner' });
    const home = path.join(dataDir, 'homes', 'gwen');
    seedRepo(home);
    const http = async (name: string, input: Record<string, any>) => {
      const action = findAction(name)!;
      let route = action.route.replace(/\{(\w+)\}/g, (_, k: string) => encodeURIComponent(input.path?.[k]));
      const query = new URLSearchParams(input.query ?? {}).toString();
      if (query) route += `?${query}`;
      const res = await fetch(server.url + route, {
        method: action.method,
        headers: { authorization: `Bearer ${token}`, ...(input.headers ?? {}), ...(input.body ? { 'content-type': 'application/json' } : {}) },
        body: input.body ? JSON.stringify(input.body) : undefined,
      });
      const text = await res.text();
      return { status: res.status, body: text.startsWith('{') ? JSON.parse(text) : text };
    };
    const expected = await exercise(http);
    // Closing saves the index snapshot and every pending record; a restart reads them back.
    await server.close();
    server = await startServer({ dataDir, host: '127.0.0.1', port: 0, log: () => undefined });
    cleanup.push(() => server.close());
    expect((await http('notes_list', {})).status).toBe(200);
    await server.close();
    expect(gitStatus(home)).toEqual(expected);
    // The derived state is where it belongs.
    expect(fs.existsSync(path.join(dataDir, 'state', 'cache', 'gwen.index.ndjson'))).toBe(true);
    const ids = JSON.parse(fs.readFileSync(path.join(dataDir, 'state', 'journal', `${user.id}.client-ids.json`), 'utf8'));
    expect(Object.keys(ids.records).sort()).toEqual(['log:new-op', 'log:old-op']);
  });

  it('through the local --vault mode lists only what the actions changed, and caches outside the vault', async () => {
    const dir = tempDir('quire-derived-local-');
    const cacheHome = tempDir('quire-derived-cache-');
    cleanup.push(() => fs.rmSync(dir, { recursive: true, force: true }));
    cleanup.push(() => fs.rmSync(cacheHome, { recursive: true, force: true }));
    seedRepo(dir);
    const env = { ...process.env, XDG_CACHE_HOME: cacheHome };
    const open = () => LocalTransport.open(dir, { watch: false, env });
    let t = await open();
    const local = async (name: string, input: Record<string, unknown>) => {
      const out = await t.call(findAction(name)!, input);
      return { status: out.status, body: out.body as any };
    };
    const expected = await exercise(local);
    await t.close();
    // A second run reuses the cache it left outside the vault.
    t = await open();
    expect((await local('notes_list', {})).body.items.map((n: any) => n.path)).toContain('Journal/2026-03-02.md');
    await t.close();
    expect(gitStatus(dir)).toEqual(expected);
    const cache = localCacheDir(dir, env);
    expect(cache.startsWith(path.join(cacheHome, 'quire', 'vaults') + path.sep)).toBe(true);
    expect(fs.readdirSync(cache).sort()).toEqual(expect.arrayContaining(['index.ndjson', 'journal-client-ids.json', 'local-state.json']));
  });
});
