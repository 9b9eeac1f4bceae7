/**
 * What every content handler needs first: the caller's vault, its ready
 * index, the quota for writes, and the Home prefix an App Password may be
 * limited to (paths outside it are treated as absent).
 */
import type { ActionContext } from '../actions/context.js';
import { callerOf } from '../accounts/handlers.js';
import { AppError, errors } from '../core/errors.js';
import type { HomeIndex } from '../index/home-index.js';
import type { Vault } from '../vault/vault.js';

export interface Scope {
  vault: Vault;
  index: HomeIndex;
  quotaBytes: number;
  /** `Notes/Work/` style prefix, or null for the whole Home. */
  prefix: string | null;
}

export async function openScope(ctx: ActionContext): Promise<Scope> {
  const caller = callerOf(ctx);
  const { vault, quotaBytes } = await ctx.services.vaults.forCaller(caller);
  const index = await vault.whenReady();
  return { vault, index, quotaBytes, prefix: caller.homePrefix };
}

export function visible(scope: Scope, path: string): boolean {
  return scope.prefix === null || path.startsWith(scope.prefix);
}

/** Refuses a path outside the caller's Home prefix as if it did not exist. */
export function checkVisible(scope: Scope, path: string): void {
  if (!visible(scope, path)) throw errors.notFound(`No such file: ${path}`, { path });
}

/** Writes outside the prefix are refused outright (the caller knows the path it named). */
export function checkWritable(scope: Scope, path: string): void {
  if (!visible(scope, path)) {
    throw new AppError('forbidden', `This credential may only change files under ${scope.prefix}`, {
      details: { reason: 'outside_home_prefix', path },
    });
  }
}
