/**
 * The thin client (src/surfaces/cli/thin.ts): a warm `--vault` call is sent
 * whole to the folder's daemon, which reads and runs it with the command
 * line's own code; the calling process loads nothing but the launcher and
 * one small bundle (thin.cjs), prints exactly what the in-process command line prints,
 * and falls back to the full command line (which replaces the daemon) when
 * the daemon is of another build or gone.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { thinVault } from '../../src/surfaces/cli/thin.js';
import { daemonFiles, request, type DaemonStatus, type RunRequest } from '../../src/surfaces/daemon/protocol.js';
import { fnv1a64 } from '../../src/surfaces/daemon/socket-path.js';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/instance.js';
import { alive, cliWorld, startOtherBuildDaemon, until } from './helpers.js';

const REPO = path.resolve(__dirname, '../..');
/** Log every module a process loads: ES modules (loader hooks) and CommonJS ones (as each loads). */
const HOOKS = `--import=${path.join(REPO, 'test/helpers/record-imports.mjs')} --require=${path.join(REPO, 'test/helpers/record-requires-live.cjs')}`;
/** The build the launcher runs now (read at each use: a rebuild gives another). */
const build = () => fs.readFileSync(path.join(REPO, 'dist/.built'), 'utf8').trim();

const world = cliWorld();
let vault: string;
const quire = (args: string[], env: Record<string, string> = {}) => runCli(args, { env: { ...world.env, ...env }, timeoutMs: 60_000 });
const socketOf = (dir: string) => daemonFiles(fs.realpathSync(dir), { ...process.env, ...world.env }).socket;
const statusOf = async (dir: string) => (await request(socketOf(dir), { op: 'status' })) as { ok: true; status: DaemonStatus };
const runRequest = (dir: string, argv: string[], extra: Partial<RunRequest> = {}) =>
  request(socketOf(dir), { op: 'run', build: build(), argv, cwd: process.cwd(), tz: 'UTC', ...extra });

beforeAll(async () => {
  vault = world.makeVault();
  const first = await quire(['notes', '--vault', vault, '--verbose']);
  expect(first.stderr).toContain('vault daemon: starting one');
}, 60_000);
afterAll(() => world.cleanup());

/** `quire args` with every module URL it loaded, as paths below the repository. */
async function traced(args: string[]) {
  const log = path.join(tempDir('quire-imports-'), 'loaded.txt');
  fs.writeFileSync(log, '');
  const r = await quire(args, { NODE_OPTIONS: HOOKS, QUIRE_IMPORT_LOG: log });
  const urls = fs.readFileSync(log, 'utf8').split('\n').filter((u) => u.startsWith('file://'));
  const loaded = [...new Set(urls)].map((u) => path.relative(REPO, new URL(u).pathname));
  fs.rmSync(path.dirname(log), { recursive: true, force: true });
  return { ...r, loaded };
}

