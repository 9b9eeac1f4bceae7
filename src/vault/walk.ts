/**
 * The one walk of a Home's tree: the watcher's (its start-up walk, a new
 * folder, a rescan), whose start-up walk is also the list the Vault's
 * opening scan reads (src/vault/vault.ts), and the Vault's own when it does
 * not watch. One walk at start-up rather than two: the second cost about as
 * much again (10k files: ~0.35 s of the main thread, mostly a promise per
 * lstat).
 *
 * Synchronous calls in slices of SLICE entries, with the event loop free
 * between slices: a promise per lstat costs several times the system call
 * itself (10k files: ~70 ms this way, ~450 ms with fs.promises).
 *
 * Folders are walked breadth-first, each folder's `folder` hook called
 * before it is read (the watcher opens its watch there, so a file created
 * after the read still makes an event), and a folder reached twice (a link
 * loop, two links to one folder) is walked once.
 *
 * Symlinks are not followed: a link that stays in the Home would index its
 * target twice (the target is indexed under its own path), and one that
 * leaves it would index what it points at. With `follow`, links out of the
 * Home are followed, files and folders, under the link's path.
 */
import fs from 'node:fs';
import path from 'node:path';

export interface WalkedFile {
  /** Home-relative, forward slashes. */
  rel: string;
  /** lstat of the file; for a followed link, stat of its target. */
  st: fs.Stats;
  /** Reached through a symlink out of the Home (`follow` only): to be opened following the link. */
  link: boolean;
}

export interface WalkHooks {
  /** Follow symlinks that lead out of the Home. */
  follow: boolean;
  ignored: (rel: string) => boolean;
  /** A folder about to be read, with its stat (lstat; the target's for a followed link). */
  folder?: (rel: string, st: fs.Stats) => void;
  /** A folder that was read. */
  listed?: (rel: string) => void;
  /** A regular file (or, with `follow`, a link out to one). */
  file: (f: WalkedFile) => void;
  /**
   * A folder that could not be read, for a reason other than being gone or
   * no longer a folder. Without this hook the walk throws.
   */
  error?: (rel: string, e: unknown) => void;
}

const SLICE = 1000;

const errCode = (e: unknown): string | undefined => (e as NodeJS.ErrnoException | undefined)?.code;

function lstatOrNull(abs: string): fs.Stats | null {
  try {
    return fs.lstatSync(abs);
  } catch {
    return null; // vanished since the folder was read
  }
}

/** Whether the real path `real` is `rootReal` or under it. */
export function isInside(rootReal: string, real: string): boolean {
  return real === rootReal || real.startsWith(rootReal.endsWith(path.sep) ? rootReal : rootReal + path.sep);
}

/** What a link out of the Home leads to (stat of its target); null for a link inside it, a dangling link or a loop. */
function outsideTarget(abs: string, rootAbs: string): fs.Stats | null {
  let real: string;
  try {
    real = fs.realpathSync(abs);
  } catch {
    return null;
  }
  if (isInside(rootAbs, real)) return null;
  try {
    return fs.statSync(real);
  } catch {
    return null;
  }
}

/**
 * Walks the tree under `from` ('' for the whole Home) of the Home whose
 * real path is `rootAbs`, calling the hooks; resolves when done.
 */
export async function walkTree(rootAbs: string, from: string, hooks: WalkHooks): Promise<void> {
  // Concatenated, not path.join: `rel` is made of names a folder listing gave, so there is nothing to normalize (10k files: ~10 ms of a warm start).
  const prefix = rootAbs.endsWith(path.sep) ? rootAbs : rootAbs + path.sep;
  const absOf = (rel: string) => (rel === '' ? rootAbs : prefix + (path.sep === '/' ? rel : rel.replaceAll('/', path.sep)));
  /** What stands at `rel`: lstat, or with `follow` the target of a link out; null when gone or not followed. */
  const entryStat = (rel: string): fs.Stats | null => {
    const st = lstatOrNull(absOf(rel));
    if (st === null || st.isFile() || st.isDirectory()) return st;
    return st.isSymbolicLink() && hooks.follow ? outsideTarget(absOf(rel), rootAbs) : null;
  };
  const walked = new Set<string>();
  const queue: string[] = [];
  const enter = (rel: string, st: fs.Stats) => {
    const key = `${st.dev}:${st.ino}`;
    if (walked.has(key)) return;
    walked.add(key);
    hooks.folder?.(rel, st);
    queue.push(rel);
  };
  const start = entryStat(from);
  if (start === null || !start.isDirectory()) return;
  enter(from, start);
  let budget = SLICE;
  for (let q = 0; q < queue.length; q++) {
    const rel = queue[q]!;
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(absOf(rel), { withFileTypes: true });
    } catch (e) {
      const code = errCode(e);
      if (code === 'ENOENT' || code === 'ENOTDIR' || code === 'ELOOP') continue;
      if (!hooks.error) throw e;
      hooks.error(rel, e);
      continue;
    }
    hooks.listed?.(rel);
    for (const ent of entries) {
      const child = rel === '' ? ent.name : `${rel}/${ent.name}`;
      if (hooks.ignored(child)) continue;
      if (ent.isDirectory()) {
        const st = lstatOrNull(absOf(child));
        if (st?.isDirectory()) enter(child, st);
      } else if (ent.isFile()) {
        const st = lstatOrNull(absOf(child));
        if (st?.isFile()) hooks.file({ rel: child, st, link: false });
      } else if (hooks.follow && ent.isSymbolicLink()) {
        const st = outsideTarget(absOf(child), rootAbs);
        if (st?.isFile()) hooks.file({ rel: child, st, link: true });
        else if (st?.isDirectory()) enter(child, st);
      }
      if (--budget === 0) {
        budget = SLICE;
        await new Promise((resolve) => setImmediate(resolve));
      }
    }
  }
}
