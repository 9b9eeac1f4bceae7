/**
 * What the sidecar store holds (architecture rule 4): security state and
 * scheduled state only. Content lives in the Homes. Field names follow the spec.
 */
import type { Grant, Role } from '../core/access.js';

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
  /**
   * An existing folder made this user's Home in place (`quire admin user add
   * --home`, `quire serve --vault`), as an absolute real path; absent for a
   * Home at `<data>/homes/<username>`.
   */
  home_path?: string | null;
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

/** A WebAuthn credential registered to a user. `id` is the credential ID (base64url). */
export interface PasskeyRecord {
  id: string;
  user_id: string;
  name: string;
  /** COSE public key, base64url. */
  public_key: string;
  counter: number;
  transports: string[];
  device_type: string;
  backed_up: boolean;
  created_at: number;
  last_used_at: number | null;
}

/**
 * A sign-in ceremony in progress (passkey registration, login, check or
 * removal; OpenID Connect authorisation). Single use: the record is deleted
 * when the flow finishes or fails verification, and ignored once expired.
 */
export interface AuthFlowRecord {
  id: string;
  kind: 'register' | 'login' | 'assert' | 'remove' | 'add' | 'oidc';
  /** WebAuthn challenge (base64url) or, for OpenID Connect, the state. */
  challenge: string;
  created_at: number;
  expires_at: number;
  /** The user this flow acts for; null for a new user or a discoverable login. */
  user_id: string | null;
  /** The session that started it (assert, remove, add, OIDC link and re-authentication). */
  session_id: string | null;
  /** Extra data per kind (pending user, invite id, passkey id, OIDC verifier and nonce...). */
  data: Record<string, unknown>;
}

export interface InviteRecord {
  id: string;
  token_hash: string;
  role: Role;
  quota_override_bytes: number | null;
  ttl_secs: number;
  created_by: string;
  created_at: number;
  expires_at: number;
  used_at: number | null;
  used_by: string | null;
  revoked_at: number | null;
}

export interface ReenrolLinkRecord {
  id: string;
  user_id: string;
  token_hash: string;
  created_by: string;
  created_at: number;
  expires_at: number;
  used_at: number | null;
}

export interface RecoveryKeyRecord {
  user_id: string;
  key_hash: string;
  created_at: number;
}

/** A command-line sign-in request (device grant with PKCE). */
export interface CliRequestRecord {
  id: string;
  device_code_hash: string;
  user_code: string;
  /** base64url(SHA-256(verifier)). */
  challenge: string;
  installation_name: string;
  redirect_uri: string | null;
  created_at: number;
  expires_at: number;
  interval_secs: number;
  last_poll_at: number | null;
  approved_by: string | null;
  approved_at: number | null;
  denied: boolean;
  issued_at: number | null;
}

export interface OidcLinkRecord {
  user_id: string;
  provider: string;
  subject: string;
  email: string | null;
  created_at: number;
}

/** A one-time setup-profile download: the profile is encrypted with a key derived from the token. */
export interface ProfileLinkRecord {
  id: string;
  user_id: string;
  app_password_id: string;
  token_hash: string;
  format: string;
  /** AES-256-GCM: base64 of iv, tag and ciphertext; the key is HKDF(token). */
  iv: string;
  tag: string;
  ciphertext: string;
  created_at: number;
  expires_at: number;
  downloaded_at: number | null;
}

/** Records added by the sign-in work; files written before them load with empty arrays. */
export interface AuthTables {
  passkeys: PasskeyRecord[];
  auth_flows: AuthFlowRecord[];
  invites: InviteRecord[];
  reenrol_links: ReenrolLinkRecord[];
  recovery_keys: RecoveryKeyRecord[];
  cli_requests: CliRequestRecord[];
  oidc_links: OidcLinkRecord[];
  profile_links: ProfileLinkRecord[];
}

export const AUTH_TABLES: ReadonlyArray<keyof AuthTables> = [
  'passkeys',
  'auth_flows',
  'invites',
  'reenrol_links',
  'recovery_keys',
  'cli_requests',
  'oidc_links',
  'profile_links',
];

