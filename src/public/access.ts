/**
 * What a visitor's request may reach. `openLink` turns a slug and a password into the link, its
 * owner's Home and what it allows; `locate` turns a visitor's `item` or `path` into a file or
 * folder inside the shared target, or 404. Other parts of the server that act for a visitor
 * (the file drop, guest editing) start here. docs/public-links.md, "What a visitor can reach".
 *
 * A path below a shared folder is walked segment by segment with lstat from the real Home root:
 * no symbolic link is followed (not even one that stays inside the folder), no dot-name
 * (`.obsidian`, `.trash`, `.git`) and nothing the vault ignores is reachable, and every spelling
 * the vault's path gate refuses is 404 here, so an answer never tells what lies outside.
 */
import { createHash } from 'node:crypto';
import { constants as FS, lstatSync, promises as fsp, type Stats } from 'node:fs';
import nodePath from 'node:path';
import type { Caller } from '../accounts/caller.js';
import { paths } from '../core/config.js';
import { AppError, errors } from '../core/errors.js';
import type { Services } from '../core/services.js';
import type { NoteEntry } from '../index/types.js';
import { visible, type Scope } from '../notes/access.js';
import { isIgnoredPath } from '../vault/ignore.js';
import type { SidecarStore } from '../store/sidecar.js';
import { validateRelPath } from '../vault/paths.js';
import { findLinkBySlug, ownerActive, type PublicLinkRecord } from './link-store.js';
import { isPageGrant, pageGrantOpens } from './page-token.js';
import { checkPassword, passwordRequired } from './passwords.js';

export type Permission = 'view' | 'download' | 'upload' | 'edit';

export interface OpenLink {
  link: PublicLinkRecord;
  /** The owner's Home and index, limited to the creating credential's prefix. */
  scope: Scope;
  /** Home path of the shared note, file or folder (a note or canvas is found by id, so it follows renames). */
  targetPath: string;
  /** The shared note, for note and canvas links. */
  note: NoteEntry | null;
}

const gone = (reason: string, message: string) => new AppError('not_found', message, { details: { reason } });

type Dead = 'unknown_link' | 'revoked' | 'expired' | 'owner_unavailable';
const DEAD: Record<Dead, string> = {
  unknown_link: 'No such public link',
  revoked: 'This public link was revoked by its owner',
  expired: 'This public link has expired',
  owner_unavailable: 'No such public link',
};

/**
 * The link a slug names and its owner while the link is live (known, not revoked, not expired,
 * its owner active), or why it is not. No password is looked at.
 */
export function liveLink(
  store: SidecarStore,
  slug: string,
  now: number,
): { link: PublicLinkRecord; owner: NonNullable<ReturnType<typeof ownerActive>> } | { dead: Dead } {
  const link = findLinkBySlug(store, slug);
  if (!link) return { dead: 'unknown_link' };
  if (link.revoked_at !== null) return { dead: 'revoked' };
  if (link.expires_at !== null && link.expires_at <= now) return { dead: 'expired' };
  const owner = ownerActive(store, link.user_id);
  return owner ? { link, owner } : { dead: 'owner_unavailable' };
}

/**
 * The link a visitor names, checked: 404 at once for an unknown, revoked or expired link or one
 * whose target is gone (before any password is looked at), then 401 `password_required` or 429.
 */
export async function openLink(services: Services, slug: string, password: string | undefined, now = Date.now()): Promise<OpenLink> {
  const live = liveLink(services.store, slug, now);
  if ('dead' in live) throw gone(live.dead, DEAD[live.dead]);
  const { link, owner } = live;
  if (link.password_hash !== null) {
    // The page's cookie holds a signed grant, not the password: checked without scrypt or the failure limit (it cannot be guessed).
    if (password !== undefined && isPageGrant(password)) {
      if (!pageGrantOpens(paths.state(services.config), password, { id: link.id, password_hash: link.password_hash }, now)) {
        throw passwordRequired("This page's access to the link has ended (the password changed, or it expired): enter the password again");
      }
    } else await checkPassword(link.id, link.password_hash, password, now);
  }
  const caller: Caller = {
    userId: owner.id,
    username: owner.username,
    role: owner.role,
    credential: { kind: 'app_password', id: `public-link:${link.id}` },
    grants: [],
    homePrefix: link.home_prefix,
    confirmedAt: null,
  };
  const { vault, quotaBytes } = await services.vaults.forCaller(caller);
  const index = await vault.whenReady();
  const scope: Scope = { vault, index, quotaBytes, prefix: link.home_prefix };
  const t = link.target;
  if (t.kind === 'note' || t.kind === 'canvas') {
    const note = index.noteById(t.note_id);
    if (!note || !visible(scope, note.path) || (await plainFile(scope, note.path)) === null) throw gone('target_missing', 'The note this link shares no longer exists');
    return { link, scope, targetPath: note.path, note };
  }
  const st = visible(scope, t.path) ? await plainEntry(scope, t.path) : null;
  if (st === null || st.isDirectory() !== (t.kind === 'folder')) throw gone('target_missing', `The ${t.kind} this link shares no longer exists`);
  return { link, scope, targetPath: t.path, note: null };
}

