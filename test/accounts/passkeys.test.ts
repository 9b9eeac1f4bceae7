/**
 * Passkeys over HTTP with a software authenticator (nid-webauthn-emulator) producing real
 * WebAuthn responses: first setup, sign-in, the passkey check behind recent confirmation,
 * adding, renaming and removing passkeys, recovery and re-enrolment.
 */
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInstance, type TestInstance } from '../helpers/instance.js';
import { confirm, finishRegistration, originOf, newAuthenticator, passkeyLogin, setupOwner, type SignedIn } from './helpers.js';

let inst: TestInstance;
const laptop = newAuthenticator();
let owner: SignedIn;

beforeAll(async () => {
  inst = await startInstance({ recentConfirmationSeconds: 300 });
});
afterAll(() => inst.close());

describe('first setup', () => {
  it('refuses a wrong or missing setup token', async () => {
    const wrong = await inst.api('POST', '/api/v1/auth/setup/start', { body: { token: 'qsetup_nope', username: 'x', display_name: 'X' } });
    expect(wrong.status).toBe(403);
    expect(wrong.body.error.details.reason).toBe('bad_setup_token');
    const none = await inst.api('POST', '/api/v1/auth/setup/start', { body: { username: 'x', display_name: 'X' } });
    expect(none.status).toBe(403);
  });

  it('auth_options says setup is needed, with the relying party from the server URL', async () => {
    const r = await inst.api('GET', '/api/v1/auth/options');
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ setup_required: true, open_signup: false, rp_id: 'localhost', origin: originOf(inst) });
  });

  it('creates the owner with a passkey and a confirmed web session; the token is single use', async () => {
    owner = await setupOwner(inst, laptop);
    expect(owner.user).toMatchObject({ username: 'olive', role: 'owner' });
    expect(owner.token).toMatch(/^qs_/);
    const me = await inst.api('GET', '/api/v1/auth/me', { token: owner.token });
    expect(me.body.username).toBe('olive');
    expect(fs.existsSync(`${inst.dataDir}/homes/olive`)).toBe(true);
    const again = await inst.api('POST', '/api/v1/auth/setup/start', { body: { token: inst.server.setupToken, username: 'eve', display_name: 'Eve' } });
    expect(again.status).toBe(409);
    expect((await inst.api('GET', '/api/v1/auth/options')).body.setup_required).toBe(false);
  });

  it('a flow finishes once: replaying the same registration is refused', async () => {
    const s = await inst.api('POST', '/api/v1/auth/passkeys/login/start');
    const credential = laptop.getJSON(originOf(inst), s.body.options);
    const ok = await inst.api('POST', '/api/v1/auth/passkeys/login/finish', { body: { flow: s.body.flow, credential, kind: 'web' } });
    expect(ok.status).toBe(201);
    const replay = await inst.api('POST', '/api/v1/auth/passkeys/login/finish', { body: { flow: s.body.flow, credential, kind: 'web' } });
    expect(replay.status).toBe(400);
    expect(replay.body.error.details.reason).toBe('flow_expired');
  });
});

