/**
 * Managing public links (the owner's side): create, list, read, change and revoke. The rules of
 * a record (which permissions fit which target, slugs, expiry) are pure functions, tested
 * table-style; the handlers below check the target against the caller's Home and store.
 */
import { randomBytes } from 'node:crypto';
import { publicBaseUrl } from '../core/config.js';
import { AppError, errors } from '../core/errors.js';
import { newId } from '../core/ids.js';
import type { Services } from '../core/services.js';
import { checkVisible, type Scope } from '../notes/access.js';
import { findNote } from '../notes/notes.js';
import { isIgnoredPath } from '../vault/ignore.js';
import { validateRelPath } from '../vault/paths.js';
import { plainEntry } from './access.js';
import { changeOwnLink, findOwnLink, insertLink, listOwnLinks, type PublicLinkRecord } from './link-store.js';
import { hashPassword, PASSWORD_MAX } from './passwords.js';

export type Target = PublicLinkRecord['target'];
export type Permissions = PublicLinkRecord['permissions'];

export const SLUG_PATTERN = '^[A-Za-z0-9][A-Za-z0-9_-]{2,63}$';
const SLUG_RE = new RegExp(SLUG_PATTERN);
const DEFAULT_PERMISSIONS: Permissions = { view: true, download: false, upload: false, edit: false };

/** 128 random bits: a slug nobody can guess or enumerate. */
export const randomSlug = () => randomBytes(16).toString('base64url').replace(/^[-_]/, 'q');

/** The problems of a permission set for a target kind, as [field, message]; empty when it fits. */
export function permissionProblems(kind: Target['kind'], p: Permissions): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  if (!p.view && !p.download && !p.upload && !p.edit) out.push(['permissions', 'A link must allow at least one of view, download, upload, edit']);
  if (p.upload && kind !== 'folder') out.push(['permissions.upload', 'Only a folder link can take uploads (a file drop)']);
  if (p.edit && kind !== 'note' && kind !== 'canvas') out.push(['permissions.edit', 'Only a note or canvas link can be edited by guests']);
  if (p.download && kind === 'canvas') out.push(['permissions.download', 'A canvas link is view-only; share its note as a note link to offer the file']);
  return out;
}

export type LinkStatus = 'active' | 'expired' | 'revoked';

export function statusOf(link: PublicLinkRecord, now: number): LinkStatus {
  if (link.revoked_at !== null) return 'revoked';
  return link.expires_at !== null && link.expires_at <= now ? 'expired' : 'active';
}

/** What the owner sees of a record: never the password hash. */
export function linkView(services: Services, link: PublicLinkRecord, now: number) {
  return {
    id: link.id,
    slug: link.slug,
    url: `${publicBaseUrl(services.config)}/p/${link.slug}`,
    target: link.target,
    permissions: link.permissions,
    has_password: link.password_hash !== null,
    expires_at: link.expires_at,
    status: statusOf(link, now),
    created_at: link.created_at,
    updated_at: link.updated_at,
    revoked_at: link.revoked_at,
  };
}

function checkPermissions(kind: Target['kind'], p: Permissions): void {
  const [problem] = permissionProblems(kind, p);
  if (problem) throw errors.badRequest(problem[1], { field: `body.${problem[0]}`, reason: 'permissions_not_allowed' });
}

function checkExpiry(expiresAt: number | null, now: number): void {
  if (expiresAt !== null && expiresAt <= now) {
    throw errors.badRequest('expires_at is in the past; give a future Unix time in milliseconds, or null for no expiry', { field: 'body.expires_at' });
  }
}

function checkPasswordText(password: string | null): void {
  if (password !== null && (password.length === 0 || password.length > PASSWORD_MAX)) {
    throw errors.badRequest(`password must be 1 to ${PASSWORD_MAX} characters, or null for none`, { field: 'body.password' });
  }
}

/** Runs a check whose errors come from another area, adding the request field they are about. */
function naming<T>(field: string, check: () => T): T {
  try {
    return check();
  } catch (e) {
    if (e instanceof AppError && e.details && e.details.field === undefined) e.details.field = field;
    throw e;
  }
}

