/**
 * `quire admin ...`: operator commands run at the server's console against
 * the data folder directly (they work while the server runs: the sidecar
 * store takes a cross-process lock). A session issued here counts as
 * recently confirmed: the operator at the console proved who they are.
 */
import fs from 'node:fs';
import path from 'node:path';
import { issueSession, newSession } from '../../accounts/credentials.js';
import { ensureHomeFolder, newUser, publicUser } from '../../accounts/users.js';
import { AppError } from '../../core/errors.js';
import type { Services } from '../../core/services.js';
import type { UserRecord } from '../../store/schema.js';
import { findUserByName, insertUser } from '../../store/users.js';

const within = (outer: string, inner: string) => inner === outer || inner.startsWith(outer.endsWith(path.sep) ? outer : outer + path.sep);

/**
 * Why an existing folder (a real path) cannot become a Home, or null. Pure:
 * `dataDir` is the data folder's real path, `others` the other users' Homes
 * given with `--home` (Homes under the data folder are covered by the first
 * two rules). Two Homes that overlap would index, watch and write the same
 * files as two people; a Home holding the data folder would put the
 * server's state (and everyone's sessions) in that user's vault.
 */
export function homeRefusal(
  home: string,
  dataDir: string,
  others: ReadonlyArray<{ username: string; home: string }>,
): { reason: string; message: string } | null {
  if (within(dataDir, home)) {
    return { reason: 'home_inside_data', message: `${home} is inside the data folder ${dataDir}; choose a folder outside it (Homes there belong to the server)` };
  }
  if (within(home, dataDir)) {
    return { reason: 'home_contains_data', message: `${home} contains the data folder ${dataDir}; the server's state must not live inside a Home` };
  }
  for (const o of others) {
    if (within(o.home, home)) return { reason: 'home_overlaps', message: `${home} is inside ${o.username}'s Home (${o.home})` };
    if (within(home, o.home)) return { reason: 'home_overlaps', message: `${home} contains ${o.username}'s Home (${o.home})` };
  }
  return null;
}

/** The real path of an existing folder given with `--home` or `--vault`, or an error that says what is wrong. */
export function existingFolder(dir: string, option = '--home'): string {
  let real: string;
  try {
    real = fs.realpathSync.native(path.resolve(dir));
  } catch {
    throw new AppError('not_found', `No folder at ${path.resolve(dir)}; ${option} takes an existing folder`, { details: { reason: 'home_missing' } });
  }
  if (!fs.statSync(real).isDirectory()) {
    throw new AppError('bad_request', `${real} is not a folder`, { details: { reason: 'home_not_a_folder' } });
  }
  return real;
}

/** The data folder's real path (it may not exist yet: then its absolute path). */
function realDataDir(dataDir: string): string {
  try {
    return fs.realpathSync.native(dataDir);
  } catch {
    return path.resolve(dataDir);
  }
}

/**
 * Refuses `home` (a real path) for `username` with the rule it breaks;
 * `data` null checks the data folder alone (before it is opened, so a data
 * folder inside a vault is refused before anything is written there).
 */
export function checkHomeFolder(dataDir: string, users: readonly UserRecord[] | null, home: string, username: string): void {
  const others = (users ?? []).filter((u) => u.home_path && u.username !== username).map((u) => ({ username: u.username, home: u.home_path! }));
  const refusal = homeRefusal(home, realDataDir(dataDir), others);
  if (refusal) throw new AppError('conflict', refusal.message, { details: { reason: refusal.reason, field: 'home' } });
}

export async function addUser(
  services: Services,
  input: { username: string; role: string; displayName?: string; home?: string },
): Promise<{ user: ReturnType<typeof publicUser>; token: string; home: string }> {
  const now = Date.now();
  const home = input.home === undefined ? null : existingFolder(input.home);
  let token = '';
  const user = await insertUser(
    services.store,
    (users) => {
      if (home !== null) checkHomeFolder(services.config.dataDir, users, home, input.username);
      const user = newUser(users, { ...input, now });
      if (home !== null) user.home_path = home;
      return user;
    },
    (user) => {
      const issued = newSession(user.id, { kind: 'installation', installationName: 'quire admin', now, config: services.config, confirmed: true });
      token = issued.token;
      return issued.session;
    },
  );
  const dir = home ?? (await ensureHomeFolder(services.config, user.username));
  return { user: publicUser(user), token, home: dir };
}

export async function issueAdminToken(services: Services, username: string): Promise<{ user: ReturnType<typeof publicUser>; token: string }> {
  const now = Date.now();
  const user = findUserByName(services.store, username);
  if (!user) throw new AppError('not_found', `No user named ${username}`);
  const opts = { kind: 'installation', installationName: 'quire admin', now, config: services.config, confirmed: true } as const;
  const { token } = await issueSession(services.store, user.id, opts, (u) => {
    if (!u) throw new AppError('not_found', `No user named ${username}`);
    if (u.disabled) throw new AppError('forbidden', `User ${u.username} is disabled; enable them first`);
  });
  return { user: publicUser(user), token };
}
