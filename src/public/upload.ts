/**
 * The file drop's rules and its last step. The rules (file names, conflict policies, checksum
 * headers, the names a `rename` tries) are pure functions, tested table-style; `commitUpload`
 * moves a finished upload from `<data>/state/uploads/` into the shared folder under the Home's
 * writer lock. docs/public-links.md, "Uploads".
 */
import { createHash, type Hash } from 'node:crypto';
import { constants as FS, promises as fsp } from 'node:fs';
import nodePath from 'node:path';
import { AppError, errors } from '../core/errors.js';
import { fsyncDir, holdTemp, renameAtomic, tempPathFor } from '../vault/atomic.js';
import { quotaExceeded } from '../vault/errors.js';
import { isIgnoredPath } from '../vault/ignore.js';
import { checkNewName, checkServerMayChange, validateRelPath } from '../vault/paths.js';
import { locateRel, type OpenLink } from './access.js';

export const CONFLICT_POLICIES = ['rename', 'replace', 'reject'] as const;
export type ConflictPolicy = (typeof CONFLICT_POLICIES)[number];

/** The largest upload a link takes (beyond it: 413), whatever the owner's quota leaves. */
export const UPLOAD_MAX_BYTES = 64 * 1024 ** 3;

/** `Upload-Conflict-Policy`: absent or empty means `rename`; anything else not listed is a 400. */
export function parseConflictPolicy(value: string | null | undefined): ConflictPolicy {
  const v = (value ?? '').trim().toLowerCase();
  if (v === '') return 'rename';
  if ((CONFLICT_POLICIES as readonly string[]).includes(v)) return v as ConflictPolicy;
  throw errors.badRequest(`Upload-Conflict-Policy must be one of ${CONFLICT_POLICIES.join(', ')}`, {
    field: 'headers.upload-conflict-policy',
    reason: 'bad_conflict_policy',
  });
}

/**
 * The `filename` of `Upload-Metadata` as the name of a file in the shared folder: one plain path
 * segment the vault accepts, not hidden (a leading dot), not a temp or internal name.
 */
export function uploadFileName(value: string | null | undefined): string {
  const bad = (why: string, reason: string) =>
    errors.badRequest(`Upload-Metadata filename ${why}`, { field: 'headers.upload-metadata', reason });
  if (value === null || value === undefined || value === '') throw bad('is required (the name the file gets in the folder)', 'filename_required');
  if (/[/\\]/.test(value)) throw bad('must be a file name, not a path', 'filename_is_path');
  if (value.startsWith('.')) throw bad('must not start with "." (hidden files are not shared)', 'filename_hidden');
  try {
    validateRelPath(value);
  } catch (e) {
    throw bad(`is not a valid file name: ${e instanceof Error ? e.message : String(e)}`, 'filename_invalid');
  }
  if (isIgnoredPath(value)) throw bad('is a name the vault ignores (temporary or internal file)', 'filename_ignored');
  return value;
}

/** The name a `rename` tries the `n`th time: `name.ext`, then `name (2).ext`, `name (3).ext`… */
export function renamedName(name: string, n: number): string {
  if (n <= 1) return name;
  const dot = name.lastIndexOf('.');
  // `archive.tar.gz` keeps only its last extension apart; a name that is all extension (`.x`) never reaches here.
  return dot > 0 ? `${name.slice(0, dot)} (${n})${name.slice(dot)}` : `${name} (${n})`;
}

const CHECKSUM_ALGORITHMS = { sha1: 'sha1', sha256: 'sha256', md5: 'md5' } as const;
export const CHECKSUM_NAMES = Object.keys(CHECKSUM_ALGORITHMS);

export interface Checksum {
  algorithm: keyof typeof CHECKSUM_ALGORITHMS;
  /** The digest the client sent, base64. */
  digest: string;
}

/** `Upload-Checksum: <algorithm> <base64 digest>` (tus checksum extension); an unknown algorithm is a 400. */
export function parseChecksum(value: string | null | undefined): Checksum | null {
  if (value === null || value === undefined || value.trim() === '') return null;
  const m = /^\s*([A-Za-z0-9-]+) +([A-Za-z0-9+/]+={0,2})\s*$/.exec(value);
  if (!m) throw errors.badRequest('Upload-Checksum must be "<algorithm> <base64 digest>"', { field: 'headers.upload-checksum', reason: 'bad_checksum' });
  const algorithm = m[1]!.toLowerCase();
  if (!(algorithm in CHECKSUM_ALGORITHMS)) {
    throw errors.badRequest(`Upload-Checksum algorithm ${algorithm} is not supported; use one of ${CHECKSUM_NAMES.join(', ')}`, {
      field: 'headers.upload-checksum',
      reason: 'checksum_algorithm',
    });
  }
  return { algorithm: algorithm as Checksum['algorithm'], digest: m[2]! };
}

export const hashFor = (c: Checksum): Hash => createHash(CHECKSUM_ALGORITHMS[c.algorithm]);

