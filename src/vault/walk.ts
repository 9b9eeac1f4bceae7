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
 * itself (10k files: ~70 ms this way, ~450 ms with fs.promises). A large
 * walk's files are statted on a thread of their own (`StatThread`,
 * src/vault/stat-worker.ts), in batches as the folder listings find them:
 * the lstat calls were most of a warm start's walk (10k files: ~100 ms of
 * the main thread, which reads the index snapshot meanwhile), and a
 * callback per lstat cost the main thread about as much as the calls.
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
import type { Worker } from 'node:worker_threads';
import { startWorker } from '../core/worker.js';

/** What a walk gives of a file's lstat (a followed link's: its target's stat). */
export type WalkStat = Pick<fs.Stats, 'size' | 'mtimeMs' | 'ctimeMs' | 'birthtimeMs' | 'ino'>;

export interface WalkedFile {
  /** Home-relative, forward slashes. */
  rel: string;
  /** Absolute, under the Home's real path. */
  abs: string;
  /** lstat of the file; for a followed link, stat of its target. */
  st: WalkStat;
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
/** Files waiting for their lstat that make a batch; a walk that never fills one stats its files on the main thread. */
const STAT_BATCH = 512;
/** Numbers per file in `lstatColumns`: whether it is a regular file (1) or not (0: gone, a folder, a link…), then the WalkStat fields. */
const STAT_WIDTH = 6;

/** The lstat of each path as STAT_WIDTH numbers: 1, size, mtimeMs, ctimeMs, birthtimeMs, ino for a regular file; 0 and zeros otherwise. */
export function lstatColumns(paths: readonly string[]): Float64Array {
  const out = new Float64Array(paths.length * STAT_WIDTH);
  for (let i = 0; i < paths.length; i++) {
    const st = fs.lstatSync(paths[i]!, { throwIfNoEntry: false });
    if (st === undefined || !st.isFile()) continue;
    const o = i * STAT_WIDTH;
    out[o] = 1;
    out[o + 1] = st.size;
    out[o + 2] = st.mtimeMs;
    out[o + 3] = st.ctimeMs;
    out[o + 4] = st.birthtimeMs;
    out[o + 5] = st.ino;
  }
  return out;
}

/**
 * A thread that answers batches of paths with `lstatColumns`, in the order
 * asked. If it cannot start or dies, the batches it had not answered are
 * statted on the main thread: the walk's result does not depend on it.
 */
class StatThread {
  private readonly worker: Worker;
  private readonly waiting: { paths: string[]; resolve: (cols: Float64Array) => void }[] = [];
  private failed = false;

  constructor() {
    this.worker = startWorker('vault/stat-worker.js', null, 'quire-stat');
    this.worker.on('message', (cols: Float64Array) => this.waiting.shift()?.resolve(cols));
    const fail = () => {
      this.failed = true;
      for (const w of this.waiting.splice(0)) w.resolve(lstatColumns(w.paths));
    };
    this.worker.on('error', fail);
    this.worker.on('exit', fail);
  }

  lstat(paths: string[]): Promise<Float64Array> {
    if (this.failed) return Promise.resolve(lstatColumns(paths));
    return new Promise((resolve) => {
      this.waiting.push({ paths, resolve });
      this.worker.postMessage(paths);
    });
  }

  close(): void {
    this.worker.removeAllListeners('exit');
    void this.worker.terminate();
  }
}

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
  // Files found by the listings, waiting for their lstat; `hooks.file` sees them in the order found.
  let pending: string[] = [];
  let thread: StatThread | null = null;
  let delivered: Promise<void> = Promise.resolve();
  const deliver = (rels: string[], abs: string[], cols: Float64Array) => {
    for (let i = 0; i < rels.length; i++) {
      const o = i * STAT_WIDTH;
      if (cols[o] !== 1) continue; // gone since its folder was read, or no longer a file
      hooks.file({ rel: rels[i]!, abs: abs[i]!, st: { size: cols[o + 1]!, mtimeMs: cols[o + 2]!, ctimeMs: cols[o + 3]!, birthtimeMs: cols[o + 4]!, ino: cols[o + 5]! }, link: false });
    }
  };
  const sendPending = () => {
    const rels = pending;
    pending = [];
    const abs = rels.map(absOf);
    const cols = (thread ??= new StatThread()).lstat(abs);
    delivered = delivered.then(async () => deliver(rels, abs, await cols));
    delivered.catch(() => undefined); // awaited below, unless the walk stopped on an error first
  };
  try {
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
          if (pending.push(child) === STAT_BATCH) sendPending();
        } else if (hooks.follow && ent.isSymbolicLink()) {
          const st = outsideTarget(absOf(child), rootAbs);
          if (st?.isFile()) hooks.file({ rel: child, abs: absOf(child), st, link: true });
          else if (st?.isDirectory()) enter(child, st);
        }
        if (--budget === 0) {
          budget = SLICE;
          await new Promise((resolve) => setImmediate(resolve));
        }
      }
    }
    if (thread !== null) {
      if (pending.length > 0) sendPending();
      await delivered;
    } else {
      const abs = pending.map(absOf);
      deliver(pending, abs, lstatColumns(abs));
    }
  } finally {
    (thread as StatThread | null)?.close();
  }
}
