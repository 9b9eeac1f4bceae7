/** Which scopes a role allows, and how a credential's grants meet an action's needs. */
import type { Access, Effect, Grant, Role, Scope } from '../core/access.js';

const W = (scope: Grant['scope']): Grant => ({ scope, access: 'write' });
const R = (scope: Grant['scope']): Grant => ({ scope, access: 'read' });

/**
 * A session holds everything its role allows (docs/api-conventions.md,
 * "Roles"). Guests read their Home and their account but change neither;
 * only owners and admins hold `admin`.
 */
export function roleGrants(role: Role): Grant[] {
  switch (role) {
    case 'owner':
    case 'admin':
      return [W('data'), W('account'), W('admin')];
    case 'member':
      return [W('data'), W('account')];
    case 'guest':
      return [R('data'), R('account')];
  }
}

/**
 * Account actions that act on the caller's own sign-ins, never on what the
 * account is: signing a command line in, confirming who she is, ending
 * sessions. `account:read` is enough for them, so a guest can still sign out
 * or end a session she does not recognise. App Passwords gain nothing from
 * this: `approve` and `sign_out` need a session, and App Passwords are never
 * recently confirmed (`revoke_session`, `revoke_all`).
 */
export const OWN_SIGN_IN_ACTIONS: ReadonlySet<string> = new Set([
  'approve',
  'assert_start',
  'assert_finish',
  'oidc_reauth_start',
  'sign_out',
  'cli_logout',
  'revoke_session',
  'revoke_all',
]);

/** The access an action needs to each scope it lists: `read` for read-only actions and own sign-in actions, else `write`. */
export function accessNeeded(action: { name: string; effect: Effect }): Access {
  return action.effect === 'read' || OWN_SIGN_IN_ACTIONS.has(action.name) ? 'read' : 'write';
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
 * The scopes an action lists that the grants do not cover at `need`
 * (see accessNeeded). Every listed scope is needed (the spec leaves the
 * combination of two scopes open; requiring both is the safe reading).
 */
export function missingScopes(grants: Grant[], scopes: Scope[], need: Access): string[] {
  return scopes
    .filter((s): s is Grant['scope'] => s !== 'none')
    .filter((s) => !grants.some((g) => g.scope === s && rank[g.access] >= rank[need]))
    .map((s) => `${s}:${need}`);
}

export function isSubsetOf(requested: Grant[], allowed: Grant[]): boolean {
  return requested.every((r) => allowed.some((a) => a.scope === r.scope && rank[a.access] >= rank[r.access]));
}
