/**
 * Watches a Home for changes made by other programs (Obsidian, vim, git,
 * sync tools) and reports them as debounced batches of
 * `{ kind: 'upsert' | 'delete', path }` with Home-relative paths.
 *
 * How (docs/vault-disk.md has the reasoning):
 * - One fs.watch per FOLDER (one inotify watch on Linux), none per file: a
 *   100k-file Home cannot afford a watch per file. The walk opens a
 *   folder's watch before it reads the folder, and keeps the folder's inode
 *   with it: a folder deleted and made again under the same name (a git
 *   checkout does this) gets a new watch. File names come from the folder
 *   watches' events, and the state of each named path is read with lstat
 *   when its batch is built.
 * - The watcher keeps the signature (inode, size, mtime) of every file it
 *   knows. A batch is the difference between that and the disk, so any
 *   sequence of events — a `git checkout` rewriting 1,000 files, a rename,
 *   an editor's save dance — collapses to the final state.
 * - Settle rule: a path is reported once it has had no event for `settleMs`
 *   and its mtime is at least `settleMs` old; a path that keeps changing is
 *   still reported every `maxWaitMs`. No awaitWriteFinish polling.
 * - A folder that appears is walked; a vanished folder deletes every file
 *   known under it.
 * - Symlinks are not followed (see `followSymlinks`).
 */
