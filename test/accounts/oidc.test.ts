/**
 * OpenID Connect against a real OpenID Provider (oidc-provider) on loopback: linking an identity,
 * signing in with it (POST callback and browser callback), re-authenticating for a recent
 * confirmation, state single use, issuer check and unlinking. The provider's login and consent
 * forms are submitted with fetch and a small cookie jar; no endpoint is mocked.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import Provider from 'oidc-provider';
import { startInstance, type TestInstance } from '../helpers/instance.js';
import { originOf } from './helpers.js';

let inst: TestInstance;
let op: http.Server;
let issuer: string;
let owner: { id: string; token: string };
let redirectUri: string;

beforeAll(async () => {
  op = http.createServer();
  await new Promise<void>((r) => op.listen(0, '127.0.0.1', r));
  issuer = `http://localhost:${(op.address() as AddressInfo).port}`;
  inst = await startInstance();
  redirectUri = `${originOf(inst)}/api/v1/auth/oidc/testop/callback`;
  const provider = new Provider(issuer, {
    clients: [{ client_id: 'quire', client_secret: 'quire-secret', redirect_uris: [redirectUri], grant_types: ['authorization_code'], response_types: ['code'] }],
    async findAccount(_ctx: unknown, id: string) {
      return { accountId: id, claims: async () => ({ sub: id, email: `${id}@example.test` }) };
    },
    claims: { openid: ['sub'], email: ['email'] },
    features: { devInteractions: { enabled: true } },
    cookies: { keys: ['test-cookie-key'] },
    conformIdTokenClaims: false,
  });
  op.on('request', provider.callback());
  inst.server.services.config.oidcProviders = [
    { key: 'testop', name: 'Test OP', issuer, client_id: 'quire', client_secret: 'quire-secret', allow_insecure_http: true },
  ];
  owner = await inst.user('olive', 'owner');
});
afterAll(async () => {
  await inst.close();
  await new Promise((r) => op.close(r));
});

/** Plays the person at the provider: follows redirects, fills the login form as `login`, accepts consent. */
async function atProvider(authorizationUrl: string, login: string): Promise<URL> {
  const jar = new Map<string, string>();
  const cookieHeader = () => [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
  const remember = (res: Response) => {
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(';');
      const i = pair!.indexOf('=');
      jar.set(pair!.slice(0, i), pair!.slice(i + 1));
    }
  };
  let url = new URL(authorizationUrl);
  let init: RequestInit = {};
  for (let hops = 0; hops < 20; hops++) {
    const res = await fetch(url, { ...init, redirect: 'manual', headers: { ...(init.headers ?? {}), cookie: cookieHeader() } });
    remember(res);
    init = {};
    const location = res.headers.get('location');
    if (location) {
      const next = new URL(location, url);
      if (next.toString().startsWith(redirectUri)) return next;
      url = next;
      continue;
    }
    const html = await res.text();
    expect(res.status, html).toBe(200);
    const form = /<form[^>]*action="([^"]+)"[^>]*>([\s\S]*?)<\/form>/.exec(html);
    if (!form) throw new Error(`no form at ${url}: ${html.slice(0, 300)}`);
    const fields = new URLSearchParams();
    for (const m of form[2]!.matchAll(/<input[^>]*type="hidden"[^>]*name="([^"]+)"[^>]*value="([^"]*)"/g)) fields.set(m[1]!, m[2]!);
    if (/name="login"/.test(form[2]!)) {
      fields.set('login', login);
      fields.set('password', 'any');
    }
    url = new URL(form[1]!, url);
    init = { method: 'POST', body: fields.toString(), headers: { 'content-type': 'application/x-www-form-urlencoded' } };
  }
  throw new Error('too many hops at the provider');
}

const pkce = () => {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
};

/** An unconfirmed installation session of olive, through the command-line sign-in. */
async function cliSession(): Promise<string> {
  const p = pkce();
  const s = await inst.api('POST', '/api/v1/auth/cli/start', { body: { challenge: p.challenge, installation_name: 'oidc test' } });
  await inst.api('POST', `/api/v1/auth/cli/approve?user_code=${s.body.user_code}`, { token: owner.token });
  const t = await inst.api('POST', '/api/v1/auth/cli/token', { body: { device_code: s.body.device_code, verifier: p.verifier } });
  expect(t.status, t.text).toBe(201);
  return t.body.token;
}

