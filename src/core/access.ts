/**
 * The access vocabulary that actions, accounts, the sidecar store and the
 * vault all speak: scopes, effects, roles and grants. It lives below every
 * area and imports nothing, so none of them has to import another to name it.
 */
export type Scope = 'none' | 'account' | 'admin' | 'data';
export type Effect = 'read' | 'destructive';

export type Role = 'owner' | 'admin' | 'member' | 'guest';
export const ROLES: readonly Role[] = ['owner', 'admin', 'member', 'guest'];

export type Access = 'read' | 'write';
/** One scope an App Password or session holds, and how far: `read` stops at read-only actions. */
export interface Grant {
  scope: Exclude<Scope, 'none'>;
  access: Access;
}
