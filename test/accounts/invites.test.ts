/** Invites and the Instance's sign-in policy, over HTTP and the command line. */
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { startInstance, type TestInstance } from '../helpers/instance.js';
import { finishRegistration, newAuthenticator, passkeyLogin } from './helpers.js';

let inst: TestInstance;
let owner: { id: string; token: string };
let admin: { id: string; token: string };
let member: { id: string; token: string };

beforeAll(async () => {
  inst = await startInstance();
  owner = await inst.user('olive', 'owner');
  admin = await inst.user('adam', 'admin');
  member = await inst.user('mia', 'member');
});
afterAll(() => inst.close());

describe('invites', () => {
  it('an admin invites; the invitee registers with a passkey and gets the role and quota; the invite is single use', async () => {
    const c = await inst.api('POST', '/api/v1/auth/invites', { token: admin.token, body: { role: 'guest', quota_override_bytes: 1024, ttl_secs: 3600 } });
    expect(c.status, c.text).toBe(201);
    expect(c.body.invite).toMatchObject({ role: 'guest', quota_override_bytes: 1024, ttl_secs: 3600, status: 'active' });
    expect(c.body.url).toContain(`/invite#token=${c.body.token}`);
    expect(fs.readFileSync(`${inst.dataDir}/state/sidecar.json`, 'utf8')).not.toContain(c.body.token);

    const key = newAuthenticator();
    const s = await inst.api('POST', '/api/v1/auth/invites/start', { body: { token: c.body.token, username: 'gwen', display_name: 'Gwen' } });
    expect(s.status, s.text).toBe(200);
    const done = await finishRegistration(inst, key, s.body, 'gwen key');
    expect(done.user).toMatchObject({ username: 'gwen', role: 'guest', quota_override_bytes: 1024 });
    expect((await passkeyLogin(inst, key)).body.user.username).toBe('gwen');

    const again = await inst.api('POST', '/api/v1/auth/invites/start', { body: { token: c.body.token, username: 'gwen2', display_name: 'G' } });
    expect(again.status).toBe(403);
    const list = await inst.api('GET', '/api/v1/auth/invites', { token: admin.token });
    const row = list.body.items.find((i: any) => i.id === c.body.invite.id);
    expect(row).toMatchObject({ status: 'used', used_by: done.user.id });
    expect(JSON.stringify(list.body)).not.toContain(c.body.token);
  });

  it('a taken username is refused before any passkey is made', async () => {
    const c = await inst.api('POST', '/api/v1/auth/invites', { token: admin.token, body: { role: 'member', ttl_secs: 600 } });
    const s = await inst.api('POST', '/api/v1/auth/invites/start', { body: { token: c.body.token, username: 'MIA', display_name: 'Mia 2' } });
    expect(s.status).toBe(409);
    expect(s.body.error.code).toBe('name_conflict_case');
  });

  it('revoked invites stop working', async () => {
    const c = await inst.api('POST', '/api/v1/auth/invites', { token: admin.token, body: { role: 'member', ttl_secs: 600 } });
    const r = await inst.api('DELETE', `/api/v1/auth/invites/${c.body.invite.id}`, { token: admin.token });
    expect(r.status, r.text).toBe(200);
    expect(r.body.status).toBe('revoked');
    const s = await inst.api('POST', '/api/v1/auth/invites/start', { body: { token: c.body.token, username: 'rita', display_name: 'Rita' } });
    expect(s.status).toBe(403);
    expect((await inst.api('DELETE', '/api/v1/auth/invites/nope', { token: admin.token })).status).toBe(404);
  });

  it('only owners invite owners; members cannot invite; ttl_secs is bounded', async () => {
    expect((await inst.api('POST', '/api/v1/auth/invites', { token: admin.token, body: { role: 'owner', ttl_secs: 600 } })).status).toBe(403);
    expect((await inst.api('POST', '/api/v1/auth/invites', { token: owner.token, body: { role: 'owner', ttl_secs: 600 } })).status).toBe(201);
    expect((await inst.api('POST', '/api/v1/auth/invites', { token: member.token, body: { role: 'member', ttl_secs: 600 } })).status).toBe(403);
    const short = await inst.api('POST', '/api/v1/auth/invites', { token: admin.token, body: { role: 'member', ttl_secs: 5 } });
    expect(short.status).toBe(400);
    expect(short.body.error.details.field).toBe('body.ttl_secs');
  });

  it('works from the command line too', async () => {
    const r = await runCli(['action', 'run', 'create_invite', '--input', JSON.stringify({ body: { role: 'member', ttl_secs: 900 } }), '--confirm', '--json', '--server', inst.url, '--token', admin.token]);
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out.invite.role).toBe('member');
    const l = await runCli(['action', 'run', 'list_invites', '--json', '--server', inst.url, '--token', admin.token]);
    expect(JSON.parse(l.stdout).items.some((i: any) => i.id === out.invite.id)).toBe(true);
  });
});

describe('Instance policy', () => {
  it('open signup lets anyone register as a member without an invite; closed, it needs one', async () => {
    const closed = await inst.api('POST', '/api/v1/auth/invites/start', { body: { username: 'sam', display_name: 'Sam' } });
    expect(closed.status).toBe(403);
    expect(closed.body.error.details.reason).toBe('invite_required');
    expect((await inst.api('POST', '/api/v1/auth/settings/signup', { token: member.token, body: { open_signup: true } })).status).toBe(403);
    const open = await inst.api('POST', '/api/v1/auth/settings/signup', { token: admin.token, body: { open_signup: true } });
    expect(open.body).toEqual({ open_signup: true });
    expect((await inst.api('GET', '/api/v1/auth/options')).body.open_signup).toBe(true);
    const s = await inst.api('POST', '/api/v1/auth/invites/start', { body: { token: null, username: 'sam', display_name: 'Sam' } });
    expect(s.status, s.text).toBe(200);
    const done = await finishRegistration(inst, newAuthenticator(), s.body);
    expect(done.user.role).toBe('member');
    await inst.api('POST', '/api/v1/auth/settings/signup', { token: admin.token, body: { open_signup: false } });
    expect((await inst.api('GET', '/api/v1/system/info')).body.open_signup).toBe(false);
  });

  it('share-invites setting: read by any account, set by an admin with a bare JSON boolean', async () => {
    expect((await inst.api('GET', '/api/v1/auth/settings/share-invites', { token: member.token })).body).toEqual({ share_invites: false });
    const set = await inst.api('POST', '/api/v1/auth/settings/share-invites', { token: admin.token, body: true });
    expect(set.status, set.text).toBe(200);
    expect(set.body).toEqual({ share_invites: true });
    expect((await inst.api('GET', '/api/v1/auth/settings/share-invites', { token: member.token })).body).toEqual({ share_invites: true });
    expect((await inst.api('POST', '/api/v1/auth/settings/share-invites', { token: admin.token, body: { value: true } })).status).toBe(400);
    expect((await inst.api('POST', '/api/v1/auth/settings/share-invites', { token: member.token, body: false })).status).toBe(403);
  });

  it('auth_options lists the sign-in options and no user data', async () => {
    const r = await inst.api('GET', '/api/v1/auth/options');
    expect(r.body).toMatchObject({ setup_required: false, passkeys: true, oidc_providers: [] });
    expect(JSON.stringify(r.body)).not.toContain('olive');
  });
});
