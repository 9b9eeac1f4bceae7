/**
 * A user's Home on disk: a plain folder the server shares with Obsidian,
 * vim and git. Every change the server makes goes through one writer lock
 * per Home and follows the same flow (docs/vault-disk.md):
 *
 *   (before the lock: write and fsync the temp file) → resolve the path
 *   → read the bytes on disk → check If-Match / If-None-Match against
 *   them → check case conflicts (new names) → check the quota → record it
 *   as our own → atomic replace of only the bytes read (another program's
 *   edit in between means 412, never its loss) → tell listeners → (after
 *   the lock: fsync the folder, then answer).
 *
 * Reads take no lock: atomic renames mean a reader sees whole files only.
 */
import { lstat, open, readdir, realpath, rmdir, stat, unlink } from 'node:fs/promises';
import fsSync, { type Stats } from 'node:fs';
import path from 'node:path';
import { AppError, errors } from '../core/errors.js';
import {
  conflictCopyName,
  discardPrepared,
  etagNow,
  fsyncDir,
  holdTemp,
  isTempInUse,
  keepAside,
  prepareChecked,
  readChecked,
  removeChecked,
  removeFile,
  renameAtomic,
  replaceIfUnchanged,
  writeFileChecked,
  type AtomicIo,
  type PreparedWrite,
} from './atomic.js';
import { alreadyExists, fsError, quotaExceeded, show } from './errors.js';
import { etagOf, hasCondition, ifMatchAccepts, readWithEtag } from './etag.js';
import { isIgnoredPath, isTempName } from './ignore.js';
import { WriterLock } from './lock.js';
import { checkNewName, checkServerMayChange, realHomeRoot, resolveHomePath, resolveHomePathReal, toHomeRel, validateRelPath } from './paths.js';
import { RecentWrites, type FileSig } from './recent.js';
import { watchHome, type HomeWatcher, type WatchChange, type WatchOptions } from './watcher.js';

export interface HomeOptions {
  /** Bytes the Home may hold; 0 or undefined = unlimited. A write's own `quotaBytes` wins. */
  quotaBytes?: number;
  /** How long the record of the server's own writes lasts (ms). Default 30 000. */
  ownWriteTtlMs?: number;
  /** Replace steps of atomic writes (tests). */
  io?: Partial<AtomicIo>;
  /** Where errors thrown by onWritten listeners (and by late checks of replaced files) go. Default: console.error. */
  onListenerError?: (err: unknown) => void;
  /**
   * How long a file the server replaced or deleted is kept under a hidden
   * temp name, to catch bytes that a program which had it open writes after
   * the replace (ms). Default 1000.
   */
  displacedGraceMs?: number;
  /**
   * Follow symlinks that lead out of the Home (the opt-in of a vault served
   * alone, Config.followSymlinks): paths through them are read, listed and
   * written under the link's path. Default false: such paths are refused.
   */
  followSymlinks?: boolean;
}

/** Temp files younger than this may belong to a write in progress in another process (ms). */
const STALE_TEMP_MS = 10_000;

/** A replaced or deleted file, kept aside for a while under a temp name. */
interface Displaced {
  abs: string;
  rel: string;
  /** The bytes it held when the server replaced it. */
  etag: string;
  /** Bytes written to it later go back under its own name if free (a delete), else to a conflict copy. */
  original: boolean;
  timer: NodeJS.Timeout;
}

export interface WriteOptions {
  /** Write only if the file's current ETag matches (quoted, weak, list or `*` accepted). null/undefined: no condition. */
  ifMatch?: string | null;
  /** `*`: write only if the file does not exist. */
  ifNoneMatch?: '*';
  /** Quota for this write (overrides the Home's); 0 = unlimited. */
  quotaBytes?: number;
}

export interface WriteResult {
  /** The Home-relative path written (the link target's path when `rel` was a symlink). */
  path: string;
  etag: string;
  bytesWritten: number;
  created: boolean;
}

/** Files up to this size are read with synchronous calls (see `readSmallFile`). */
const SYNC_READ_MAX = 256 * 1024;

