/**
 * How the first `--vault` call starts the folder's daemon: the thin client
 * starts it as soon as it finds no daemon (before the full command line
 * loads), the full command line waits for that one instead of starting
 * another, two first calls at once leave one daemon that opened the folder,
 * and a daemon started for a command that never calls it leaves by itself.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { daemonFiles } from '../../src/surfaces/daemon/protocol.js';
import { runCli } from '../helpers/cli.js';
import { alive, cliWorld, until } from './helpers.js';

const world = cliWorld();
afterAll(() => world.cleanup());

const quire = (args: string[], env: Record<string, string> = {}) => runCli(args, { env: { ...world.env, ...env }, timeoutMs: 60_000 });
const filesOf = (vault: string) => daemonFiles(fs.realpathSync(vault), { ...process.env, ...world.env });
/** What the folder's daemons wrote to their log: one `serving` line per daemon that opened the folder. */
const logLines = (vault: string) => fs.readFileSync(filesOf(vault).log, 'utf8').split('\n').filter((l) => l.startsWith('quire daemon '));
const backlinks = (stdout: string) => (JSON.parse(stdout).items as Array<{ path: string }>).map((i) => i.path).sort();

describe('starting the vault daemon', () => {
  it('the thin client starts it before the command line loads, and the command line waits for that one', async () => {
    const vault = world.makeVault();
    const r = await quire(['backlinks', 'Home.md', '--vault', vault, '--json', '--verbose']);
    expect(r.stderr).toContain('vault daemon: starting one for');
    expect(r.stderr).toContain('vault daemon: waiting for the one started before the command line loaded');
    expect(backlinks(r.stdout)).toEqual(['Books/Dune.md', 'Project Alpha.md']);
    const pids = world.daemonPids();
    expect(pids).toHaveLength(1);
    expect(logLines(vault)).toEqual([`quire daemon ${pids[0]}: serving ${fs.realpathSync(vault)}`]);
    await quire(['daemon', 'stop', '--vault', vault]);
    expect(alive(pids[0]!)).toBe(false);
  });

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