describe('the thin client', () => {
  it("names a folder's socket by an FNV-1a hash of its real path (no node:crypto to load)", () => {
    // The published FNV-1a 64-bit test vectors.
    const table: Array<[string, string]> = [
      ['', 'cbf29ce484222325'],
      ['a', 'af63dc4c8601ec8c'],
      ['foobar', '85944171f73967e8'],
    ];
    for (const [text, hash] of table) expect([text, fnv1a64(text)]).toEqual([text, hash]);
    expect(path.basename(daemonFiles('/home/ada/Vault', {}).socket)).toBe(`${fnv1a64('/home/ada/Vault')}.sock`);
  });

  it('recognises a command on a vault that a daemon may answer whole', () => {
    const table: Array<[string[], string | null]> = [
      [['backlinks', 'Home.md', '--vault', 'V'], 'V'],
      [['search', 'a', 'b', '--vault', 'V', '--json'], 'V'],
      [['action', 'run', 'backlinks', '--vault', 'V'], 'V'],
      [['backlinks', 'Home.md', '--vault', 'A', '--vault', 'B'], 'B'],
      [['action', 'help', 'backlinks', '--vault', 'V'], null],
      [['serve', '--vault', 'V'], null],
      [['daemon', 'stop', '--vault', 'V'], null],
      [['mcp', '--vault', 'V'], null],
      [['--vault', 'V', 'notes'], null],
      [['notes', '--vault'], null],
      [['notes', '--server', 'http://x'], null],
      [[], null],
    ];
    for (const [argv, want] of table) expect([argv, thinVault(argv)]).toEqual([argv, want]);
  });

  it('answers a warm call through the daemon, loading only the launcher and thin.cjs (the thin client and the daemon wire, bundled)', async () => {
    const r = await traced(['backlinks', 'Home.md', '--vault', vault, '--verbose']);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('Books/Dune.md:3  Dune\nProject Alpha.md:6  Project Alpha\n');
    expect(r.stderr).toBe(`vault daemon: the running one for ${fs.realpathSync(vault)} answered the whole command (thin client)\n`);
    expect(r.loaded.filter((p) => !p.startsWith('test/'))).toEqual(['bin/quire.js', 'dist/surfaces/cli/thin.cjs']);
    // A usage error is read by the daemon too: exit 2, and the command table is not loaded here either.
    const bad = await traced(['search', 'x', '--limit', 'many', '--vault', vault]);
    expect(bad).toMatchObject({ code: 2, stdout: '', stderr: 'quire: --limit takes an integer, not "many"\n' });
    expect(bad.loaded).not.toContain('dist/bundle/main.js');
  });

  it('prints exactly what the in-process command line prints, readable and --json, errors included', async () => {
    const commands: string[][] = [
      ['search', 'sand'],
      ['notes', 'Books'],
      ['show', 'project alpha'],
      ['backlinks', 'Home'],
      ['tag', '#inbox'],
      ['today'],
      ['tasks', '--due', 'today'],
      ['show', 'No Such Note'],
      ['search', 'x', '--limit', 'many'],
      ['action', 'run', 'backlinks', '--input', '{"query":{"path":"Home.md"}}'],
      ['action', 'run', 'current_user'],
      ['action', 'run', 'backlinks', '--input', 'not json'],
      ['action', 'run', 'no_such_action'],
    ];
    const verbose = /^vault daemon: .*\n/;
    // A new log entry gets its own block id, line and etag; the rest of the answer must match.
    const fresh = (out: string) => out.replace(/"(block_id|etag)":"[^"]*"|"line":\d+|\^[a-z0-9]{8}/g, '~');
    const both = async (args: string[]) => {
      const [thin, inProcess] = await Promise.all([quire([...args, '--verbose']), quire([...args, '--verbose'], { QUIRE_DAEMON: 'off' })]);
      // --verbose says which way each went (before anything else is printed); the rest is the same, byte for byte.
      if (verbose.test(thin.stderr)) expect(thin.stderr).toMatch(/^vault daemon: .* answered the whole command \(thin client\)\n/);
      const strip = (r: typeof thin) => ({ code: r.code, stdout: fresh(r.stdout), stderr: r.stderr.replace(verbose, '') });
      expect([args, strip(thin)]).toEqual([args, strip(inProcess)]);
      return thin.code;
    };
    const forms = commands.flatMap((c) => [[...c, '--vault', vault], [...c, '--json', '--vault', vault]]);
    const codes = new Set<number>();
    // Three at a time: these read only.
    for (let i = 0; i < forms.length; i += 3) for (const code of await Promise.all(forms.slice(i, i + 3).map(both))) codes.add(code);
    for (const form of [[], ['--json']]) codes.add(await both(['log', '09:00 tea with Ada', ...form, '--vault', vault]));
    expect([...codes].sort()).toEqual([0, 1, 2]);
  }, 120_000);

  it('an edit made just before a whole command is in its answer', async () => {
    for (let i = 0; i < 5; i++) {
      fs.writeFileSync(path.join(vault, `Quick ${i}.md`), `Links to [[Home]] (${i})\n`);
      const reply = await runRequest(vault, ['backlinks', 'Home.md', '--vault', vault]);
      expect(reply.ok && reply.run!.output.map(([, text]) => text).join('')).toContain(`Quick ${i}.md:1`);
      fs.rmSync(path.join(vault, `Quick ${i}.md`));
    }
  });

  it('leaves to the full command line, having done nothing, what it cannot answer alike', async () => {
    const fallback = async (argv: string[], extra: Partial<RunRequest> = {}) => {
      const reply = await runRequest(vault, argv, extra);
      expect(reply.ok).toBe(false);
      return 'fallback' in reply ? reply.fallback : null;
    };
    const other = world.makeVault({ 'Other.md': '# Other\n' });
    expect(await fallback(['log', 'not written', '--vault', vault], { build: 'another' })).toMatch(/another/);
    expect(await fallback(['log', 'not written', '--vault', vault], { tz: 'Europe/Paris' })).toMatch(/TZ/);
    expect(await fallback(['log', 'not written', '--vault', other])).toMatch(/another folder/);
    expect(await fallback(['log', '--vault', vault])).toMatch(/commander/);
    expect(fs.readdirSync(path.join(vault, 'Journal')).map((f) => fs.readFileSync(path.join(vault, 'Journal', f), 'utf8')).join('')).not.toContain('not written');
    // Through the command: another TZ than the daemon's is answered by the full path (the daemon's transport), alike.
    const paris = await quire(['tasks', '--due', 'today', '--vault', vault, '--verbose'], { TZ: 'Europe/Paris' });
    expect(paris.stderr).toContain('left this call to the full command line (another TZ than the daemon)');
    expect(paris.stderr).toContain('vault daemon: using the running one');
  });

  it('a daemon gone (stale socket): the thin client starts a new one and sends it the call, and the next call is thin again', async () => {
    const [pid] = world.daemonPids();
    process.kill(pid!, 'SIGKILL');
    await until(() => !alive(pid!));
    const again = await quire(['notes', 'Books', '--vault', vault, '--verbose']);
    expect(again).toMatchObject({ code: 0, stdout: 'Books/Dune.md\n' });
    expect(again.stderr).toContain('stale socket');
    expect(again.stderr).toContain('thin client');
    expect(again.stderr).not.toContain('waiting for the one started');
    const thin = await quire(['notes', 'Books', '--vault', vault, '--verbose']);
    expect(thin.stderr).toContain('thin client');
  });

  it('a daemon of another build (started before a rebuild) is replaced, never used', async () => {
    const v = world.makeVault();
    const { install: old, status } = await startOtherBuildDaemon(world, v);
    expect(status.build).toBe('an older build');
    const oldPid = status.pid;

    const r = await quire(['backlinks', 'Home.md', '--vault', v, '--verbose']);
    expect(r).toMatchObject({ code: 0, stdout: 'Books/Dune.md:3  Dune\nProject Alpha.md:6  Project Alpha\n' });
    expect(r.stderr).toContain('left this call to the full command line (this daemon runs build an older build');
    expect(r.stderr).toContain('vault daemon: the running one is of another build (an older build');
    expect(r.stderr).toContain('replacing it');
    expect(alive(oldPid)).toBe(false);
    expect((await statusOf(v)).status.build).toBe(build());
    const thin = await quire(['backlinks', 'Home.md', '--vault', v, '--verbose']);
    expect(thin.stderr).toContain('thin client');
    fs.rmSync(old, { recursive: true, force: true });
  }, 90_000);
});
