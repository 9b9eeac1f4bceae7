/**
 * Users and the rules people expect of them: usernames unique ignoring case,
 * never fewer than one enabled owner, only owners make or unmake owners.
 * The rules are pure functions over user records that throw AppErrors; the
 * store's operations (src/store/users.ts) run them inside their transaction.
 * Handlers and the admin command line share them.
 */
import fs from 'node:fs';
import { AppError, errors } from '../core/errors.js';
import { newId } from '../core/ids.js';
import { paths, type Config } from '../core/config.js';
import type { SidecarStore } from '../store/sidecar.js';
import type { UserRecord } from '../store/schema.js';
import { findUserById } from '../store/users.js';
import { ROLES, type Role } from './caller.js';

/** Usernames name a Home folder, so they are portable file names. */
const USERNAME = /^[A-Za-z0-9](?:[A-Za-z0-9._-]{0,62}[A-Za-z0-9_-])?$/;

export function checkUsername(username: string): void {
  if (!USERNAME.test(username)) {
    throw new AppError(
      'bad_request',
      'username must be 1 to 64 characters of letters, digits, ".", "_" or "-", starting with a letter or digit and not ending with "."',
      { details: { field: 'username' } },
    );
  }
}

export function checkDisplayName(name: string): void {
  if (name.trim().length === 0 || name.length > 200) {
    throw new AppError('bad_request', 'display_name must be 1 to 200 characters and not blank', {
      details: { field: 'display_name' },
    });
  }
}

export function checkRole(role: string): asserts role is Role {
  if (!(ROLES as readonly string[]).includes(role)) {
    throw new AppError('bad_request', `role must be one of ${ROLES.join(', ')}`, { details: { field: 'role' } });
  }
}

export function checkUniqueUsername(users: readonly UserRecord[], username: string, exceptId?: string): void {
  const clash = users.find((u) => u.id !== exceptId && u.username.toLowerCase() === username.toLowerCase());
  if (clash) {
    throw new AppError('name_conflict_case', `username "${username}" is taken (as "${clash.username}"; usernames ignore case)`, {
      details: { field: 'username', existing: clash.username },
    });
  }
}

export const noSuchUser = (id: string) => errors.notFound(`No user with id ${id}`, { id });

export function findUser(store: SidecarStore, id: string): UserRecord {
  const user = findUserById(store, id);
  if (!user) throw noSuchUser(id);
  return user;
}

/** A new user record, checked against the current `users`; the store's insertUser adds it. */
export function newUser(
  users: readonly UserRecord[],
  input: { username: string; displayName?: string; role: string; now: number; id?: string; quotaOverrideBytes?: number | null },
): UserRecord {
  checkUsername(input.username);
  checkRole(input.role);
  const displayName = input.displayName ?? input.username;
  checkDisplayName(displayName);
  checkUniqueUsername(users, input.username);
  return {
    id: input.id ?? newId(),
    username: input.username,
    display_name: displayName,
    role: input.role,
    disabled: false,
    quota_override_bytes: input.quotaOverrideBytes ?? null,
    created_at: input.now,
  };
}

/** The user's Home folder: the folder given with `--home`, else `<data>/homes/<username>`. */
export function homeDirOf(config: Config, user: Pick<UserRecord, 'username' | 'home_path'>): string {
  return user.home_path ?? paths.home(config, user.username);
}

export async function ensureHomeFolder(config: Config, username: string): Promise<string> {
  const dir = paths.home(config, username);
  await fs.promises.mkdir(dir, { recursive: true });
  return dir;
}

const enabledOwners = (users: readonly UserRecord[]) => users.filter((u) => u.role === 'owner' && !u.disabled);

/** Gives `target` (a draft inside a store transaction) `role`, if `actor` may. */
export function setRole(target: UserRecord, users: readonly UserRecord[], actor: { role: Role }, role: string): void {
  checkRole(role);
  if ((role === 'owner' || target.role === 'owner') && actor.role !== 'owner') {
    throw errors.forbidden('Only an owner can grant or take away the owner role', { reason: 'owner_only' });
  }
  if (target.role === 'owner' && role !== 'owner' && !target.disabled && enabledOwners(users).length === 1) {
    throw errors.conflict('This is the last owner; make someone else owner first', { reason: 'last_owner' });
  }
  target.role = role;
}

/** Disables or enables `target` (a draft inside a store transaction), if `actor` may. */
export function setDisabled(target: UserRecord, users: readonly UserRecord[], actor: { role: Role }, disabled: boolean): void {
  if (target.role === 'owner' && actor.role !== 'owner') {
    throw errors.forbidden('Only an owner can disable or enable an owner', { reason: 'owner_only' });
  }
  if (disabled && target.role === 'owner' && !target.disabled && enabledOwners(users).length === 1) {
    throw errors.conflict('This is the last owner; it cannot be disabled', { reason: 'last_owner' });
  }
  target.disabled = disabled;
}

/** The user record as the API shows it. */
export function publicUser(u: UserRecord) {
  return {
    id: u.id,
    username: u.username,
    display_name: u.display_name,
    role: u.role,
    disabled: u.disabled,
    quota_override_bytes: u.quota_override_bytes,
    created_at: u.created_at,
  };
}
