/**
 * Command-line sign-in, modelled on the OAuth 2.0 device authorization grant
 * (RFC 8628) with a PKCE challenge (RFC 7636, S256): `start` returns a device
 * code (secret, kept by the command line) and a short user code (shown to the
 * person); a signed-in user opens the approval page and approves; `exchange`
 * trades the device code plus the PKCE verifier for an `installation` session,
 * once.
 */
import { createHash, randomInt } from 'node:crypto';
import { callerOf, type ActionContext } from '../actions/context.js';
import { reply } from '../actions/reply.js';
import { publicBaseUrl, type Config } from '../core/config.js';
import { AppError, errors } from '../core/errors.js';
import { hashSecret, newId, newSecret, sameSecret } from '../core/ids.js';
import type { CliRequestRecord, SessionRecord, UserRecord } from '../store/schema.js';
import { findCliRequestByUserCode, insertCliRequest, settleCliRequest, updateCliRequestByUserCode } from '../store/sign-in.js';
import { newSession } from './credentials.js';
import { sessionOut } from './passkeys.js';
import { noSuchUser, publicUser } from './users.js';

export const CLI_REQUEST_TTL_MS = 10 * 60 * 1000;
export const CLI_POLL_INTERVAL_SECS = 1;
/** No vowels or look-alikes: codes are read aloud and typed. */
const USER_CODE_ALPHABET = 'BCDFGHJKLMNPQRSTVWXZ';

export function newUserCode(): string {
  let s = '';
  for (let i = 0; i < 8; i++) s += USER_CODE_ALPHABET[randomInt(USER_CODE_ALPHABET.length)];
  return `${s.slice(0, 4)}-${s.slice(4)}`;
}

/** Accepts `bcdf-ghjk`, `BCDFGHJK` or ` BCDF GHJK `. */
export function normaliseUserCode(code: string): string {
  const s = code.toUpperCase().replace(/[^A-Z]/g, '');
  return s.length === 8 ? `${s.slice(0, 4)}-${s.slice(4)}` : s;
}

export const pkceChallenge = (verifier: string) => createHash('sha256').update(verifier, 'ascii').digest('base64url');

function checkLoopbackRedirect(uri: string | null | undefined): string | null {
  if (uri === null || uri === undefined || uri === '') return null;
  let u: URL;
  try {
    u = new URL(uri);
  } catch {
    throw errors.badRequest('redirect_uri must be an absolute URL', { field: 'body.redirect_uri' });
  }
  if (u.protocol !== 'http:' || !['127.0.0.1', '[::1]', 'localhost'].includes(u.hostname) || u.username || u.password) {
    throw errors.badRequest('redirect_uri must be a loopback http URL (http://127.0.0.1:PORT/...)', { field: 'body.redirect_uri' });
  }
  return u.toString();
}

export async function cliStart(ctx: ActionContext, body: { challenge: string; installation_name: string; redirect_uri?: string | null }) {
  if (!/^[A-Za-z0-9_-]{43}$/.test(body.challenge)) {
    throw errors.badRequest('challenge must be base64url(SHA-256(verifier)), 43 characters', { field: 'body.challenge' });
  }
  const name = body.installation_name.trim();
  if (name.length === 0 || name.length > 100) {
    throw errors.badRequest('installation_name must be 1 to 100 characters', { field: 'body.installation_name' });
  }
  const redirect = checkLoopbackRedirect(body.redirect_uri);
  const deviceCode = newSecret('qd');
  const now = ctx.now();
  const rec = await insertCliRequest(
    ctx.services.store,
    {
      id: newId(),
      device_code_hash: hashSecret(deviceCode),
      challenge: body.challenge,
      installation_name: name,
      redirect_uri: redirect,
      created_at: now,
      expires_at: now + CLI_REQUEST_TTL_MS,
      interval_secs: CLI_POLL_INTERVAL_SECS,
      last_poll_at: null,
      approved_by: null,
      approved_at: null,
      denied: false,
      issued_at: null,
    },
    newUserCode,
    now - CLI_REQUEST_TTL_MS,
  );
  const base = publicBaseUrl(ctx.services.config);
  return reply(
    {
      device_code: deviceCode,
      user_code: rec.user_code,
      verification_uri: `${base}/cli/approve`,
      verification_uri_complete: `${base}/cli/approve?user_code=${encodeURIComponent(rec.user_code)}`,
      expires_in: Math.round(CLI_REQUEST_TTL_MS / 1000),
      expires_at: rec.expires_at,
      interval: rec.interval_secs,
    },
    { status: 201 },
  );
}

/** The request `r` if it is still pending, else 404. */
function pending(r: CliRequestRecord | undefined, now: number): CliRequestRecord {
  if (!r || r.expires_at <= now || r.issued_at !== null) {
    throw errors.notFound('No pending command-line sign-in with this code; it may have expired. Run quire login again', {
      reason: 'unknown_user_code',
    });
  }
  return r;
}

