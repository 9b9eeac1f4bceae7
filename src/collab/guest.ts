/**
 * Guests editing through a public link with `edit` (no account): `edit_session` starts a guest
 * session for that link only (password checked by the link, sessions rate-limited per link,
 * expiring), `collab_public_edit_session` turns it into a collaboration ticket, `edit_read`
 * answers the text and its ETag, and `edit_write` commits the open document to the file at
 * `If-Match`. The guest's edits are history points by `{ guest, link }`.
 */
import { randomBytes } from 'node:crypto';
import type { ActionContext } from '../actions/context.js';
import { SlidingWindowLimiter } from '../accounts/rate-limit.js';
import { AppError, errors } from '../core/errors.js';
import { openLink, requirePermission, type OpenLink } from '../public/access.js';
import { ifMatchAccepts } from '../vault/etag.js';
import type { DocRef } from './doc-ref.js';
import { editableLink, guestViewer } from './guest-links.js';
import { hubOf } from './hub.js';

/** How long a guest session lasts. */
export const GUEST_SESSION_TTL_MS = 8 * 60 * 60 * 1000;
/** Guest sessions one link may start per minute. */
export const GUEST_SESSIONS_PER_MINUTE = 30;

const starts = new SlidingWindowLimiter();

/** The note an editable link shares; 403 when the link does not allow editing or shares no note. */
function editableNote(open: OpenLink): DocRef {
  requirePermission(open, 'edit');
  if (!open.note) {
    throw new AppError('forbidden', 'Only a note or canvas link can be edited', { details: { reason: 'not_a_note' } });
  }
  return { ownerId: open.link.user_id, noteId: open.note.id };
}

const openEditable = async (ctx: ActionContext, slug: string, password: string | undefined) => {
  const open = await openLink(ctx.services, slug, password, ctx.now());
  return { open, ref: editableNote(open) };
};

export async function startGuestSession(ctx: ActionContext, slug: string, password: string | undefined) {
  const { open } = await openEditable(ctx, slug, password);
  const wait = starts.hit(open.link.id, GUEST_SESSIONS_PER_MINUTE, ctx.now());
  if (wait > 0) {
    throw new AppError('too_many_requests', `Too many guest sessions started on this link; retry in ${wait} s`, {
      details: { reason: 'guest_sessions', limit: String(GUEST_SESSIONS_PER_MINUTE) },
      headers: { 'retry-after': String(wait) },
    });
  }
  const guest = `g_${randomBytes(9).toString('base64url')}`;
  const s = hubOf(ctx.services).guestSession(slug, guest, GUEST_SESSION_TTL_MS);
  return { guest, guest_session: s.token, expires_at: s.expiresAt };
}

/** `collab_public_edit_session`: the guest session comes in the `X-Guest-Session` header. */
export function guestCollabSession(ctx: ActionContext, slug: string, headers: Record<string, unknown>) {
  const hub = hubOf(ctx.services);
  // The link first: an unknown, revoked or read-only link is 404 whoever asks, with or without a guest session.
  const link = editableLink(ctx.services.store, slug, ctx.now());
  if (!link) throw errors.notFound('No editable public link with this slug', { reason: 'not_editable' });
  const token = typeof headers['x-guest-session'] === 'string' ? headers['x-guest-session'] : '';
  const guest = token ? hub.guestOf(token, slug) : null;
  if (!guest) {
    throw new AppError('unauthorized', 'Start a guest session with edit_session and send it in the X-Guest-Session header', {
      details: { reason: 'guest_session_required' },
    });
  }
  const ref = { ownerId: link.user_id, noteId: link.target.note_id };
  return hub.session(ref, guestViewer(slug, guest), { guest, link: slug }, false);
}

export async function guestRead(ctx: ActionContext, slug: string, password: string | undefined) {
  const { open } = await openEditable(ctx, slug, password);
  const { bytes, etag } = await open.scope.vault.home.read(open.targetPath);
  return { text: bytes.toString('utf8'), etag };
}

/**
 * Commits the open document to the file, only while the file is at `ifMatch`: a stale ETag is
 * 412 and the file stays as it is. Without an open document there is nothing to commit.
 */
export async function guestWrite(ctx: ActionContext, slug: string, password: string | undefined, ifMatch: string) {
  const { open, ref } = await openEditable(ctx, slug, password);
  const current = await open.scope.vault.home.read(open.targetPath);
  if (!ifMatchAccepts(ifMatch, current.etag)) throw errors.staleEtag(current.etag);
  const binding = hubOf(ctx.services).open(ref);
  if (!binding) return { committed: false, etag: current.etag };
  await binding.writeBack();
  return { committed: true, etag: binding.synced.etag };
}
