/**
 * Named operations on the Instance record and the users table. Reads see the
 * current snapshot; each write is one store transaction. Rules about users
 * (unique names, the last owner) belong to src/accounts/users.ts: operations
 * that need them take a `change` or `build` callback, run inside the
 * transaction on a draft, which may throw to leave everything unchanged.
 */
import type { InstanceRecord, SessionRecord, UserRecord } from './schema.js';
import type { SidecarStore } from './sidecar.js';

export const instanceSettings = (store: SidecarStore): Readonly<InstanceRecord> => store.snapshot().instance;

/** Changes the Instance's sign-in policy (open signup, share invites). */
export function updateInstance(
  store: SidecarStore,
  change: Partial<Pick<InstanceRecord, 'open_signup' | 'share_invites'>>,
): Promise<InstanceRecord> {
  return store.transact((data) => {
    Object.assign(data.instance, change);
    return { ...data.instance };
  });
}

/** Keeps the hash of a new one-time setup token, but only while no user exists; true if kept. */
export function setSetupTokenWhileEmpty(store: SidecarStore, tokenHash: string): Promise<boolean> {
  return store.transact((data) => {
    if (data.users.length > 0) return false;
    data.instance.setup_token_hash = tokenHash;
    return true;
  });
}

export const listUsers = (store: SidecarStore): readonly UserRecord[] => store.snapshot().users;

export const hasUsers = (store: SidecarStore): boolean => store.snapshot().users.length > 0;

export const findUserById = (store: SidecarStore, id: string): UserRecord | undefined =>
  store.snapshot().users.find((u) => u.id === id);

/** Usernames ignore case. */
export const findUserByName = (store: SidecarStore, username: string): UserRecord | undefined =>
  store.snapshot().users.find((u) => u.username.toLowerCase() === username.toLowerCase());

/**
 * Adds the user `build` makes from the current users (it checks names and
 * throws on a clash), and with `session` that user's first session, in one
 * transaction. The first user ends the setup token.
 */
export function insertUser(
  store: SidecarStore,
  build: (users: readonly UserRecord[]) => UserRecord,
  session?: (user: UserRecord) => SessionRecord,
): Promise<UserRecord> {
  return store.transact((data) => {
    const user = build(data.users);
    data.users.push(user);
    data.instance.setup_token_hash = null;
    if (session) data.sessions.push(session(user));
    return { ...user };
  });
}

/**
 * Changes user `id` in one transaction: `change` edits a draft of the user,
 * seeing all users (for rules such as "never fewer than one owner"), and may
 * throw. Null when there is no such user.
 */
export function updateUser(
  store: SidecarStore,
  id: string,
  change: (user: UserRecord, users: readonly UserRecord[]) => void,
): Promise<UserRecord | null> {
  return store.transact((data) => {
    const user = data.users.find((u) => u.id === id);
    if (!user) return null;
    change(user, data.users);
    return { ...user };
  });
}