const esc = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/** The approval fragment: the installation name and the code the person must compare with their terminal. */
export function approvalPage(ctx: ActionContext, userCode: string) {
  const caller = callerOf(ctx);
  const r = pending(findCliRequestByUserCode(ctx.services.store, normaliseUserCode(userCode)), ctx.now());
  const state = r.denied ? 'denied' : r.approved_at !== null ? 'approved' : 'pending';
  const html = `<section class="cli-approval" data-state="${state}" data-user-code="${esc(r.user_code)}"${
    r.redirect_uri ? ` data-redirect-uri="${esc(r.redirect_uri)}"` : ''
  }>
<h2>Sign in the command line?</h2>
<p>The installation <strong class="installation-name">${esc(r.installation_name)}</strong> asks to sign in as <strong>${esc(caller.username)}</strong>.</p>
<p>Check that your terminal shows this code: <code class="user-code">${esc(r.user_code)}</code></p>
<p class="expires">This request expires at <time datetime="${new Date(r.expires_at).toISOString()}">${new Date(r.expires_at).toISOString()}</time>.</p>
</section>
`;
  return reply(html, { contentType: 'text/html; charset=utf-8' });
}

/** Approves (or, with `decision=deny`, denies) the request named by the `user_code` query parameter. */
export async function approve(ctx: ActionContext, query: Record<string, unknown>) {
  const caller = callerOf(ctx);
  if (caller.credential.kind !== 'session') {
    throw errors.forbidden('Only a signed-in session can approve a command-line sign-in', { reason: 'not_a_session' });
  }
  const userCode = typeof query.user_code === 'string' ? query.user_code : '';
  if (!userCode) throw errors.badRequest('Send the user_code as a query parameter: POST /api/v1/auth/cli/approve?user_code=XXXX-XXXX', { field: 'query.user_code' });
  const deny = query.decision === 'deny';
  const now = ctx.now();
  const r = await updateCliRequestByUserCode(ctx.services.store, normaliseUserCode(userCode), (found) => {
    const req = pending(found, now);
    if (req.approved_at !== null || req.denied) throw errors.conflict('This request was already answered', { reason: 'already_answered' });
    if (deny) req.denied = true;
    else {
      req.approved_by = caller.userId;
      req.approved_at = now;
    }
  });
  const text = deny
    ? `Denied the sign-in of ${r.installation_name}.\n`
    : `Approved: ${r.installation_name} is now signed in as ${caller.username}. You can return to the command line.\n`;
  return reply(text, { contentType: 'text/plain; charset=utf-8' });
}

const grantError = (reason: string, message: string, status = 400, headers?: Record<string, string>) =>
  new AppError(status === 403 ? 'forbidden' : status === 429 ? 'too_many_requests' : 'bad_request', message, {
    status,
    details: { reason },
    headers,
  });

export async function exchange(ctx: ActionContext, body: { device_code: string; verifier: string }) {
  const now = ctx.now();
  const hash = hashSecret(body.device_code);
  const outcome = await settleCliRequest(ctx.services.store, hash, (r, userOf) => exchangeStep(ctx.services.config, r, userOf, body.verifier, now));
  // Errors are returned, not thrown, so the poll time and the spent state are saved.
  if ('error' in outcome) throw outcome.error;
  return reply(outcome.ok, { status: 201 });
}

type ExchangeOutcome = { error: AppError } | { ok: ReturnType<typeof sessionOut> & { user: ReturnType<typeof publicUser> } };

/** One poll of a command-line sign-in: the answer, and the session to keep when it succeeds. */
function exchangeStep(
  config: Config,
  r: CliRequestRecord | undefined,
  userOf: (id: string) => UserRecord | undefined,
  verifier: string,
  now: number,
): { answer: ExchangeOutcome; session?: SessionRecord } {
  const refuse = (error: AppError) => ({ answer: { error } });
  if (!r) return refuse(grantError('invalid_grant', 'Unknown device code'));
  if (r.issued_at !== null) return refuse(grantError('invalid_grant', 'This sign-in was already exchanged for a token'));
  if (r.expires_at <= now) return refuse(grantError('expired_token', 'This sign-in request expired; run quire login again'));
  if (!/^[A-Za-z0-9._~-]{43,128}$/.test(verifier) || !sameSecret(pkceChallenge(verifier), r.challenge)) {
    return refuse(grantError('invalid_verifier', 'The verifier does not match the challenge of this request'));
  }
  if (r.denied) {
    r.issued_at = now;
    return refuse(grantError('access_denied', 'The sign-in was denied in the browser', 403));
  }
  if (r.approved_at === null) {
    const tooSoon = r.last_poll_at !== null && now - r.last_poll_at < r.interval_secs * 1000;
    r.last_poll_at = now;
    if (tooSoon) {
      return refuse(
        grantError('slow_down', `Polling too fast; wait ${r.interval_secs} s between polls`, 429, {
          'retry-after': String(r.interval_secs),
        }),
      );
    }
    return refuse(grantError('authorization_pending', 'Waiting for approval in the browser'));
  }
  const user = userOf(r.approved_by!);
  if (!user) throw noSuchUser(r.approved_by!);
  if (user.disabled) return refuse(grantError('access_denied', 'This account is disabled', 403));
  r.issued_at = now;
  const issued = newSession(user.id, { kind: 'installation', installationName: r.installation_name, now, config, confirmed: false });
  return { answer: { ok: { user: publicUser(user), ...sessionOut(issued.token, issued.session) } }, session: issued.session };
}
