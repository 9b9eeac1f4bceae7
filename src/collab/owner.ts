/** A Note owner's Home, for the hub and for users a Note is shared with. */
import type { ActionContext } from '../actions/context.js';
import type { Caller } from '../accounts/caller.js';
import { AppError } from '../core/errors.js';
import type { Services } from '../core/services.js';
import type { Scope } from '../notes/access.js';

/** The Home of `ownerId` as its owner sees it (the vaults read only the user id of a caller). */
export async function ownerScope(services: Services, ownerId: string): Promise<Scope> {
  const caller: Caller = { userId: ownerId, username: '', role: 'member', credential: { kind: 'local', id: 'local' }, grants: [], homePrefix: null, confirmedAt: null };
  const { vault, quotaBytes } = await services.vaults.forCaller(caller);
  return { vault, index: await vault.whenReady(), quotaBytes, prefix: null };
}

/** The caller of a scoped action (dispatch guarantees one; the check keeps the type honest). */
export function callerOf(ctx: ActionContext): Caller {
  if (!ctx.caller) throw new AppError('unauthorized', 'This action needs a bearer token');
  return ctx.caller;
}
