/**
 * Where a folder's vault daemon listens, and which build it must be of:
 * the one rule shared by the daemon, the full command line and the thin
 * client (thin.ts), which loads nothing but node: built-ins, this module and
 * core/install.ts (docs/cli.md, "Thin client"). The native thin client
 * (../cli/native/thin.c) computes the same socket path and build id in C:
 * a change here goes there too (test/cli/native-thin.test.ts checks both
 * reach the same daemon).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { codeFile } from '../../core/install.js';

/** The real path of a vault folder: one daemon per folder, however it is named on the command line. */
export function vaultRealPath(dir: string): string {
  return fs.realpathSync.native(path.resolve(dir));
}

/**
 * Where the vault daemons' sockets and notes live: `$XDG_RUNTIME_DIR/quire`
 * (a per-user tmpfs, emptied at logout), else `$XDG_CACHE_HOME/quire/run`
 * (default `~/.cache/quire/run`). Never inside a vault. XDG folders must be
 * absolute; a relative value is ignored, as the specification says.
 */
export function daemonRuntimeDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.XDG_RUNTIME_DIR && path.isAbsolute(env.XDG_RUNTIME_DIR)) return path.join(env.XDG_RUNTIME_DIR, 'quire');
  const cache = env.XDG_CACHE_HOME && path.isAbsolute(env.XDG_CACHE_HOME) ? env.XDG_CACHE_HOME : path.join(env.HOME || os.homedir(), '.cache');
  return path.join(cache, 'quire', 'run');
}

/**
 * FNV-1a (64 bits) of `text`'s UTF-8 bytes, as 16 hex digits. A name for a
 * folder, not a secret: node:crypto's SHA-256 did the same job, but loading
 * node:crypto cost each warm call about 2 ms of its start (docs/cli.md, "Thin client").
 */
export function fnv1a64(text: string): string {
  let h = 0xcbf29ce484222325n;
  for (const byte of Buffer.from(text, 'utf8')) h = ((h ^ BigInt(byte)) * 0x100000001b3n) & 0xffffffffffffffffn;
  return h.toString(16).padStart(16, '0');
}

/** `<runtime>/<hash>.sock`, with `<hash>.json` (pid, vault) and `<hash>.log` beside it; a hash keeps the path under the socket length limit. */
export function daemonFiles(realVault: string, env: NodeJS.ProcessEnv = process.env): { socket: string; info: string; log: string } {
  const dir = daemonRuntimeDir(env);
  const h = fnv1a64(realVault);
  return { socket: path.join(dir, `${h}.sock`), info: path.join(dir, `${h}.json`), log: path.join(dir, `${h}.log`) };
}

/** Unix socket paths longer than this do not fit in `sockaddr_un` on every system. */
export const SOCKET_PATH_LIMIT = 100;

const STAMP = codeFile('.built');

/**
 * This build of Quire: the time `npm run build` wrote dist/ (its `.built`
 * stamp), read fresh on each call. A daemon remembers the one it started
 * with; a client of another build does not use it. Run from the sources
 * (tests), there is no stamp.
 */
export function buildId(): string {
  try {
    return fs.readFileSync(STAMP, 'utf8').trim();
  } catch {
    return 'source';
  }
}
