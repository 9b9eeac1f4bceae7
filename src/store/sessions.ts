/**
 * Named operations on bearer credentials: sessions and App Passwords. Secrets
 * are looked up by their hash only.
 */
import type { AppPasswordRecord, SessionRecord, UserRecord } from './schema.js';
import type { SidecarStore } from './sidecar.js';

export const findSessionByTokenHash = (store: SidecarStore, hash: string): SessionRecord | undefined =>
  store.snapshot().sessions.find((s) => s.token_hash === hash);

export const findAppPasswordByTokenHash = (store: SidecarStore, hash: string): AppPasswordRecord | undefined =>
  store.snapshot().app_passwords.find((p) => p.token_hash === hash);

export const findSessionById = (store: SidecarStore, id: string): SessionRecord | undefined =>
  store.snapshot().sessions.find((s) => s.id === id);

/** The user's sessions that have not expired at `now`. */
export const liveSessionsOf = (store: SidecarStore, userId: string, now: number): SessionRecord[] =>
  store.snapshot().sessions.filter((s) => s.user_id === userId && s.expires_at > now);

/**
 * Adds `session` if its user passes `check` (given the user record, or
 * undefined if the user is gone; it throws to refuse), checked in the same
 * transaction so a user disabled meanwhile gets no session.
 */
export function insertSession(
  store: SidecarStore,
  session: SessionRecord,
  check: (user: UserRecord | undefined) => void,
): Promise<void> {
  return store.transact((data) => {
    check(data.users.find((u) => u.id === session.user_id));
    data.sessions.push(session);
  });
}

/** Ends session `id` (of `userId` only, when given); false if there was none. */
export function deleteSession(store: SidecarStore, id: string, userId?: string): Promise<boolean> {
  return store.transact((data) => {
    const i = data.sessions.findIndex((s) => s.id === id && (userId === undefined || s.user_id === userId));
    if (i < 0) return false;
    data.sessions.splice(i, 1);
    return true;
  });
}

/** Ends all sessions of `userId` except `keepId`; returns how many ended. */
export function deleteSessionsOf(store: SidecarStore, userId: string, keepId: string | null): Promise<number> {
  return store.transact((data) => {
    const before = data.sessions.length;
    data.sessions = data.sessions.filter((s) => s.user_id !== userId || s.id === keepId);
    return before - data.sessions.length;
  });
}

/** Marks session `id` recently confirmed at `at`; false if the session is gone. */
export function confirmSession(store: SidecarStore, id: string, at: number): Promise<boolean> {
  return store.transact((data) => {
    const s = data.sessions.find((x) => x.id === id);
    if (!s) return false;
    s.confirmed_at = at;
    return true;
  });
}

export const appPasswordsOf = (store: SidecarStore, userId: string): AppPasswordRecord[] =>
  store.snapshot().app_passwords.filter((p) => p.user_id === userId);

export const findAppPassword = (store: SidecarStore, userId: string, id: string): AppPasswordRecord | undefined =>
  store.snapshot().app_passwords.find((p) => p.id === id && p.user_id === userId);

export function insertAppPassword(store: SidecarStore, record: AppPasswordRecord): Promise<void> {
  return store.transact((data) => {
    data.app_passwords.push(record);
  });
}

/** Revokes App Password `id` of `userId`; false if there was none. */
export function deleteAppPassword(store: SidecarStore, userId: string, id: string): Promise<boolean> {
  return store.transact((data) => {
    const i = data.app_passwords.findIndex((p) => p.id === id && p.user_id === userId);
    if (i < 0) return false;
    data.app_passwords.splice(i, 1);
    return true;
  });
}
