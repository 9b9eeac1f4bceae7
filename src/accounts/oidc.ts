/**
 * OpenID Connect sign-in with openid-client: the authorization code flow with
 * PKCE (S256), state and nonce, against the providers in configuration
 * (QUIRE_OIDC_PROVIDERS). One flow serves three purposes: signing in with a
 * linked identity, linking an identity to the signed-in account, and
 * re-authenticating for a recent confirmation.
 */
import type * as client from 'openid-client';
import { callerOf, type ActionContext } from '../actions/context.js';
import { reply } from '../actions/reply.js';
import { publicBaseUrl, type Config, type OidcProviderConfig } from '../core/config.js';
import { AppError, errors } from '../core/errors.js';
import type { AuthFlowRecord } from '../store/schema.js';
import { deleteOidcLink, findOidcLinkBySubject, linkIdentity, oidcLinksOf, takeOidcFlow as takeOidcFlowRecord } from '../store/sign-in.js';
import { issueSession } from './credentials.js';
import { addFlow } from './flows.js';
import { confirmSession, hasOtherSignIn, sessionOut } from './passkeys.js';
import { noSuchUser, publicUser } from './users.js';

type Purpose = 'login' | 'link' | 'reauth';

export function providerOf(config: Config, key: string): OidcProviderConfig {
  const p = config.oidcProviders.find((x) => x.key === key);
  if (!p) throw errors.notFound(`No OpenID Connect provider "${key}" is configured`, { provider: key });
  return p;
}

/** openid-client is loaded at the first sign-in through a provider, not at every server's start (docs/performance.md, "Start-up"). */
const openid = () => import('openid-client');

const discovered = new Map<string, Promise<client.Configuration>>();

async function clientConfig(p: OidcProviderConfig): Promise<client.Configuration> {
  const cacheKey = `${p.issuer} ${p.client_id}`;
  let c = discovered.get(cacheKey);
  if (!c) {
    c = openid().then((oc) =>
      oc.discovery(new URL(p.issuer), p.client_id, p.client_secret, undefined, {
        execute: p.allow_insecure_http ? [oc.allowInsecureRequests] : [],
      }),
    );
    discovered.set(cacheKey, c);
    c.catch(() => discovered.delete(cacheKey));
  }
  try {
    return await c;
  } catch (e) {
    throw new AppError('service_unavailable', `The provider ${p.key} cannot be reached: ${(e as Error).message}`, {
      details: { reason: 'oidc_discovery_failed', provider: p.key },
    });
  }
}

export const redirectUriOf = (config: Config, key: string) => `${publicBaseUrl(config)}/api/v1/auth/oidc/${encodeURIComponent(key)}/callback`;

async function startOidc(ctx: ActionContext, key: string, purpose: Purpose, userId: string | null, sessionId: string | null) {
  const p = providerOf(ctx.services.config, key);
  const c = await clientConfig(p);
  const oc = await openid();
  const verifier = oc.randomPKCECodeVerifier();
  const state = oc.randomState();
  const nonce = oc.randomNonce();
  const url = oc.buildAuthorizationUrl(c, {
    redirect_uri: redirectUriOf(ctx.services.config, key),
    scope: ['openid', 'email', 'profile', ...(p.scopes ?? [])].join(' '),
    code_challenge: await oc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state,
    nonce,
    ...(purpose === 'reauth' ? { prompt: 'login', max_age: '0' } : {}),
  });
  const flow = await addFlow(
    ctx.services.store,
    { kind: 'oidc', challenge: state, user_id: userId, session_id: sessionId, data: { provider: key, purpose, verifier, nonce } },
    ctx.now(),
    10 * 60 * 1000,
  );
  return { flow: flow.id, state, provider: key, purpose, authorization_url: url.toString(), expires_at: flow.expires_at };
}

function sessionIdOf(ctx: ActionContext): { userId: string; sessionId: string } {
  const caller = callerOf(ctx);
  if (caller.credential.kind !== 'session') {
    throw errors.forbidden('Only a signed-in session can link or confirm an identity', { reason: 'not_a_session' });
  }
  return { userId: caller.userId, sessionId: caller.credential.id };
}

export const oidcStart = (ctx: ActionContext, key: string) => startOidc(ctx, key, 'login', null, null);

export function oidcLinkStart(ctx: ActionContext, key: string) {
  const { userId, sessionId } = sessionIdOf(ctx);
  return startOidc(ctx, key, 'link', userId, sessionId);
}

export function oidcReauthStart(ctx: ActionContext, key: string) {
  const { userId, sessionId } = sessionIdOf(ctx);
  if (!oidcLinksOf(ctx.services.store, userId).some((l) => l.provider === key)) {
    throw errors.conflict(`Your account has no identity from ${key} linked; link one first`, { reason: 'not_linked' });
  }
  return startOidc(ctx, key, 'reauth', userId, sessionId);
}

/** Takes the OIDC flow whose state is `state` (single use). */
async function takeOidcFlow(ctx: ActionContext, key: string, state: string): Promise<AuthFlowRecord> {
  const now = ctx.now();
  const flow = await takeOidcFlowRecord(ctx.services.store, state);
  if (!flow || flow.expires_at <= now || flow.data.provider !== key) {
    throw new AppError('bad_request', 'Unknown, used or expired state; start the sign-in again', {
      details: { field: 'state', reason: 'flow_expired' },
    });
  }
  return flow;
}

export interface CallbackInput {
  code?: string;
  state?: string;
  error?: string;
  kind?: 'web' | 'installation' | null;
  installation_name?: string | null;
}

