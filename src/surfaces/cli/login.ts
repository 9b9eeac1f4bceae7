/**
 * `quire login` and `quire logout`. Login runs the command-line sign-in
 * (device grant with PKCE): it prints the approval URL and code, opens
 * nothing by itself, polls `exchange` until the browser approves, denies or
 * the request expires, then stores the session token (file mode 0600).
 */
import { createHash, randomBytes } from 'node:crypto';
import os from 'node:os';
import { AppError, toAppError } from '../../core/errors.js';
import { HttpTransport } from '../client/transport.js';
import { findCatalogEntry } from './catalog.js';
import { UsageError, type Io } from './usage.js';
import { credentialsFile, forgetCredential, loadCredential, storeCredential } from './stored-credentials.js';

const action = async (name: string) => {
  const a = await findCatalogEntry(name);
  if (!a) throw new Error(`action ${name} is missing from the catalog`);
  return a;
};

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface LoginOptions {
  server?: string;
  name?: string;
}

export async function login(opts: LoginOptions, io: Io, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const server = opts.server ?? env.QUIRE_SERVER;
  if (!server) throw new UsageError('No server: pass --server URL or set QUIRE_SERVER');
  const anonymous = new HttpTransport(server, null);
  const verifier = randomBytes(32).toString('base64url');
  const challenge = createHash('sha256').update(verifier, 'ascii').digest('base64url');
  const installationName = opts.name ?? `quire on ${os.hostname()}`;
  const started = (await anonymous.call(await action('start'), { body: { challenge, installation_name: installationName } })).body as {
    device_code: string;
    user_code: string;
    verification_uri: string;
    verification_uri_complete: string;
    expires_at: number;
    interval: number;
  };
  io.err(`To sign in, open this address in a browser where you are signed in to ${server}:`);
  io.err(`  ${started.verification_uri_complete}`);
  io.err(`and check that it shows the code ${started.user_code}. Waiting for approval...`);
  let interval = Math.max(1, started.interval) * 1000;
  for (;;) {
    await sleep(interval);
    try {
      const out = (await anonymous.call(await action('exchange'), { body: { device_code: started.device_code, verifier } })).body as {
        token: string;
        user: { username: string };
        session: { id: string };
      };
      storeCredential({ server, token: out.token, username: out.user.username, session_id: out.session.id, created_at: Date.now() }, env);
      io.out(`Signed in to ${server} as ${out.user.username}. Credential stored in ${credentialsFile(env)}.`);
      return 0;
    } catch (e) {
      const err = toAppError(e);
      const reason = err.details?.reason;
      if (reason === 'authorization_pending') continue;
      if (reason === 'slow_down' || err.code === 'too_many_requests') {
        interval += 1000;
        continue;
      }
      io.err(`quire login: ${err.code}: ${err.message}`);
      return 1;
    }
  }
}

export async function logout(opts: { server?: string }, io: Io, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const stored = loadCredential(opts.server ?? env.QUIRE_SERVER, env);
  if (!stored) {
    io.err('quire logout: not signed in to that server');
    return 1;
  }
  try {
    await new HttpTransport(stored.server, stored.token).call(await action('cli_logout'), {});
  } catch (e) {
    // A session that already ended (401) is fine: forget it all the same.
    if (!(e instanceof AppError) || e.code !== 'unauthorized') {
      io.err(`quire logout: ${toAppError(e).message}; the stored credential is kept`);
      return 1;
    }
  }
  forgetCredential(stored.server, env);
  io.out(`Signed out of ${stored.server}.`);
  return 0;
}
