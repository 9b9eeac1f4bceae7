/**
 * The launcher a person runs, bin/quire (package.json "bin"): the
 * long-running commands (serve, demo, daemon run) run with the server's
 * Node.js flags (bin/server-node-flags), every other command with none, so
 * that Node's code cache applies to them (docs/cli.md, "Thin client"); and a
 * vault daemon gets the flags however the call that starts it was run.
 */
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/instance.js';
import { stopProcess } from '../helpers/processes.js';
import { cliWorld, until } from './helpers.js';

const REPO = path.resolve(__dirname, '../..');
const LAUNCHER = path.join(REPO, 'bin/quire');
const SERVER_NODE_FLAGS = fs.readFileSync(path.join(REPO, 'bin/server-node-flags'), 'utf8').trim().split(/\s+/);

const world = cliWorld();
afterAll(() => world.cleanup());

/** Every Node.js process started since the log was made: its arguments and flags. */
function execLog() {
  const file = path.join(tempDir('quire-exec-argv-'), 'log.ndjson');
  fs.writeFileSync(file, '');
  const env = { ...world.env, NODE_OPTIONS: `--require=${path.join(REPO, 'test/helpers/record-exec-argv.cjs')}`, QUIRE_EXEC_ARGV_LOG: file };
  const read = () =>
    fs
      .readFileSync(file, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { pid: number; args: string[]; flags: string[] });
  return { env, read };
}

/** `bin/quire args` to its exit, as a shell runs it. */
function launch(args: string[], env: Record<string, string>, cmd = LAUNCHER): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('the quire launcher', () => {
  it('runs serve with the server flags, in its own process (exec: the pid it was started as)', async () => {
    const log = execLog();
    const child = spawn(LAUNCHER, ['serve', '--data', tempDir('quire-launcher-data-'), '--port', '0'], { env: { ...process.env, ...log.env, QUIRE_DATA: '', QUIRE_PORT: '' }, stdio: ['ignore', 'pipe', 'pipe'] });
    try {
      let out = '';
      child.stdout.on('data', (d) => (out += d));
      await until(() => /listening on http/.test(out), 30_000);
      expect(log.read()).toEqual([{ pid: child.pid, args: ['serve', '--data', expect.any(String), '--port', '0'], flags: SERVER_NODE_FLAGS }]);
    } finally {
      await stopProcess(child);
    }
  });

  it('runs short commands and warm --vault calls without flags; the daemon a call starts gets them however the call was run', async () => {
    const vault = world.makeVault();
    const log = execLog();
    // Started by `node bin/quire.js` (no flags), as the tests and some scripts run it.
    const first = await runCli(['notes', '--vault', vault, '--verbose'], { env: log.env, timeoutMs: 60_000 });
    expect(first.stderr).toContain('vault daemon: starting one');
    const [daemonPid] = world.daemonPids();
    expect(log.read().find((p) => p.pid === daemonPid)).toEqual({ pid: daemonPid, args: ['daemon', 'run', '--vault', fs.realpathSync(vault)], flags: SERVER_NODE_FLAGS });

    const before = log.read().length;
    const warm = await launch(['notes', 'Books', '--vault', vault, '--verbose'], log.env);
    expect(warm).toMatchObject({ code: 0, stdout: 'Books/Dune.md\n' });
    expect(warm.stderr).toContain('(thin client)');
    // What the native thin client leaves to Node (here: no daemon to ask) runs without flags too.
    const off = await launch(['notes', 'Books', '--vault', vault], { ...log.env, QUIRE_DAEMON: 'off' });
    expect(off).toMatchObject({ code: 0, stdout: 'Books/Dune.md\n' });
    const help = await launch(['--help'], log.env);
    expect(help).toMatchObject({ code: 0, stdout: expect.stringContaining('Usage: quire') });
    // With the native thin client built (a C compiler was there), the warm call starts no Node at all (native-thin.test.ts).
    const native = fs.existsSync(path.join(REPO, 'dist/surfaces/cli/native/thin'));
    expect(log.read().slice(before).map((p) => [p.args[0], p.flags])).toEqual([...(native ? [] : [['notes', []]]), ['notes', []], ['--help', []]]);
  }, 90_000);

  it('runs `daemon run` started through it with the server flags', async () => {
    const vault = world.makeVault();
    const log = execLog();
    const child = spawn(LAUNCHER, ['daemon', 'run', '--vault', vault], { env: { ...process.env, ...log.env }, stdio: 'ignore', detached: true });
    child.unref();
    await until(() => world.daemonPids().length > 0 && log.read().length > 0, 30_000);
    expect(log.read()).toEqual([{ pid: child.pid, args: ['daemon', 'run', '--vault', vault], flags: SERVER_NODE_FLAGS }]);
  }, 60_000);

  it('finds quire.js when run through a chain of symbolic links (npm links the command into a bin folder)', async () => {
    const dir = tempDir('quire-launcher-links-');
    fs.mkdirSync(path.join(dir, 'bin'));
    fs.symlinkSync(LAUNCHER, path.join(dir, 'quire-abs'));
    fs.symlinkSync('../quire-abs', path.join(dir, 'bin', 'quire'));
    const r = await launch(['--version'], {}, path.join(dir, 'bin', 'quire'));
    expect(r).toMatchObject({ code: 0, stdout: `${JSON.parse(fs.readFileSync(path.join(REPO, 'package.json'), 'utf8')).version}\n` });
  });

  it('finds quire.js when sh is given the bare name of a relative link in the working folder', () => {
    const dir = tempDir('quire-launcher-bare-');
    fs.symlinkSync(path.relative(dir, LAUNCHER), path.join(dir, 'quire'));
    const out = execFileSync('sh', ['quire', '--version'], { cwd: dir, encoding: 'utf8' });
    expect(out).toBe(`${JSON.parse(fs.readFileSync(path.join(REPO, 'package.json'), 'utf8')).version}\n`);
  });
});
