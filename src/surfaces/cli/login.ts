/**
 * `quire login` and `quire logout`. Login runs the command-line sign-in
 * (device grant with PKCE): it prints the approval URL and code, polls
 * `exchange` until the browser approves, denies or the request expires,
 * then stores the session token (file mode 0600).
 *
 * When a browser is at hand ($BROWSER, a desktop session, macOS, Windows;
 * not with --no-browser) it also opens the approval page and listens on a
 * loopback address given as the request's `redirect_uri`: the approval page
 * sends the browser there, and the command exchanges at once instead of at
 * its next poll. The redirect carries no secret (the exchange still needs
 * the device code and the PKCE verifier, which never leave this process);
 * without a browser, or if it cannot be opened, the printed code works as
 * before.
 */
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import http from 'node:http';
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
  /** false with --no-browser: print the code only. */
  browser?: boolean;
}

/** How to open a URL here, or null when no browser is at hand (a server over ssh). */
export function browserCommand(env: NodeJS.ProcessEnv, platform: NodeJS.Platform = process.platform): string[] | null {
  if (env.BROWSER) return [env.BROWSER];
  if (platform === 'darwin') return ['open'];
  if (platform === 'win32') return ['cmd', '/c', 'start', '""'];
  if (env.DISPLAY || env.WAYLAND_DISPLAY) return ['xdg-open'];
  return null;
}

/** A one-shot page on 127.0.0.1 that the approval page redirects the browser to; `hit` resolves when it does. */
async function loopbackRedirect(): Promise<{ uri: string; hit: Promise<void>; close: () => void }> {
  const path = `/quire-login/${randomBytes(8).toString('hex')}`;
  let arrived!: () => void;
  const hit = new Promise<void>((resolve) => (arrived = resolve));
  const server = http.createServer((req, res) => {
    if (req.method !== 'GET' || req.url !== path) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
    res.end('<!doctype html><title>quire login</title><p>Approved. You can close this tab and go back to the terminal.</p>');
    arrived();
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  server.unref();
  const { port } = server.address() as { port: number };
  return { uri: `http://127.0.0.1:${port}${path}`, hit, close: () => server.close() };
}

function openBrowser(cmd: string[], url: string): boolean {
  try {
    const child = spawn(cmd[0]!, [...cmd.slice(1), url], { detached: true, stdio: 'ignore' });
    child.on('error', () => undefined);
    child.unref();
    return true;
  } catch {
    return false;
  }
}

export async function login(opts: LoginOptions, io: Io, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const server = opts.server ?? env.QUIRE_SERVER;
  if (!server) throw new UsageError('No server: pass --server URL or set QUIRE_SERVER');
  const anonymous = new HttpTransport(server, null);
  const verifier = randomBytes(32).toString('base64url');
  const challenge = createHash('sha256').update(verifier, 'ascii').digest('base64url');
  const installationName = opts.name ?? `quire on ${os.hostname()}`;
  const browser = opts.browser === false ? null : browserCommand(env);
  const loop = browser ? await loopbackRedirect().catch(() => null) : null;
  const started = (
    await anonymous.call(await action('start'), { body: { challenge, installation_name: installationName, ...(loop ? { redirect_uri: loop.uri } : {}) } })
  ).body as {
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
  if (browser && loop && openBrowser(browser, started.verification_uri_complete)) io.err('(opened in your browser; it comes back here once you approve)');
  let interval = Math.max(1, started.interval) * 1000;
  let redirected = false;
  try {
    for (;;) {
      // The browser's return to the loopback page means the approval is done: exchange now rather than at the next poll.
      if (loop && !redirected) await Promise.race([sleep(interval), loop.hit.then(() => (redirected = true))]);
      else await sleep(interval);
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
  } finally {
    loop?.close();
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
