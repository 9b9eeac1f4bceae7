/**
 * Where the command line keeps what it derives from a vault folder, outside
 * that folder: the local mode's caches under the user's cache folder, and
 * the state of `quire serve --vault` (the data folder) under the user's
 * state folder, both named after the vault's real path (docs/quire-folder.md).
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * `<name>-<hash>`: the folder's name for people looking at the cache, and a
 * hash of its real path so two vaults with one name (or one vault reached
 * through a symlink and directly) get one entry each.
 */
export function vaultKey(root: string): string {
  const real = fs.realpathSync.native(path.resolve(root));
  const name = path.basename(real).replace(/[^A-Za-z0-9._-]+/g, '_').replace(/^\.+/, '').slice(0, 40) || 'vault';
  return `${name}-${createHash('sha256').update(real).digest('hex').slice(0, 16)}`;
}

const home = (env: NodeJS.ProcessEnv) => env.HOME || os.homedir();
/** XDG base directories must be absolute; a relative value is ignored (as the specification says). */
const xdg = (value: string | undefined, fallback: string) => (value && path.isAbsolute(value) ? value : fallback);
/** `$XDG_STATE_HOME/quire` (default `~/.local/state/quire`). */
const quireState = (env: NodeJS.ProcessEnv) => path.join(xdg(env.XDG_STATE_HOME, path.join(home(env), '.local', 'state')), 'quire');

/** `$XDG_CACHE_HOME/quire/vaults/<key>` (default `~/.cache/quire/vaults/<key>`): safe to delete at any time. */
export function localCacheDir(root: string, env: NodeJS.ProcessEnv = process.env): string {
  return path.join(xdg(env.XDG_CACHE_HOME, path.join(home(env), '.cache')), 'quire', 'vaults', vaultKey(root));
}

/** `$XDG_STATE_HOME/quire/<key>` (default `~/.local/state/quire/<key>`): the data folder of `quire serve --vault`. */
export function vaultServerDataDir(root: string, env: NodeJS.ProcessEnv = process.env): string {
  return path.join(quireState(env), vaultKey(root));
}

/** `$XDG_STATE_HOME/quire/locks` (default `~/.local/state/quire/locks`): one writer lock file per folder, shared by every Quire process of this user. */
export function writerLocksDir(env: NodeJS.ProcessEnv = process.env): string {
  return path.join(quireState(env), 'locks');
}
