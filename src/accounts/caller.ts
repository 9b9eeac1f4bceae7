/** The authenticated party of a request, as dispatch hands it to handlers. */
import type { Grant, Role } from '../core/access.js';

export { ROLES, type Access, type Grant, type Role } from '../core/access.js';

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
