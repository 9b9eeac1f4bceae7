/**
 * `quire serve --vault PATH`: one command to serve an existing folder (an
 * Obsidian vault, a git repository of notes) to one person. The folder
 * becomes, in place, the Home of a single owner, created on the first run
 * and found again by its path on later runs. All server state (users,
 * sessions, index snapshot, client ids) stays outside it, in `--data` or
 * the user's state folder (docs/quire-folder.md).
 */
import os from 'node:os';
import { checkUsername } from '../../accounts/users.js';
import { loadConfig } from '../../core/config.js';
import { AppError } from '../../core/errors.js';
import { openServices, startServer, type RunningServer } from '../../server.js';
import { vaultServerDataDir, writerLocksDir } from '../client/user-dirs.js';
import { shareWriterLocksIn } from '../../vault/lock.js';
import { listUsers } from '../../store/users.js';
import { addUser, checkHomeFolder, existingFolder, issueAdminToken } from './admin.js';

export interface ServeVaultOptions {
  vault: string;
  data?: string;
  host?: string;
  port?: string;
  followSymlinks?: boolean;
  env?: NodeJS.ProcessEnv;
  log?: (line: string) => void;
}

/** The owner's username: the login name when it is a valid username, else `owner`. */
export function ownerName(env: NodeJS.ProcessEnv): string {
  let name = env.USER || env.LOGNAME || '';
  if (!name) {
    try {
      name = os.userInfo().username;
    } catch {
      name = '';
    }
  }
  try {
    checkUsername(name);
    return name;
  } catch {
    return 'owner';
  }
}

export async function serveVault(opts: ServeVaultOptions): Promise<RunningServer & { token: string; username: string; home: string }> {
  const env = opts.env ?? process.env;
  const log = opts.log ?? ((line: string) => console.log(line));
  const home = existingFolder(opts.vault, '--vault');
  const dataDir = opts.data ?? vaultServerDataDir(home, env);
  checkHomeFolder(dataDir, null, home, '');
  const config = { dataDir, host: opts.host, port: opts.port, followSymlinks: opts.followSymlinks };
  // The command line's vault daemon may write this folder too: one writer lock per folder across processes.
  shareWriterLocksIn(writerLocksDir(env));
  // The owner and the token are settled before the server starts, so a first run prints no setup token.
  const services = await openServices(loadConfig(config, env), log);
  let minted: { username: string; token: string };
  try {
    const users = listUsers(services.store);
    const owner = users.find((u) => u.home_path === home);
    if (owner) {
      checkHomeFolder(dataDir, users, home, owner.username);
      minted = { username: owner.username, token: (await issueAdminToken(services, owner.username)).token };
    } else if (users.length === 0) {
      const r = await addUser(services, { username: ownerName(env), role: 'owner', home });
      minted = { username: r.user.username, token: r.token };
    } else {
      throw new AppError(
        'conflict',
        `The data folder ${dataDir} already has users, none of whom has ${home} as their Home; give this vault a data folder of its own (--data), or add it to that instance with: quire admin user add --home`,
        { details: { reason: 'data_folder_in_use' } },
      );
    }
  } catch (e) {
    await services.jobs?.close();
    throw e;
  }
  // The same services: the server starts opening the Home as soon as it has them.
  const server = await startServer({ log, services });
  log(`serving ${home} as the Home of ${minted.username} (owner); server state in ${dataDir}`);
  log(`url:   ${server.url}`);
  log(`token: ${minted.token}`);
  log(`try:   curl -H "Authorization: Bearer ${minted.token}" ${server.url}/api/v1/notes`);
  return { ...server, token: minted.token, username: minted.username, home };
}