describe('OpenID Connect', () => {
  it('lists the provider in auth_options', async () => {
    expect((await inst.api('GET', '/api/v1/auth/options')).body.oidc_providers).toEqual([{ key: 'testop', name: 'Test OP' }]);
  });

  it('an unlinked identity cannot sign in', async () => {
    const s = await inst.api('POST', '/api/v1/auth/oidc/testop/start');
    expect(s.status, s.text).toBe(200);
    const back = await atProvider(s.body.authorization_url, 'alice');
    const r = await inst.api('POST', '/api/v1/auth/oidc/testop/callback', { body: { code: back.searchParams.get('code'), state: back.searchParams.get('state') } });
    expect(r.status).toBe(403);
    expect(r.body.error.details.reason).toBe('identity_not_linked');
  });

  it('links an identity through the browser callback, then signs in with it; state is single use', async () => {
    const link = await inst.api('POST', '/api/v1/auth/oidc/testop/link/start', { token: owner.token });
    expect(link.status, link.text).toBe(200);
    const url = new URL(link.body.authorization_url);
    expect(url.searchParams.get('code_challenge_method')).toBe('S256');
    expect(url.searchParams.get('redirect_uri')).toBe(redirectUri);
    const back = await atProvider(link.body.authorization_url, 'alice');
    expect(back.searchParams.get('iss')).toBe(issuer);
    const cb = await inst.api('GET', `/api/v1/auth/oidc/testop/callback${back.search}`);
    expect(cb.status, cb.text).toBe(200);
    expect(cb.body.linked).toMatchObject({ provider: 'testop', subject: 'alice', email: 'alice@example.test' });
    const sec = await inst.api('GET', '/api/v1/auth/me/security', { token: owner.token });
    expect(sec.body.oidc_identities).toEqual([expect.objectContaining({ provider: 'testop' })]);

    const s = await inst.api('POST', '/api/v1/auth/oidc/testop/start');
    const again = await atProvider(s.body.authorization_url, 'alice');
    const body = { code: again.searchParams.get('code'), state: again.searchParams.get('state'), kind: 'installation', installation_name: 'tablet' };
    const r = await inst.api('POST', '/api/v1/auth/oidc/testop/callback', { body });
    expect(r.status, r.text).toBe(200);
    expect(r.body.user.username).toBe('olive');
    expect(r.body.session).toMatchObject({ kind: 'installation', installation_name: 'tablet' });
    expect((await inst.api('GET', '/api/v1/auth/me', { token: r.body.token })).body.username).toBe('olive');
    const replay = await inst.api('POST', '/api/v1/auth/oidc/testop/callback', { body });
    expect(replay.status).toBe(400);
  });

  it('a browser arriving at the callback is sent on to the signed-in page with the token in the fragment', async () => {
    const s = await inst.api('POST', '/api/v1/auth/oidc/testop/start');
    const back = await atProvider(s.body.authorization_url, 'alice');
    const res = await fetch(`${inst.url}/api/v1/auth/oidc/testop/callback${back.search}`, { redirect: 'manual', headers: { accept: 'text/html' } });
    expect(res.status).toBe(303);
    const to = res.headers.get('location')!;
    expect(to).toMatch(/^\/signed-in#token=qs_/);
    const token = decodeURIComponent(to.split('#token=')[1]!);
    expect((await inst.api('GET', '/api/v1/auth/me', { token })).body.username).toBe('olive');
  });

  it('refuses a callback naming another issuer, and a wrong code', async () => {
    const s = await inst.api('POST', '/api/v1/auth/oidc/testop/start');
    const back = await atProvider(s.body.authorization_url, 'alice');
    back.searchParams.set('iss', 'http://evil.example');
    expect((await inst.api('GET', `/api/v1/auth/oidc/testop/callback${back.search}`)).status).toBe(400);
    const s2 = await inst.api('POST', '/api/v1/auth/oidc/testop/start');
    const r = await inst.api('POST', '/api/v1/auth/oidc/testop/callback', { body: { code: 'forged', state: s2.body.state } });
    expect(r.status).toBe(401);
  });

  it('re-authenticating with the linked identity gives a recent confirmation for an RC action', async () => {
    const token = await cliSession();
    const refused = await inst.api('POST', '/api/v1/auth/invites', { token, body: { role: 'member', ttl_secs: 600 } });
    expect(refused.body.error.details.reason).toBe('recent_confirmation_required');
    const s = await inst.api('POST', '/api/v1/auth/oidc/testop/reauth/start', { token });
    expect(s.status, s.text).toBe(200);
    expect(new URL(s.body.authorization_url).searchParams.get('prompt')).toBe('login');
    const back = await atProvider(s.body.authorization_url, 'alice');
    const r = await inst.api('POST', '/api/v1/auth/oidc/testop/callback', { body: { code: back.searchParams.get('code'), state: back.searchParams.get('state') } });
    expect(r.status, r.text).toBe(200);
    expect(r.body.purpose).toBe('reauth');
    expect((await inst.api('POST', '/api/v1/auth/invites', { token, body: { role: 'member', ttl_secs: 600 } })).status).toBe(201);
  });

  it('re-authenticating as a different identity does not confirm', async () => {
    const token = await cliSession();
    const s = await inst.api('POST', '/api/v1/auth/oidc/testop/reauth/start', { token });
    const back = await atProvider(s.body.authorization_url, 'mallory');
    const r = await inst.api('POST', '/api/v1/auth/oidc/testop/callback', { body: { code: back.searchParams.get('code'), state: back.searchParams.get('state') } });
    expect(r.status).toBe(403);
    expect(r.body.error.details.reason).toBe('identity_mismatch');
  });

  it('will not unlink the last way to sign in', async () => {
    const r = await inst.api('DELETE', '/api/v1/auth/oidc/testop/link', { token: owner.token });
    expect(r.status).toBe(409);
    expect(r.body.error.details.reason).toBe('last_sign_in_method');
    expect((await inst.api('POST', '/api/v1/auth/oidc/nope/start')).status).toBe(404);
  });
});
