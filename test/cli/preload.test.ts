/**
 * Quire upgraded in place under a running server or vault daemon: a copy of
 * the built install is started, then "upgraded" as a new build does it (the
 * bundle's chunks named anew, a new build stamp). A process that has run a
 * few seconds loaded the modules its start defers (src/surfaces/deferred-modules.ts,
 * before any request) and still answers; a call needing code outside that
 * list answers the upgrade error (503 `upgraded`, or the daemon's fallback
 * to the client, which then runs the new install), never a 500.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { request, type DaemonStatus } from '../../src/surfaces/daemon/protocol.js';
import { daemonFiles } from '../../src/surfaces/daemon/socket-path.js';
import { tempDir } from '../helpers/instance.js';
import { alive, cliWorld, until } from './helpers.js';

const REPO = path.resolve(__dirname, '../..');
const RECORD_IMPORTS = path.join(REPO, 'test/helpers/record-imports.mjs');
const world = cliWorld();
const children: ChildProcess[] = [];
afterAll(async () => {
  for (const c of children) c.kill('SIGKILL');
  await world.cleanup();
});

/** The built install copied to a temporary folder (node_modules linked), as `npm install` lays it out. */
function copyInstall(): string {
  const root = tempDir('quire-preload-');
  for (const f of ['dist', 'bin', 'spec', 'package.json']) fs.cpSync(path.join(REPO, f), path.join(root, f), { recursive: true });
  fs.symlinkSync(path.join(REPO, 'node_modules'), path.join(root, 'node_modules'));
  return root;
}

/** What a new build does to dist/bundle/: every chunk under a new name, the references to it rewritten, a new build stamp; swapped in at once. */
function upgrade(root: string): void {
  const bundle = path.join(root, 'dist/bundle');
  const next = `${bundle}.next`;
  const names = fs.readdirSync(bundle).filter((n) => n.endsWith('.js') && n !== 'main.js' && n !== 'daemon.js');
  const renamed = (n: string) => n.replace(/\.js$/, 'U.js');
  fs.mkdirSync(next);
  for (const n of fs.readdirSync(bundle)) {
    if (!n.endsWith('.js')) continue;
    let text = fs.readFileSync(path.join(bundle, n), 'utf8');
    for (const old of names) text = text.split(`"./${old}"`).join(`"./${renamed(old)}"`);
    fs.writeFileSync(path.join(next, names.includes(n) ? renamed(n) : n), text);
  }
  fs.renameSync(bundle, `${bundle}.old`);
  fs.renameSync(next, bundle);
  fs.rmSync(`${bundle}.old`, { recursive: true });
  fs.writeFileSync(path.join(root, 'dist/.built'), `${new Date().toISOString()}-upgraded\n`);
}

/** The chunks of the copy's bundle that hold these source modules. */
function chunksOf(root: string, sources: string[]): string[] {
  const inputs = JSON.parse(fs.readFileSync(path.join(root, 'dist/bundle/inputs.json'), 'utf8')) as Record<string, string[]>;
  return Object.entries(inputs)
    .filter(([, held]) => held.some((s) => sources.includes(s)))
    .map(([chunk]) => chunk);
}

function serve(root: string, vault: string, importLog: string): Promise<{ url: string; token: string }> {
  const child = spawn(process.execPath, ['--import', RECORD_IMPORTS, path.join(root, 'bin/quire.js'), 'serve', '--vault', vault, '--port', '0'], {
    env: { ...process.env, ...world.env, QUIRE_DATA: '', QUIRE_PORT: '', QUIRE_IMPORT_LOG: importLog },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let out = '';
  return new Promise((resolve, reject) => {
    const onData = (d: Buffer) => {
      out += d;
      const url = /^url:\s+(\S+)$/m.exec(out)?.[1];
      const token = /^token:\s+(\S+)$/m.exec(out)?.[1];
      if (url && token && /^index ready/m.test(out)) resolve({ url, token });
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`quire serve exited with ${code}:\n${out}`)));
  });
}

/** Once every chunk named is in the import log and the log has not grown for a while (their imports are loaded too). */
async function loaded(log: string, chunks: string[]): Promise<void> {
  let size = -1;
  let still = 0;
  await until(() => {
    const text = fs.existsSync(log) ? fs.readFileSync(log, 'utf8') : '';
    still = text.length === size ? still + 1 : 0;
    size = text.length;
    return chunks.every((c) => text.includes(`/dist/bundle/${c}\n`)) && still >= 10;
  }, 30_000);
}