/** Completes a flow: code exchange (state, PKCE and nonce checked by openid-client), then the flow's purpose. */
export async function finishOidc(ctx: ActionContext, key: string, input: CallbackInput) {
  const p = providerOf(ctx.services.config, key);
  if (!input.state) throw errors.badRequest('state is required', { field: 'state' });
  const flow = await takeOidcFlow(ctx, key, input.state);
  if (input.error) {
    throw new AppError('forbidden', `The provider refused the sign-in: ${input.error}`, { details: { reason: 'oidc_error', error: input.error } });
  }
  if (!input.code) throw errors.badRequest('code is required', { field: 'code' });
  const c = await clientConfig(p);
  const current = new URL(redirectUriOf(ctx.services.config, key));
  current.searchParams.set('code', input.code);
  current.searchParams.set('state', input.state);
  // RFC 9207: the HTTP surface checked any `iss` the browser brought against this provider.
  current.searchParams.set('iss', c.serverMetadata().issuer);
  let sub: string;
  let email: string | null;
  try {
    const tokens = await (await openid()).authorizationCodeGrant(c, current, {
      pkceCodeVerifier: String(flow.data.verifier),
      expectedState: input.state,
      expectedNonce: String(flow.data.nonce),
      idTokenExpected: true,
    });
    const claims = tokens.claims();
    if (!claims?.sub) throw new Error('no ID token subject');
    sub = claims.sub;
    email = typeof claims.email === 'string' ? claims.email : null;
  } catch (e) {
    throw new AppError('unauthorized', `The OpenID Connect sign-in did not verify: ${(e as Error).message}`, {
      details: { reason: 'oidc_failed' },
    });
  }
  const now = ctx.now();
  const purpose = flow.data.purpose as Purpose;
  const config = ctx.services.config;
  if (purpose === 'login') {
    const link = findOidcLinkBySubject(ctx.services.store, key, sub);
    if (!link) {
      throw errors.forbidden(`This ${p.name} identity is not linked to an account; sign in with a passkey and link it first`, {
        reason: 'identity_not_linked',
      });
    }
    const kind = input.kind ?? 'web';
    const installationName = kind === 'installation' ? (input.installation_name?.trim() || 'installation').slice(0, 100) : null;
    let user: ReturnType<typeof publicUser> | undefined;
    const issued = await issueSession(ctx.services.store, link.user_id, { kind, installationName, now, config, confirmed: true }, (u) => {
      if (!u) throw noSuchUser(link.user_id);
      if (u.disabled) throw errors.unauthorized('This account is disabled');
      user = publicUser(u);
    });
    return { purpose, user: user!, ...sessionOut(issued.token, issued.session) };
  }
  if (purpose === 'link') {
    const link = { user_id: flow.user_id!, provider: key, subject: sub, email, created_at: now };
    await linkIdentity(ctx.services.store, link, flow.session_id, ({ session: s, linkedTo }) => {
      if (!s || s.expires_at <= now) throw errors.unauthorized('The session that started linking has ended');
      const fresh = s.confirmed_at !== null && now - s.confirmed_at <= config.recentConfirmationSeconds * 1000;
      if (!fresh) {
        throw errors.forbidden('Linking needs a recent confirmation; confirm and start again', { reason: 'recent_confirmation_required' });
      }
      if (linkedTo && linkedTo.user_id !== flow.user_id) {
        throw errors.conflict('This identity is already linked to another account', { reason: 'identity_taken' });
      }
    });
    return { purpose, linked: { provider: key, subject: sub, email, created_at: now } };
  }
  const link = oidcLinksOf(ctx.services.store, flow.user_id!).find((l) => l.provider === key);
  if (!link || link.subject !== sub) {
    throw errors.forbidden('This is not the identity linked to your account', { reason: 'identity_mismatch' });
  }
  return { purpose, ...(await confirmSession(ctx, flow.session_id!)) };
}

/** GET callback: a browser arriving from the provider. Browsers are sent on to a page; others get JSON. */
export async function browserCallback(ctx: ActionContext, key: string, query: CallbackInput, headers: Record<string, unknown>) {
  const wantsHtml = String(headers.accept ?? '').includes('text/html');
  if (!wantsHtml) return finishOidc(ctx, key, query);
  try {
    const out = (await finishOidc(ctx, key, query)) as { purpose: Purpose; token?: string };
    const to = out.purpose === 'login' ? `/signed-in#token=${encodeURIComponent(out.token!)}` : '/account';
    return reply(undefined, { status: 303, headers: { location: to, 'cache-control': 'no-store', 'referrer-policy': 'no-referrer' } });
  } catch (e) {
    const message = e instanceof AppError ? e.message : 'Sign-in failed';
    return reply(undefined, { status: 303, headers: { location: `/signed-in#error=${encodeURIComponent(message)}`, 'cache-control': 'no-store' } });
  }
}

export async function oidcUnlink(ctx: ActionContext, key: string) {
  const caller = callerOf(ctx);
  const unlinked = await deleteOidcLink(ctx.services.store, caller.userId, key, (methods) => {
    if (!hasOtherSignIn(methods, null, key)) {
      throw errors.conflict('This is your last way to sign in; add a passkey first', { reason: 'last_sign_in_method' });
    }
  });
  if (!unlinked) throw errors.notFound(`No identity from ${key} is linked to your account`, { provider: key });
  return { unlinked: key };
}

/** Refuses an `iss` in the browser callback that is not the provider's issuer (RFC 9207 mix-up defence). */
export function checkCallbackIssuer(config: Config, key: string, iss: string): void {
  const p = config.oidcProviders.find((x) => x.key === key);
  const norm = (s: string) => s.replace(/\/+$/, '');
  if (p && norm(iss) !== norm(p.issuer)) {
    throw new AppError('bad_request', 'The callback names another issuer than this provider', { details: { field: 'query.iss', reason: 'issuer_mismatch' } });
  }
}

