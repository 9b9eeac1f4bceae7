/** The authenticated party of a request, as dispatch hands it to handlers. */
import type { Scope } from '../actions/types.js';

export type Role = 'owner' | 'admin' | 'member' | 'guest';
export const ROLES: readonly Role[] = ['owner', 'admin', 'member', 'guest'];

export type Access = 'read' | 'write';
/** One scope an App Password or session holds, and how far: `read` stops at read-only actions. */
export interface Grant {
  scope: Exclude<Scope, 'none'>;
  access: Access;
}

export interface Caller {
  userId: string;
  username: string;
  role: Role;
  credential:
    | { kind: 'session'; id: string; sessionKind: 'web' | 'installation' }
    | { kind: 'app_password'; id: string }
    /** The command line's local vault mode: the folder's owner, no account. */
    | { kind: 'local'; id: 'local' };
  grants: Grant[];
  /** An App Password limited to part of the Home; null for unrestricted. */
  homePrefix: string | null;
  /** When this credential last passed a recent confirmation (ms), or null. */
  confirmedAt: number | null;
}
