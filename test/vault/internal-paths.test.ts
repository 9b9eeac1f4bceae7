/**
 * Internals are not content: version-control data is never read, listed or
 * written through any action (403 internal_path, decided by the path gate),
 * and `.obsidian/` is readable but never changed by the server nor indexed.
 * A real server on a loopback port; checks of the answers and of the disk.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isIgnoredPath, isVcsSegment } from '../../src/vault/ignore.js';
import { validateRelPath } from '../../src/vault/paths.js';
import { findAction } from '../../src/actions/registry.js';
import { LocalTransport } from '../../src/surfaces/client/local.js';
import { startInstance, tempDir, type TestInstance } from '../helpers/instance.js';

let inst: TestInstance;
let token: string;
let home: string;

const SECRET_REMOTE = '[remote "origin"]\n\turl = https://ghp_SECRETTOKEN@github.com/olivia/notes.git\n';
const write = (rel: string, text: string) => {
  fs.mkdirSync(path.dirname(path.join(home, rel)), { recursive: true });
  fs.writeFileSync(path.join(home, rel), text);
};
const read = (rel: string) => fs.readFileSync(path.join(home, rel), 'utf8');
const api = (method: string, route: string, o: { body?: unknown; headers?: Record<string, string> } = {}) =>
  inst.api(method, route, { token, ...o });
const q = encodeURIComponent;

beforeAll(async () => {
  inst = await startInstance();
  token = (await inst.user('olivia', 'owner')).token;
  home = path.join(inst.dataDir, 'homes', 'olivia');
  write('Notes/Plain.md', '# Plain\n\nA note about gardens.\n');
  write('.git/config', SECRET_REMOTE);
  write('.git/HEAD', 'ref: refs/heads/main\n');
  write('Work/.git/config', SECRET_REMOTE);
  write('.hg/hgrc', '[paths]\ndefault = https://user:hgsecret@example.org/repo\n');
  write('.jj/repo/store/type', 'git\n');
  fs.symlinkSync('../.git/config', path.join(home, 'Notes/leak.txt'));
  fs.symlinkSync('.git', path.join(home, 'repo'));
  write('.obsidian/app.json', '{"attachmentFolderPath":"Attachments"}\n');
  write('.obsidian/plugins/calendar/README.md', '# Calendar plugin\n\nA note about gardens too.\n');
});
afterAll(() => inst.close());

describe('the path gate', () => {
  it.each([
    ['.git', true],
    ['.GIT', true],
    ['.hg', true],
    ['.svn', true],
    ['.bzr', true],
    ['_darcs', true],
    ['.jj', true],
    ['.pijul', true],
    ['_FOSSIL_', true],
    ['.gitignore', false],
    ['.github', false],
    ['git', false],
    ['.obsidian', false],
  ])('%s is version-control data: %s', (seg, expected) => {
    expect(isVcsSegment(seg)).toBe(expected);
  });

  it.each(['.git/config', 'Work/.git/config', '.Git/HEAD', '.hg/hgrc', 'a/_darcs/prefs'])('refuses %s with 403 internal_path', (rel) => {
    expect(() => validateRelPath(rel)).toThrow(expect.objectContaining({ code: 'forbidden', status: 403, details: expect.objectContaining({ reason: 'internal_path' }) }));
  });

  it.each([
    ['.gitignore', false],
    ['.obsidian/app.json', true],
    ['.obsidian/plugins/calendar/README.md', true],
    ['Work/.obsidian/workspace.json', true],
    ['.jj/repo', true],
  ])('%s is ignored (not indexed, counted or listed): %s', (rel, expected) => {
    expect(isIgnoredPath(rel)).toBe(expected);
  });
});

describe('version-control data through the actions', () => {
  it('files_read refuses it, in any case and at any depth, without leaking the bytes', async () => {
    for (const rel of ['.git/config', '.GIT/config', 'Work/.git/config', '.hg/hgrc', '.jj/repo/store/type']) {
      const r = await api('GET', `/api/v1/files/content?path=${q(rel)}`);
      expect(r.status, rel).toBe(403);
      expect(r.body.error.details).toMatchObject({ reason: 'internal_path', path: rel });
      expect(r.text).not.toContain('SECRETTOKEN');
      expect(r.text).not.toContain('hgsecret');
    }
  });

  it('files_read refuses a symbolic link that leads into it', async () => {
    for (const rel of ['Notes/leak.txt', 'repo/config']) {
      const r = await api('GET', `/api/v1/files/content?path=${q(rel)}`);
      expect(r.status, rel).toBe(403);
      expect(r.body.error.details.reason).toBe('internal_path');
      expect(r.text).not.toContain('SECRETTOKEN');
    }
  });

  it('files_list neither shows it nor lists inside it', async () => {
    const root = await api('GET', '/api/v1/files');
    expect(root.status).toBe(200);
    const names = root.body.items.map((e: any) => e.name);
    expect(names).toEqual(expect.arrayContaining(['Notes', 'Work']));
    expect(names).not.toContain('.git');
    expect(names).not.toContain('.hg');
    expect(names).not.toContain('.jj');
    const work = await api('GET', '/api/v1/files?path=Work');
    expect(work.body.items.map((e: any) => e.name)).not.toContain('.git');
    const inside = await api('GET', '/api/v1/files?path=.git');
    expect(inside.status).toBe(403);
    expect(inside.body.error.details.reason).toBe('internal_path');
  });

  it('files_write and files_delete refuse it and leave the disk alone', async () => {
    const put = await api('PUT', `/api/v1/files/content?path=${q('.git/hooks/post-commit')}`, {
      body: { content: '#!/bin/sh\ncurl evil\n' },
      headers: { 'if-none-match': '*' },
    });
    expect(put.status).toBe(403);
    expect(put.body.error.details.reason).toBe('internal_path');
    expect(fs.existsSync(path.join(home, '.git/hooks/post-commit'))).toBe(false);
    const del = await api('DELETE', `/api/v1/files/content?path=${q('.git/HEAD')}`, { headers: { 'if-match': '*' } });
    expect(del.status).toBe(403);
    expect(read('.git/HEAD')).toBe('ref: refs/heads/main\n');
  });

  it('search does not find words that only occur in it', async () => {
    const r = await api('GET', `/api/v1/notes/search?q=${q('SECRETTOKEN')}`);
    expect(r.status).toBe(200);
    expect(JSON.stringify(r.body)).not.toContain('.git');
  });
});

describe('the local --vault mode (the command line and MCP on a folder)', () => {
  it('refuses version-control data the same way', async () => {
    const cacheHome = tempDir('quire-internal-cache-');
    const t = await LocalTransport.open(home, { watch: false, env: { ...process.env, XDG_CACHE_HOME: cacheHome } });
    try {
      await expect(t.call(findAction('files_read')!, { query: { path: '.git/config' } })).rejects.toMatchObject({
        status: 403,
        details: { reason: 'internal_path' },
      });
      const ok = await t.call(findAction('files_read')!, { query: { path: '.obsidian/app.json' } });
      expect(ok.status).toBe(200);
    } finally {
      await t.close();
      fs.rmSync(cacheHome, { recursive: true, force: true });
    }
  });
});

describe('.obsidian/', () => {
  it('is readable by path', async () => {
    const r = await api('GET', `/api/v1/files/content?path=${q('.obsidian/app.json')}`);
    expect(r.status).toBe(200);
    expect(r.text).toContain('attachmentFolderPath');
  });

  it('is never written or deleted by the server', async () => {
    const cur = await api('GET', `/api/v1/files/content?path=${q('.obsidian/app.json')}`);
    const etag = cur.headers.get('etag')!;
    const put = await api('PUT', `/api/v1/files/content?path=${q('.obsidian/app.json')}`, { body: { content: '{}' }, headers: { 'if-match': etag } });
    expect(put.status).toBe(403);
    expect(put.body.error.details.reason).toBe('internal_path');
    const create = await api('PUT', `/api/v1/files/content?path=${q('.obsidian/snippets/x.css')}`, { body: { content: 'a{}' }, headers: { 'if-none-match': '*' } });
    expect(create.status).toBe(403);
    const del = await api('DELETE', `/api/v1/files/content?path=${q('.obsidian/app.json')}`, { headers: { 'if-match': etag } });
    expect(del.status).toBe(403);
    expect(read('.obsidian/app.json')).toBe('{"attachmentFolderPath":"Attachments"}\n');
    expect(fs.existsSync(path.join(home, '.obsidian/snippets'))).toBe(false);
  });

  it('holds no notes: a plugin README is neither listed nor found', async () => {
    const list = await api('GET', '/api/v1/notes?limit=500');
    expect(list.body.items.map((n: any) => n.path)).toEqual(['Notes/Plain.md']);
    const found = await api('GET', `/api/v1/notes/search?q=${q('gardens')}`);
    expect(JSON.stringify(found.body)).not.toContain('.obsidian');
    expect(JSON.stringify(found.body)).toContain('Notes/Plain.md');
  });
});