describe('Quire upgraded under a running server', () => {
  it('a server that ran a few seconds answers calendar and validation calls; code outside the list answers 503 upgraded, not 500', async () => {
    const root = copyInstall();
    const vault = world.makeVault();
    const log = path.join(root, 'imports.log');
    const { url, token } = await serve(root, vault, log);
    await loaded(log, chunksOf(root, ['src/actions/validate.ts', 'src/calendar/lazy.ts', 'src/caldav/handlers.ts', 'src/tasks/lazy.ts', 'src/journal/lazy.ts']));
    upgrade(root);
    const get = (p: string) => fetch(`${url}${p}`, { headers: { authorization: `Bearer ${token}` } });

    const upgraded = { error: { code: 'service_unavailable', message: expect.stringContaining('Quire was upgraded while this server ran'), details: { reason: 'upgraded' } } };
    const calendars = await get('/api/v1/calendar/calendars');
    expect(calendars.status).toBe(200);
    expect(await calendars.json()).toMatchObject({ calendars: [expect.objectContaining({ name: 'Personal' })] });
    const bad = await get('/api/v1/calendar/events?from=not-a-date');
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { code: string } }).error.code).toBe('bad_request');

    expect((await get('/api/v1/notes/tasks?limit=5')).status).toBe(200);
    expect((await get('/api/v1/notes/journal/2026-01-02')).status).toBe(200);

    // Passkeys are not preloaded (rare, heavy): their chunk went with the upgrade.
    const passkey = await fetch(`${url}/api/v1/auth/passkeys/login/start`, { method: 'POST' });
    expect([passkey.status, await passkey.json()]).toEqual([503, upgraded]);
  }, 60_000);
});

describe('Quire upgraded under a running vault daemon', () => {
  it('a warm daemon answers calls of its build; a call whose code is gone is left to the client, the daemon leaves, the new install answers', async () => {
    const root = copyInstall();
    const vault = world.makeVault();
    const env = { ...process.env, ...world.env };
    const quire = (args: string[]) =>
      new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
        const child = spawn(process.execPath, [path.join(root, 'bin/quire.js'), ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
        let stdout = '';
        let stderr = '';
        child.stdout.on('data', (d) => (stdout += d));
        child.stderr.on('data', (d) => (stderr += d));
        child.on('exit', (code) => resolve({ code, stdout, stderr }));
      });
    expect((await quire(['search', 'sand', '--vault', vault])).stdout).toContain('Dune');
    const socket = daemonFiles(fs.realpathSync(vault), env).socket;
    const status = async () => ((await request(socket, { op: 'status' })) as { status: DaemonStatus }).status;
    // Warm: its opening's work is done and the deferred modules are loaded.
    for (const end = Date.now() + 30_000; !(await status()).warm; await new Promise((r) => setTimeout(r, 50))) {
      if (Date.now() > end) throw new Error('the daemon did not get warm');
    }
    const { pid } = await status();
    upgrade(root);

    // Calls from a client of its own build (a command line or MCP server started before the upgrade).
    const calendars = await request(socket, { op: 'call', action: 'calendar_calendars', input: {} });
    expect(calendars).toMatchObject({ ok: true, outcome: { status: 200 } });
    const bad = await request(socket, { op: 'call', action: 'calendar_events', input: { query: { from: 'not-a-date' } } });
    expect(bad).toMatchObject({ ok: false, status: 400, error: { code: 'bad_request' } });

    // The change streams are not the daemon's to preload: their code is gone, the call is left to the client.
    const events = await request(socket, { op: 'call', action: 'notes_events', input: {} });
    expect(events).toEqual({ ok: false, fallback: expect.stringContaining('Quire was upgraded') });
    await until(() => !alive(pid), 15_000);
    expect(fs.existsSync(socket)).toBe(false);

    // The upgraded install's next call starts a daemon of its own and is answered.
    const after = await quire(['search', 'sand', '--vault', vault]);
    expect(after.stdout).toContain('Dune');
    expect(world.daemonPids()).not.toContain(pid);

    // A thin client's whole command, of the daemon's build, whose first call's code is gone: the same.
    const second = await status();
    upgrade(root);
    const run = await request(socket, { op: 'run', build: second.build, argv: ['action', 'run', 'notes_events', '--vault', vault], cwd: process.cwd(), tz: 'UTC' });
    expect(run).toEqual({ ok: false, fallback: expect.stringContaining('Quire was upgraded') });
    await until(() => !alive(second.pid), 15_000);
  }, 60_000);
});
