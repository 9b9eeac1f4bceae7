/** Which scopes a role allows, and how a credential's grants meet an action's needs. */
import type { Effect, Scope } from '../actions/types.js';
import type { Access, Grant, Role } from './caller.js';

const W = (scope: Grant['scope']): Grant => ({ scope, access: 'write' });

/**
 * A session holds everything its role allows. Guests may read their Home
 * but not change it; only owners and admins hold `admin`.
 */
export function roleGrants(role: Role): Grant[] {
  switch (role) {
    case 'owner':
    case 'admin':
      return [W('data'), W('account'), W('admin')];
    case 'member':
      return [W('data'), W('account')];
    case 'guest':
      return [{ scope: 'data', access: 'read' }, W('account')];
  }
}

const rank: Record<Access, number> = { read: 1, write: 2 };

/** What a credential may do now: its own grants, cut down to what the user's current role allows. */
export function effectiveGrants(held: Grant[], role: Role): Grant[] {
  const allowed = roleGrants(role);
  const out: Grant[] = [];
  for (const g of held) {
    const cap = allowed.find((a) => a.scope === g.scope);
    if (!cap) continue;
    out.push({ scope: g.scope, access: rank[g.access] <= rank[cap.access] ? g.access : cap.access });
  }
  return out;
}

/**
 * The scopes an action lists that the grants do not cover. Every listed scope
 * is needed (the spec leaves the combination of two scopes open; requiring
 * both is the safe reading). Read-only actions need read access, destructive
 * ones write access.
 */
export function missingScopes(grants: Grant[], scopes: Scope[], effect: Effect): string[] {
  const need: Access = effect === 'read' ? 'read' : 'write';
  return scopes
    .filter((s): s is Grant['scope'] => s !== 'none')
    .filter((s) => !grants.some((g) => g.scope === s && rank[g.access] >= rank[need]))
    .map((s) => `${s}:${need}`);
}

export function isSubsetOf(requested: Grant[], allowed: Grant[]): boolean {
  return requested.every((r) => allowed.some((a) => a.scope === r.scope && rank[a.access] >= rank[r.access]));
}
