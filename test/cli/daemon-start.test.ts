/**
 * How the first `--vault` call starts the folder's daemon: the thin client
 * starts it as soon as it finds no daemon and sends it the call itself (the
 * full command line never loads); a call that daemon leaves, or a daemon
 * that fails to start, goes to the full command line as before; two first
 * calls at once leave one daemon that opened the folder, and a daemon
 * started for a command that never calls it leaves by itself.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { daemonFiles } from '../../src/surfaces/daemon/protocol.js';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/instance.js';
import { alive, cliWorld, until } from './helpers.js';

const REPO = path.resolve(__dirname, '../..');
/** Log every module a process loads (ES modules through loader hooks, CommonJS ones as they load), as in thin.test.ts. */
const HOOKS = `--import=${path.join(REPO, 'test/helpers/record-imports.mjs')} --require=${path.join(REPO, 'test/helpers/record-requires-live.cjs')}`;

const world = cliWorld();
afterAll(() => world.cleanup());

const quire = (args: string[], env: Record<string, string> = {}) => runCli(args, { env: { ...world.env, ...env }, timeoutMs: 60_000 });
const filesOf = (vault: string) => daemonFiles(fs.realpathSync(vault), { ...process.env, ...world.env });
/** What the folder's daemons wrote to their log: one `serving` line per daemon that opened the folder. */
const logLines = (vault: string) => fs.readFileSync(filesOf(vault).log, 'utf8').split('\n').filter((l) => l.startsWith('quire daemon '));
const backlinks = (stdout: string) => (JSON.parse(stdout).items as Array<{ path: string }>).map((i) => i.path).sort();

describe('starting the vault daemon', () => {
  it('the thin client starts it and sends it the call itself: the full command line never loads', async () => {
    const vault = world.makeVault();
    const log = path.join(tempDir('quire-imports-'), 'loaded.txt');
    fs.writeFileSync(log, '');
    const r = await quire(['backlinks', 'Home.md', '--vault', vault, '--json', '--verbose'], { NODE_OPTIONS: HOOKS, QUIRE_IMPORT_LOG: log });
    expect(r.code).toBe(0);
    expect(backlinks(r.stdout)).toEqual(['Books/Dune.md', 'Project Alpha.md']);
    // The thin client's line, then the daemon's: nothing from the full command line's daemon client.
    const files = filesOf(vault);
    const real = fs.realpathSync(vault);
    expect(r.stderr).toBe(`vault daemon: starting one for ${real} (log: ${files.log})\nvault daemon: the running one for ${real} answered the whole command (thin client)\n`);
    // The log holds the daemon's modules too (it inherits NODE_OPTIONS), never the full command line's bundle.
    const loaded = fs.readFileSync(log, 'utf8').split('\n').filter((u) => u.startsWith('file://')).map((u) => path.relative(REPO, new URL(u).pathname));
    expect(loaded).toContain('dist/surfaces/cli/thin.cjs');
    expect(loaded).not.toContain('dist/bundle/main.js');
    fs.rmSync(path.dirname(log), { recursive: true, force: true });
    const pids = world.daemonPids();
    expect(pids).toHaveLength(1);
    expect(logLines(vault)).toEqual([`quire daemon ${pids[0]}: serving ${real}`]);
    await quire(['daemon', 'stop', '--vault', vault]);
    expect(alive(pids[0]!)).toBe(false);
  });

  it('a first call the daemon leaves (a form for commander) runs in the full command line, beside that one daemon', async () => {
    const vault = world.makeVault();
    const r = await quire(['backlinks', '--help', '--vault', vault, '--verbose']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('Usage: quire backlinks');
    expect(r.stderr).toContain('vault daemon: starting one for');
    expect(r.stderr).toContain('left this call to the full command line (a form for commander)');
    const pids = world.daemonPids();
    expect(pids).toHaveLength(1);
    // The next call goes to that daemon.
    const next = await quire(['backlinks', 'Home.md', '--vault', vault, '--json', '--verbose']);
    expect(backlinks(next.stdout)).toEqual(['Books/Dune.md', 'Project Alpha.md']);
    expect(next.stderr).toContain('answered the whole command (thin client)');
    expect(world.daemonPids()).toEqual(pids);
    await quire(['daemon', 'stop', '--vault', vault]);
  });

  it('a daemon that fails to start: the full command line waits for it as before, then indexes in process', async () => {
    const vault = world.makeVault();
    // Every `daemon run` process ends at once, before it listens.
    const die = path.join(tempDir('quire-die-'), 'die.cjs');
    fs.writeFileSync(die, "if (process.argv[2] === 'daemon' && process.argv[3] === 'run') process.exit(3);\n");
    const r = await quire(['backlinks', 'Home.md', '--vault', vault, '--json', '--verbose'], { NODE_OPTIONS: `--require=${die}` });
    expect(r.code).toBe(0);
    expect(backlinks(r.stdout)).toEqual(['Books/Dune.md', 'Project Alpha.md']);
    expect(r.stderr).toContain('vault daemon: starting one for');
    expect(r.stderr).toContain('vault daemon: cannot run');
    expect(r.stderr).toContain('indexing in this process');
    expect(r.stderr).not.toContain('thin client');
    expect(fs.existsSync(filesOf(vault).socket)).toBe(false);
    fs.rmSync(path.dirname(die), { recursive: true, force: true });
  }, 60_000);

  it('two first calls at once: one daemon opens the folder and answers both; another one started leaves having opened nothing', async () => {
    const vault = world.makeVault();
    const [a, b] = await Promise.all([quire(['backlinks', 'Home.md', '--vault', vault, '--json']), quire(['backlinks', 'Home.md', '--vault', vault, '--json'])]);
    expect([a.code, b.code]).toEqual([0, 0]);
    expect(backlinks(a.stdout)).toEqual(['Books/Dune.md', 'Project Alpha.md']);
    expect(backlinks(b.stdout)).toEqual(['Books/Dune.md', 'Project Alpha.md']);
    const pids = world.daemonPids();
    expect(pids).toHaveLength(1);
    const lines = logLines(vault);
    expect(lines.filter((l) => l.includes(': serving '))).toEqual([`quire daemon ${pids[0]}: serving ${fs.realpathSync(vault)}`]);
    for (const l of lines.filter((x) => !x.includes(': serving '))) expect(l).toMatch(/^quire daemon \d+: another one serves .*; leaving$/);
    await quire(['daemon', 'stop', '--vault', vault]);
  });

  it('a daemon started for a command that then never calls it (a mistyped command) leaves by itself', async () => {
    const vault = world.makeVault();
    const r = await quire(['backlnks', 'Home.md', '--vault', vault], { QUIRE_DAEMON_CALL_WAIT: '1' });
    expect(r.code).not.toBe(0);
    // Known by its log line: it may have left already (a second after it started) when the command ends on a busy machine.
    await until(() => fs.existsSync(filesOf(vault).log) && logLines(vault).length === 1, 20_000);
    const pid = Number(/^quire daemon (\d+): serving /.exec(logLines(vault)[0]!)?.[1]);
    expect(pid).toBeGreaterThan(0);
    // Its idle time is 15 minutes; without a first call it leaves after the call wait.
    await until(() => !alive(pid), 20_000);
    expect(fs.existsSync(filesOf(vault).socket)).toBe(false);
    // The next call starts one again and is answered.
    expect(backlinks((await quire(['backlinks', 'Home.md', '--vault', vault, '--json'])).stdout)).toEqual(['Books/Dune.md', 'Project Alpha.md']);
    await quire(['daemon', 'stop', '--vault', vault]);
  });
});
