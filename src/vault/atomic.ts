/**
 * Crash-safe file operations. A reader (the server, Obsidian, git, a backup)
 * sees either the old bytes or the new bytes of a file, never a mix, and a
 * failure leaves the old file exactly as it was.
 *
 * writeFileAtomic: temp file in the same folder (`.<name>.quire-tmp-<hex>`,
 * which the path rules reserve and the watcher ignores), write, fsync the
 * file, rename over the target, fsync the folder. Errors are AppErrors naming
 * `opts.label` (pass the Home-relative path; the default is the file name, so
 * absolute server paths never reach a message).
 *
 * writeFileChecked / removeChecked: the same, for files other programs edit
 * too (a Home): they replace or remove only the file the caller read and
 * checked, and hand back any other program's bytes they moved out of the
 * way instead of destroying them (docs/vault-disk.md, "Replacing only what
 * was checked").
 */
import { randomBytes } from 'node:crypto';
import { closeSync, constants as fsConstants, fstatSync, linkSync, lstatSync, openSync, readSync, renameSync, unlinkSync, type Stats } from 'node:fs';
import { link, lstat, mkdir, open, rename, stat, unlink, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { AppError } from '../core/errors.js';
import { fsError, show } from './errors.js';
import { etagOf } from './etag.js';
import { renameExchange, type Exchange } from './exchange.js';
import { TEMP_MARKER } from './ignore.js';

/** The steps of an atomic write that tests (or unusual deployments) may replace. */
export interface AtomicIo {
  /** Writes all of `bytes` to the open temp file. */
  write(fh: FileHandle, bytes: Uint8Array): Promise<void>;
  /** Flushes the temp file to stable storage. */
  sync(fh: FileHandle): Promise<void>;
  /** Renames the finished temp file over the target. */
  rename(from: string, to: string): Promise<void>;
  /** Swaps two names atomically (renameat2 RENAME_EXCHANGE), synchronously; null where unavailable. Home writes use it to replace a file. */
  exchange: Exchange | null;
}

// No `exchange`: only a Home file's replacement asks for it (replaceIfUnchanged), so other writes (the store, job state)
// do not load koffi, about 15 ms of a server's start (docs/performance.md, "Start-up").
const defaultIo: Omit<AtomicIo, 'exchange'> = {
  write: async (fh, bytes) => {
    await fh.writeFile(bytes);
  },
  sync: (fh) => fh.sync(),
  // Synchronous, so that the identity check just before it and the rename(2) run with no other callback in between.
  rename: async (from, to) => renameSync(from, to),
};

export interface AtomicWriteOptions {
  /** Name used in error messages (the Home-relative path). */
  label?: string;
  /** Replace individual steps, e.g. to simulate a failure mid-write. */
  io?: Partial<AtomicIo>;
}

function errCode(e: unknown): string | undefined {
  return (e as NodeJS.ErrnoException | undefined)?.code;
}

/** Cuts a string to at most `max` UTF-8 bytes without splitting a character. */
function truncateUtf8(s: string, max: number): string {
  if (Buffer.byteLength(s, 'utf8') <= max) return s;
  let out = '';
  let used = 0;
  for (const ch of s) {
    const n = Buffer.byteLength(ch, 'utf8');
    if (used + n > max) break;
    out += ch;
    used += n;
  }
  return out;
}

/**
 * `<folder>/.<name>.quire-tmp-<12 hex>`; the name part is shortened so the
 * temp name itself never exceeds 255 bytes.
 */
export function tempPathFor(absPath: string): string {
  const suffix = `${TEMP_MARKER}${randomBytes(6).toString('hex')}`;
  const base = truncateUtf8(path.basename(absPath), 255 - 1 - Buffer.byteLength(suffix));
  return path.join(path.dirname(absPath), `.${base}${suffix}`);
}

/**
 * The name under which the server keeps an outside program's version of a
 * file that it cannot put back under the file's own name:
 * `Note.md` → `Note.quire-conflict-20261126-054512.md` (UTC), then `-2`,
 * `-3`… for the `n`th try. The extension stays, so a note stays a note.
 * Not Syncthing's `.sync-conflict-` form: Syncthing prunes files of that
 * form beyond its `maxConflicts`, which could delete the only copy.
 */
export function conflictCopyName(name: string, at: Date, n: number): string {
  let ext = path.extname(name);
  if (Buffer.byteLength(ext) > 64) ext = ''; // not a real extension, and the name must stay within 255 bytes
  const stem = name.slice(0, name.length - ext.length);
  const stamp = at.toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
  const suffix = `.quire-conflict-${stamp}${n > 1 ? `-${n}` : ''}${ext}`;
  return truncateUtf8(stem, 255 - Buffer.byteLength(suffix)) + suffix;
}

/**
 * fsync a folder so a rename or unlink inside it survives a crash. File
 * systems that cannot fsync a folder (EINVAL/ENOTSUP…) are tolerated: by
 * then the operation has happened and cannot be undone, so failing it would
 * only misreport the state.
 */
export async function fsyncDir(dir: string): Promise<void> {
  let fh: FileHandle | undefined;
  try {
    fh = await open(dir, 'r');
    await fh.sync();
  } catch {
    /* best effort, see above */
  } finally {
    await fh?.close().catch(() => undefined);
  }
}

/**
 * mkdir -p for the folder of `label` (the path about to be written), fsyncing
 * the parent of every folder it had to create. A file in the way is a 409
 * `parent_not_folder`.
 */
export async function ensureDir(dir: string, label: string): Promise<void> {
  let created: string | undefined;
  try {
    created = await mkdir(dir, { recursive: true });
  } catch (e) {
    const c = errCode(e);
    // mkdir -p reports a file in the way as EEXIST (last component) or ENOTDIR (earlier one).
    if (c === 'EEXIST' || c === 'ENOTDIR') throw fsError(Object.assign(new Error(c), { code: 'ENOTDIR' }), 'write', label);
    throw fsError(e, 'mkdir', label);
  }
  if (created === undefined) return;
  for (let d = dir; ; d = path.dirname(d)) {
    await fsyncDir(path.dirname(d));
    if (d === created || path.dirname(d) === d) break;
  }
}

/**
 * Atomically replaces (or creates) the file at `absPath` with `bytes`.
 * Creates missing parent folders. Keeps the permission bits of a file it
 * replaces. On any failure the temp file is removed, the target is untouched,
 * and an AppError is thrown.
 */
export async function writeFileAtomic(absPath: string, bytes: Uint8Array | string, opts: AtomicWriteOptions = {}): Promise<void> {
  const io = { ...defaultIo, ...opts.io };
  const data = typeof bytes === 'string' ? Buffer.from(bytes, 'utf8') : bytes;
  await writeAtomicWith(absPath, (fh) => io.write(fh, data), opts);
}

/**
 * `writeFileAtomic` for content produced a piece at a time (a large cache
 * file written between other work): each chunk is written as it comes.
 */
export async function writeChunksAtomic(absPath: string, chunks: AsyncIterable<string | Uint8Array> | Iterable<string | Uint8Array>, opts: AtomicWriteOptions = {}): Promise<void> {
  await writeAtomicWith(
    absPath,
    async (fh) => {
      for await (const chunk of chunks) {
        if (typeof chunk === 'string') {
          await fh.write(chunk);
          continue;
        }
        for (let at = 0; at < chunk.length; ) at += (await fh.write(chunk, at, chunk.length - at)).bytesWritten;
      }
    },
    opts,
  );
}

/** The temp file of a write in progress: written and fsynced, not yet renamed. */
interface PreparedTemp {
  tmp: string;
  /** Identity of the temp file's inode, which becomes the file's. */
  dev: number;
  ino: number;
}

/**
 * Creates the temp file beside `absPath` with permission bits `mode`
 * (undefined: a new file's defaults), fills it, fsyncs and closes it. On
 * failure the temp file is removed and an AppError is thrown.
 */
async function prepareTemp(absPath: string, mode: number | undefined, fill: (fh: FileHandle) => Promise<void>, io: Omit<AtomicIo, 'exchange'>, label: string, mkdirs = true): Promise<PreparedTemp> {
  if (mkdirs) await ensureDir(path.dirname(absPath), label);
  const tmp = tempPathFor(absPath);
  inUse.add(tmp);
  let fh: FileHandle | undefined;
  try {
    fh = await open(tmp, 'wx', mode ?? 0o666);
    if (mode !== undefined) await fh.chmod(mode); // open() applies the umask; keep the old bits exactly
    await fill(fh);
    await io.sync(fh);
    const st = await fh.stat();
    await fh.close();
    fh = undefined;
    return { tmp, dev: st.dev, ino: st.ino };
  } catch (e) {
    await fh?.close().catch(() => undefined);
    await unlink(tmp).catch(() => undefined);
    inUse.delete(tmp);
    throw fsError(e, 'write', label);
  }
}

async function modeOf(absPath: string, label: string): Promise<number | undefined> {
  try {
    const st = await stat(absPath);
    if (st.isDirectory()) {
      throw new AppError('conflict', `${show(label)} is a folder, not a file`, { details: { path: label, reason: 'is_a_folder' } });
    }
    return st.mode & 0o7777;
  } catch (e) {
    if (e instanceof AppError) throw e;
    // ENOTDIR: a file where a folder should be; ensureDir reports it as parent_not_folder.
    if (errCode(e) !== 'ENOENT' && errCode(e) !== 'ENOTDIR') throw fsError(e, 'write', label);
    return undefined;
  }
}

async function writeAtomicWith(absPath: string, fill: (fh: FileHandle) => Promise<void>, opts: AtomicWriteOptions): Promise<void> {
  const label = opts.label ?? path.basename(absPath);
  const io = { ...defaultIo, ...opts.io };
  const { tmp } = await prepareTemp(absPath, await modeOf(absPath, label), fill, io, label);
  try {
    await io.rename(tmp, absPath);
  } catch (e) {
    await unlink(tmp).catch(() => undefined);
    throw fsError(e, 'write', label);
  } finally {
    inUse.delete(tmp);
  }
  await fsyncDir(path.dirname(absPath));
}

// ---- replacing only what was checked -----------------------------------------

/**
 * Temp files and set-aside links this process is using right now, so that
 * removing stale temp files never cuts a write in progress.
 */
const inUse = new Set<string>();

/** Whether this process is still using the temp file at `absPath`. */
export function isTempInUse(absPath: string): boolean {
  return inUse.has(absPath);
}

/** Marks a set-aside link as in use (true) or released (false). */
export function holdTemp(absPath: string, held: boolean): void {
  if (held) inUse.add(absPath);
  else inUse.delete(absPath);
}

/** Errors of link(2) that mean "this file system has no hard links here", not "something is wrong". */
const NO_HARD_LINKS = new Set(['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'EXDEV', 'EMLINK', 'ENOSYS']);

/** The file the write path read and checked under the writer lock: the only thing it may replace. */
export interface CheckedFile {
  bytes: Buffer;
  etag: string;
  dev: number;
  ino: number;
  size: number;
  mtimeMs: number;
  ctimeMs: number;
  /** Permission bits, kept by the replacement. */
  mode: number;
}

/** The identity a replacement checks: inode and bytes (etag); size/mtime/ctime stand in for the bytes where hard links are unavailable. */
export type FileIdentity = Pick<CheckedFile, 'dev' | 'ino'> & Partial<Pick<CheckedFile, 'size' | 'mtimeMs' | 'ctimeMs' | 'etag'>>;

function sameIdentity(st: Stats, id: FileIdentity): boolean {
  return (
    st.ino === id.ino &&
    st.dev === id.dev &&
    (id.size === undefined || st.size === id.size) &&
    (id.mtimeMs === undefined || st.mtimeMs === id.mtimeMs) &&
    (id.ctimeMs === undefined || st.ctimeMs === id.ctimeMs)
  );
}

function lstatNow(p: string): Stats | null {
  try {
    return lstatSync(p);
  } catch (e) {
    if (errCode(e) === 'ENOENT' || errCode(e) === 'ENOTDIR') return null;
    throw e;
  }
}

/**
 * Files up to this size are read with synchronous calls on the write path,
 * as Home.read does: for a note in the page cache, four promise round trips
 * (open, stat, read, close) cost the event loop more than the read itself.
 */
const SYNC_READ_MAX = 256 * 1024;

/**
 * A file's bytes and the stat of the inode they came from (one open file,
 * so they belong together). Only regular files are read; for anything else
 * `bytes` is empty. null when nothing is there. Throws the raw fs error.
 */
async function readWithStat(absPath: string): Promise<{ bytes: Buffer; st: Stats } | null> {
  let fd: number;
  try {
    fd = openSync(absPath, fsConstants.O_RDONLY | fsConstants.O_NONBLOCK);
  } catch (e) {
    if (errCode(e) === 'ENOENT' || errCode(e) === 'ENOTDIR') return null;
    throw e;
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) return { bytes: Buffer.alloc(0), st };
    if (st.size <= SYNC_READ_MAX) {
      // Read to the end, whatever the size was a moment ago.
      let bytes = Buffer.allocUnsafe(st.size + 1);
      let n = 0;
      for (;;) {
        if (n === bytes.length) bytes = Buffer.concat([bytes, Buffer.allocUnsafe(bytes.length)]);
        const got = readSync(fd, bytes, n, bytes.length - n, n);
        if (got === 0) break;
        n += got;
      }
      return { bytes: bytes.subarray(0, n), st };
    }
  } finally {
    closeSync(fd);
  }
  const fh = await open(absPath, 'r');
  try {
    const st = await fh.stat();
    return { bytes: st.isFile() ? await fh.readFile() : Buffer.alloc(0), st };
  } finally {
    await fh.close().catch(() => undefined);
  }
}

/**
 * Reads a file with the identity of the inode the bytes came from. null
 * when it does not exist. A folder is a 409 `is_a_folder`, a FIFO, socket
 * or device a 409 `not_a_file`.
 */
export async function readChecked(absPath: string, label: string): Promise<CheckedFile | null> {
  let got;
  try {
    got = await readWithStat(absPath);
  } catch (e) {
    throw fsError(e, errCode(e) === 'EISDIR' ? 'write' : 'read', label);
  }
  if (got === null) return null;
  const { bytes, st } = got;
  if (st.isDirectory()) throw fsError(Object.assign(new Error('EISDIR'), { code: 'EISDIR' }), 'write', label);
  if (!st.isFile()) {
    throw new AppError('conflict', `${show(label)} is not a regular file`, { details: { path: label, reason: 'not_a_file' } });
  }
  return { bytes, etag: etagOf(bytes), dev: st.dev, ino: st.ino, size: st.size, mtimeMs: st.mtimeMs, ctimeMs: st.ctimeMs, mode: st.mode & 0o7777 };
}

/** The ETag of the bytes at `absPath` now; null if it is gone (or not a regular file). */
export async function etagNow(absPath: string): Promise<string | null> {
  try {
    const got = await readWithStat(absPath);
    return got !== null && got.st.isFile() ? etagOf(got.bytes) : null;
  } catch {
    return null;
  }
}

export type Replacement =
  /**
   * The entry at the target is no longer the checked file (or no longer
   * absent): nothing of ours is there. `stray`, when set, is a temp path
   * holding another program's bytes that the attempt moved out of the way;
   * the caller must give them a visible name (keepAside). `src` is still in
   * place unless it is that stray or was discarded.
   */
  | { ok: false; stray: string | null }
  /**
   * `src` is now the target. `aside` is a temp name of the inode it
   * replaced, so the caller can watch it for late writes; null when there
   * was nothing to replace or hard links are unavailable. `verified`: the
   * replaced inode's bytes were found to be the checked ones after the
   * replace (no further check needed).
   */
  | { ok: true; aside: string | null; verified: boolean };

/** Errors of renameat2(RENAME_EXCHANGE) that mean "not here": fall back to the link-aside replace. */
const NO_EXCHANGE = new Set(['EINVAL', 'ENOSYS', 'ENOTSUP', 'EOPNOTSUPP', 'EPERM', 'EXDEV']);

/**
 * Is the file at `p` the inode `id` with the bytes `etag`? Inode and size
 * are compared first, so that a different file is told apart with one
 * lstat: the exchange path swaps another program's file back that much
 * sooner.
 */
async function isIdentity(p: string, id: { dev: number; ino: number; size?: number }, etag: string | undefined): Promise<boolean> {
  if (!isIdentitySync(p, id)) return false;
  return etag === undefined || (await etagNow(p)) === etag;
}

function isIdentitySync(p: string, id: { dev: number; ino: number; size?: number }): boolean {
  const st = lstatNow(p);
  return st !== null && st.ino === id.ino && st.dev === id.dev && (id.size === undefined || st.size === id.size);
}

/**
 * Puts `src` at `absPath`, but only if the entry there is still the inode
 * identified by `expected` with the checked bytes (null: only if nothing is
 * there). This is the step that keeps the server from erasing an outside
 * write (docs/vault-disk.md, "Replacing only what was checked").
 *
 * `srcEtag` is the ETag of `src` when `src` is the server's own new
 * content, which may be discarded if the replace is undone; null when
 * `src` holds another program's bytes, which are never discarded.
 *
 * 1. With renameat2(RENAME_EXCHANGE): swap `src` and the target. Whatever
 *    was at the path at that instant is now under `src`'s temp name, so
 *    nothing is ever destroyed. If it is not the checked file, swap back;
 *    if something else again was at the path by then, it is a stray.
 * 2. Otherwise, link the current entry aside, require that pinned inode to
 *    be the checked one with the checked bytes (a freed inode number is
 *    soon reused), check with no await in between that the path still
 *    names it, and rename(2). An outside rename that lands between that
 *    last check and the rename is lost: this is the window the exchange
 *    closes.
 *
 * A new file is created with link(2), which never replaces anything. Where
 * hard links are unavailable, the path's inode, size, mtime and ctime are
 * compared right before the rename instead.
 */
export async function replaceIfUnchanged(
  src: string,
  absPath: string,
  expected: FileIdentity | null,
  srcEtag: string | null,
  label: string,
  ioOverrides?: Partial<AtomicIo>,
): Promise<Replacement> {
  const io: AtomicIo = { ...defaultIo, exchange: renameExchange(), ...ioOverrides };
  if (expected === null) {
    try {
      linkSync(src, absPath); // in place: under the lock, a round trip would queue behind other writes' fsyncs in the thread pool
    } catch (e) {
      const c = errCode(e) ?? '';
      if (c === 'EEXIST') return { ok: false, stray: null };
      if (!NO_HARD_LINKS.has(c)) throw fsError(e, 'write', label);
      if (lstatNow(absPath) !== null) return { ok: false, stray: null };
      await io.rename(src, absPath);
      return { ok: true, aside: null, verified: true };
    }
    try {
      unlinkSync(src);
    } catch {
      /* a leftover is a temp file, removed at the next opening */
    }
    return { ok: true, aside: null, verified: true };
  }

  if (io.exchange) {
    // Check first, so that the swap below rarely has to be undone: while our file is at the path, a
    // program that reads it and saves the result would build on bytes the caller is told were not written.
    if (!(await isIdentity(absPath, expected, expected.etag))) return { ok: false, stray: null };
    const srcSt = lstatSync(src);
    // Once more, cheaply, right before the swap: a save made while the bytes were hashed is caught here.
    if (!isIdentitySync(absPath, expected)) return { ok: false, stray: null };
    let swapped = true;
    try {
      io.exchange(src, absPath);
    } catch (e) {
      const c = errCode(e) ?? '';
      if (c === 'ENOENT') return { ok: false, stray: null }; // the file is gone: another program deleted or moved it
      if (!NO_EXCHANGE.has(c)) throw fsError(e, 'write', label);
      swapped = false;
    }
    if (swapped) {
      if (await isIdentity(src, expected, expected.etag)) return { ok: true, aside: src, verified: true };
      // Another program's version was there: it goes back. What comes out is normally our own file.
      try {
        io.exchange(src, absPath);
      } catch (e) {
        if (errCode(e) === 'ENOENT') return { ok: false, stray: src }; // the path was emptied meanwhile
        throw fsError(e, 'write', label);
      }
      if (srcEtag !== null && (await isIdentity(src, srcSt, srcEtag))) {
        await unlink(src).catch(() => undefined);
        return { ok: false, stray: null };
      }
      return { ok: false, stray: src };
    }
  }

  const aside = tempPathFor(absPath);
  inUse.add(aside);
  try {
    linkSync(absPath, aside); // synchronous like the checks and the rename after it: a local metadata call, cheaper than a round trip
  } catch (e) {
    inUse.delete(aside);
    const c = errCode(e) ?? '';
    if (c === 'ENOENT') return { ok: false, stray: null };
    if (!NO_HARD_LINKS.has(c)) throw fsError(e, 'write', label);
    const now = lstatNow(absPath);
    if (now === null || !sameIdentity(now, expected)) return { ok: false, stray: null };
    await io.rename(src, absPath); // the default rename is synchronous: no other callback runs after the check
    return { ok: true, aside: null, verified: true };
  }
  const release = async () => {
    await unlink(aside).catch(() => undefined);
    inUse.delete(aside);
  };
  try {
    const pinned = lstatSync(aside);
    // A freed inode's number is soon reused, so the same number alone may be another program's new file: its bytes must match too.
    const same = pinned.ino === expected.ino && pinned.dev === expected.dev && (expected.etag === undefined || (await etagNow(aside)) === expected.etag);
    // While the link holds the inode, nothing else can have its number: the same number at the path is the same file.
    const now = same ? lstatNow(absPath) : null;
    if (now === null || now.ino !== pinned.ino || now.dev !== pinned.dev) {
      await release();
      return { ok: false, stray: null };
    }
    await io.rename(src, absPath);
  } catch (e) {
    await release();
    throw fsError(e, 'write', label);
  }
  return { ok: true, aside, verified: false };
}

export type CheckedWrite =
  /** Written. `aside` names the replaced inode (see Replacement), to be watched for late outside writes. */
  | { outcome: 'written'; aside: string | null; dev: number; ino: number }
  /** The file changed before the replace: nothing was written. `stray`: outside bytes moved aside, to be kept visibly. */
  | { outcome: 'changed'; stray: string | null }
  /**
   * Written, but the replaced inode's bytes are not the checked ones: an
   * outside program wrote into it between the check and the rename. Its
   * bytes are at `aside`; the caller must put them back. (Only without the
   * exchange, which finds this before anything is acknowledged or kept.)
   */
  | { outcome: 'raced'; aside: string; dev: number; ino: number };

/**
 * The temp file of a checked write made before the writer lock is taken
 * (`prepareChecked`): the slow part of a write, its fsync, then overlaps
 * with other writes' (docs/vault-disk.md, "Preparing outside the lock").
 */
export interface PreparedWrite extends PreparedTemp {
  absPath: string;
  /** The permission bits given to the temp file: those of the file there before the lock, undefined for a new file. */
  mode: number | undefined;
}

/**
 * Writes and fsyncs the temp file for `writeFileChecked(absPath, bytes, …)`
 * without any lock. null when it cannot be made here (no folder yet, a
 * folder at the path, any error): the write then makes it under the lock as
 * before, and reports what is wrong there. Folders are not created here: a
 * new folder would be in place before the write's case check ran.
 */
export async function prepareChecked(absPath: string, bytes: Uint8Array, opts: AtomicWriteOptions = {}): Promise<PreparedWrite | null> {
  const label = opts.label ?? path.basename(absPath);
  const io = { ...defaultIo, ...opts.io };
  try {
    const mode = await modeOf(absPath, label);
    return { ...(await prepareTemp(absPath, mode, (fh) => io.write(fh, bytes), io, label, false)), absPath, mode };
  } catch {
    return null; // prepareTemp has removed its temp file
  }
}

/** Removes a prepared temp file the write did not use. */
export async function discardPrepared(p: PreparedWrite): Promise<void> {
  await unlink(p.tmp).catch(() => undefined);
  inUse.delete(p.tmp);
}

/** Whether `p` can stand for `absPath` with the permission bits `mode`: same target, same bits, and still where it was made. */
function preparedFits(p: PreparedWrite, absPath: string, mode: number | undefined): boolean {
  if (p.absPath !== absPath || p.mode !== mode) return false;
  const st = lstatNow(p.tmp); // a folder moved since: the temp file moved with it
  return st !== null && st.ino === p.ino && st.dev === p.dev;
}

export interface CheckedWriteOptions extends AtomicWriteOptions {
  /** The temp file made before the lock with these bytes, used if it still fits (else removed); it is the callee's from here on. */
  prepared?: PreparedWrite | null;
  /** false: the caller fsyncs the folder before acknowledging the write (Home.write does it after releasing the lock). Default true. */
  syncDir?: boolean;
}

/**
 * `writeFileAtomic` that replaces only `expected`, the file read and
 * checked under the writer lock (null: only if there is still no file).
 */
export async function writeFileChecked(absPath: string, bytes: Uint8Array, expected: CheckedFile | null, opts: CheckedWriteOptions = {}): Promise<CheckedWrite> {
  const label = opts.label ?? path.basename(absPath);
  const io = { ...defaultIo, ...opts.io };
  let prepared = opts.prepared ?? null;
  if (prepared !== null && !preparedFits(prepared, absPath, expected ? expected.mode : undefined)) {
    await discardPrepared(prepared);
    prepared = null;
  }
  const { tmp, dev, ino } = prepared ?? (await prepareTemp(absPath, expected ? expected.mode : await modeOf(absPath, label), (fh) => io.write(fh, bytes), io, label));
  let r: Replacement;
  try {
    r = await replaceIfUnchanged(tmp, absPath, expected, etagOf(bytes), label, opts.io);
  } catch (e) {
    await unlink(tmp).catch(() => undefined);
    inUse.delete(tmp);
    throw e;
  }
  // With the exchange, the temp name now holds the replaced file (or a stray): still in use.
  if ((r.ok ? r.aside : r.stray) !== tmp) inUse.delete(tmp);
  if (!r.ok) {
    if (r.stray !== tmp) await unlink(tmp).catch(() => undefined);
    return { outcome: 'changed', stray: r.stray };
  }
  if (opts.syncDir !== false) await fsyncDir(path.dirname(absPath));
  if (r.aside && expected && !r.verified && (await etagNow(r.aside)) !== expected.etag) return { outcome: 'raced', aside: r.aside, dev, ino };
  return { outcome: 'written', aside: r.aside, dev, ino };
}

/**
 * Removes `expected` (the file read and checked under the lock) by renaming
 * it aside first: rename never destroys, so if an outside program replaced
 * or rewrote the file in the meantime, its version is what lands aside and
 * can be put back. `aside` is returned in both cases: 'removed' (the checked
 * bytes, to be watched for late writes) and 'changed' (the outside bytes,
 * or null when the file was already gone).
 */
export async function removeChecked(absPath: string, expected: CheckedFile, label: string): Promise<{ outcome: 'removed' | 'changed'; aside: string | null }> {
  const aside = tempPathFor(absPath);
  inUse.add(aside);
  try {
    await rename(absPath, aside);
  } catch (e) {
    inUse.delete(aside);
    if (errCode(e) === 'ENOENT') return { outcome: 'changed', aside: null };
    throw fsError(e, 'delete', label);
  }
  await fsyncDir(path.dirname(absPath));
  const st = await lstat(aside).catch(() => null);
  const same = st !== null && st.ino === expected.ino && st.dev === expected.dev && (await etagNow(aside)) === expected.etag;
  return { outcome: same ? 'removed' : 'changed', aside };
}

/**
 * Gives the bytes at `aside` (an outside program's, which the server must
 * not lose) a visible name: `absPath` itself when `original` is set and the
 * name is free, else the first free conflict name from `conflictName`.
 * Never replaces anything (link(2) refuses an existing name). Returns the
 * absolute path used.
 */
export async function keepAside(aside: string, absPath: string, original: boolean, conflictName: (n: number) => string, label: string): Promise<string> {
  for (let n = original ? 0 : 1; ; n++) {
    const target = n === 0 ? absPath : conflictName(n);
    try {
      await link(aside, target);
    } catch (e) {
      if (errCode(e) === 'EEXIST') continue;
      throw fsError(e, 'write', label);
    }
    await unlink(aside).catch(() => undefined);
    inUse.delete(aside);
    await fsyncDir(path.dirname(absPath));
    return target;
  }
}

export interface RemoveOptions {
  label?: string;
  /** Return false instead of throwing `not_found` when the file is already gone. */
  missingOk?: boolean;
}

/** Removes a file (not a folder) and fsyncs its folder. Returns whether it existed. */
export async function removeFile(absPath: string, opts: RemoveOptions = {}): Promise<boolean> {
  const label = opts.label ?? path.basename(absPath);
  try {
    const st = await lstat(absPath);
    if (st.isDirectory()) {
      throw new AppError('conflict', `${show(label)} is a folder, not a file`, { details: { path: label, reason: 'is_a_folder' } });
    }
    await unlink(absPath);
  } catch (e) {
    if (errCode(e) === 'ENOENT' && opts.missingOk) return false;
    throw fsError(e, 'delete', label);
  }
  await fsyncDir(path.dirname(absPath));
  return true;
}

export interface RenameOptions {
  /** Replace an existing target (files only). Default false: an existing target is a 409. */
  overwrite?: boolean;
  /** Names for messages (Home-relative paths). */
  labelFrom?: string;
  labelTo?: string;
}

async function sameEntry(a: string, b: string): Promise<boolean> {
  try {
    const [sa, sb] = await Promise.all([lstat(a), lstat(b)]);
    return sa.ino === sb.ino && sa.dev === sb.dev;
  } catch {
    return false;
  }
}

function targetExists(labelTo: string): AppError {
  return new AppError('conflict', `${show(labelTo)} already exists; choose another name or delete it first`, {
    details: { path: labelTo, reason: 'target_exists' },
  });
}

/**
 * Renames a file or folder, creating the target's parent folders.
 *
 * Without `overwrite`, an existing target is refused. For files this is
 * enforced atomically with link() + unlink() (link fails if the target
 * exists; a crash in between leaves both names, never neither). Where hard
 * links are unsupported, and for folders, the target is checked first and
 * then renamed — callers hold the Home's writer lock, so only an outside
 * program racing in that instant could slip in between.
 */
export async function renameAtomic(from: string, to: string, opts: RenameOptions = {}): Promise<void> {
  const labelFrom = opts.labelFrom ?? path.basename(from);
  const labelTo = opts.labelTo ?? path.basename(to);
  let st;
  try {
    st = await lstat(from);
  } catch (e) {
    throw fsError(e, 'move', labelFrom);
  }
  await ensureDir(path.dirname(to), labelTo);

  if (opts.overwrite && !st.isDirectory()) {
    try {
      await rename(from, to);
    } catch (e) {
      throw fsError(e, 'move', errCode(e) === 'ENOENT' ? labelFrom : labelTo);
    }
  } else {
    let done = false;
    if (!st.isDirectory()) {
      try {
        await link(from, to);
        done = true;
      } catch (e) {
        const c = errCode(e);
        if (c === 'EEXIST') {
          // Same entry under another case on a case-insensitive file system: a plain rename is a case-only rename.
          if (!(await sameEntry(from, to))) throw targetExists(labelTo);
        } else if (!['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'EXDEV', 'EMLINK', 'ENOSYS', 'EACCES'].includes(c ?? '')) {
          throw fsError(e, 'move', c === 'ENOENT' ? labelFrom : labelTo);
        }
      }
      if (done) {
        try {
          await unlink(from);
        } catch (e) {
          // Undo the link so the move fails cleanly rather than leaving two names.
          await unlink(to).catch(() => undefined);
          throw fsError(e, 'move', labelFrom);
        }
      }
    }
    if (!done) {
      try {
        await lstat(to);
        if (!(await sameEntry(from, to))) throw targetExists(labelTo);
      } catch (e) {
        if (e instanceof AppError) throw e;
        if (errCode(e) !== 'ENOENT') throw fsError(e, 'move', labelTo);
      }
      try {
        await rename(from, to);
      } catch (e) {
        throw fsError(e, 'move', errCode(e) === 'ENOENT' ? labelFrom : labelTo);
      }
    }
  }
  await fsyncDir(path.dirname(to));
  if (path.dirname(to) !== path.dirname(from)) await fsyncDir(path.dirname(from));
}
