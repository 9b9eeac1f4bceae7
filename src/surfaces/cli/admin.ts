/**
 * `quire admin ...`: operator commands run at the server's console against
 * the data folder directly (they work while the server runs: the sidecar
 * store takes a cross-process lock). A session issued here counts as
 * recently confirmed: the operator at the console proved who they are.
 */
import { issueSession } from '../../accounts/credentials.js';
import { createUser, ensureHomeFolder, publicUser } from '../../accounts/users.js';
import { AppError } from '../../core/errors.js';
import type { Services } from '../../core/services.js';
import type { UserRecord } from '../../store/schema.js';

export async function addUser(
  services: Services,
  input: { username: string; role: string; displayName?: string },
): Promise<{ user: ReturnType<typeof publicUser>; token: string }> {
  const now = Date.now();
  const result = await services.store.transact((data) => {
    const user = createUser(data, { ...input, now });
    const { token } = issueSession(data, user, { kind: 'installation', installationName: 'quire admin', now, config: services.config, confirmed: true });
    return { user, token };
  });
  await ensureHomeFolder(services.config, result.user.username);
  return { user: publicUser(result.user), token: result.token };
}

export async function issueAdminToken(services: Services, username: string): Promise<{ user: ReturnType<typeof publicUser>; token: string }> {
  const now = Date.now();
  return services.store.transact((data) => {
    const user: UserRecord | undefined = data.users.find((u) => u.username.toLowerCase() === username.toLowerCase());
    if (!user) throw new AppError('not_found', `No user named ${username}`);
    if (user.disabled) throw new AppError('forbidden', `User ${user.username} is disabled; enable them first`);
    const { token } = issueSession(data, user, { kind: 'installation', installationName: 'quire admin', now, config: services.config, confirmed: true });
    return { user: publicUser(user), token };
  });
}
