/** App Password setup profiles (one-time, encrypted at rest) and the sign-in rate limits. */
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { startInstance, type TestInstance } from '../helpers/instance.js';

let inst: TestInstance;
let owner: { id: string; token: string };

beforeAll(async () => {
  inst = await startInstance();
  owner = await inst.user('olive', 'owner');
});
afterAll(() => inst.close());

describe('App Password setup profiles', () => {
  it('makes a one-time download of a .mobileconfig with a CalDAV payload; the secret is never stored in clear', async () => {
    const ap = await inst.api('POST', '/api/v1/auth/app-passwords', { token: owner.token, body: { name: 'iPhone calendar' } });
    expect(ap.status).toBe(201);
    const wrong = await inst.api('POST', `/api/v1/auth/app-passwords/${ap.body.app_password.id}/profiles`, { token: owner.token, body: { password: 'qa_wrong' } });
    expect(wrong.status).toBe(400);
    const c = await inst.api('POST', `/api/v1/auth/app-passwords/${ap.body.app_password.id}/profiles`, { token: owner.token, body: { password: ap.body.password } });
    expect(c.status, c.text).toBe(201);
    const link = c.body.items[0];
    expect(link.format).toBe('apple-mobileconfig');
    const raw = fs.readFileSync(`${inst.dataDir}/state/sidecar.json`, 'utf8');
    expect(raw).not.toContain(ap.body.password);
    expect(raw).not.toContain(link.token);

    const res = await fetch(link.url.replace('localhost', '127.0.0.1'));
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('application/x-apple-aspen-config');
    const xml = await res.text();
    expect(xml).toContain('<string>com.apple.caldav.account</string>');
    expect(xml).toContain(`<key>CalDAVUsername</key><string>olive</string>`);
    expect(xml).toContain(`<key>CalDAVPassword</key><string>${ap.body.password}</string>`);
    const again = await fetch(link.url.replace('localhost', '127.0.0.1'));
    expect(again.status).toBe(404);
  });

  it('works from the command line: create, then download as base64', async () => {
    const ap = await inst.api('POST', '/api/v1/auth/app-passwords', { token: owner.token, body: { name: 'Mac' } });
    const c = await runCli(['action', 'run', 'create_app_password_profiles', '--input', JSON.stringify({ path: { id: ap.body.app_password.id }, body: { password: ap.body.password } }), '--confirm', '--json', '--server', inst.url, '--token', owner.token], { timeoutMs: 60_000 });
    expect(c.code, c.stderr).toBe(0);
    const token = JSON.parse(c.stdout).items[0].token;
    const d = await runCli(['action', 'run', 'download_app_password_profile', '--input', JSON.stringify({ path: { token } }), '--confirm', '--json', '--server', inst.url], { timeoutMs: 60_000 });
    expect(d.code, d.stderr).toBe(0);
    const out = JSON.parse(d.stdout);
    expect(Buffer.from(out.content_base64, 'base64').toString('utf8')).toContain(ap.body.password);
  }, 150_000);

  it('needs a recent confirmation and a session of the owner of the App Password', async () => {
    const ap = await inst.api('POST', '/api/v1/auth/app-passwords', { token: owner.token, body: { name: 'x', scopes: [{ scope: 'account', access: 'write' }] } });
    const r = await inst.api('POST', `/api/v1/auth/app-passwords/${ap.body.app_password.id}/profiles`, { token: ap.body.password, body: { password: ap.body.password } });
    expect(r.status).toBe(403);
    expect(r.body.error.details.reason).toBe('recent_confirmation_required');
  });
});

describe('rate limits', () => {
  it('limits each sign-in route per IP with 429 too_many_requests and Retry-After', async () => {
    inst.server.services.config.authRateLimitPerMinute = 5;
    try {
      const codes: number[] = [];
      for (let i = 0; i < 7; i++) codes.push((await inst.api('POST', '/api/v1/auth/passkeys/login/start')).status);
      expect(codes.slice(0, 5)).toEqual([200, 200, 200, 200, 200]);
      const r = await inst.api('POST', '/api/v1/auth/passkeys/login/start');
      expect(r.status).toBe(429);
      expect(r.body.error.code).toBe('too_many_requests');
      expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0);
      // Other routes are not affected.
      expect((await inst.api('GET', '/api/v1/auth/me', { token: owner.token })).status).toBe(200);
    } finally {
      inst.server.services.config.authRateLimitPerMinute = 60;
    }
  });

  it('limits failed bearer tokens per IP', async () => {
    inst.server.services.config.bearerFailureLimitPerMinute = 3;
    for (let i = 0; i < 3; i++) expect((await inst.api('GET', '/api/v1/auth/me', { token: `qs_guess${i}` })).status).toBe(401);
    const r = await inst.api('GET', '/api/v1/auth/me', { token: 'qs_guess-again' });
    expect(r.status).toBe(429);
    expect(r.headers.get('retry-after')).toBeTruthy();
    // A good token from that address is still served: only failing tokens are throttled, so one bad
    // neighbour behind a shared address cannot lock everyone else out.
    expect((await inst.api('GET', '/api/v1/auth/me', { token: owner.token })).status).toBe(200);
    expect((await inst.api('GET', '/api/v1/auth/me', { token: 'qs_guess-once-more' })).status).toBe(429);
    // Requests without a token still work.
    expect((await inst.api('GET', '/api/v1/system/info')).status).toBe(200);
  });
});
