/**
 * Sharing a Note with another user: the Note stays in its owner's Home; the other user reaches it
 * only through the `shared` routes and collaboration sessions, never through their own Home.
 */
import type { ActionContext } from '../actions/context.js';
import { AppError, errors } from '../core/errors.js';
import type { Services } from '../core/services.js';
import { openScope, type Scope } from '../notes/access.js';
import { findNote } from '../notes/notes.js';
import type { NoteEntry } from '../index/home-index.js';
import type { UserRecord } from '../store/schema.js';
import { findUserById, findUserByName } from '../store/users.js';
import { hubIfAny } from './hub.js';
import { callerOf, ownerScope } from './owner.js';
import { findShare, putShare, removeShare, sharesOfNote, sharesWithUser, type ShareAccess } from './share-store.js';

function userByName(services: Services, username: string, field: string): UserRecord {
  const u = findUserByName(services.store, username);
  if (!u || u.disabled) throw errors.notFound(`No user ${JSON.stringify(username)}`, { field });
  return u;
}

function usernameOf(services: Services, id: string): string | null {
  return findUserById(services.store, id)?.username ?? null;
}

const shareView = (services: Services, s: { user_id: string; access: ShareAccess; created_at: number; note_id: string }) => ({
  note_id: s.note_id,
  username: usernameOf(services, s.user_id),
  access: s.access,
  created_at: s.created_at,
});

export async function shareNote(ctx: ActionContext, noteId: string, username: string, access: ShareAccess) {
  const caller = callerOf(ctx);
  const note = findNote(await openScope(ctx), noteId);
  const target = userByName(ctx.services, username, 'body.username');
  if (target.id === caller.userId) {
    throw new AppError('bad_request', 'A note cannot be shared with its owner', { details: { field: 'body.username' } });
  }
  const { share, created } = await putShare(ctx.services.store, { owner_id: caller.userId, note_id: note.id, user_id: target.id, access }, ctx.now());
  // Edit turned into view: open editing connections end, and reconnect read-only.
  if (!created && access === 'view') hubIfAny(ctx.services)?.disconnect({ ownerId: caller.userId, noteId: note.id }, target.id);
  return { ...shareView(ctx.services, share), created };
}

export async function listShares(ctx: ActionContext, noteId: string) {
  const caller = callerOf(ctx);
  const note = findNote(await openScope(ctx), noteId);
  return { shares: sharesOfNote(ctx.services.store, caller.userId, note.id).map((s) => shareView(ctx.services, s)) };
}

export async function unshareNote(ctx: ActionContext, noteId: string, username: string) {
  const caller = callerOf(ctx);
  const note = findNote(await openScope(ctx), noteId);
  const target = userByName(ctx.services, username, 'path.username');
  if (!(await removeShare(ctx.services.store, caller.userId, note.id, target.id))) {
    throw errors.notFound(`Note ${noteId} is not shared with ${username}`, { field: 'path.username' });
  }
  hubIfAny(ctx.services)?.disconnect({ ownerId: caller.userId, noteId: note.id }, target.id);
  return { note_id: note.id, username, unshared: true };
}

export async function sharedWithMe(ctx: ActionContext) {
  const caller = callerOf(ctx);
  const out = [];
  for (const s of sharesWithUser(ctx.services.store, caller.userId)) {
    const owner = usernameOf(ctx.services, s.owner_id);
    if (!owner) continue;
    const note = (await ownerScope(ctx.services, s.owner_id)).index.noteById(s.note_id);
    out.push({ owner, id: s.note_id, access: s.access, title: note?.title ?? null, canvas: note ? note.path.toLowerCase().endsWith('.excalidraw.md') : false });
  }
  return { notes: out };
}

/** A Note another user shares with the caller, and the access they gave; 404 when not shared (no hint that it exists). */
export async function sharedNote(ctx: ActionContext, ownerName: string, noteId: string): Promise<{ scope: Scope; note: NoteEntry; access: ShareAccess; ownerId: string }> {
  const caller = callerOf(ctx);
  const found = findUserByName(ctx.services.store, ownerName);
  const owner = found && !found.disabled ? found : undefined;
  const share = owner ? findShare(ctx.services.store, owner.id, noteId, caller.userId) : null;
  if (!owner || !share) throw errors.notFound(`No note ${noteId} shared with you by ${ownerName}`, { id: noteId });
  const scope = await ownerScope(ctx.services, owner.id);
  return { scope, note: findNote(scope, noteId), access: share.access, ownerId: owner.id };
}