/**
 * Moves the finished upload at `src` (outside the Home) into the shared folder as `name`, by
 * `policy`, and returns its Home path. The bytes first become a temp file in the target folder
 * (a rename, or a copy when `<data>` is on another disk), which the watcher ignores; under the
 * writer lock the name is chosen, the quota checked and the temp file renamed in one step, so
 * the folder shows one new whole file and nothing else. `src` is gone afterwards, whatever happened.
 */
export async function commitUpload(open: OpenLink, src: string, size: number, name: string, policy: ConflictPolicy): Promise<{ path: string; replaced: boolean }> {
  const folder = await locateRel(open, '');
  if (folder.kind !== 'folder') throw errors.notFound('The folder this link shares no longer exists');
  const home = open.scope.vault.home;
  const tmp = tempPathFor(nodePath.join(folder.abs, name));
  holdTemp(tmp, true);
  try {
    await stage(src, tmp);
    const placed = await home.lock.run(async () => {
      const { rel, abs, replaced, oldSize } = await chooseTarget(open, folder.abs, name, policy);
      const quota = open.scope.quotaBytes;
      const delta = size - oldSize;
      if (quota > 0 && delta > 0) {
        const used = await home.usage();
        if (used + delta > quota) throw quotaExceeded(rel, quota, used, delta);
      }
      await renameAtomic(tmp, abs, { overwrite: replaced, labelFrom: rel, labelTo: rel });
      // Counted now, not when the watcher reports the file: the next upload's quota check needs it.
      home.applyExternalChanges([{ kind: 'upsert', path: rel, size }]);
      return { path: rel, replaced };
    });
    await fsyncDir(folder.abs);
    return placed;
  } finally {
    holdTemp(tmp, false);
    await fsp.unlink(tmp).catch(() => undefined);
    await fsp.unlink(src).catch(() => undefined);
  }
}

async function stage(src: string, tmp: string): Promise<void> {
  try {
    await fsp.rename(src, tmp);
    return;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EXDEV') throw e;
  }
  // Another disk: the kernel copies (copy_file_range), nothing passes through this process's memory.
  await fsp.copyFile(src, tmp, FS.COPYFILE_EXCL);
  const fh = await fsp.open(tmp, 'r');
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}

const exists = async (abs: string) => {
  try {
    return await fsp.lstat(abs);
  } catch {
    return null;
  }
};

/** The Home path the upload takes under `policy`; run under the writer lock. */
async function chooseTarget(open: OpenLink, folderAbs: string, name: string, policy: ConflictPolicy) {
  const home = open.scope.vault.home;
  for (let n = 1; n <= 1000; n++) {
    const candidate = renamedName(name, n);
    const rel = `${open.targetPath}/${candidate}`;
    checkServerMayChange(rel);
    const abs = nodePath.join(folderAbs, candidate);
    const st = await exists(abs);
    if (st === null) {
      try {
        await checkNewName(home.root, rel);
      } catch (e) {
        // `Photo.JPG` beside `photo.jpg`: a case twin counts as taken.
        if (policy === 'rename' && e instanceof AppError) continue;
        throw e;
      }
      return { rel, abs, replaced: false, oldSize: 0 };
    }
    if (policy === 'reject') throw nameTaken(rel);
    if (policy === 'replace') {
      if (!st.isFile()) throw new AppError('conflict', `${JSON.stringify(candidate)} is a folder or special file in this folder; it cannot be replaced`, { details: { path: rel, reason: 'not_a_file' } });
      return { rel, abs, replaced: true, oldSize: st.size };
    }
  }
  throw nameTaken(`${open.targetPath}/${name}`);
}

export const nameTaken = (rel: string) =>
  new AppError('conflict', `A file named ${JSON.stringify(nodePath.basename(rel))} is already in this folder (Upload-Conflict-Policy: reject)`, {
    details: { path: rel, reason: 'name_taken' },
  });

/** For creation: 409 at once under `reject` when the name is taken, so no bytes are sent for nothing. */
export async function checkNameFree(open: OpenLink, name: string): Promise<void> {
  const folder = await locateRel(open, '');
  if (await exists(nodePath.join(folder.abs, name))) throw nameTaken(`${open.targetPath}/${name}`);
}

/** For creation: 413 when `size` is over the limit or over what the owner's quota leaves. */
export async function checkRoom(open: OpenLink, size: number): Promise<void> {
  if (size > UPLOAD_MAX_BYTES) {
    throw new AppError('bad_request', `Upload-Length ${size} is over the ${UPLOAD_MAX_BYTES}-byte limit of a file drop`, {
      status: 413,
      details: { field: 'headers.upload-length', limit: String(UPLOAD_MAX_BYTES), reason: 'too_large' },
    });
  }
  const quota = open.scope.quotaBytes;
  if (quota <= 0) return;
  const used = await open.scope.vault.home.usage();
  if (used + size > quota) {
    throw new AppError('bad_request', `Upload-Length ${size} is more than the ${Math.max(0, quota - used)} bytes the owner's quota leaves`, {
      status: 413,
      details: { field: 'headers.upload-length', reason: 'quota_exceeded', free_bytes: String(Math.max(0, quota - used)) },
    });
  }
}