/** 403 unless the link allows `what`. */
export function requirePermission(open: OpenLink, what: Permission): void {
  if (!open.link.permissions[what]) {
    throw new AppError('forbidden', `This public link does not allow ${what === 'view' ? 'viewing' : what === 'download' ? 'downloads' : what === 'upload' ? 'uploads' : 'editing'}`, {
      details: { reason: 'permission_denied', permission: what },
    });
  }
}

/** A file or folder inside the shared target. `rel` is relative to the target ('' = the target itself). */
export interface Located {
  rel: string;
  /** Home-relative path. */
  path: string;
  abs: string;
  kind: 'file' | 'folder';
  size: number;
  mtimeMs: number;
  ino: number;
}

const notInLink = (reason: string) => new AppError('not_found', 'No such file in this public link', { details: { reason } });

/** `i.` + base64url of the path below the target: stable while the file keeps its name, and never a path spelling itself. */
export const itemIdOf = (rel: string) => `i.${Buffer.from(rel, 'utf8').toString('base64url')}`;

function relOfItem(item: string): string {
  if (!item.startsWith('i.') || !/^[A-Za-z0-9_-]*$/.test(item.slice(2))) throw notInLink('unknown_item');
  return Buffer.from(item.slice(2), 'base64url').toString('utf8');
}

/**
 * The file or folder a visitor's `item` or `path` names below the shared target (neither: the
 * target itself). Anything that is not plainly inside it answers 404. Note and canvas links
 * share a single file: only the target itself is reachable here.
 */
export async function locate(open: OpenLink, q: { item?: string; path?: string }): Promise<Located> {
  if (q.item !== undefined && q.path !== undefined) throw errors.badRequest('Give `item` or `path`, not both', { field: 'query' });
  const rel = q.item !== undefined ? relOfItem(q.item) : (q.path ?? '');
  return locateRel(open, rel);
}

export async function locateRel(open: OpenLink, rel: string): Promise<Located> {
  if (rel !== '' && open.link.target.kind !== 'folder') throw notInLink('not_a_folder_link');
  if (rel !== '') {
    let segs: string[];
    try {
      segs = validateRelPath(rel);
    } catch (e) {
      throw notInLink(e instanceof AppError ? (e.details?.reason ?? 'bad_path') : 'bad_path');
    }
    if (segs.some((s) => s.startsWith('.'))) throw notInLink('hidden');
  }
  const path = rel === '' ? open.targetPath : `${open.targetPath}/${rel}`;
  if (isIgnoredPath(path) || !visible(open.scope, path)) throw notInLink('hidden');
  const st = await plainEntry(open.scope, path);
  if (st === null) throw notInLink('absent');
  return {
    rel,
    path,
    abs: nodePath.join(await realRoot(open.scope), ...path.split('/')),
    kind: st.isDirectory() ? 'folder' : 'file',
    size: st.isDirectory() ? 0 : st.size,
    mtimeMs: st.mtimeMs,
    ino: st.ino,
  };
}

const realRoots = new Map<string, Promise<string>>();

function realRoot(scope: Scope): Promise<string> {
  const root = scope.vault.home.root;
  let p = realRoots.get(root);
  if (!p) {
    p = fsp.realpath(root);
    p.catch(() => realRoots.delete(root));
    realRoots.set(root, p);
  }
  return p;
}

/**
 * lstat of each segment of a Home path from the real root: the entry when every segment is a
 * plain folder and the last a plain folder or regular file; null when something is absent, a
 * symbolic link, a device, a socket or a FIFO. Synchronous, as the vault's small reads are: a
 * few lstat calls cost microseconds, and a trip through the thread pool each would cost a
 * visitor's request more than the calls themselves on a loaded machine.
 */