describe('sign-in', () => {
  it('signs in with the passkey, as web or installation', async () => {
    const web = await passkeyLogin(inst, laptop, 'web');
    expect(web.status, web.text).toBe(201);
    expect(web.body.user.username).toBe('olive');
    expect(web.body.session.kind).toBe('web');
    const app = await passkeyLogin(inst, laptop, 'installation');
    expect(app.body.session).toMatchObject({ kind: 'installation', installation_name: 'phone app' });
    const sessions = await inst.api('GET', '/api/v1/auth/sessions', { token: app.body.token });
    expect(sessions.body.items.some((s: any) => s.installation_name === 'phone app' && s.current)).toBe(true);
  });

  it('refuses an assertion from another origin', async () => {
    const s = await inst.api('POST', '/api/v1/auth/passkeys/login/start');
    // The emulator signs for the origin it is given; a phishing origin with the same RP ID is caught.
    const credential = laptop.getJSON('http://evil.localhost:1234', { ...s.body.options, rpId: 'localhost' });
    const r = await inst.api('POST', '/api/v1/auth/passkeys/login/finish', { body: { flow: s.body.flow, credential, kind: 'web' } });
    expect(r.status).toBe(401);
    expect(r.body.error.details.reason).toBe('passkey_check_failed');
  });

  it('refuses a passkey whose signature counter went backwards (a cloned authenticator)', async () => {
    const key = newAuthenticator({ signCounterIncrement: 1 });
    const inv = await inst.api('POST', '/api/v1/auth/invites', { token: owner.token, body: { role: 'member', ttl_secs: 600 } });
    expect(inv.status, inv.text).toBe(201);
    const started = await inst.api('POST', '/api/v1/auth/invites/start', { body: { token: inv.body.token, username: 'carl', display_name: 'Carl' } });
    await finishRegistration(inst, key, started.body);
    // Take a snapshot of the authenticator's state, sign in twice, then replay with the old state.
    const s1 = await inst.api('POST', '/api/v1/auth/passkeys/login/start');
    const s2 = await inst.api('POST', '/api/v1/auth/passkeys/login/start');
    const later = key.getJSON(originOf(inst), s1.body.options);
    const laterStill = key.getJSON(originOf(inst), s2.body.options);
    expect((await inst.api('POST', '/api/v1/auth/passkeys/login/finish', { body: { flow: s2.body.flow, credential: laterStill, kind: 'web' } })).status).toBe(201);
    const stale = await inst.api('POST', '/api/v1/auth/passkeys/login/finish', { body: { flow: s1.body.flow, credential: later, kind: 'web' } });
    expect(stale.status).toBe(401);
    expect(stale.body.error.message).toMatch(/counter/i);
  });

  it('refuses a passkey the server does not know', async () => {
    const stranger = newAuthenticator();
    const l = await inst.api('POST', '/api/v1/auth/passkeys/login/start');
    // A credential the server never registered: create one against fresh options, then present it.
    const made = stranger.createJSON(originOf(inst), {
      rp: { id: 'localhost', name: 'x' }, user: { id: 'dXNlcg', name: 'u', displayName: 'u' },
      challenge: 'Y2hhbGxlbmdl', pubKeyCredParams: [{ type: 'public-key', alg: -7 }],
      authenticatorSelection: { residentKey: 'required' },
    } as any);
    expect(made.id).toBeTruthy();
    const credential = stranger.getJSON(originOf(inst), l.body.options);
    const r = await inst.api('POST', '/api/v1/auth/passkeys/login/finish', { body: { flow: l.body.flow, credential, kind: 'web' } });
    expect(r.status).toBe(401);
  });
});

describe('recent confirmation', () => {
  it('an RC action refuses a session without a fresh passkey check, and works right after one', async () => {
    const inst2 = await startInstance({ recentConfirmationSeconds: 1 });
    try {
      const key = newAuthenticator();
      const o = await setupOwner(inst2, key);
      await new Promise((r) => setTimeout(r, 1100));
      const refused = await inst2.api('POST', '/api/v1/auth/invites', { token: o.token, body: { role: 'member', ttl_secs: 600 } });
      expect(refused.status).toBe(403);
      expect(refused.body.error.details.reason).toBe('recent_confirmation_required');
      const c = await confirm(inst2, key, o.token);
      expect(c.fresh_until).toBeGreaterThan(Date.now());
      const ok = await inst2.api('POST', '/api/v1/auth/invites', { token: o.token, body: { role: 'member', ttl_secs: 600 } });
      expect(ok.status).toBe(201);
      const sec = await inst2.api('GET', '/api/v1/auth/me/security', { token: o.token });
      expect(sec.body.recent_confirmation.fresh).toBe(true);
    } finally {
      await inst2.close();
    }
  });

  it('a passkey check started by one session cannot confirm another', async () => {
    const other = await passkeyLogin(inst, laptop);
    const s = await inst.api('POST', '/api/v1/auth/assert/start', { token: owner.token });
    const credential = laptop.getJSON(originOf(inst), s.body.options);
    const r = await inst.api('POST', '/api/v1/auth/assert/finish', { token: other.body.token, body: { flow: s.body.flow, credential } });
    expect(r.status).toBe(403);
  });

  it('App Passwords cannot start a passkey check', async () => {
    const ap = await inst.api('POST', '/api/v1/auth/app-passwords', { token: owner.token, body: { name: 'acct', scopes: [{ scope: 'account', access: 'write' }] } });
    expect(ap.status, ap.text).toBe(201);
    const r = await inst.api('POST', '/api/v1/auth/assert/start', { token: ap.body.password });
    expect(r.status).toBe(403);
  });
});