/** The target as stored, after checking that the caller can see it and that it can be shared. */
async function checkTarget(scope: Scope, target: Target): Promise<Target> {
  if (target.kind === 'note' || target.kind === 'canvas') {
    const note = naming('body.target.note_id', () => findNote(scope, target.note_id));
    if (target.kind === 'canvas' && !note.path.toLowerCase().endsWith('.excalidraw.md')) {
      throw errors.badRequest(`Note ${target.note_id} is not a canvas; share it with kind "note"`, { field: 'body.target.note_id', reason: 'not_canvas' });
    }
    return { kind: target.kind, note_id: note.id };
  }
  naming('body.target.path', () => {
    validateRelPath(target.path);
    checkVisible(scope, target.path);
  });
  if (isIgnoredPath(target.path) || target.path.split('/').some((s) => s.startsWith('.'))) {
    throw errors.badRequest(`${JSON.stringify(target.path)} is hidden or internal (a name starting with "."); it cannot be shared`, {
      field: 'body.target.path',
      reason: 'hidden_target',
    });
  }
  const st = await plainEntry(scope, target.path);
  if (st === null) throw errors.notFound(`No ${target.kind} at ${JSON.stringify(target.path)} (a symbolic link on the way is not shared either)`, { field: 'body.target.path', path: target.path });
  if (st.isDirectory() !== (target.kind === 'folder')) {
    throw errors.badRequest(`${JSON.stringify(target.path)} is a ${st.isDirectory() ? 'folder' : 'file'}; use kind "${st.isDirectory() ? 'folder' : 'file'}"`, {
      field: 'body.target.kind',
      reason: 'wrong_kind',
    });
  }
  return { kind: target.kind, path: target.path };
}

export interface CreateInput {
  target: Target;
  permissions?: Partial<Permissions>;
  password?: string | null;
  expires_at?: number | null;
  slug?: string;
}

export async function createLink(services: Services, scope: Scope, userId: string, input: CreateInput, now: number) {
  const permissions = { ...DEFAULT_PERMISSIONS, ...input.permissions };
  checkPermissions(input.target.kind, permissions);
  const password = input.password ?? null;
  checkPasswordText(password);
  const expiresAt = input.expires_at ?? null;
  checkExpiry(expiresAt, now);
  const target = await checkTarget(scope, input.target);
  const rec: PublicLinkRecord = {
    id: newId(),
    user_id: userId,
    slug: input.slug ?? randomSlug(),
    target,
    permissions,
    password_hash: password === null ? null : await hashPassword(password),
    expires_at: expiresAt,
    home_prefix: scope.prefix,
    created_at: now,
    updated_at: now,
    revoked_at: null,
  };
  if (!SLUG_RE.test(rec.slug)) throw errors.badRequest(`slug must match ${SLUG_PATTERN}`, { field: 'body.slug' });
  if (!(await insertLink(services.store, rec))) {
    throw new AppError('conflict', `The slug ${JSON.stringify(rec.slug)} is taken; choose another or leave it out for a random one`, {
      details: { field: 'body.slug', reason: 'slug_taken' },
    });
  }
  return linkView(services, rec, now);
}

export function listLinks(services: Services, userId: string, now: number) {
  return { links: listOwnLinks(services.store, userId).map((l) => linkView(services, l, now)) };
}

const noLink = (id: string) => errors.notFound(`No public link with id ${id}`, { id });

export function getLink(services: Services, userId: string, id: string, now: number) {
  const link = findOwnLink(services.store, userId, id);
  if (!link) throw noLink(id);
  return linkView(services, link, now);
}

export interface UpdateInput {
  permissions?: Partial<Permissions>;
  password?: string | null;
  expires_at?: number | null;
}

export async function updateLink(services: Services, userId: string, id: string, input: UpdateInput, now: number) {
  if (input.password !== undefined) checkPasswordText(input.password);
  if (input.expires_at !== undefined) checkExpiry(input.expires_at, now);
  // Hashed before the transaction: scrypt takes tens of milliseconds, the store's lock should not.
  const hash = typeof input.password === 'string' ? await hashPassword(input.password) : input.password;
  const next = await changeOwnLink(services.store, userId, id, (cur) => {
    if (cur.revoked_at !== null) throw new AppError('conflict', 'This link was revoked; create a new one', { details: { id, reason: 'revoked' } });
    const permissions = { ...cur.permissions, ...input.permissions };
    checkPermissions(cur.target.kind, permissions);
    return {
      ...cur,
      permissions,
      password_hash: hash === undefined ? cur.password_hash : hash,
      expires_at: input.expires_at === undefined ? cur.expires_at : input.expires_at,
      updated_at: now,
    };
  });
  if (!next) throw noLink(id);
  return linkView(services, next, now);
}

/** Revokes at once; revoking a revoked link answers it unchanged. */
export async function revokeLink(services: Services, userId: string, id: string, now: number) {
  const next = await changeOwnLink(services.store, userId, id, (cur) => (cur.revoked_at !== null ? cur : { ...cur, revoked_at: now, updated_at: now }));
  if (!next) throw noLink(id);
  return linkView(services, next, now);
}