export async function plainEntry(scope: Scope, path: string): Promise<Stats | null> {
  let abs = await realRoot(scope);
  const segs = path.split('/');
  let st: Stats | undefined;
  for (let i = 0; i < segs.length; i++) {
    abs = nodePath.join(abs, segs[i]!);
    st = lstatSync(abs, { throwIfNoEntry: false });
    if (st === undefined) return null;
    const last = i === segs.length - 1;
    if (!(st.isDirectory() || (last && st.isFile()))) return null;
  }
  return st ?? null;
}

async function plainFile(scope: Scope, path: string): Promise<Stats | null> {
  const st = await plainEntry(scope, path);
  return st?.isFile() ? st : null;
}

/** Largest file read whole for a visitor (download, preview without Range, thumbnail source); larger files are previewed in ranges. */
export const WHOLE_MAX = 32 * 1024 * 1024;

const tooLarge = (size: number) =>
  new AppError('bad_request', `This file is ${size} bytes, more than the ${WHOLE_MAX} a visitor can fetch at once; read it with public_preview and the Range header`, {
    status: 413,
    details: { reason: 'too_large', limit: String(WHOLE_MAX), size: String(size) },
  });

/**
 * Opens a located file without following a link swapped in since it was checked: its handle and
 * size, or 404 when it is gone or no longer a plain file. The caller closes the handle.
 */
async function openLocated(file: Located): Promise<{ fh: fsp.FileHandle; size: number }> {
  if (file.kind !== 'file') throw new AppError('bad_request', 'This is a folder; name a file in it', { details: { reason: 'is_folder' } });
  let fh: fsp.FileHandle | undefined;
  try {
    fh = await fsp.open(file.abs, FS.O_RDONLY | FS.O_NOFOLLOW);
    const st = await fh.stat();
    if (!st.isFile()) throw notInLink('absent');
    return { fh, size: st.size };
  } catch (e) {
    await fh?.close().catch(() => undefined);
    if (e instanceof AppError) throw e;
    throw notInLink('absent');
  }
}

/** Reads a located file, or bytes `start`..`end` (inclusive) of it. A whole read is refused (413) above WHOLE_MAX. */
export async function readLocated(file: Located, range?: { start: number; end: number }): Promise<Buffer> {
  const { fh, size } = await openLocated(file);
  try {
    if (range === undefined) {
      if (size > WHOLE_MAX) throw tooLarge(size);
      return await fh.readFile();
    }
    const want = Math.max(0, Math.min(range.end, size - 1) - range.start + 1);
    const buf = Buffer.allocUnsafe(want);
    let got = 0;
    while (got < want) {
      const { bytesRead } = await fh.read(buf, got, want - got, range.start + got);
      if (bytesRead === 0) break;
      got += bytesRead;
    }
    return buf.subarray(0, got);
  } catch (e) {
    if (e instanceof AppError) throw e;
    throw notInLink('absent');
  } finally {
    await fh.close().catch(() => undefined);
  }
}

/** A located file as a stream of its bytes: how the HTTP surface sends a download of any size without reading it whole. */
export async function streamLocated(file: Located): Promise<{ stream: NodeJS.ReadableStream; size: number }> {
  const { fh, size } = await openLocated(file);
  return { stream: fh.createReadStream({ highWaterMark: 1024 * 1024 }), size };
}

const etags = new Map<string, string>();
const ETAG_MEMO_MAX = 20_000;

/**
 * The file's ETag (SHA-256 of its bytes, as the vault's), hashed as a stream and remembered by
 * (path, inode, size, mtime): a large file previewed in ranges is hashed once, not per range.
 */
export async function contentEtag(file: Located): Promise<string> {
  const key = `${file.abs}\0${file.ino}\0${file.size}\0${file.mtimeMs}`;
  const known = etags.get(key);
  if (known !== undefined) return known;
  const hash = createHash('sha256');
  let fh;
  try {
    fh = await fsp.open(file.abs, FS.O_RDONLY | FS.O_NOFOLLOW);
    for await (const chunk of fh.createReadStream({ highWaterMark: 1024 * 1024, autoClose: false })) hash.update(chunk as Buffer);
  } catch {
    throw notInLink('absent');
  } finally {
    await fh?.close().catch(() => undefined);
  }
  const etag = hash.digest('base64url');
  etags.set(key, etag);
  if (etags.size > ETAG_MEMO_MAX) etags.delete(etags.keys().next().value!);
  return etag;
}