/**
 * A regular file of at most SYNC_READ_MAX bytes, read with synchronous
 * calls; null when it is larger (the caller reads it asynchronously). A
 * FIFO, socket or device is refused: reading one could wait forever, and
 * O_NONBLOCK keeps opening one from waiting for a writer. Four promise-based
 * calls (open, stat, read, close) cost about 0.35 ms of this thread each
 * time on the bench machine, far more than the ~0.02 ms the same calls take
 * synchronously on a note the page cache holds: for notes, reading in place
 * is the cheaper way to keep the event loop free.
 */
function readSmallFile(abs: string, rel: string): ReadResult | null {
  let fd: number;
  try {
    fd = fsSync.openSync(abs, fsSync.constants.O_RDONLY | fsSync.constants.O_NONBLOCK);
  } catch (e) {
    throw fsError(e, 'read', rel);
  }
  try {
    const st = fsSync.fstatSync(fd);
    if (st.isDirectory()) throw fsError(Object.assign(new Error('EISDIR'), { code: 'EISDIR' }), 'read', rel);
    if (!st.isFile()) {
      throw new AppError('conflict', `${show(rel)} is not a regular file`, { details: { path: rel, reason: 'not_a_file' } });
    }
    if (st.size > SYNC_READ_MAX) return null;
    // Read to the end, whatever the size was a moment ago.
    let bytes = Buffer.allocUnsafe(st.size + 1);
    let n = 0;
    for (;;) {
      if (n === bytes.length) bytes = Buffer.concat([bytes, Buffer.allocUnsafe(bytes.length)]);
      const got = fsSync.readSync(fd, bytes, n, bytes.length - n, n);
      if (got === 0) break;
      n += got;
    }
    const data = bytes.subarray(0, n);
    return { path: rel, bytes: data, etag: etagOf(data), size: n, mtime: st.mtime.toISOString() };
  } catch (e) {
    throw fsError(e, 'read', rel);
  } finally {
    fsSync.closeSync(fd);
  }
}

export interface ReadResult {
  path: string;
  bytes: Buffer;
  etag: string;
  size: number;
  /** ISO 8601. */
  mtime: string;
}

export interface ListEntry {
  name: string;
  path: string;
  kind: 'file' | 'folder';
  /** Bytes for files; 0 for folders. */
  size: number;
  /** ISO 8601. */
  mtime: string;
}

export interface ListOptions {
  /** Include paths the watcher ignores (.git, editor swap files, internal folders). Default false. Temp files are never listed. */
  includeIgnored?: boolean;
}

/** What the server changed, as listeners (the index) hear it. Emitted under the writer lock, in order. */
export type HomeEvent =
  | { kind: 'write'; path: string; etag: string; bytes: Buffer; created: boolean }
  | { kind: 'delete'; path: string; folder: boolean }
  | { kind: 'move'; from: string; path: string; folder: boolean; etag: string | null };

export type HomeListener = (event: HomeEvent) => void | Promise<void>;

function errCode(e: unknown): string | undefined {
  return (e as NodeJS.ErrnoException | undefined)?.code;
}

function sigOf(st: Stats): FileSig {
  return { ino: st.ino, size: st.size, mtimeMs: st.mtimeMs };
}