/** A block reminder (src/reminders/). Kept after firing (`fired_ms`) and after removal (`deleted_ms`) so it can be restored. */
export interface ReminderRecord {
  id: string;
  /** The setter, who is also the Note's owner (Homes are per user). */
  user_id: string;
  note_id: string;
  block_id: string;
  /** RFC 3339 as given, and the same instant in Unix ms. */
  instant: string;
  instant_ms: number;
  audience: 'everyone' | 'only_me';
  revision: number;
  created_ms: number;
  fired_ms: number | null;
  deleted_ms: number | null;
  /** Title and block line when set, shown if the Note is gone at fire time. */
  title: string;
  excerpt: string;
}

/** One item of a user's notification inbox (src/notifications/). */
export interface InboxItemRecord {
  id: string;
  user_id: string;
  created_ms: number;
  read: boolean;
  kind: 'block_reminder';
  note_id: string;
  block_id: string;
  title: string;
  excerpt: string;
  reminder_id: string;
  state: 'pending' | 'done' | 'snoozed';
  /** While snoozed: when it fires again. */
  snoozed_until_ms: number | null;
}

/** The receipt of an inbox mutation made with an `operation_id`; `inverse` never leaves the server. */
export interface InboxReceiptRecord {
  operation_id: string;
  user_id: string;
  kind: string;
  result: Record<string, unknown>;
  created_ms: number;
  expires_ms: number;
  undone_by: string | null;
  /** The item as it was before the mutation (restored by undo). */
  inverse: InboxItemRecord | null;
}

/** A user's quiet hours, local 24-hour `HH:MM` in the server's time zone. */
export interface QuietHoursRecord {
  user_id: string;
  quiet_start: string;
  quiet_end: string;
}

/** One browser or app Installation's web push subscription. */
export interface PushSubscriptionRecord {
  user_id: string;
  installation_id: string;
  endpoint: string;
  p256dh: string;
  auth: string;
  created_ms: number;
}

/** A push held during quiet hours, sent once `due_ms` passes. */
export interface HeldPushRecord {
  id: string;
  user_id: string;
  item_id: string;
  due_ms: number;
}

/** Tables of block reminders and notifications; files written before them load without them. */
export interface NotificationTables {
  reminders: ReminderRecord[];
  inbox: InboxItemRecord[];
  inbox_receipts: InboxReceiptRecord[];
  quiet_hours: QuietHoursRecord[];
  push_subscriptions: PushSubscriptionRecord[];
  held_pushes: HeldPushRecord[];
}

export const NOTIFICATION_TABLES: ReadonlyArray<keyof NotificationTables> = [
  'reminders',
  'inbox',
  'inbox_receipts',
  'quiet_hours',
  'push_subscriptions',
  'held_pushes',
];

/** The notification tables of `data`, missing ones added empty in place. */
export function notificationTables(data: SidecarData | Readonly<SidecarData>): NotificationTables {
  const d = data as SidecarData;
  for (const k of NOTIFICATION_TABLES) if (!Array.isArray(d[k])) (d as unknown as Record<string, unknown[]>)[k] = [];
  return d as SidecarData & NotificationTables;
}

/** A Note its owner shares with another user (src/collab/share-store.ts); the Note stays in the owner's Home. */
export interface ShareRecord {
  owner_id: string;
  note_id: string;
  user_id: string;
  access: 'view' | 'edit';
  created_at: number;
}

/**
 * A published calendar feed (src/calendar/feed-store.ts). `token` makes the public URL and is
 * kept so the owner can see the URL again; lookups go by `token_hash`. Both null once revoked.
 */
export interface CalendarFeedRecord {
  id: string;
  user_id: string;
  /** The creating credential's Home prefix: the feed shows nothing outside it. */
  home_prefix: string | null;
  name: string;
  color: string | null;
  detail: 'full' | 'busy_only';
  source: 'journal' | 'area' | 'calendar';
  source_id: string | null;
  include_notes: boolean;
  include_tasks: boolean;
  token: string | null;
  token_hash: string | null;
  created_ms: number;
  updated_ms: number;
}

/**
 * A CalDAV account (src/calendar/account-store.ts; docs/calendar-sync.md). `secret` is the app
 * password sealed with AES-256-GCM under the Instance key in `<data>/state/`; never returned.
 * Per-item sync state (hrefs, ETags, sync tokens) lives in `<data>/state/calendar-sync/`.
 */