describe('managing passkeys', () => {
  const phone = newAuthenticator();

  it('lists, adds and renames passkeys', async () => {
    const list = await inst.api('GET', '/api/v1/auth/passkeys', { token: owner.token });
    expect(list.body.items.map((p: any) => p.name)).toEqual(['laptop']);
    const add = await inst.api('POST', '/api/v1/auth/passkeys/add/start', { token: owner.token });
    expect(add.status, add.text).toBe(200);
    // The laptop's credential is excluded so it is not registered twice.
    expect(add.body.options.excludeCredentials.map((c: any) => c.id)).toEqual([owner.passkey.id]);
    const credential = phone.createJSON(originOf(inst), add.body.options);
    const fin = await inst.api('POST', '/api/v1/auth/passkeys/registration/finish', { body: { flow: add.body.flow, credential, name: 'phone' } });
    expect(fin.status, fin.text).toBe(201);
    expect(fin.body.token).toBeUndefined();
    const renamed = await inst.api('PATCH', `/api/v1/auth/passkeys/${encodeURIComponent(fin.body.passkey.id)}`, { token: owner.token, body: { name: 'old phone' } });
    expect(renamed.body.name).toBe('old phone');
    const after = await inst.api('GET', '/api/v1/auth/passkeys', { token: owner.token });
    expect(after.body.items.map((p: any) => p.name).sort()).toEqual(['laptop', 'old phone']);
  });

  it('removes a passkey after a passkey check, but never the last sign-in method', async () => {
    const list = await inst.api('GET', '/api/v1/auth/passkeys', { token: owner.token });
    const phoneKey = list.body.items.find((p: any) => p.name === 'old phone');
    const s = await inst.api('POST', `/api/v1/auth/passkeys/remove/start/${encodeURIComponent(phoneKey.id)}`, { token: owner.token });
    expect(s.status, s.text).toBe(200);
    const credential = phone.getJSON(originOf(inst), s.body.options);
    const f = await inst.api('POST', '/api/v1/auth/passkeys/remove/finish', { token: owner.token, body: { flow: s.body.flow, credential } });
    expect(f.status, f.text).toBe(200);
    const left = await inst.api('GET', '/api/v1/auth/passkeys', { token: owner.token });
    expect(left.body.items.map((p: any) => p.name)).toEqual(['laptop']);
    const last = await inst.api('POST', `/api/v1/auth/passkeys/remove/start/${encodeURIComponent(left.body.items[0].id)}`, { token: owner.token });
    expect(last.status).toBe(409);
    expect(last.body.error.details.reason).toBe('last_sign_in_method');
  });
});

describe('recovery and re-enrolment', () => {
  it('a recovery key registers a new passkey once', async () => {
    const k = await inst.api('POST', '/api/v1/auth/recovery/key', { token: owner.token });
    expect(k.status, k.text).toBe(201);
    const raw = fs.readFileSync(`${inst.dataDir}/state/sidecar.json`, 'utf8');
    expect(raw).not.toContain(k.body.key);
    const wrong = await inst.api('POST', '/api/v1/auth/passkeys/recovery/start', { body: { username: 'olive', key: 'qr_wrong' } });
    expect(wrong.status).toBe(403);
    const s = await inst.api('POST', '/api/v1/auth/passkeys/recovery/start', { body: { username: 'OLIVE', key: k.body.key } });
    expect(s.status, s.text).toBe(200);
    const spare = newAuthenticator();
    const done = await finishRegistration(inst, spare, s.body, 'spare');
    expect(done.user.username).toBe('olive');
    const again = await inst.api('POST', '/api/v1/auth/passkeys/recovery/start', { body: { username: 'olive', key: k.body.key } });
    expect(again.status).toBe(403);
    expect((await passkeyLogin(inst, spare)).status).toBe(201);
  });

  it('an admin re-enrolment link registers a passkey for that user, once', async () => {
    const users = await inst.api('GET', '/api/v1/auth/users', { token: owner.token });
    const carl = users.body.items.find((u: any) => u.username === 'carl');
    const link = await inst.api('POST', '/api/v1/auth/passkeys/reenrol/issue', { token: owner.token, body: { user_id: carl.id, ttl_secs: 600 } });
    expect(link.status, link.text).toBe(201);
    expect(link.body.url).toContain('/reenrol#token=');
    const s = await inst.api('POST', '/api/v1/auth/passkeys/reenrol/start', { body: { token: link.body.token } });
    expect(s.status, s.text).toBe(200);
    const fresh = newAuthenticator();
    const done = await finishRegistration(inst, fresh, s.body, 'new key');
    expect(done.user.username).toBe('carl');
    const again = await inst.api('POST', '/api/v1/auth/passkeys/reenrol/start', { body: { token: link.body.token } });
    expect(again.status).toBe(403);
  });
});
