/**
 * Starting a folder's vault daemon: the one spawn shared by the full command
 * line (client.ts) and the thin client (thin.ts), which starts it as soon as
 * it finds none, before the command line loads (docs/cli.md, "Vault
 * daemon"). Node built-ins and core/install.ts only, like the thin client.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { installFile } from '../../core/install.js';

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

/**
 * The server's Node.js flags, the one list the launcher bin/quire also reads:
 * a daemon is long-running like `serve`, so it gets them however this client
 * was started (`quire`, which starts the client without flags, or `node bin/quire.js`).
 */
const SERVER_NODE_FLAGS = 'bin/server-node-flags';

/** Spawns `quire daemon run --vault VAULT` (VAULT a real path), detached, its output appended to `logFile`. */
export function startDaemon(vault: string, env: NodeJS.ProcessEnv, logFile: string): void {
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
}

/**
 * The thin client found no daemon on the socket (`code` ENOENT: no socket
 * file; ECONNREFUSED: a stale one, left by a crash): it starts one at once,
 * and tells the full command line it hands the call to (STARTED_ENV in
 * `env`, its own environment). Other errors are left to the full command
 * line, as is a spawn that fails: it tries again, or says why it cannot.
 */
export function startEarly(vault: string, files: { socket: string; log: string }, code: string | undefined, env: NodeJS.ProcessEnv, verbose: boolean): void {
  if (code !== 'ENOENT' && code !== 'ECONNREFUSED') return;
  try {
    startDaemon(vault, { ...env, [CALL_WAIT_ENV]: env[CALL_WAIT_ENV] || String(CALL_WAIT_SECONDS) }, files.log);
  } catch {
    return;
  }
  if (verbose) {
    process.stderr.write(
      code === 'ENOENT'
        ? `vault daemon: starting one for ${vault} (log: ${files.log})\n`
        : 'vault daemon: stale socket (a daemon that ended without cleaning up); starting a new one\n',
    );
  }
  env[STARTED_ENV] = files.socket;
}