import { realpathSync, watch as fsWatch, type FSWatcher, type Stats } from 'node:fs';
import { lstat, readFile, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { AppError } from '../core/errors.js';
import { etagOf } from './etag.js';
import { fsError } from './errors.js';
import { isIgnoredPath } from './ignore.js';
import { sameSig, type FileSig, type OwnWriteCheck } from './recent.js';
import { walkTree, type WalkedFile, type WalkStat } from './walk.js';

export interface WatchChange {
  kind: 'upsert' | 'delete';
  /** Home-relative, forward slashes. */
  path: string;
  /** Size in bytes of the file now (upserts only). */
  size?: number;
  /** Present and true when the change is the server's own write/delete/move (see RecentWrites). */
  own?: true;
}

export interface WatchOptions {
  /** Receives each batch; the next batch waits until a returned promise settles. */
  onBatch: (changes: WatchChange[]) => void | Promise<void>;
  /** Watch errors (e.g. the inotify watch limit) and onBatch failures. Default: console.error. */
  onError?: (err: AppError) => void;
  /** Do not report the files present at start (they are still learned). Default true. */
  ignoreInitial?: boolean;
  /** Quiet time before a batch is built. Default 100 ms. */
  debounceMs?: number;
  /** Longest a pending change waits under continuous activity. Default 1000 ms. */
  maxWaitMs?: number;
  /** A path must be quiet (no event, mtime not newer) this long to be reported. Default = debounceMs. */
  settleMs?: number;
  /** Largest batch; bigger change sets go out as consecutive batches (deletes first). Default 1000. */
  maxBatchSize?: number;
  /** The Home's record of its own writes; matching changes carry `own: true`. */
  ownWrites?: OwnWriteCheck;
  /** Leave the server's own changes out of batches instead of flagging them. Default false. */
  dropOwnWrites?: boolean;
  /** Extra paths to ignore (Home-relative), on top of the built-in list (src/vault/ignore.ts). */
  ignore?: (rel: string) => boolean;
  /** Walk the whole Home every so often to catch missed events (network file systems, watch limit). 0 = never (default). */
  rescanIntervalMs?: number;
  /**
   * Follow symlinks that lead out of the Home (files and folders), reported
   * under the link's path. Default false: no link is followed. Links that
   * stay inside the Home are never followed either way: their targets are
   * watched under their own paths.
   */
  followSymlinks?: boolean;
  /**
   * Called for every file the start-up walk finds, before `ready` resolves
   * (with its lstat; for a followed link, its target's stat). The Vault's
   * opening scan reads this list rather than walking the Home a second time.
   */
  onInitialFile?: (f: WalkedFile) => void;
}

export interface WatcherStats {
  knownFiles: number;
  knownFolders: number;
  /** Folders with an fs.watch (each one inotify watch on Linux). */
  watchedFolders: number;
  pendingPaths: number;
  /** Nothing waiting: no event pending, no batch being built or delivered. */
  idle: boolean;
}

export interface HomeWatcher {
  /** Absolute, real path of the watched root. */
  readonly root: string;
  /** Resolves when the initial scan is done (and, without ignoreInitial, its batches delivered). */
  readonly ready: Promise<void>;
  /** Walks the whole Home now and reports every difference; resolves when delivered. */
  rescan(): Promise<void>;
  stats(): WatcherStats;
  /**
   * Checks a path at the next batch as if an event had named it. For the
   * server's own changes: the index learns them at once, and the watcher
   * must know them too, or a folder removed right after would leave them
   * behind in the index.
   */
  look(rel: string): void;
  close(): Promise<void>;
}

interface Pending {
  first: number;
  last: number;
}

function errCode(e: unknown): string | undefined {
  return (e as NodeJS.ErrnoException | undefined)?.code;
}

function sigOf(st: WalkStat): FileSig {
  return { ino: st.ino, size: st.size, mtimeMs: st.mtimeMs };
}

function watchError(e: unknown): AppError {
  const code = errCode(e);
  if (code === 'ENOSPC') {
    return new AppError(
      'service_unavailable',
      'The system ran out of inotify watches, so changes in some folders are not seen; raise fs.inotify.max_user_watches (sysctl) and restart, or enable periodic rescans',
      { details: { reason: 'inotify_watch_limit' } },
    );
  }
  if (code === 'EMFILE') {
    return new AppError('service_unavailable', 'The system ran out of inotify instances or file descriptors while watching the Home', {
      details: { reason: 'inotify_instance_limit' },
    });
  }
  const p = (e as { path?: unknown })?.path;
  return fsError(e, 'watch', typeof p === 'string' ? path.basename(p) : '');
}

export function watchHome(root: string, opts: WatchOptions): HomeWatcher {
  const rootAbs = realpathSync(path.resolve(root));
  const debounceMs = opts.debounceMs ?? 100;
  const maxWaitMs = Math.max(opts.maxWaitMs ?? 1000, debounceMs);
  const settleMs = opts.settleMs ?? debounceMs;
  const maxBatch = Math.max(1, opts.maxBatchSize ?? 1000);
  const ignoreInitial = opts.ignoreInitial ?? true;
  const onError = opts.onError ?? ((e: AppError) => console.error(`[quire watcher] ${e.message}`));
  const userIgnore = opts.ignore;

  const known = new Map<string, FileSig>();
  const knownDirs = new Set<string>();
  const dirty = new Map<string, Pending>();
  const dirtyDirs = new Set<string>();
  let isReady = false;
  let closed = false;
  let timer: NodeJS.Timeout | undefined;
  let rescanTimer: NodeJS.Timeout | undefined;
  let firstPendingAt: number | null = null;
  let flushing: Promise<void> | null = null;
  let flushAgain = false;

  const ignored = (rel: string): boolean => isIgnoredPath(rel) || (userIgnore ? userIgnore(rel) : false);
  const absOf = (rel: string): string => (rel === '' ? rootAbs : path.join(rootAbs, ...rel.split('/')));

  // ---- event intake -------------------------------------------------------

  const markPath = (rel: string): void => {
    if (closed || rel === '' || ignored(rel)) return;
    const now = Date.now();
    const p = dirty.get(rel);
    if (p) p.last = now;
    else dirty.set(rel, { first: now, last: now });
    schedule();
  };

  const markDir = (rel: string): void => {
    if (closed || (rel !== '' && ignored(rel))) return;
    dirtyDirs.add(rel);
    schedule();
  };

  const schedule = (delay?: number): void => {
    if (closed || !isReady) return;
    const now = Date.now();
    if (firstPendingAt === null) firstPendingAt = now;
    const d = delay ?? Math.min(debounceMs, Math.max(0, firstPendingAt + maxWaitMs - now));
    if (timer) clearTimeout(timer);
    timer = setTimeout(runFlush, d);
  };

  /**
   * One fs.watch (one inotify watch) per folder, opened by the walk before
   * it reads the folder, so nothing created after the read goes unseen. The
   * folder's inode is kept: a folder deleted and created again under the
   * same name (git does this) is a new folder and needs a new watch, which a
   * name-based watcher would miss.
   */
  const watches = new Map<string, { w: FSWatcher; id: string }>();

  const unwatch = (rel: string): void => {
    const entry = watches.get(rel);
    if (!entry) return;
    watches.delete(rel);
    entry.w.close();
  };

  /** `st` is the folder's lstat: inode and birth time tell a folder from a new one that reuses its inode. */
  const ensureWatch = (rel: string, st: Stats): void => {
    if (closed) return;
    const id = `${st.ino}:${st.birthtimeMs}`;
    const had = watches.get(rel);
    if (had?.id === id) return;
    if (had) unwatch(rel);
    const base = rel === '' ? null : rel.slice(rel.lastIndexOf('/') + 1);
    let w: FSWatcher;
    try {
      w = fsWatch(absOf(rel), { persistent: true }, (_event, name) => {
        if (closed) return;
        if (name === null || name === '') return markDir(rel);
        markPath(rel === '' ? String(name) : `${rel}/${name}`);
        if (name === base) {
          // The folder itself was deleted or moved (inotify names it like a child): this watch is dead.
          // Its parent's check reconciles whatever is at this name now, with a fresh watch.
          if (watches.get(rel)?.w === w) unwatch(rel);
          markPath(rel);
        }
      });
    } catch (e) {
      const c = errCode(e);
      if (c !== 'ENOENT' && c !== 'ENOTDIR') onError(watchError(e));
      return;
    }
    w.on('error', () => {
      // The folder went away (or cannot be watched any more): its parent's check decides what it is now.
      if (watches.get(rel)?.w === w) unwatch(rel);
      if (rel !== '') markPath(rel);
    });
    watches.set(rel, { w, id });
  };

  // ---- reconciliation -----------------------------------------------------

  const rootPrefix = rootAbs.endsWith(path.sep) ? rootAbs : rootAbs + path.sep;

  /**
   * What the watcher sees at `rel`: a regular file or a folder (lstat), or,
   * with followSymlinks, what a link out of the Home leads to (stat). Null
   * for anything else: absent, special files, links it does not follow.
   */
  const entryStat = async (rel: string): Promise<Stats | null> => {
    const abs = absOf(rel);
    const st = await lstat(abs);
    if (st.isFile() || st.isDirectory()) return st;
    if (!st.isSymbolicLink() || !opts.followSymlinks) return null;
    let real: string;
    try {
      real = await realpath(abs);
    } catch {
      return null; // dangling or looping
    }
    if (real === rootAbs || real.startsWith(rootPrefix)) return null;
    const target = await stat(real);
    return target.isFile() || target.isDirectory() ? target : null;
  };

  const parentOf = (rel: string): string => (rel.includes('/') ? rel.slice(0, rel.lastIndexOf('/')) : '');

  /** Marks the topmost folder above `rel` that the watcher has not walked; false when all are known. */
  const markUnknownAncestor = (rel: string): boolean => {
    const segs = rel.split('/');
    for (let i = 1; i < segs.length; i++) {
      const dir = segs.slice(0, i).join('/');
      if (!knownDirs.has(dir)) {
        markPath(dir);
        return true;
      }
    }
    return false;
  };

  /** Collects changes for one flush; a later observation of a path replaces an earlier one. */
  type Changes = Map<string, WatchChange>;

  const recentlyModified = (st: WalkStat, now: number): boolean => {
    const age = now - st.mtimeMs;
    return age >= 0 && age < settleMs;
  };

  const observeFile = (rel: string, st: WalkStat, force: boolean, out: Changes): void => {
    const sig = sigOf(st);
    const prev = known.get(rel);
    known.set(rel, sig);
    if (!force && prev && sameSig(prev, sig)) return;
    out.set(rel, { kind: 'upsert', path: rel, size: st.size });
  };

  const forgetFile = (rel: string, force: boolean, out: Changes): void => {
    const had = known.delete(rel);
    if (had || force) out.set(rel, { kind: 'delete', path: rel });
  };

  const forgetUnder = (dirRel: string, out: Changes, keep?: Set<string>): void => {
    const prefix = dirRel === '' ? '' : dirRel + '/';
    for (const k of [...known.keys()]) {
      if (k.startsWith(prefix) && !keep?.has(k)) forgetFile(k, false, out);
    }
    for (const d of [...knownDirs]) {
      if ((d === dirRel || d.startsWith(prefix)) && !keep?.has(d)) {
        knownDirs.delete(d);
        unwatch(d);
      }
    }
  };

  /**
   * Walks `dirRel` recursively and reconciles everything known under it with
   * the disk. `start` is for the start-up walk: its `onFile` sees every file
   * found (the Vault's opening scan reads that list rather than walking the
   * Home again), and a root that cannot be read makes it throw.
   */
  const reconcileDir = async (dirRel: string, out: Changes, report: boolean, start?: { onFile?: (f: WalkedFile) => void }): Promise<void> => {
    const onFile = start?.onFile;
    const seen = new Set<string>();
    const now = Date.now();
    await walkTree(rootAbs, dirRel, {
      follow: opts.followSymlinks === true,
      ignored,
      // Watch first, then read: a file created after the read still makes an event.
      folder: (rel, st) => ensureWatch(rel, st),
      listed: (rel) => {
        if (rel === '') return;
        knownDirs.add(rel);
        seen.add(rel);
      },
      file: (f) => {
        onFile?.(f);
        seen.add(f.rel);
        if (recentlyModified(f.st, now) && isReady) {
          // Still being written: keep the old signature and look again once it settles.
          const p = dirty.get(f.rel);
          if (!p) dirty.set(f.rel, { first: now, last: f.st.mtimeMs });
          return;
        }
        if (report) observeFile(f.rel, f.st, false, out);
        else known.set(f.rel, sigOf(f.st));
      },
      error: (rel, e) => {
        if (start && rel === '') throw fsError(e, 'list', rel);
        onError(fsError(e, 'list', rel));
      },
    });
    // Files still pending (kept out of `seen` above) must not be deleted.
    for (const [p] of dirty) if (known.has(p)) seen.add(p);
    forgetUnder(dirRel, out, seen);
  };

  /**
   * A path an event named is reported as it is now, even when its signature
   * is the one last seen: the watcher does not see the server's own writes
   * unless their events are still pending, so its record can be older than
   * the index's (a note the server wrote and someone deleted at once was
   * never known here, yet the index has it). A report the index already
   * agrees with costs it one hash; one it misses would be lost.
   */
  const checkPath = async (rel: string, pend: Pending, now: number, out: Changes): Promise<void> => {
    let st: Stats | null = null;
    try {
      st = await entryStat(rel);
    } catch (e) {
      const c = errCode(e);
      if (c !== 'ENOENT' && c !== 'ENOTDIR') {
        onError(fsError(e, 'stat', rel));
        return;
      }
    }
    if (st === null || (!st.isFile() && !st.isDirectory())) {
      // Gone, or replaced by a special file or a link the watcher does not follow.
      forgetFile(rel, true, out);
      if (knownDirs.has(rel)) forgetUnder(rel, out);
      return;
    }
    // Something is there. Only inside folders the watcher walked: a folder new since then is walked
    // first (the walk lists this), and a folder that became a link to elsewhere is not entered.
    const parent = parentOf(rel);
    if (parent !== '' && !knownDirs.has(parent)) {
      markUnknownAncestor(rel);
      return;
    }
    if (st.isDirectory()) {
      if (known.has(rel)) forgetFile(rel, false, out); // a file became a folder
      await reconcileDir(rel, out, true);
      return;
    }
    if (knownDirs.has(rel)) forgetUnder(rel, out); // a folder became a file
    if (recentlyModified(st, now) && now - pend.first < maxWaitMs) {
      dirty.set(rel, { ...pend, last: Math.max(pend.last, st.mtimeMs) });
      return;
    }
    observeFile(rel, st, true, out);
  };

  const flagOwn = async (changes: WatchChange[]): Promise<WatchChange[]> => {
    const own = opts.ownWrites;
    if (!own) return changes;
    const out: WatchChange[] = [];
    for (const ch of changes) {
      let isOwn = false;
      if (ch.kind === 'delete') {
        isOwn = await own.isOwn(ch.path, { exists: false });
      } else {
        const sig = known.get(ch.path);
        if (sig) {
          const abs = absOf(ch.path);
          isOwn = await own.isOwn(ch.path, { exists: true, sig, readEtag: async () => etagOf(await readFile(abs)) });
        }
      }
      if (isOwn) {
        if (opts.dropOwnWrites) continue;
        out.push({ ...ch, own: true });
      } else {
        // Whatever the server did to this path before is history now: a later return of its very file is news.
        own.forget?.(ch.path);
        out.push(ch);
      }
    }
    return out;
  };

  const deliver = async (changes: WatchChange[]): Promise<void> => {
    for (let i = 0; i < changes.length; i += maxBatch) {
      if (closed) return;
      try {
        await opts.onBatch(changes.slice(i, i + maxBatch));
      } catch (e) {
        onError(e instanceof AppError ? e : new AppError('internal', `The watcher's batch handler failed: ${(e as Error)?.message ?? e}`));
      }
    }
  };

  const order = (out: Changes): WatchChange[] => {
    const all = [...out.values()];
    const byPath = (a: WatchChange, b: WatchChange) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0);
    return [...all.filter((c) => c.kind === 'delete').sort(byPath), ...all.filter((c) => c.kind === 'upsert').sort(byPath)];
  };

  const flushOnce = async (all: boolean): Promise<void> => {
    const now = Date.now();
    firstPendingAt = null;
    const dirs = [...dirtyDirs].sort();
    dirtyDirs.clear();
    const paths: [string, Pending][] = [];
    for (const [p, pend] of dirty) {
      if (all || now - pend.last >= settleMs || now - pend.first >= maxWaitMs) {
        paths.push([p, pend]);
        dirty.delete(p);
      }
    }
    const out: Changes = new Map();
    // A folder inside another folder being reconciled is covered by the outer walk.
    const roots = dirs.filter((d, i) => !dirs.slice(0, i).some((o) => o === '' || d.startsWith(o + '/')));
    for (const d of roots) await reconcileDir(d, out, true);
    for (let i = 0; i < paths.length; i += 256) {
      await Promise.all(paths.slice(i, i + 256).map(([p, pend]) => checkPath(p, pend, now, out)));
    }
    if (closed) return;
    const changes = await flagOwn(order(out));
    if (changes.length > 0) await deliver(changes);
  };

  const runFlush = (): void => {
    timer = undefined;
    if (closed) return;
    if (flushing) {
      flushAgain = true;
      return;
    }
    flushing = (async () => {
      try {
        await flushOnce(false);
      } catch (e) {
        onError(e instanceof AppError ? e : new AppError('internal', `The watcher failed to process changes: ${(e as Error)?.message ?? e}`));
      } finally {
        flushing = null;
      }
      afterFlush();
    })();
  };

  /** Schedules the next flush for whatever is still pending (held-back paths, events during the flush). */
  const afterFlush = (): void => {
    if (closed) return;
    if (flushAgain || dirty.size > 0 || dirtyDirs.size > 0) {
      flushAgain = false;
      firstPendingAt = null;
      // Held-back paths wait for their settle time; fresh events use the debounce.
      const soonest = Math.min(...[...dirty.values()].map((p) => Math.max(0, p.last + settleMs - Date.now())), debounceMs);
      schedule(dirtyDirs.size > 0 ? debounceMs : soonest);
    }
  };

  // ---- start-up -------------------------------------------------------------

  let resolveReady: () => void = () => undefined;
  const ready = new Promise<void>((resolve, reject) => {
    resolveReady = resolve;
    void (async () => {
      try {
        const out: Changes = new Map();
        await reconcileDir('', out, !ignoreInitial, { onFile: opts.onInitialFile });
        isReady = true;
        if (!ignoreInitial && out.size > 0) await deliver(order(out));
        // Events that arrived during the walk are reported even if the walk already saw their result.
        if (dirty.size > 0 || dirtyDirs.size > 0) schedule();
        if (opts.rescanIntervalMs && opts.rescanIntervalMs > 0) {
          rescanTimer = setInterval(() => markDir(''), opts.rescanIntervalMs);
          rescanTimer.unref?.();
        }
        resolve();
      } catch (e) {
        reject(e);
      }
    })();
  });
  ready.catch(() => undefined);

  return {
    root: rootAbs,
    ready,
    async rescan() {
      await ready;
      while (flushing) await flushing;
      if (closed) return;
      dirtyDirs.add('');
      if (timer) clearTimeout(timer);
      timer = undefined;
      flushing = (async () => {
        try {
          await flushOnce(true);
        } finally {
          flushing = null;
        }
      })();
      try {
        await flushing;
      } finally {
        afterFlush();
      }
    },
    look(rel: string) {
      markPath(rel);
      // The topmost folder the watcher does not know yet is walked (and watched) too.
      markUnknownAncestor(rel);
    },
    stats() {
      return {
        knownFiles: known.size,
        knownFolders: knownDirs.size,
        watchedFolders: watches.size,
        pendingPaths: dirty.size,
        idle: isReady && timer === undefined && flushing === null && dirty.size === 0 && dirtyDirs.size === 0,
      };
    },
    async close() {
      if (closed) return;
      closed = true;
      if (timer) clearTimeout(timer);
      if (rescanTimer) clearInterval(rescanTimer);
      for (const rel of [...watches.keys()]) unwatch(rel);
      await flushing?.catch(() => undefined);
      resolveReady(); // a watcher closed before it was ready will never be; do not leave waiters hanging
    },
  };
}
