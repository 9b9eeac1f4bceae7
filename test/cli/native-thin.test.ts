/**
 * The native thin client (src/surfaces/cli/native/thin.c, built into
 * dist/surfaces/cli/native/thin): the launcher bin/quire runs it for a
 * `--vault` call; it asks the folder's daemon as the Node thin client does,
 * without starting Node, prints the same answer with the same exit code,
 * and leaves to `node bin/quire.js` (never asking twice) whatever the
 * daemon does not answer (docs/cli.md, "Native thin client").
 */
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { daemonFiles, request, runFrames, type DaemonStatus } from '../../src/surfaces/daemon/protocol.js';
import { QUIRE_BIN } from '../helpers/cli.js';
import { tempDir } from '../helpers/instance.js';
import { alive, cliWorld, SAMPLE, startOtherBuildDaemon, until } from './helpers.js';

const REPO = path.resolve(__dirname, '../..');
const LAUNCHER = path.join(REPO, 'bin/quire');
const NATIVE = path.join(REPO, 'dist/surfaces/cli/native/thin');
const CC = process.env.CC || 'cc';

function compilerMissing(): string | null {
  try {
    execFileSync(CC, ['--version'], { stdio: 'ignore' });
    return null;
  } catch (e) {
    return `no C compiler (${CC}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`;
  }
}
const missing = compilerMissing();
if (missing) console.warn(`test/cli/native-thin.test.ts: skipped, ${missing}; the launcher runs the Node thin client`);

const world = cliWorld();
const logs = path.join(world.runtime, '..', 'node-logs');
let calls = 0;
let vault: string;
const FILES = {
  ...SAMPLE,
  'Café “Ünïcode”.md': '# Café “Ünïcode”\n\nnaïve 東京 🎉 with "quoted" words and a back\\slash. [[Home]] #inbox\n',
  'Links.md': 'To [[Café “Ünïcode”]] and [[Home]].\n',
};

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
  /** Each CommonJS module a Node.js process loaded during the call (none: no Node started). */
  node: string[];
}

