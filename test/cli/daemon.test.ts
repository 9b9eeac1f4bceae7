/**
 * The vault daemon, through the real `quire` command: the first `--vault`
 * call starts one per folder, later calls reuse it and see outside edits,
 * it survives a crash (stale socket), exits when idle or told to, writes
 * under one writer lock per folder shared with `quire serve --vault`, and
 * leaves nothing in the vault.
 */
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import lockfile from 'proper-lockfile';
import { afterAll, describe, expect, it } from 'vitest';
import { writerLocksDir } from '../../src/surfaces/client/user-dirs.js';
import { daemonFiles, request } from '../../src/surfaces/daemon/protocol.js';
import { writerLockFile } from '../../src/vault/lock.js';
import { runCli, spawnServe } from '../helpers/cli.js';
import { alive, cliWorld, treeOf, until } from './helpers.js';

const world = cliWorld();
const children: ChildProcess[] = [];
afterAll(async () => {
  for (const c of children) c.kill('SIGKILL');
  await world.cleanup();
});

const quire = (args: string[], env: Record<string, string> = {}) => runCli(args, { env: { ...world.env, ...env }, timeoutMs: 60_000 });
const backlinkPaths = async (vault: string, env: Record<string, string> = {}) => {
  const r = await quire(['backlinks', 'Home.md', '--vault', vault, '--json'], env);
  expect(r.stderr).toBe('');
  return (JSON.parse(r.stdout).items as Array<{ path: string }>).map((i) => i.path).sort();
};

