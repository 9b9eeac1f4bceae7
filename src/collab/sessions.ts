/** Collaboration sessions: what a browser hands its HocuspocusProvider (`{ url, name, token }`). */
import type { ActionContext } from '../actions/context.js';
import type { Caller } from '../accounts/caller.js';
import type { Services } from '../core/services.js';
import { findSessionById } from '../store/sessions.js';
import { checkWritable, openScope } from '../notes/access.js';
import { findNote } from '../notes/notes.js';
import type { Author } from './authors.js';
import { callerOf } from './owner.js';
import { hubOf } from './hub.js';
import { sharedNote } from './sharing.js';

/** The author a caller's edits are recorded under: the user, or the user's named installation. */
export function authorOfCaller(services: Services, caller: Caller): Author {
  if (caller.credential.kind === 'session' && caller.credential.sessionKind === 'installation') {
    const id = caller.credential.id;
    const name = findSessionById(services.store, id)?.installation_name;
    if (name) return { user: caller.username, installation: name };
  }
  return { user: caller.username };
}

export async function noteSession(ctx: ActionContext, id: string) {
  const caller = callerOf(ctx);
  const scope = await openScope(ctx);
  const note = findNote(scope, id);
  checkWritable(scope, note.path);
  return hubOf(ctx.services).session({ ownerId: caller.userId, noteId: note.id }, caller.userId, authorOfCaller(ctx.services, caller), false);
}

export async function sharedNoteSession(ctx: ActionContext, owner: string, id: string) {
  const caller = callerOf(ctx);
  const { note, access, ownerId } = await sharedNote(ctx, owner, id);
  const hub = hubOf(ctx.services);
  return { ...hub.session({ ownerId, noteId: note.id }, caller.userId, authorOfCaller(ctx.services, caller), access === 'view'), access };
}