/** One call as a shell makes it: `cmd args` with the test's XDG folders, logging every Node.js start. */
function call(cmd: string[], args: string[], opts: { env?: Record<string, string>; cwd?: string } = {}): Promise<Run> {
  // Kept to the end: a daemon the call starts inherits the hook and goes on writing there.
  const log = path.join(logs, `${++calls}.txt`);
  fs.writeFileSync(log, '');
  const env = {
    ...process.env,
    ...world.env,
    NODE_OPTIONS: `--require=${path.join(REPO, 'test/helpers/record-requires-live.cjs')}`,
    QUIRE_IMPORT_LOG: log,
    ...opts.env,
  };
  return new Promise((resolve, reject) => {
    const child = spawn(cmd[0]!, [...cmd.slice(1), ...args], { env, cwd: opts.cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (d: Buffer) => out.push(d));
    child.stderr.on('data', (d: Buffer) => err.push(d));
    child.on('error', reject);
    child.on('close', (code) => {
      const node = fs.readFileSync(log, 'utf8').split('\n').filter(Boolean);
      resolve({ code, stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8'), node });
    });
  });
}
/** Through the launcher: the native client for a --vault call. */
const quire = (args: string[], opts?: { env?: Record<string, string>; cwd?: string }) => call([LAUNCHER], args, opts);
/** The Node thin client, as the launcher ran it before (node bin/quire.js). */
const nodeThin = (args: string[], opts?: { env?: Record<string, string>; cwd?: string }) => call([process.execPath, QUIRE_BIN], args, opts);
const socketOf = (dir: string) => daemonFiles(fs.realpathSync(dir), { ...process.env, ...world.env }).socket;
const statusOf = async (dir: string) => (await request(socketOf(dir), { op: 'status' })) as { ok: true; status: DaemonStatus };
const answer = (r: Run) => ({ code: r.code, stdout: r.stdout, stderr: r.stderr });

describe('runFrames (the daemon answer the native client reads)', () => {
  it('writes output frames, lines to the same stream joined, then the exit code; or one fallback frame', () => {
    const frame = (kind: string, body: Buffer | string) => {
      const b = Buffer.from(body);
      const head = Buffer.alloc(5);
      head.write(kind, 0, 'latin1');
      head.writeUInt32BE(b.length, 1);
      return Buffer.concat([head, b]);
    };
    const code = (n: number) => {
      const b = Buffer.alloc(4);
      b.writeInt32BE(n);
      return b;
    };
    const table: Array<[Parameters<typeof runFrames>[0], Buffer]> = [
      [{ ok: true, run: { output: [], code: 0 } }, frame('x', code(0))],
      [
        { ok: true, run: { output: [[1, 'a\n'], [1, 'é\n'], [2, 'oops\n'], [1, 'b\n']], code: 2 } },
        Buffer.concat([frame('o', 'a\né\n'), frame('e', 'oops\n'), frame('o', 'b\n'), frame('x', code(2))]),
      ],
      [{ ok: false, fallback: 'another TZ than the daemon' }, frame('f', 'another TZ than the daemon')],
      [{ ok: false, status: 500, error: { code: 'internal', message: 'broken' } }, frame('f', 'broken')],
    ];
    for (const [reply, bytes] of table) expect([reply, runFrames(reply).toString('hex')]).toEqual([reply, bytes.toString('hex')]);
  });
});

describe.skipIf(missing !== null)('the native thin client', () => {
  beforeAll(async () => {
    fs.mkdirSync(logs, { recursive: true });
    vault = world.makeVault(FILES);
    const first = await nodeThin(['notes', '--vault', vault, '--verbose']);
    expect(first.stderr).toContain('vault daemon: starting one');
  }, 60_000);
  afterAll(() => world.cleanup());

  it('is built by npm run build, and compiles without a warning', () => {
    expect(fs.existsSync(NATIVE)).toBe(true);
    const out = path.join(tempDir('quire-native-cc-'), 'thin');
    const warnings = execFileSync(CC, ['-std=c99', '-pedantic', '-Wall', '-Wextra', '-Werror', '-O2', '-o', out, path.join(REPO, 'src/surfaces/cli/native/thin.c')], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    expect(warnings).toBe('');
    fs.rmSync(path.dirname(out), { recursive: true, force: true });
  });

  it('answers a warm call through the launcher without starting Node', async () => {
    const r = await quire(['backlinks', 'Home.md', '--vault', vault, '--verbose']);
    expect(r).toEqual({
      code: 0,
      stdout: 'Books/Dune.md:3  Dune\nCafé “Ünïcode”.md:3  Café “Ünïcode”\nLinks.md:1  Links\nProject Alpha.md:6  Project Alpha\n',
      stderr: `vault daemon: the running one for ${fs.realpathSync(vault)} answered the whole command (thin client)\n`,
      node: [],
    });
    // Through a chain of symbolic links to the launcher, as npm installs the command.
    const bin = tempDir('quire-native-bin-');
    fs.symlinkSync(LAUNCHER, path.join(bin, 'quire-abs'));
    fs.symlinkSync('quire-abs', path.join(bin, 'quire'));
    const linked = await call([path.join(bin, 'quire')], ['backlinks', 'Home.md', '--vault', vault]);
    expect(linked).toMatchObject({ code: 0, stdout: r.stdout, node: [] });
  });

  it('prints what the Node thin client prints, byte for byte, with its exit code', async () => {
    const commands: string[][] = [
      ['backlinks', 'Home'],
      ['search', 'sand'],
      ['tag', '#inbox'],
      ['notes'],
      ['notes', 'Books'],
      ['show', 'project alpha'],
      ['show', 'No Such Note'],
      ['search', 'x', '--limit', 'many'],
      ['action', 'run', 'backlinks', '--input', '{"query":{"path":"Home.md"}}'],
      // Spaces, quotes, a back slash, a tab and text beyond ASCII in the arguments.
      ['search', 'naïve 東京'],
      ['search', '"quoted" words'],
      ['search', 'back\\slash\tand 🎉'],
      ['show', 'Café “Ünïcode”'],
      ['backlinks', 'Café “Ünïcode”'],
    ];
    const codes = new Set<number | null>();
    for (const c of commands) {
      for (const form of [[...c, '--vault', vault], [...c, '--json', '--vault', vault]]) {
        const [native, node] = await Promise.all([quire(form), nodeThin(form)]);
        expect([form, answer(native)]).toEqual([form, answer(node)]);
        expect([form, native.node]).toEqual([form, []]);
        expect(node.node).toContain(`file://${path.join(REPO, 'dist/surfaces/cli/thin.cjs')}`);
        codes.add(native.code);
      }
    }
    expect([...codes].sort()).toEqual([0, 1, 2]);
  }, 120_000);

  it('finds the daemon of a folder named relatively or through a symbolic link', async () => {
    const link = path.join(tempDir('quire-native-link-'), 'to vault');
    fs.symlinkSync(vault, link);
    const parent = path.dirname(vault);
    const want = await nodeThin(['backlinks', 'Home', '--vault', vault]);
    for (const [dir, cwd] of [
      [path.basename(vault), parent],
      [`./${path.basename(vault)}/`, parent],
      ['.', vault],
      [link, REPO],
      [path.basename(link), path.dirname(link)],
    ] as const) {
      const r = await quire(['backlinks', 'Home', '--vault', dir], { cwd });
      expect([dir, r]).toEqual([dir, { ...answer(want), node: [] }]);
    }
  });

  it('finds the socket by the XDG_RUNTIME_DIR, XDG_CACHE_HOME and HOME rules of socket-path.ts', async () => {
    const v = world.makeVault();
    const root = tempDir('quire-native-xdg-');
    const variants: Array<Record<string, string>> = [
      // Normalised as path.join does.
      { XDG_RUNTIME_DIR: `${root}/rt/./a/..//` },
      { XDG_RUNTIME_DIR: '', XDG_CACHE_HOME: `${root}/cache/` },
      // Relative XDG folders are ignored.
      { XDG_RUNTIME_DIR: 'rt', XDG_CACHE_HOME: 'cache', HOME: `${root}/home` },
    ];
    for (const env of variants) {
      const first = await nodeThin(['backlinks', 'Home', '--vault', v, '--verbose'], { env });
      expect([env, first.stderr]).toEqual([env, expect.stringContaining('vault daemon: starting one')]);
      const native = await quire(['backlinks', 'Home', '--vault', v], { env });
      expect([env, native]).toEqual([env, { code: 0, stdout: first.stdout, stderr: '', node: [] }]);
      expect((await nodeThin(['daemon', 'stop', '--vault', v], { env })).code).toBe(0);
    }
    fs.rmSync(root, { recursive: true, force: true });
  }, 60_000);

  it('sends the request the Node thin client sends (asking for frames), once, and fails like it when the daemon hangs up', async () => {
    const v = world.makeVault({ 'A.md': '# A\n' });
    const socket = socketOf(v);
    fs.mkdirSync(path.dirname(socket), { recursive: true });
    const requests: Array<Record<string, unknown>> = [];
    // Reads the request, then closes without answering: a daemon that died mid-call.
    const server = net.createServer((conn) => {
      let text = '';
      conn.on('data', (d) => {
        text += d;
        if (text.includes('\n')) {
          requests.push(JSON.parse(text.slice(0, text.indexOf('\n'))) as Record<string, unknown>);
          conn.destroy();
        }
      });
    });
    await new Promise<void>((r) => server.listen(socket, r));
    try {
      const args = ['search', 'a "quoted" word', 'naïve 東京 🎉', 'back\\slash', 'tab\there', 'ctl\u0001\u001f', '--vault', v];
      const native = await quire(args);
      const node = await nodeThin(args);
      const broken = { code: 1, stdout: '', stderr: 'quire: The vault daemon closed the connection without answering\n' };
      expect(answer(native)).toEqual(broken);
      expect(answer(node)).toEqual(broken);
      expect(native.node).toEqual([]);
      // One request each: neither sent the call again nor ran the full command line (which would ask the daemon's status).
      expect(requests).toEqual([
        { op: 'run', build: fs.readFileSync(path.join(REPO, 'dist/.built'), 'utf8').trim(), argv: args, cwd: process.cwd(), tz: 'UTC', wire: 'frames' },
        { op: 'run', build: fs.readFileSync(path.join(REPO, 'dist/.built'), 'utf8').trim(), argv: args, cwd: process.cwd(), tz: 'UTC' },
      ]);
    } finally {
      await new Promise((r) => server.close(r));
    }
  });

  it('leaves to node bin/quire.js with the same arguments what it does not send: no daemon yet, QUIRE_DAEMON=off, no command first', async () => {
    const v = world.makeVault();
    const first = await quire(['backlinks', 'Home', '--vault', v, '--verbose']);
    expect(first).toMatchObject({ code: 0, stdout: 'Books/Dune.md:3  Dune\nProject Alpha.md:6  Project Alpha\n' });
    expect(first.stderr).toContain('vault daemon: starting one');
    expect(first.node[0]).toBe(`file://${path.join(REPO, 'bin/quire.js')}`);
    // The daemon it started answers the next call.
    expect((await quire(['backlinks', 'Home', '--vault', v])).node).toEqual([]);
    // Another TZ than the daemon's: the daemon leaves it (said once: bin/quire.js does not ask again), the full command line answers.
    const paris = await quire(['tasks', '--due', 'today', '--vault', v, '--verbose'], { env: { TZ: 'Europe/Paris' } });
    expect(paris.code).toBe(0);
    expect(paris.stderr.split('left this call to the full command line (another TZ than the daemon)').length).toBe(2);
    expect(paris.stderr).toContain('vault daemon: using the running one');
    const off = await quire(['backlinks', 'Home', '--vault', v, '--verbose'], { env: { QUIRE_DAEMON: 'off' } });
    expect(off.stdout).toBe(first.stdout);
    expect(off.stderr).toContain('vault daemon: off (QUIRE_DAEMON=off)');
    const help = await quire(['--vault', v, '--help']);
    expect(help.stdout).toContain('Usage: quire');
    expect(help.node.length).toBeGreaterThan(0);
  }, 60_000);

  it('falls back on a stale socket (a daemon that crashed), and the next call is native again', async () => {
    const v = world.makeVault();
    await quire(['notes', '--vault', v]);
    const pid = (await statusOf(v)).status.pid;
    process.kill(pid, 'SIGKILL');
    await until(() => !alive(pid));
    expect(fs.existsSync(socketOf(v))).toBe(true);
    const again = await quire(['notes', 'Books', '--vault', v, '--verbose']);
    expect(again).toMatchObject({ code: 0, stdout: 'Books/Dune.md\n' });
    expect(again.stderr).toContain('stale socket');
    expect(again.node.length).toBeGreaterThan(0);
    const native = await quire(['notes', 'Books', '--vault', v, '--verbose']);
    expect(native).toMatchObject({ code: 0, stdout: 'Books/Dune.md\n', node: [] });
  }, 60_000);

  it('leaves a daemon of another build to the full command line, which replaces it; the daemon is asked once', async () => {
    const v = world.makeVault();
    const { install: old, status: st } = await startOtherBuildDaemon(world, v);
    expect(st.build).toBe('an older build');

    const r = await quire(['backlinks', 'Home.md', '--vault', v, '--verbose']);
    expect(r).toMatchObject({ code: 0, stdout: 'Books/Dune.md:3  Dune\nProject Alpha.md:6  Project Alpha\n' });
    // Said once: by the native client; bin/quire.js did not ask again.
    expect(r.stderr.split('left this call to the full command line (this daemon runs build an older build').length).toBe(2);
    expect(r.stderr).toContain('replacing it');
    expect(alive(st.pid)).toBe(false);
    expect((await quire(['backlinks', 'Home.md', '--vault', v])).node).toEqual([]);
    fs.rmSync(old, { recursive: true, force: true });
  }, 90_000);
});
