/**
 * Bearer credentials: sessions and App Passwords. Secrets are random, shown
 * once, and stored only as SHA-256 hashes; a lookup by hash reveals nothing
 * about other secrets, so no timing-sensitive comparison is needed.
 */
import { AppError } from '../core/errors.js';
import { hashSecret, newId, newSecret } from '../core/ids.js';
import type { Config } from '../core/config.js';
import type { SidecarStore } from '../store/sidecar.js';
import type { SessionRecord, UserRecord } from '../store/schema.js';
import { findAppPasswordByTokenHash, findSessionByTokenHash, insertSession } from '../store/sessions.js';
import { findUserById } from '../store/users.js';
import type { Caller } from './caller.js';
import { effectiveGrants, roleGrants } from './grants.js';
import { noSuchUser } from './users.js';

export const SESSION_PREFIX = 'qs';
export const APP_PASSWORD_PREFIX = 'qa';

export interface IssuedSession {
  token: string;
  session: SessionRecord;
}

/** A new session of user `userId` and its one-time token; the store's insertSession keeps it. */
export function newSession(
  userId: string,
  opts: {
    kind: 'web' | 'installation';
    installationName?: string | null;
    now: number;
    config: Config;
    /** True when the issuer proved who they are just now (console, passkey). */
    confirmed: boolean;
  },
): IssuedSession {
  const token = newSecret(SESSION_PREFIX);
  const session: SessionRecord = {
    id: newId(),
    user_id: userId,
    kind: opts.kind,
    installation_name: opts.installationName ?? null,
    token_hash: hashSecret(token),
    created_at: opts.now,
    expires_at: opts.now + opts.config.sessionTtlSeconds[opts.kind] * 1000,
    last_used_at: null,
    confirmed_at: opts.confirmed ? opts.now : null,
  };
  return { token, session };
}

type SessionOptions = Parameters<typeof newSession>[1];

/**
 * Issues a session of `userId` and keeps it, if the user passes `check` at
 * that moment (by default: the user still exists).
 */
export async function issueSession(
  store: SidecarStore,
  userId: string,
  opts: SessionOptions,
  check: (user: UserRecord | undefined) => void = (u) => {
    if (!u) throw noSuchUser(userId);
  },
): Promise<IssuedSession> {
  const issued = newSession(userId, opts);
  await insertSession(store, issued.session, check);
  return issued;
}

const unauthorized = (message: string) => new AppError('unauthorized', message);

/** Reads `Authorization: Bearer <token>`; null when absent, 401 when malformed. */
export function bearerToken(header: string | string[] | undefined): string | null {
  if (header === undefined) return null;
  const value = Array.isArray(header) ? header[0] ?? '' : header;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(value);
  if (!m) throw unauthorized('Authorization header must be "Bearer <token>"');
  return m[1]!;
}

/**
 * Reads `Authorization: Basic <base64 user:password>` (CalDAV clients sign in
 * this way, the password being an App Password); null for any other scheme.
 */
export function basicCredentials(header: string | string[] | undefined): { username: string; password: string } | null {
  const value = Array.isArray(header) ? header[0] ?? '' : header ?? '';
  const m = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(value);
  if (!m) return null;
  const text = Buffer.from(m[1]!, 'base64').toString('utf8');
  const colon = text.indexOf(':');
  return colon < 0 ? null : { username: text.slice(0, colon), password: text.slice(colon + 1) };
}

/** Resolves a bearer token to its caller, or throws 401. Disabled users and expired credentials stop at once. */
export function authenticate(store: SidecarStore, token: string, now: number): Caller {
  const hash = hashSecret(token);
  /** The credential's owner, who must still exist and be enabled. */
  const userOf = (id: string) => {
    const user = findUserById(store, id);
    if (!user) throw unauthorized('Unknown or revoked token');
    if (user.disabled) throw unauthorized('This account is disabled');
    return user;
  };

  if (token.startsWith(`${SESSION_PREFIX}_`)) {
    const s = findSessionByTokenHash(store, hash);
    if (!s) throw unauthorized('Unknown or revoked token');
    if (s.expires_at <= now) throw unauthorized('Session expired; sign in again');
    const user = userOf(s.user_id);
    return {
      userId: user.id,
      username: user.username,
      role: user.role,
      credential: { kind: 'session', id: s.id, sessionKind: s.kind },
      grants: roleGrants(user.role),
      homePrefix: null,
      confirmedAt: s.confirmed_at,
    };
  }
  if (token.startsWith(`${APP_PASSWORD_PREFIX}_`)) {
    const p = findAppPasswordByTokenHash(store, hash);
    if (!p) throw unauthorized('Unknown or revoked token');
    if (p.expires_at !== null && p.expires_at <= now) throw unauthorized('App Password expired');
    const user = userOf(p.user_id);
    return {
      userId: user.id,
      username: user.username,
      role: user.role,
      credential: { kind: 'app_password', id: p.id },
      grants: effectiveGrants(p.scopes, user.role),
      homePrefix: p.home_prefix,
      confirmedAt: null,
    };
  }
  throw unauthorized('Unknown or revoked token');
}
