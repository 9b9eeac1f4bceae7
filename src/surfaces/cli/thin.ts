/**
 * The thin client: what `bin/quire.js` runs before anything else. A call on
 * a vault whose daemon is running is sent to that daemon whole (argv, the
 * working folder, TZ); the daemon reads it with the command line's own
 * parsing, runs it on its warm index, and answers with what the command
 * prints and its exit code. This process then loads nothing but node:
 * built-ins, the daemon wire (protocol.js, socket-path.js) and
 * core/install.js: a warm call costs a bare Node start and a socket round
 * trip. Anything the daemon does not take (no daemon, a stale
 * socket, another build, a form its parser leaves to commander) returns
 * false, and the launcher runs the full command line (main.ts), which
 * replaces the daemon. With no daemon (or a stale socket) this starts one
 * (daemon/spawn.ts) and sends it the call as soon as it listens; only when
 * that daemon ends before listening, does not come up, or leaves the call
 * does the full command line run (docs/cli.md, "Thin client"). When the
 * build made the native thin client (native/thin.c), the launcher bin/quire
 * runs that instead, which sends the same request without starting Node.
 */
import { request, type DaemonReply, type RunRequest } from '../daemon/protocol.js';
import { buildId, daemonFiles, SOCKET_PATH_LIMIT, vaultRealPath } from '../daemon/socket-path.js';

/** Commands that never go to a daemon: they are the daemon, or keep their own index or server. */
const OWN_PROCESS = new Set(['serve', 'daemon', 'mcp', 'demo', 'admin', 'login', 'logout', 'completion', 'actions', 'help']);

/** The folder a command names with `--vault`, when the daemon may answer it whole; null otherwise. */
export function thinVault(argv: readonly string[]): string | null {
  const first = argv[0];
  if (first === undefined || first.startsWith('-') || OWN_PROCESS.has(first) || (first === 'action' && argv[1] !== 'run')) return null;
  const i = argv.lastIndexOf('--vault');
  return i > 0 && i + 1 < argv.length ? argv[i + 1]! : null;
}

/**
 * Runs the command through a running daemon, or the daemon itself for
 * `daemon run` (skipping the command table); false when the full command
 * line must run it.
 */
export async function runThin(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): Promise<boolean> {
  // The daemon a call starts (client.ts spawns exactly this): it opens its folder without loading the command table first.
  if (argv.length === 4 && argv[0] === 'daemon' && argv[1] === 'run' && argv[2] === '--vault') {
    try {
      await (await import('../daemon/daemon.js')).runDaemon(argv[3]!, env);
    } catch (e) {
      process.stderr.write(`quire: ${(e as Error).message}\n`);
      process.exitCode = 1;
    }
    return true;
  }
  if (env.QUIRE_DAEMON === 'off') return false;
  const dir = thinVault(argv);
  if (dir === null) return false;
  let vault: string;
  try {
    vault = vaultRealPath(dir);
  } catch {
    return false; // no such folder: the full command line says so
  }
  const files = daemonFiles(vault, env);
  const socket = files.socket;
  if (Buffer.byteLength(socket) > SOCKET_PATH_LIMIT) return false;
  const req: RunRequest = { op: 'run', build: buildId(), argv: [...argv], cwd: process.cwd(), tz: env.TZ ?? null };
  let reply: DaemonReply | null;
  try {
    try {
      reply = await request(socket, req);
    } catch (e) {
      // Nobody answered on the socket (no daemon, a stale one): nothing was sent.
      if ((e as { connected?: boolean }).connected) throw e;
      // The daemon starts now, and this client sends it the call once it listens: the full command line, whose
      // loading took CPU from the folder's opening, runs only when the daemon cannot be started or leaves the call.
      // Imported here: node:child_process is not loaded by a warm call.
      const spawn = await import('../daemon/spawn.js');
      const child = spawn.startEarly(vault, files, (e as NodeJS.ErrnoException).code, env, argv.includes('--verbose'));
      reply = child && (await spawn.sendWhenListening(child, socket, req));
      // Not sent: the full command line waits for that daemon (client.ts), or starts one, or indexes in process.
      if (reply === null) return false;
      // The daemon took the call or left it to the full command line: which checks it anew, as any running daemon.
      delete env[spawn.STARTED_ENV];
    }
  } catch (e) {
    // Gone mid-answer: a write may have happened, so the call is not made again.
    process.stderr.write(`quire: ${(e as Error).message}\n`);
    process.exitCode = 1;
    return true;
  }
  if (!reply.ok || !reply.run) {
    if (argv.includes('--verbose')) process.stderr.write(`vault daemon: the running one left this call to the full command line (${'fallback' in reply ? reply.fallback : 'it does not take whole commands'})\n`);
    return false;
  }
  for (const [fd, text] of reply.run.output) (fd === 1 ? process.stdout : process.stderr).write(text);
  process.exitCode = reply.run.code;
  return true;
}