function toBuffer(bytes: Uint8Array | string): Buffer {
  if (typeof bytes === 'string') return Buffer.from(bytes, 'utf8');
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

function noIfMatchOnFolder(rel: string): AppError {
  return errors.badRequest(`${show(rel)} is a folder; If-Match applies to files only`, { path: rel, reason: 'if_match_on_folder' });
}

export class Home {
  /** Absolute root as configured (path.resolve'd). */
  readonly root: string;
  readonly lock: WriterLock;
  /** The server's own recent changes; the watcher uses it to flag them. */
  readonly recentWrites: RecentWrites;
  quotaBytes: number | undefined;

  private readonly io: Partial<AtomicIo> | undefined;
  private readonly listeners = new Set<HomeListener>();
  private readonly onListenerError: (err: unknown) => void;
  private rootRealP: Promise<string> | null = null;
  /** Sizes of the Home's content files (Home-relative → bytes); null until the first usage walk. */
  private sizes: Map<string, number> | null = null;
  private total = 0;
  private walking: Promise<void> | null = null;
  /** Size changes seen while the first walk runs, replayed on its result. */
  private walkLog: Array<[string, number | null]> | null = null;
  /** A folder moved while the first walk ran; its result cannot be trusted. */
  private walkStale = false;
  /** Replaced files kept aside (temp path → what to check); see `watchDisplaced`. */
  private readonly displaced = new Map<string, Displaced>();
  private readonly displacedGraceMs: number;
  private readonly followOutside: boolean;

  constructor(root: string, opts: HomeOptions = {}) {
    this.root = path.resolve(root);
    this.lock = WriterLock.forRoot(this.root);
    this.quotaBytes = opts.quotaBytes;
    this.recentWrites = new RecentWrites(opts.ownWriteTtlMs ?? 30_000);
    this.io = opts.io;
    this.onListenerError = opts.onListenerError ?? ((e) => console.error('[quire home] onWritten listener failed:', e));
    this.displacedGraceMs = opts.displacedGraceMs ?? 1000;
    this.followOutside = opts.followSymlinks === true;
  }

  private rootReal(): Promise<string> {
    this.rootRealP ??= realHomeRoot(this.root);
    this.rootRealP.catch(() => (this.rootRealP = null));
    return this.rootRealP;
  }

  /**
   * The file a path names. When the final component is a symlink (already
   * checked to stay inside the Home), the write goes to the link's target so
   * the link survives; the returned `rel` is the target's Home path.
   */
  private async resolveFile(rel: string): Promise<{ abs: string; rel: string }> {
    const { abs, real: whole } = await resolveHomePathReal(this.root, rel, { rootReal: await this.rootReal(), followOutside: this.followOutside });
    // No symlink anywhere on the path (the common case), or nothing there yet.
    if (whole === null || whole === abs) return { abs, rel };
    let st: Stats;
    try {
      st = await lstat(abs);
    } catch {
      return { abs, rel };
    }
    if (!st.isSymbolicLink()) return { abs, rel };
    let real: string;
    try {
      real = await realpath(abs);
    } catch (e) {
      throw fsError(e, 'stat', rel);
    }
    const targetRel = toHomeRel(await this.rootReal(), real);
    // A link out of the Home (followSymlinks only) has no Home path of its own beyond the link's.
    if (targetRel.startsWith('..') || path.isAbsolute(targetRel)) return { abs: real, rel };
    return { abs: real, rel: targetRel };
  }

  // ---- listeners ------------------------------------------------------------

  /** Registers a listener for the server's own changes; returns the unsubscribe function. */
  onWritten(cb: HomeListener): () => void {
    this.listeners.add(cb);
    return () => this.listeners.delete(cb);
  }

  private emit(event: HomeEvent): void {
    for (const cb of this.listeners) {
      // Outside the lock's async context: a listener that writes to the Home queues behind us instead of tripping re-entrancy.
      WriterLock.outside(() => {
        try {
          const r = cb(event);
          if (r && typeof (r as Promise<void>).then === 'function') (r as Promise<void>).catch(this.onListenerError);
        } catch (e) {
          this.onListenerError(e);
        }
      });
    }
  }

  // ---- reads ----------------------------------------------------------------

  /** Reads a file: bytes, ETag, size, mtime. not_found if absent. */
  async read(rel: string): Promise<ReadResult> {
    const { abs } = await this.resolveFile(rel);
    const small = readSmallFile(abs, rel);
    if (small !== null) return small;
    // A regular file over SYNC_READ_MAX (readSmallFile refused anything else).
    let fh;
    try {
      fh = await open(abs, 'r');
      const st = await fh.stat();
      const bytes = await fh.readFile();
      return { path: rel, bytes, etag: etagOf(bytes), size: bytes.length, mtime: st.mtime.toISOString() };
    } catch (e) {
      throw fsError(e, 'read', rel);
    } finally {
      await fh?.close().catch(() => undefined);
    }
  }

  /** The current ETag of a file, or null if it does not exist. */
  async etag(rel: string): Promise<string | null> {
    const { abs, rel: target } = await this.resolveFile(rel);
    return (await readWithEtag(abs, target))?.etag ?? null;
  }

  /** Entries of a folder (`''` = the Home root), folders first, then by name. */
  async list(folderRel = '', opts: ListOptions = {}): Promise<ListEntry[]> {
    const abs = await resolveHomePath(this.root, folderRel, { allowRoot: true, followOutside: this.followOutside });
    let names: string[];
    try {
      const st = await stat(abs);
      if (!st.isDirectory()) {
        throw new AppError('conflict', `${show(folderRel)} is a file, not a folder`, { details: { path: folderRel, reason: 'not_a_folder' } });
      }
      names = await readdir(abs);
    } catch (e) {
      throw fsError(e, 'list', folderRel);
    }
    const rootReal = await this.rootReal();
    const out: ListEntry[] = [];
    await Promise.all(
      names.map(async (name) => {
        if (isTempName(name)) return;
        const rel = folderRel === '' ? name : `${folderRel}/${name}`;
        if (!opts.includeIgnored && isIgnoredPath(rel)) return;
        let st: Stats;
        try {
          st = await lstat(path.join(abs, name));
          if (st.isSymbolicLink()) {
            const real = await realpath(path.join(abs, name));
            const r = toHomeRel(rootReal, real);
            if (!this.followOutside && (r.startsWith('..') || path.isAbsolute(r))) return; // a link out of the Home is not part of it
            st = await stat(real);
          }
        } catch {
          return; // vanished, dangling or looping link
        }
        if (!st.isFile() && !st.isDirectory()) return;
        out.push({
          name,
          path: rel,
          kind: st.isDirectory() ? 'folder' : 'file',
          size: st.isDirectory() ? 0 : st.size,
          mtime: st.mtime.toISOString(),
        });
      }),
    );
    return out.sort((a, b) => (a.kind !== b.kind ? (a.kind === 'folder' ? -1 : 1) : a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  // ---- usage ----------------------------------------------------------------

  /**
   * Bytes used by the Home's content: every regular file except what
   * isIgnoredPath excludes (internal folders, temp and swap files, .git).
   * The first call walks the Home; later calls are O(1), kept current by
   * the server's writes and by applyExternalChanges (the watcher).
   */
  async usage(opts: { refresh?: boolean } = {}): Promise<number> {
    if (opts.refresh) this.sizes = null;
    if (this.sizes) return this.total;
    await this.ensureSizes();
    return this.total;
  }

  private async ensureSizes(): Promise<void> {
    while (!this.sizes) {
      if (!this.walking) {
        this.walkLog = [];
        this.walkStale = false;
        this.walking = this.walkSizes().finally(() => {
          this.walking = null;
        });
      }
      await this.walking;
    }
  }

  private async walkSizes(): Promise<void> {
    const sizes = new Map<string, number>();
    const walk = async (rel: string): Promise<void> => {
      const abs = rel === '' ? this.root : path.join(this.root, ...rel.split('/'));
      let entries;
      try {
        entries = await readdir(abs, { withFileTypes: true });
      } catch (e) {
        if (rel === '') throw fsError(e, 'list', rel);
        return;
      }
      const files: string[] = [];
      for (const ent of entries) {
        const child = rel === '' ? ent.name : `${rel}/${ent.name}`;
        if (isIgnoredPath(child)) continue;
        if (ent.isDirectory()) await walk(child);
        else if (ent.isFile()) files.push(child);
      }
      for (let i = 0; i < files.length; i += 256) {
        await Promise.all(
          files.slice(i, i + 256).map(async (f) => {
            try {
              const st = await lstat(path.join(this.root, ...f.split('/')));
              if (st.isFile()) sizes.set(f, st.size);
            } catch {
              /* vanished */
            }
          }),
        );
      }
    };
    await walk('');
    for (const [p, n] of this.walkLog ?? []) {
      if (n === null) sizes.delete(p);
      else sizes.set(p, n);
    }
    this.walkLog = null;
    if (this.walkStale) return; // ensureSizes walks again
    let total = 0;
    for (const n of sizes.values()) total += n;
    this.sizes = sizes;
    this.total = total;
  }

  private setSize(rel: string, n: number | null): void {
    if (isIgnoredPath(rel)) return;
    if (this.walkLog) this.walkLog.push([rel, n]);
    if (!this.sizes) return;
    const old = this.sizes.get(rel);
    if (old !== undefined) this.total -= old;
    if (n === null) this.sizes.delete(rel);
    else {
      this.sizes.set(rel, n);
      this.total += n;
    }
  }

  private moveSizes(from: string, to: string, folder: boolean): void {
    const pairs: Array<[string, string]> = [];
    if (!folder) pairs.push([from, to]);
    else if (this.sizes) {
      for (const k of this.sizes.keys()) if (k.startsWith(from + '/')) pairs.push([k, to + k.slice(from.length)]);
    }
    for (const [a, b] of pairs) {
      const n = this.sizes?.get(a);
      this.setSize(a, null);
      if (n !== undefined) this.setSize(b, n);
    }
    if (folder && this.walkLog) this.walkStale = true; // a folder moved during the first walk: walk again
  }

  /** Feeds the watcher's view of outside edits into the usage total. Home.watch() does this for you. */
  applyExternalChanges(changes: readonly WatchChange[]): void {
    for (const ch of changes) {
      if (ch.kind === 'delete') this.setSize(ch.path, null);
      else if (ch.size !== undefined) this.setSize(ch.path, ch.size);
    }
  }

  // ---- writes ---------------------------------------------------------------

  /**
   * Writes a file (creating folders) under the writer lock; see the class
   * comment for the flow. The write replaces only the bytes it checked: if
   * another program changes the file before the replace, nothing is written
   * (or the other program's bytes are put back) and the answer is 412 with
   * the current ETag, with or without If-Match.
   */
  async write(rel: string, bytes: Uint8Array | string, opts: WriteOptions = {}): Promise<WriteResult> {
    const data = toBuffer(bytes);
    checkServerMayChange(rel);
    let prepared = await this.prepare(rel, data);
    let written: { result: WriteResult; dir: string };
    try {
      written = await this.lock.run(async () => {
        const { abs, rel: target } = await this.resolveFile(rel);
        const current = await readChecked(abs, target);
        if (hasCondition(opts.ifMatch)) {
          if (!current || !ifMatchAccepts(opts.ifMatch, current.etag)) throw errors.staleEtag(current?.etag ?? null);
        }
        if (opts.ifNoneMatch === '*' && current) throw alreadyExists(target, current.etag);
        if (!current) await checkNewName(this.root, target);

        const quota = opts.quotaBytes ?? this.quotaBytes;
        const delta = data.length - (current?.bytes.length ?? 0);
        // A write that does not grow the Home is always allowed, so a Home over quota can still shrink.
        if (quota !== undefined && quota > 0 && delta > 0 && !isIgnoredPath(target)) {
          await this.ensureSizes();
          if (this.total + delta > quota) throw quotaExceeded(target, quota, this.total, delta);
        }

        const etag = etagOf(data);
        this.recentWrites.noteWrite(target, etag); // before the rename: the watcher may look any time after it
        const mine = prepared;
        prepared = null; // from here writeFileChecked uses it or removes it
        const w = await writeFileChecked(abs, data, current, { label: target, io: this.io, prepared: mine, syncDir: false });
        if (w.outcome === 'changed') {
          if (w.stray !== null) await this.keepOutside(w.stray, abs, target, false);
          const now = await etagNow(abs);
          throw opts.ifNoneMatch === '*' && now !== null ? alreadyExists(target, now) : errors.staleEtag(now);
        }
        if (w.outcome === 'raced') {
          await this.putBack(w.aside, abs, target, { dev: w.dev, ino: w.ino, etag });
          throw errors.staleEtag(await etagNow(abs));
        }
        if (w.aside) this.watchDisplaced(w.aside, { abs, rel: target, etag: current!.etag, original: false });
        try {
          this.recentWrites.noteWrite(target, etag, sigOf(fsSync.lstatSync(abs)));
        } catch {
          /* replaced already by someone else; the ETag entry still applies */
        }
        this.setSize(target, data.length);
        this.emit({ kind: 'write', path: target, etag, bytes: data, created: !current });
        return { result: { path: target, etag, bytesWritten: data.length, created: !current }, dir: path.dirname(abs) };
      });
    } finally {
      if (prepared !== null) await discardPrepared(prepared); // the checks refused the write before it was used
    }
    // The rename's folder fsync needs no lock, only to finish before the write is acknowledged.
    await fsyncDir(written.dir);
    return written.result;
  }

  /**
   * The temp file with the new bytes, written and fsynced before the lock is
   * taken; null when that is not possible (the write makes it under the lock).
   */
  private async prepare(rel: string, data: Buffer): Promise<PreparedWrite | null> {
    try {
      const { abs, rel: target } = await this.resolveFile(rel);
      return await prepareChecked(abs, data, { label: target, io: this.io });
    } catch {
      return null; // the write reports it under the lock
    }
  }

  /**
   * An outside program wrote into the file between the check and the
   * replace, so its bytes (at `aside`) lost to a write nobody has been told
   * about yet: they go back as the file, guarded the same way against a
   * further outside change, which would send them to a conflict copy instead.
   */
  private async putBack(aside: string, abs: string, rel: string, ours: { dev: number; ino: number; etag: string }): Promise<void> {
    let r;
    try {
      r = await replaceIfUnchanged(aside, abs, ours, null, rel, this.io);
    } catch (e) {
      await this.keepOutside(aside, abs, rel, false);
      throw e;
    }
    if (!r.ok) {
      if (r.stray !== null && r.stray !== aside) await this.keepOutside(r.stray, abs, rel, false);
      await this.keepOutside(aside, abs, rel, false);
      return;
    }
    if (r.aside !== aside) holdTemp(aside, false); // renamed to the file's own name (with the exchange, it holds our file now)
    await fsyncDir(path.dirname(abs));
    if (r.aside === null) return;
    if (!r.verified && (await etagNow(r.aside)) !== ours.etag) await this.keepOutside(r.aside, abs, rel, false);
    else this.watchDisplaced(r.aside, { abs, rel, etag: ours.etag, original: false });
  }

  /** Gives outside bytes at `aside` a visible name (see keepAside). */
  private async keepOutside(aside: string, abs: string, rel: string, original: boolean): Promise<void> {
    const at = new Date();
    await keepAside(aside, abs, original, (n) => path.join(path.dirname(abs), conflictCopyName(path.basename(abs), at, n)), rel);
  }

  /**
   * Keeps a replaced or deleted file under its temp name for
   * `displacedGraceMs`. A program that opened it before the replace (an
   * appender between its open and its write) may still write to it; if its
   * bytes changed by then, they are kept visibly (`checkDisplaced`).
   */
  private watchDisplaced(aside: string, d: Omit<Displaced, 'timer'>): void {
    const timer = setTimeout(() => {
      this.checkDisplaced(aside).catch(this.onListenerError);
    }, this.displacedGraceMs);
    timer.unref();
    this.displaced.set(aside, { ...d, timer });
  }

  private async checkDisplaced(aside: string): Promise<void> {
    const d = this.displaced.get(aside);
    if (!d) return;
    this.displaced.delete(aside);
    clearTimeout(d.timer);
    const now = await etagNow(aside);
    if (now !== null && now !== d.etag) {
      await this.keepOutside(aside, d.abs, d.rel, d.original);
      return;
    }
    await unlink(aside).catch(() => undefined);
    holdTemp(aside, false);
  }

  /** Checks every replaced file kept aside now rather than at the end of its grace period (closing, tests). */
  async settleDisplaced(): Promise<void> {
    await Promise.all([...this.displaced.keys()].map((a) => this.checkDisplaced(a)));
  }

  /**
   * Removes temp files that interrupted writes left behind (the server was
   * killed between creating a temp file and renaming it, or while it kept a
   * replaced file aside). Folders the Home ignores (.git, internal folders)
   * are not entered. Temp files this process is using are kept, and so are
   * those younger than `olderThanMs` (default 10 s), which may belong to a
   * write in progress in another process; when there are such, one more pass
   * runs once they are old enough. Returns the Home-relative paths removed.
   */
  async removeStaleTemps(opts: { olderThanMs?: number } = {}): Promise<string[]> {
    const olderThanMs = opts.olderThanMs ?? STALE_TEMP_MS;
    const removed: string[] = [];
    let young = false;
    const walk = async (abs: string, rel: string): Promise<void> => {
      let entries;
      try {
        entries = await readdir(abs, { withFileTypes: true });
      } catch {
        return; // vanished, or not readable: nothing of ours can be in it
      }
      for (const ent of entries) {
        const childRel = rel === '' ? ent.name : `${rel}/${ent.name}`;
        const childAbs = path.join(abs, ent.name);
        if (isTempName(ent.name)) {
          if (!ent.isFile() || isTempInUse(childAbs)) continue;
          const st = await lstat(childAbs).catch(() => null);
          if (st === null) continue;
          if (Date.now() - st.ctimeMs < olderThanMs) {
            young = true;
            continue;
          }
          await unlink(childAbs).then(
            () => removed.push(childRel),
            () => undefined,
          );
        } else if (ent.isDirectory() && !isIgnoredPath(childRel)) {
          await walk(childAbs, childRel);
        }
      }
    };
    await walk(this.root, '');
    if (young) {
      setTimeout(() => {
        this.removeStaleTemps({ olderThanMs }).catch(this.onListenerError);
      }, olderThanMs).unref();
    }
    return removed;
  }

  /**
   * Deletes a file, or an empty folder. With `ifMatch`, only if the file's
   * bytes still match (If-Match and the file is gone → 412), and only those
   * bytes: if another program changes the file before it is removed, its
   * version stays (412). A symlink is removed itself, not its target.
   * Non-empty folders are refused (409).
   */
  async delete(rel: string, opts: { ifMatch?: string | null } = {}): Promise<{ path: string; folder: boolean }> {
    checkServerMayChange(rel);
    return this.lock.run(async () => {
      const abs = await resolveHomePath(this.root, rel, { followOutside: this.followOutside });
      let st: Stats;
      try {
        st = await lstat(abs);
      } catch (e) {
        if (hasCondition(opts.ifMatch) && errCode(e) === 'ENOENT') throw errors.staleEtag(null);
        throw fsError(e, 'delete', rel);
      }
      if (st.isDirectory()) {
        if (hasCondition(opts.ifMatch)) throw noIfMatchOnFolder(rel);
        try {
          await rmdir(abs);
        } catch (e) {
          throw fsError(e, 'delete', rel);
        }
        await fsyncDir(path.dirname(abs));
        this.emit({ kind: 'delete', path: rel, folder: true });
        return { path: rel, folder: true };
      }
      if (hasCondition(opts.ifMatch) && st.isFile()) {
        const current = await readChecked(abs, rel);
        if (!current || !ifMatchAccepts(opts.ifMatch, current.etag)) throw errors.staleEtag(current?.etag ?? null);
        this.recentWrites.noteDelete(rel);
        const r = await removeChecked(abs, current, rel);
        if (r.outcome === 'changed') {
          if (r.aside) await this.keepOutside(r.aside, abs, rel, true);
          throw errors.staleEtag(await etagNow(abs));
        }
        this.watchDisplaced(r.aside!, { abs, rel, etag: current.etag, original: true });
      } else {
        if (hasCondition(opts.ifMatch)) {
          const current = await readWithEtag(abs, rel);
          if (!current || !ifMatchAccepts(opts.ifMatch, current.etag)) throw errors.staleEtag(current?.etag ?? null);
        }
        this.recentWrites.noteDelete(rel);
        await removeFile(abs, { label: rel });
      }
      this.setSize(rel, null);
      this.emit({ kind: 'delete', path: rel, folder: false });
      return { path: rel, folder: false };
    });
  }

  /**
   * Moves (renames) a file or folder. Never overwrites: an existing target
   * is a 409 (a case-only rename of the same entry is allowed). `ifMatch`
   * applies to files and is checked against the source's bytes.
   */
  async move(from: string, to: string, opts: { ifMatch?: string | null } = {}): Promise<{ from: string; path: string; folder: boolean; etag: string | null }> {
    checkServerMayChange(from);
    checkServerMayChange(to);
    return this.lock.run(async () => {
      const absFrom = await resolveHomePath(this.root, from, { followOutside: this.followOutside });
      const absTo = await resolveHomePath(this.root, to, { followOutside: this.followOutside });
      if (from === to) {
        throw errors.badRequest(`Cannot move ${show(from)} onto itself`, { path: from, reason: 'same_path' });
      }
      let st: Stats;
      try {
        st = await lstat(absFrom);
      } catch (e) {
        if (hasCondition(opts.ifMatch) && errCode(e) === 'ENOENT') throw errors.staleEtag(null);
        throw fsError(e, 'move', from);
      }
      const folder = st.isDirectory();
      let etag: string | null = null;
      if (folder) {
        if (hasCondition(opts.ifMatch)) throw noIfMatchOnFolder(from);
        if (to.startsWith(from + '/')) {
          throw errors.badRequest(`Cannot move the folder ${show(from)} into itself (${show(to)})`, { path: to, reason: 'into_itself' });
        }
      } else if (hasCondition(opts.ifMatch) || st.isFile()) {
        const current = await readWithEtag(absFrom, from);
        if (hasCondition(opts.ifMatch) && (!current || !ifMatchAccepts(opts.ifMatch, current.etag))) {
          throw errors.staleEtag(current?.etag ?? null);
        }
        etag = current?.etag ?? null;
      }
      await checkNewName(this.root, to, { ignore: from });

      // Record before renaming: rename keeps inode, size and mtime, so pre-move signatures identify the moved files.
      const moved = folder ? await this.filesUnder(absFrom, from) : [{ rel: from, sig: sigOf(st) }];
      for (const m of moved) {
        this.recentWrites.noteDelete(m.rel);
        const dest = to + m.rel.slice(from.length);
        this.recentWrites.noteMoved(dest, m.sig);
        if (!folder && etag) this.recentWrites.noteWrite(dest, etag, m.sig);
      }
      await renameAtomic(absFrom, absTo, { labelFrom: from, labelTo: to });
      this.moveSizes(from, to, folder);
      this.emit({ kind: 'move', from, path: to, folder, etag });
      return { from, path: to, folder, etag };
    });
  }

  private async filesUnder(abs: string, rel: string): Promise<Array<{ rel: string; sig: FileSig }>> {
    const out: Array<{ rel: string; sig: FileSig }> = [];
    const walk = async (a: string, r: string): Promise<void> => {
      let entries;
      try {
        entries = await readdir(a, { withFileTypes: true });
      } catch {
        return;
      }
      for (const ent of entries) {
        const ca = path.join(a, ent.name);
        const cr = `${r}/${ent.name}`;
        if (ent.isDirectory()) await walk(ca, cr);
        else if (ent.isFile()) {
          try {
            out.push({ rel: cr, sig: sigOf(await lstat(ca)) });
          } catch {
            /* vanished */
          }
        }
      }
    };
    await walk(abs, rel);
    return out;
  }

  // ---- watching -------------------------------------------------------------

  /**
   * Starts a watcher on this Home wired to its own-write record (changes the
   * server made carry `own: true`, or are dropped with dropOwnWrites) and to
   * the usage total.
   */
  watch(opts: Omit<WatchOptions, 'ownWrites'>): HomeWatcher {
    return watchHome(this.root, {
      ...opts,
      ownWrites: this.recentWrites,
      onBatch: (changes) => {
        // Own changes are already counted by write/delete/move; counting again is harmless (same sizes).
        this.applyExternalChanges(changes);
        return opts.onBatch(changes);
      },
    });
  }

  /** Checks a Home-relative path's spelling without touching the disk (throws AppError). */
  static validate(rel: string): void {
    validateRelPath(rel);
  }
}
