/**
 * What the sidecar store holds (architecture rule 4): security state and
 * scheduled state only. Content lives in the Homes. Field names follow the spec.
 */
import type { Grant, Role } from '../accounts/caller.js';

export interface InstanceRecord {
  name: string;
  open_signup: boolean;
  share_invites: boolean;
  /** Bytes; 0 means unlimited. Users with quota_override_bytes null inherit it. */
  default_quota_bytes: number;
  /** Hash of the one-time setup token printed at first start, until setup is done. */
  setup_token_hash: string | null;
  created_at: number;
}

export interface UserRecord {
  id: string;
  username: string;
  display_name: string;
  role: Role;
  disabled: boolean;
  quota_override_bytes: number | null;
  created_at: number;
}

export interface SessionRecord {
  id: string;
  user_id: string;
  kind: 'web' | 'installation';
  installation_name: string | null;
  token_hash: string;
  created_at: number;
  expires_at: number;
  last_used_at: number | null;
  /** Last recent confirmation (ms), or null if never confirmed. */
  confirmed_at: number | null;
}

export interface AppPasswordRecord {
  id: string;
  user_id: string;
  name: string;
  token_hash: string;
  scopes: Grant[];
  /** Unix ms, or null for no expiry. */
  expires_at: number | null;
  home_prefix: string | null;
  plugin_scope: Record<string, unknown> | null;
  created_at: number;
  last_used_at: number | null;
}

export interface SidecarData {
  schema: 1;
  instance: InstanceRecord;
  users: UserRecord[];
  sessions: SessionRecord[];
  app_passwords: AppPasswordRecord[];
}

export function emptySidecar(now: number): SidecarData {
  return {
    schema: 1,
    instance: {
      name: 'Quire',
      open_signup: false,
      share_invites: false,
      default_quota_bytes: 0,
      setup_token_hash: null,
      created_at: now,
    },
    users: [],
    sessions: [],
    app_passwords: [],
  };
}
