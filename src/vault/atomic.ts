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
 */
import { randomBytes } from 'node:crypto';
import { link, lstat, mkdir, open, rename, stat, unlink, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { AppError } from '../core/errors.js';
import { fsError, show } from './errors.js';
import { TEMP_MARKER } from './ignore.js';

/** The steps of an atomic write that tests (or unusual deployments) may replace. */
export interface AtomicIo {
  /** Writes all of `bytes` to the open temp file. */
  write(fh: FileHandle, bytes: Uint8Array): Promise<void>;
  /** Flushes the temp file to stable storage. */
  sync(fh: FileHandle): Promise<void>;
  /** Renames the finished temp file over the target. */
  rename(from: string, to: string): Promise<void>;
}

const defaultIo: AtomicIo = {
  write: async (fh, bytes) => {
    await fh.writeFile(bytes);
  },
  sync: (fh) => fh.sync(),
  rename: (from, to) => rename(from, to),
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
  const io: AtomicIo = { ...defaultIo, ...opts.io };
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

async function writeAtomicWith(absPath: string, fill: (fh: FileHandle) => Promise<void>, opts: AtomicWriteOptions): Promise<void> {
  const label = opts.label ?? path.basename(absPath);
  const io: AtomicIo = { ...defaultIo, ...opts.io };
  const dir = path.dirname(absPath);
  await ensureDir(dir, label);

  let mode: number | undefined;
  try {
    const st = await stat(absPath);
    if (st.isDirectory()) {
      throw new AppError('conflict', `${show(label)} is a folder, not a file`, { details: { path: label, reason: 'is_a_folder' } });
    }
    mode = st.mode & 0o7777;
  } catch (e) {
    if (e instanceof AppError) throw e;
    if (errCode(e) !== 'ENOENT') throw fsError(e, 'write', label);
  }

  const tmp = tempPathFor(absPath);
  let fh: FileHandle | undefined;
  try {
    fh = await open(tmp, 'wx', mode ?? 0o666);
    if (mode !== undefined) await fh.chmod(mode); // open() applies the umask; keep the old bits exactly
    await fill(fh);
    await io.sync(fh);
    await fh.close();
    fh = undefined;
    await io.rename(tmp, absPath);
  } catch (e) {
    await fh?.close().catch(() => undefined);
    await unlink(tmp).catch(() => undefined);
    throw fsError(e, 'write', label);
  }
  await fsyncDir(dir);
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