describe('the vault daemon', () => {
  it('starts on the first call, is reused, and every answer sees the edits made before it', async () => {
    const vault = world.makeVault();
    const before = treeOf(vault);
    const first = await quire(['backlinks', 'Home.md', '--vault', vault, '--json', '--verbose']);
    expect(first.stderr).toContain('vault daemon: starting one');
    expect(JSON.parse(first.stdout).items.map((i: { path: string }) => i.path).sort()).toEqual(['Books/Dune.md', 'Project Alpha.md']);
    const [pid] = world.daemonPids();
    expect(alive(pid!)).toBe(true);

    const second = await quire(['search', 'sand', '--vault', vault, '--json', '--verbose']);
    expect(second.stderr).toContain('answered the whole command (thin client)');
    expect(JSON.parse(second.stdout).items.map((i: { path: string }) => i.path)).toEqual(['Books/Dune.md']);
    expect(world.daemonPids()).toEqual([pid]);

    // Outside edits, each followed at once by a call: the call waits for the watcher to settle.
    for (let i = 0; i < 3; i++) {
      fs.writeFileSync(path.join(vault, `Fresh ${i}.md`), `Links to [[Home]] (${i})\n`);
      expect(await backlinkPaths(vault)).toContain(`Fresh ${i}.md`);
      fs.rmSync(path.join(vault, `Fresh ${i}.md`));
      expect(await backlinkPaths(vault)).not.toContain(`Fresh ${i}.md`);
    }
    // The quickest client there is (the socket, no process start): the edit is still in the watcher's hands when the call arrives.
    const socket = daemonFiles(fs.realpathSync(vault), { ...process.env, ...world.env }).socket;
    for (let i = 0; i < 5; i++) {
      fs.writeFileSync(path.join(vault, `Quick ${i}.md`), `Links to [[Home]] (${i})\n`);
      const reply = await request(socket, { op: 'call', action: 'backlinks', input: { query: { path: 'Home.md' } } });
      expect(reply.ok && (reply.outcome!.body as { items: Array<{ path: string }> }).items.map((x) => x.path)).toContain(`Quick ${i}.md`);
      fs.rmSync(path.join(vault, `Quick ${i}.md`));
    }
    fs.writeFileSync(path.join(vault, 'Books/Dune.md'), '# Dune\n\nNo links now.\n');
    expect(await backlinkPaths(vault)).toEqual(['Project Alpha.md']);
    fs.writeFileSync(path.join(vault, 'Books/Dune.md'), '# Dune\n\nA book about sand. [[Home]]\n');

    const status = await quire(['daemon', 'status', '--json']);
    expect(JSON.parse(status.stdout)).toEqual([expect.objectContaining({ pid, vault: fs.realpathSync(vault), notes: 3 })]);
    // Nothing derived went into the vault: its sockets and caches live in the user's folders.
    expect(treeOf(vault)).toEqual(before);
    expect(fs.readdirSync(path.join(world.runtime, 'quire')).some((n) => n.endsWith('.sock'))).toBe(true);

    const stop = await quire(['daemon', 'stop', '--vault', vault]);
    expect(stop.stdout).toContain(`Stopped the vault daemon of ${fs.realpathSync(vault)}`);
    expect(alive(pid!)).toBe(false);
    expect(world.daemonPids()).toEqual([]);
    expect(JSON.parse((await quire(['daemon', 'status', '--json'])).stdout)).toEqual([]);
    expect(treeOf(vault)).toEqual(before);
  });

  it('replaces a crashed daemon (kill -9 leaves its socket behind) and serves two vaults at once', async () => {
    const a = world.makeVault();
    const b = world.makeVault({ 'Home.md': '# Home B\n', 'Other.md': 'See [[Home]]\n' });
    await backlinkPaths(a);
    const [crashed] = world.daemonPids();
    process.kill(crashed!, 'SIGKILL');
    await until(() => !alive(crashed!));
    expect(fs.readdirSync(path.join(world.runtime, 'quire')).filter((n) => n.endsWith('.sock'))).toHaveLength(1);

    const again = await quire(['backlinks', 'Home.md', '--vault', a, '--json', '--verbose']);
    expect(again.stderr).toContain('stale socket');
    expect(JSON.parse(again.stdout).items).toHaveLength(2);
    expect(await backlinkPaths(b)).toEqual(['Other.md']);
    const pids = world.daemonPids();
    expect(pids).toHaveLength(2);
    expect(pids).not.toContain(crashed);
    const status = JSON.parse((await quire(['daemon', 'status', '--json'])).stdout) as Array<{ vault: string }>;
    expect(status.map((d) => d.vault).sort()).toEqual([fs.realpathSync(a), fs.realpathSync(b)].sort());
    expect(await backlinkPaths(a)).toEqual(['Books/Dune.md', 'Project Alpha.md']);
    for (const v of [a, b]) await quire(['daemon', 'stop', '--vault', v]);
    expect(world.daemonPids()).toEqual([]);
  });

  it('exits by itself after the idle time (QUIRE_DAEMON_IDLE seconds)', async () => {
    const vault = world.makeVault();
    // A cold first call takes longer than the idle time: the daemon does not leave while it answers.
    expect(await backlinkPaths(vault, { QUIRE_DAEMON_IDLE: '1' })).toEqual(['Books/Dune.md', 'Project Alpha.md']);
    const [pid] = world.daemonPids();
    expect(pid).toBeGreaterThan(0);
    await until(() => !alive(pid!), 20_000);
    expect(world.daemonPids()).toEqual([]);
    expect(fs.readdirSync(path.join(world.runtime, 'quire')).filter((n) => n.endsWith('.sock'))).toEqual([]);
    // The next call starts a new one.
    expect(await backlinkPaths(vault)).toEqual(['Books/Dune.md', 'Project Alpha.md']);
    await quire(['daemon', 'stop', '--vault', vault]);
  });

  it('falls back to indexing in process when the daemon is off, and says so with --verbose', async () => {
    const vault = world.makeVault();
    const r = await quire(['backlinks', 'Home.md', '--vault', vault, '--json', '--verbose'], { QUIRE_DAEMON: 'off' });
    expect(r.stderr).toContain('indexing in this process');
    expect(JSON.parse(r.stdout).items).toHaveLength(2);
    expect(world.daemonPids()).toEqual([]);
  });

  it('writes through the daemon under the one writer lock of the folder, shared with quire serve --vault', async () => {
    const vault = world.makeVault();
    const before = new Set(treeOf(vault));
    await backlinkPaths(vault); // the daemon is up
    const server = await serve(vault);

    // Another process holds the folder's writer lock: neither the daemon nor the server writes until it lets go.
    const lockFile = writerLockFile(writerLocksDir({ ...process.env, ...world.env }), vault);
    const release = await lockfile.lock(lockFile, { realpath: false });
    let cliDone = false;
    let httpDone = false;
    const cli = quire(['log', 'written by the command line', '--vault', vault, '--json']).finally(() => (cliDone = true));
    const http = fetch(`${server.url}/api/v1/notes/journal/log`, {
      method: 'POST',
      headers: { authorization: `Bearer ${server.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ text: 'written by the server', now: '2030-05-01T09:00', timezone: 'UTC' }),
    }).finally(() => (httpDone = true));
    await new Promise((r) => setTimeout(r, 2500));
    expect({ cliDone, httpDone }).toEqual({ cliDone: false, httpDone: false });
    await release();

    const logged = await cli;
    expect(logged.code).toBe(0);
    expect((await http).status).toBe(201);
    const cliEntry = JSON.parse(logged.stdout);
    const daily = fs.readFileSync(path.join(vault, cliEntry.path ?? cliEntry.entry.path), 'utf8');
    expect(daily).toContain('written by the command line');
    expect(fs.readFileSync(path.join(vault, 'Journal/2030-05-01.md'), 'utf8')).toContain('written by the server');
    // Only the two Daily notes are new in the vault.
    const added = treeOf(vault).filter((f) => !before.has(f)).map((f) => f.replace(/ \d+$/, ''));
    expect(added.every((f) => f.startsWith('Journal/'))).toBe(true);
    await quire(['daemon', 'stop', '--vault', vault]);
  });
});

async function serve(vault: string): Promise<{ url: string; token: string }> {
  const { child, ready } = spawnServe(['--vault', vault, '--port', '0'], { env: world.env, untilIndexReady: true });
  children.push(child);
  return ready;
}
