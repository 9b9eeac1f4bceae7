/**
 * Starting a folder's vault daemon: the one spawn shared by the full command
 * line (client.ts) and the thin client (thin.ts), which starts it as soon as
 * it finds none and sends it the first call itself (docs/cli.md, "Vault
 * daemon"). Node built-ins, core/install.ts and the daemon wire only, like
 * the thin client.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { installFile } from '../../core/install.js';
import { request, type DaemonReply, type DaemonRequest } from './protocol.js';

/**
 * Set by a thin client that started the daemon itself, to the socket that
 * daemon will take: the full command line it hands the call to then waits
 * for that socket instead of starting a second daemon.
 */
export const STARTED_ENV = 'QUIRE_DAEMON_STARTED';

/**
 * Seconds a daemon started by the thin client waits for its first call
 * before it leaves (daemon.ts): the thin client starts it before the command
 * is read, and the full command line may then not call it (a mistyped
 * command, a form that runs in process).
 */
export const CALL_WAIT_ENV = 'QUIRE_DAEMON_CALL_WAIT';
const CALL_WAIT_SECONDS = 60;

/** How long a call waits for a daemon it started to take its socket (not to finish indexing: the call waits for that). */
export const START_TIMEOUT_MS = 15_000;

/**
 * While waiting for a daemon's socket, a connection is tried whenever the
 * socket's folder changes (inotify: the daemon binds) and at this pace
 * besides: the moment between the socket file appearing and the daemon
 * listening, and a folder that cannot be watched.
 */
const RETRY_MS = 50;

/**
 * The server's Node.js flags, the one list the launcher bin/quire also reads:
 * a daemon is long-running like `serve`, so it gets them however this client
 * was started (`quire`, which starts the client without flags, or `node bin/quire.js`).
 */
const SERVER_NODE_FLAGS = 'bin/server-node-flags';

/** Spawns `quire daemon run --vault VAULT` (VAULT a real path), detached, its output appended to `logFile`. */
export function startDaemon(vault: string, env: NodeJS.ProcessEnv, logFile: string): ChildProcess {
  fs.mkdirSync(path.dirname(logFile), { recursive: true, mode: 0o700 });
  const log = fs.openSync(logFile, 'a');
  const flags = fs.readFileSync(installFile(SERVER_NODE_FLAGS), 'utf8').trim().split(/\s+/);
  const child = spawn(process.execPath, [...flags, fileURLToPath(installFile('bin/quire.js')), 'daemon', 'run', '--vault', vault], {
    detached: true,
    stdio: ['ignore', log, log],
    env,
    cwd: '/',
  });
  child.unref();
  fs.closeSync(log);
  return child;
}

/**
 * The thin client found no daemon on the socket (`code` ENOENT: no socket
 * file; ECONNREFUSED: a stale one, left by a crash): it starts one at once,
 * and tells the full command line it may hand the call to (STARTED_ENV in
 * `env`, its own environment). Returns the daemon's process; null when it
 * started none: other errors are left to the full command line, as is a
 * spawn that fails (it tries again, or says why it cannot).
 */
export function startEarly(vault: string, files: { socket: string; log: string }, code: string | undefined, env: NodeJS.ProcessEnv, verbose: boolean): ChildProcess | null {
  if (code !== 'ENOENT' && code !== 'ECONNREFUSED') return null;
  let child: ChildProcess;
  try {
    child = startDaemon(vault, { ...env, [CALL_WAIT_ENV]: env[CALL_WAIT_ENV] || String(CALL_WAIT_SECONDS) }, files.log);
  } catch {
    return null;
  }
  if (verbose) {
    process.stderr.write(
      code === 'ENOENT'
        ? `vault daemon: starting one for ${vault} (log: ${files.log})\n`
        : 'vault daemon: stale socket (a daemon that ended without cleaning up); starting a new one\n',
    );
  }
  env[STARTED_ENV] = files.socket;
  return child;
}

/**
 * Sends `req` on `socket` as soon as a daemon listens there: the thin client
 * sends the first call itself to the daemon it just started (`child`),
 * which answers once its folder is open, so the full command line never
 * loads beside the opening. The wait costs no CPU: a connection is tried
 * when the socket's folder changes and every RETRY_MS. Resolves null when
 * nothing was sent: `child` ended first (it failed to start, or another
 * daemon won the socket and is not answering either), or nobody listened
 * within `timeoutMs`. Rejects when the daemon went away after the request
 * was sent (as a warm call: not sent again).
 */
export function sendWhenListening(child: ChildProcess, socket: string, req: DaemonRequest, timeoutMs = START_TIMEOUT_MS): Promise<DaemonReply | null> {
  return new Promise((resolve, reject) => {
    let done = false;
    let trying = false;
    let again = false;
    let exited = child.exitCode !== null || child.signalCode !== null;
    let watcher: fs.FSWatcher | null = null;
    const finish = (reply: DaemonReply | null, error?: Error) => {
      if (done) return;
      done = true;
      watcher?.close();
      clearInterval(retry);
      clearTimeout(deadline);
      child.off('exit', onExit);
      if (error) reject(error);
      else resolve(reply);
    };
    const attempt = () => {
      if (done) return;
      if (trying) {
        again = true;
        return;
      }
      trying = true;
      // An attempt begun after the daemon ended is the last: its socket is there (another daemon's), or never will be.
      const last = exited;
      request(socket, req).then(
        (reply) => finish(reply),
        (e: Error & { connected?: boolean }) => {
          trying = false;
          if (e.connected) return finish(null, e);
          if (last) return finish(null);
          if (again) {
            again = false;
            attempt();
          }
        },
      );
    };
    const onExit = () => {
      exited = true;
      attempt();
    };
    child.once('exit', onExit);
    const name = path.basename(socket);
    try {
      watcher = fs.watch(path.dirname(socket), (_event, file) => {
        if (file === null || file === name) attempt();
      });
      watcher.on('error', () => undefined);
    } catch {
      /* the retry timer alone */
    }
    const retry = setInterval(attempt, RETRY_MS);
    const deadline = setTimeout(() => finish(null), timeoutMs);
    attempt();
  });
}