export interface CalendarAccountRecord {
  id: string;
  user_id: string;
  endpoint: string;
  username: string;
  secret: string;
  enabled: boolean;
  /** The Connected Account this calendar account is the CalDAV side of, or null. */
  integration_id: string | null;
  /** Remote calendars mirrored into Home calendar folders. */
  calendars: Array<{ calendar_id: string; href: string; name: string }>;
  created_ms: number;
  updated_ms: number;
  last_sync_ms: number | null;
  last_error: string | null;
}

/** A calendar subscription (src/calendar/subscription-store.ts): an ICS address mirrored read-only into a Home calendar folder. */
export interface CalendarSubscriptionRecord {
  id: string;
  user_id: string;
  calendar_id: string;
  name: string;
  url: string;
  color: string | null;
  /** Validators of the last 200 answer, sent back as If-None-Match / If-Modified-Since. */
  etag: string | null;
  last_modified: string | null;
  created_ms: number;
  updated_ms: number;
  last_refresh_ms: number | null;
  last_error: string | null;
}

/** A Connected Account (src/integrations/integration-store.ts; docs/calendar-sync.md): a provider's mail and calendar sides. */
export interface IntegrationAccountRecord {
  id: string;
  user_id: string;
  provider: 'provider_1' | 'provider_2' | 'provider_3' | 'provider_4' | 'other';
  email: string;
  username: string;
  /** Sealed like CalendarAccountRecord.secret. */
  secret: string;
  imap_host: string | null;
  smtp_host: string | null;
  caldav_endpoint: string | null;
  carddav_endpoint: string | null;
  calendar_enabled: boolean;
  mail_enabled: boolean;
  /** The calendar account made for the CalDAV side, or null. */
  calendar_account_id: string | null;
  /** Set when the record was made by the start-up migration of a legacy calendar account. */
  migrated_from: string | null;
  created_ms: number;
  updated_ms: number;
}

/** A public link (src/public/link-store.ts; docs/public-links.md). */
export interface PublicLinkRecord {
  id: string;
  /** The owner, whose Home the link shares from. */
  user_id: string;
  slug: string;
  target: { kind: 'note'; note_id: string } | { kind: 'canvas'; note_id: string } | { kind: 'folder'; path: string } | { kind: 'file'; path: string };
  permissions: { view: boolean; download: boolean; upload: boolean; edit: boolean };
  /** scrypt: `scrypt$<N>$<r>$<p>$<salt b64url>$<hash b64url>`; null for no password. */
  password_hash: string | null;
  expires_at: number | null;
  /** The creating credential's Home prefix: the link never shows more than it could. */
  home_prefix: string | null;
  created_at: number;
  updated_at: number;
  revoked_at: number | null;
}

export interface SidecarData extends Partial<AuthTables>, Partial<NotificationTables> {
  /** Published calendar feeds; absent in files written before them. */
  calendar_feeds?: CalendarFeedRecord[];
  /** Notes shared between users; files written before sharing load without it (treated as empty). */
  shares?: ShareRecord[];
  /** Public links; absent in files written before them (read as empty). */
  public_links?: PublicLinkRecord[];
  /** CalDAV accounts, calendar subscriptions and Connected Accounts; absent in files written before them (read as empty). */
  calendar_accounts?: CalendarAccountRecord[];
  calendar_subscriptions?: CalendarSubscriptionRecord[];
  integration_accounts?: IntegrationAccountRecord[];
  /** When the start-up migration of legacy calendar accounts last ran, and what it did. */
  integration_migration?: { completed_ms: number; migrated: number };
  /** Web push VAPID keys, made once per Instance on first use. */
  vapid?: { public_key: string; private_key: string; created_ms: number };
  schema: 1;
  instance: InstanceRecord;
  users: UserRecord[];
  sessions: SessionRecord[];
  app_passwords: AppPasswordRecord[];
}

/**
 * The sign-in tables of `data`, each present (missing ones, from a file
 * written before they existed, are added empty in place).
 */
export function authTables(data: SidecarData | Readonly<SidecarData>): AuthTables {
  const d = data as SidecarData;
  for (const k of AUTH_TABLES) if (!Array.isArray(d[k])) (d as unknown as Record<string, unknown[]>)[k] = [];
  return d as SidecarData & AuthTables;
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
    passkeys: [],
    auth_flows: [],
    invites: [],
    reenrol_links: [],
    recovery_keys: [],
    cli_requests: [],
    oidc_links: [],
    profile_links: [],
  };
}
