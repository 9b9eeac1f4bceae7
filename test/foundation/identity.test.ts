/** Tokens, scopes, roles, recent confirmation and the account rules, over HTTP. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInstance, type TestInstance } from '../helpers/instance.js';

let inst: TestInstance;
let owner: { id: string; token: string };
let member: { id: string; token: string };
let guest: { id: string; token: string };

beforeAll(async () => {
  inst = await startInstance();
  owner = await inst.user('olivia', 'owner');
  member = await inst.user('max', 'member');
  guest = await inst.user('gail', 'guest');
});
afterAll(() => inst.close());

describe('tokens', () => {
  it('routes with scope none need no token', async () => {
    const r = await inst.api('GET', '/api/v1/system/info');
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ api_version: 'v1', open_signup: false });
    expect(typeof r.body.version).toBe('string');
  });

  it('missing, malformed and unknown tokens get 401', async () => {
    expect((await inst.api('GET', '/api/v1/auth/me')).status).toBe(401);
    const bad = await inst.api('GET', '/api/v1/auth/me', { headers: { authorization: 'Basic abc' } });
    expect(bad.status).toBe(401);
    expect(bad.body.error.code).toBe('unauthorized');
    expect((await inst.api('GET', '/api/v1/auth/me', { token: 'qs_made-up' })).status).toBe(401);
  });

  it('a session reads its own user', async () => {
    const r = await inst.api('GET', '/api/v1/auth/me', { token: member.token });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ id: member.id, username: 'max', role: 'member', disabled: false });
  });

  it('stores tokens only as hashes', async () => {
    const fs = await import('node:fs');
    const raw = fs.readFileSync(`${inst.dataDir}/state/sidecar.json`, 'utf8');
    expect(raw).not.toContain(owner.token);
    expect(raw).not.toContain(owner.token.slice(3));
  });

  it("a disabled user's tokens stop working at once, and work again when enabled", async () => {
    const u = await inst.user('dora', 'member');
    expect((await inst.api('GET', '/api/v1/auth/me', { token: u.token })).status).toBe(200);
    const off = await inst.api('PATCH', `/api/v1/auth/users/${u.id}/disabled`, { token: owner.token, body: { disabled: true } });
    expect(off.status).toBe(200);
    expect(off.body.disabled).toBe(true);
    expect((await inst.api('GET', '/api/v1/auth/me', { token: u.token })).status).toBe(401);
    await inst.api('PATCH', `/api/v1/auth/users/${u.id}/disabled`, { token: owner.token, body: { disabled: false } });
    expect((await inst.api('GET', '/api/v1/auth/me', { token: u.token })).status).toBe(200);
  });
});

describe('scopes and roles', () => {
  it('admin actions need an admin or owner', async () => {
    const r = await inst.api('GET', '/api/v1/auth/users', { token: member.token });
    expect(r.status).toBe(403);
    expect(r.body.error.code).toBe('forbidden');
    const ok = await inst.api('GET', '/api/v1/auth/users', { token: owner.token });
    expect(ok.status).toBe(200);
    expect(ok.body.items.map((u: any) => u.username)).toEqual(expect.arrayContaining(['olivia', 'max', 'gail']));
    expect(ok.body.next_cursor).toBeNull();
  });

  it('a guest can read but not change data', async () => {
    // A read-only data action that is not built yet still passes the scope check (501), a write does not (403).
    const read = await inst.api('GET', '/api/v1/appearance', { token: guest.token });
    expect(read.status).toBe(501);
    const write = await inst.api('POST', '/api/v1/calendar/refresh', { token: guest.token });
    expect(write.status).toBe(403);
    expect(write.body.error.details.reason).toBe('missing_scope');
  });

  it('a read-only App Password never reaches a destructive handler', async () => {
    const created = await inst.api('POST', '/api/v1/auth/app-passwords', {
      token: member.token,
      body: { name: 'reader', scopes: [{ scope: 'account', access: 'read' }, { scope: 'data', access: 'read' }] },
    });
    expect(created.status).toBe(201);
    const password = created.body.password as string;
    expect(password).toMatch(/^qa_/);
    expect(created.body.app_password.scopes).toEqual([
      { scope: 'account', access: 'read' },
      { scope: 'data', access: 'read' },
    ]);
    expect((await inst.api('GET', '/api/v1/auth/me', { token: password })).status).toBe(200);
    const write = await inst.api('PATCH', '/api/v1/auth/me/profile', { token: password, body: { display_name: 'Hacked', username: 'max' } });
    expect(write.status).toBe(403);
    expect(write.body.error.details.needs).toBe('account:write');
    const me = await inst.api('GET', '/api/v1/auth/me', { token: member.token });
    expect(me.body.display_name).toBe('max');
    // The listing never shows the secret.
    const listed = await inst.api('GET', '/api/v1/auth/app-passwords', { token: member.token });
    expect(JSON.stringify(listed.body)).not.toContain(password);
    expect(listed.body.items.some((p: any) => p.name === 'reader')).toBe(true);
  });

  it('an App Password cannot hold more than its creator', async () => {
    const r = await inst.api('POST', '/api/v1/auth/app-passwords', {
      token: member.token,
      body: { name: 'too much', scopes: [{ scope: 'admin', access: 'write' }] },
    });
    expect(r.status).toBe(403);
  });

  it('an expired App Password stops working; a past expiry is refused', async () => {
    const past = await inst.api('POST', '/api/v1/auth/app-passwords', {
      token: member.token,
      body: { name: 'old', expires_at: Date.now() - 1000 },
    });
    expect(past.status).toBe(400);
    expect(past.body.error.details.field).toBe('body.expires_at');
    // Long enough that the first request comes before it on a busy machine; then wait until it has passed.
    const expiresAt = Date.now() + 1500;
    const soon = await inst.api('POST', '/api/v1/auth/app-passwords', {
      token: member.token,
      body: { name: 'soon', expires_at: expiresAt, scopes: [{ scope: 'account', access: 'read' }] },
    });
    expect(soon.status).toBe(201);
    expect((await inst.api('GET', '/api/v1/auth/me', { token: soon.body.password })).status).toBe(200);
    await new Promise((r) => setTimeout(r, Math.max(0, expiresAt - Date.now()) + 100));
    expect((await inst.api('GET', '/api/v1/auth/me', { token: soon.body.password })).status).toBe(401);
  });

  it('revoking an App Password ends it', async () => {
    const c = await inst.api('POST', '/api/v1/auth/app-passwords', { token: member.token, body: { name: 'tmp', scopes: [{ scope: 'account', access: 'read' }] } });
    const del = await inst.api('DELETE', `/api/v1/auth/app-passwords/${c.body.app_password.id}`, { token: member.token });
    expect(del.status).toBe(200);
    expect((await inst.api('GET', '/api/v1/auth/me', { token: c.body.password })).status).toBe(401);
  });
});

describe('recent confirmation', () => {
  it('an App Password is never recently confirmed', async () => {
    const c = await inst.api('POST', '/api/v1/auth/app-passwords', { token: owner.token, body: { name: 'admin tool', scopes: [{ scope: 'admin', access: 'write' }, { scope: 'account', access: 'write' }] } });
    expect(c.status).toBe(201);
    const r = await inst.api('PATCH', `/api/v1/auth/users/${member.id}/quota`, { token: c.body.password, body: { quota_override_bytes: 1000 } });
    expect(r.status).toBe(403);
    expect(r.body.error.details.reason).toBe('recent_confirmation_required');
  });

  it('a console-issued session passes RC within the window and fails after it', async () => {
    const short = await startInstance({ recentConfirmationSeconds: 1 });
    try {
      const o = await short.user('root', 'owner');
      const m = await short.user('mia', 'member');
      const ok = await short.api('PATCH', `/api/v1/auth/users/${m.id}/quota`, { token: o.token, body: { quota_override_bytes: 1000 } });
      expect(ok.status).toBe(200);
      expect(ok.body.quota_override_bytes).toBe(1000);
      await new Promise((r) => setTimeout(r, 1200));
      const late = await short.api('PATCH', `/api/v1/auth/users/${m.id}/quota`, { token: o.token, body: { quota_override_bytes: 0 } });
      expect(late.status).toBe(403);
      expect(late.body.error.code).toBe('forbidden');
      expect(late.body.error.details.reason).toBe('recent_confirmation_required');
      // Non-RC actions still work.
      expect((await short.api('GET', '/api/v1/auth/users', { token: o.token })).status).toBe(200);
      const sec = await short.api('GET', '/api/v1/auth/me/security', { token: o.token });
      expect(sec.body.recent_confirmation.fresh).toBe(false);
    } finally {
      await short.close();
    }
  });
});

describe('account rules', () => {
  it('nobody demotes or disables the last owner', async () => {
    const demote = await inst.api('PATCH', `/api/v1/auth/users/${owner.id}/role`, { token: owner.token, body: { role: 'admin' } });
    expect(demote.status).toBe(409);
    expect(demote.body.error.details.reason).toBe('last_owner');
    const disable = await inst.api('PATCH', `/api/v1/auth/users/${owner.id}/disabled`, { token: owner.token, body: { disabled: true } });
    expect(disable.status).toBe(409);
  });

  it('only an owner can grant owner', async () => {
    const adm = await inst.user('ada', 'admin');
    const r = await inst.api('PATCH', `/api/v1/auth/users/${member.id}/role`, { token: adm.token, body: { role: 'owner' } });
    expect(r.status).toBe(403);
    const r2 = await inst.api('PATCH', `/api/v1/auth/users/${owner.id}/role`, { token: adm.token, body: { role: 'member' } });
    expect(r2.status).toBe(403);
    const ok = await inst.api('PATCH', `/api/v1/auth/users/${member.id}/role`, { token: adm.token, body: { role: 'guest' } });
    expect(ok.status).toBe(200);
    await inst.api('PATCH', `/api/v1/auth/users/${member.id}/role`, { token: owner.token, body: { role: 'member' } });
    // With a second owner, the first may step down.
    const second = await inst.api('PATCH', `/api/v1/auth/users/${adm.id}/role`, { token: owner.token, body: { role: 'owner' } });
    expect(second.status).toBe(200);
    const stepDown = await inst.api('PATCH', `/api/v1/auth/users/${adm.id}/role`, { token: owner.token, body: { role: 'admin' } });
    expect(stepDown.status).toBe(200);
  });

  it('usernames are unique ignoring case and validated', async () => {
    await expect(inst.user('MAX', 'member')).rejects.toMatchObject({ code: 'name_conflict_case' });
    await expect(inst.user('../evil', 'member')).rejects.toMatchObject({ code: 'bad_request' });
    const r = await inst.api('PATCH', '/api/v1/auth/me/profile', { token: member.token, body: { display_name: 'Max', username: 'Olivia' } });
    expect(r.status).toBe(409);
    expect(r.body.error.code).toBe('name_conflict_case');
  });

  it('renaming yourself moves your Home folder', async () => {
    const fs = await import('node:fs');
    const u = await inst.user('ren', 'member');
    fs.writeFileSync(`${inst.dataDir}/homes/ren/note.md`, 'hello');
    const r = await inst.api('PATCH', '/api/v1/auth/me/profile', { token: u.token, body: { display_name: 'Ren', username: 'renata' } });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ username: 'renata', display_name: 'Ren' });
    expect(fs.readFileSync(`${inst.dataDir}/homes/renata/note.md`, 'utf8')).toBe('hello');
    expect(fs.existsSync(`${inst.dataDir}/homes/ren`)).toBe(false);
  });
});

describe('sessions', () => {
  it('lists, revokes one, and revokes all but the current', async () => {
    const a = await inst.user('sam', 'member');
    const { issueAdminToken } = await import('../../src/surfaces/cli/admin.js');
    const b = await issueAdminToken(inst.server.services, 'sam');
    const c = await issueAdminToken(inst.server.services, 'sam');
    const listed = await inst.api('GET', '/api/v1/auth/sessions', { token: a.token });
    expect(listed.body.items).toHaveLength(3);
    expect(listed.body.items.filter((s: any) => s.current)).toHaveLength(1);
    const bId = (await inst.api('GET', '/api/v1/auth/sessions', { token: b.token })).body.items.find((s: any) => s.current).id;
    expect((await inst.api('DELETE', `/api/v1/auth/sessions/${bId}`, { token: a.token })).status).toBe(200);
    expect((await inst.api('GET', '/api/v1/auth/me', { token: b.token })).status).toBe(401);
    const all = await inst.api('POST', '/api/v1/auth/sessions/revoke-all', { token: a.token, body: { keep_current: true } });
    expect(all.status).toBe(200);
    expect(all.headers.get('content-type')).toContain('text/plain');
    expect(all.text).toContain('Revoked 1 session');
    expect((await inst.api('GET', '/api/v1/auth/me', { token: c.token })).status).toBe(401);
    expect((await inst.api('GET', '/api/v1/auth/me', { token: a.token })).status).toBe(200);
  });

  it('sign_out and cli_logout end the current session', async () => {
    await inst.user('tom', 'member');
    const { issueAdminToken } = await import('../../src/surfaces/cli/admin.js');
    const t1 = (await issueAdminToken(inst.server.services, 'tom')).token;
    expect((await inst.api('DELETE', '/api/v1/auth/cli/session', { token: t1 })).status).toBe(200);
    expect((await inst.api('GET', '/api/v1/auth/me', { token: t1 })).status).toBe(401);
    const t2 = (await issueAdminToken(inst.server.services, 'tom')).token;
    expect((await inst.api('DELETE', '/api/v1/auth/session', { token: t2 })).status).toBe(200);
    expect((await inst.api('GET', '/api/v1/auth/me', { token: t2 })).status).toBe(401);
  });
});
