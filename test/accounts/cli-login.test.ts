/**
 * Command-line sign-in: the device grant with PKCE over HTTP (pending, slow down, denied,
 * expired, issued once), and `quire login` / `quire logout` as real processes.
 */
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QUIRE_BIN, runCli } from '../helpers/cli.js';
import { startInstance, tempDir, type TestInstance } from '../helpers/instance.js';
import { eventually } from '../helpers/wait.js';

let inst: TestInstance;
let owner: { id: string; token: string };

beforeAll(async () => {
  inst = await startInstance();
  owner = await inst.user('olive', 'owner');
});
afterAll(() => inst.close());

const pkce = () => {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function begin(name = 'laptop cli') {
  const p = pkce();
  const s = await inst.api('POST', '/api/v1/auth/cli/start', { body: { challenge: p.challenge, installation_name: name } });
  expect(s.status, s.text).toBe(201);
  return { ...p, ...s.body };
}

describe('the device grant over HTTP', () => {
  it('pending, then approved, then a session issued exactly once', async () => {
    const g = await begin();
    expect(g.user_code).toMatch(/^[A-Z]{4}-[A-Z]{4}$/);
    expect(g.verification_uri_complete).toContain(`/cli/approve?user_code=${g.user_code}`);
    const pending = await inst.api('POST', '/api/v1/auth/cli/token', { body: { device_code: g.device_code, verifier: g.verifier } });
    expect(pending.status).toBe(400);
    expect(pending.body.error.details.reason).toBe('authorization_pending');
    const fast = await inst.api('POST', '/api/v1/auth/cli/token', { body: { device_code: g.device_code, verifier: g.verifier } });
    expect(fast.status).toBe(429);
    expect(fast.body.error.details.reason).toBe('slow_down');
    expect(fast.headers.get('retry-after')).toBe('1');

    const page = await inst.api('GET', `/api/v1/auth/cli/approve?user_code=${g.user_code.toLowerCase()}`, { token: owner.token });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toContain('text/html');
    expect(page.text).toContain('laptop cli');
    expect(page.text).toContain(g.user_code);
    expect((await inst.api('GET', `/api/v1/auth/cli/approve?user_code=${g.user_code}`)).status).toBe(401);

    const ok = await inst.api('POST', `/api/v1/auth/cli/approve?user_code=${g.user_code}`, { token: owner.token });
    expect(ok.status, ok.text).toBe(200);
    expect(ok.text).toMatch(/Approved/);

    await sleep(1050);
    const wrong = await inst.api('POST', '/api/v1/auth/cli/token', { body: { device_code: g.device_code, verifier: pkce().verifier } });
    expect(wrong.body.error.details.reason).toBe('invalid_verifier');
    const t = await inst.api('POST', '/api/v1/auth/cli/token', { body: { device_code: g.device_code, verifier: g.verifier } });
    expect(t.status, t.text).toBe(201);
    expect(t.body.session).toMatchObject({ kind: 'installation', installation_name: 'laptop cli' });
    const me = await inst.api('GET', '/api/v1/auth/me', { token: t.body.token });
    expect(me.body.username).toBe('olive');
    // A command-line sign-in is not a recent confirmation.
    expect((await inst.api('POST', '/api/v1/auth/invites', { token: t.body.token, body: { role: 'member', ttl_secs: 600 } })).status).toBe(403);

    const twice = await inst.api('POST', '/api/v1/auth/cli/token', { body: { device_code: g.device_code, verifier: g.verifier } });
    expect(twice.status).toBe(400);
    expect(twice.body.error.details.reason).toBe('invalid_grant');
  });

  it('a denied request answers access_denied', async () => {
    const g = await begin();
    const d = await inst.api('POST', `/api/v1/auth/cli/approve?user_code=${g.user_code}&decision=deny`, { token: owner.token });
    expect(d.status).toBe(200);
    const t = await inst.api('POST', '/api/v1/auth/cli/token', { body: { device_code: g.device_code, verifier: g.verifier } });
    expect(t.status).toBe(403);
    expect(t.body.error.details.reason).toBe('access_denied');
  });

  it('an expired request answers expired_token', async () => {
    const g = await begin();
    await inst.server.services.store.transact((data) => {
      const r = data.cli_requests!.find((x) => x.user_code === g.user_code)!;
      r.expires_at = Date.now() - 1;
    });
    const t = await inst.api('POST', '/api/v1/auth/cli/token', { body: { device_code: g.device_code, verifier: g.verifier } });
    expect(t.body.error.details.reason).toBe('expired_token');
    expect((await inst.api('POST', `/api/v1/auth/cli/approve?user_code=${g.user_code}`, { token: owner.token })).status).toBe(404);
  });

  it('refuses a bad challenge and a non-loopback redirect_uri', async () => {
    expect((await inst.api('POST', '/api/v1/auth/cli/start', { body: { challenge: 'short', installation_name: 'x' } })).status).toBe(400);
    const r = await inst.api('POST', '/api/v1/auth/cli/start', { body: { challenge: pkce().challenge, installation_name: 'x', redirect_uri: 'https://evil.example/cb' } });
    expect(r.status).toBe(400);
    expect((await inst.api('POST', '/api/v1/auth/cli/start', { body: { challenge: pkce().challenge, installation_name: 'x', redirect_uri: 'http://127.0.0.1:4567/cb' } })).status).toBe(201);
  });
});

describe('quire login and logout', () => {
  it('signs in through the approval, stores the credential 0600, later commands use it, logout ends it', async () => {
    const home = tempDir('quire-cli-home-');
    const env = { ...process.env, QUIRE_SERVER: '', QUIRE_TOKEN: '', XDG_CONFIG_HOME: home, HOME: home };
    const child = spawn(process.execPath, [QUIRE_BIN, 'login', '--server', inst.url, '--name', 'ci runner'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    const exited = new Promise<number>((resolve) => child.on('close', (c) => resolve(c ?? -1)));
    const code = await eventually(() => /code ([A-Z]{4}-[A-Z]{4})/.exec(err)?.[1], 60_000, 100);
    expect(err).toContain(`/cli/approve?user_code=${code}`);
    const ok = await inst.api('POST', `/api/v1/auth/cli/approve?user_code=${code}`, { token: owner.token });
    expect(ok.status, ok.text).toBe(200);
    expect(await exited).toBe(0);
    expect(out).toMatch(/Signed in to .* as olive/);

    const file = path.join(home, 'quire', 'credentials.json');
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    const stored = JSON.parse(fs.readFileSync(file, 'utf8'));
    const token = Object.values<any>(stored.servers)[0].token as string;
    expect(token).toMatch(/^qs_/);

    // No --server, no --token: the stored credential is used.
    const cliEnv = { XDG_CONFIG_HOME: home, HOME: home };
    const me = await runCli(['action', 'run', 'current_user', '--json'], { env: cliEnv, timeoutMs: 60_000 });
    expect(me.code, me.stderr).toBe(0);
    expect(JSON.parse(me.stdout).username).toBe('olive');
    const sessions = await inst.api('GET', '/api/v1/auth/sessions', { token: owner.token });
    expect(sessions.body.items.some((s: any) => s.installation_name === 'ci runner')).toBe(true);

    const lo = await runCli(['logout'], { env: cliEnv, timeoutMs: 60_000 });
    expect(lo.code, lo.stderr).toBe(0);
    expect((await inst.api('GET', '/api/v1/auth/me', { token })).status).toBe(401);
    const after = await runCli(['action', 'run', 'current_user', '--json', '--server', inst.url], { env: cliEnv, timeoutMs: 60_000 });
    expect(after.code).toBe(1);
    expect(JSON.parse(after.stdout).error.code).toBe('unauthorized');
  }, 180_000);

  it('cli_logout refuses to end a browser session', async () => {
    const g = await begin();
    await inst.api('POST', `/api/v1/auth/cli/approve?user_code=${g.user_code}`, { token: owner.token });
    const t = await inst.api('POST', '/api/v1/auth/cli/token', { body: { device_code: g.device_code, verifier: g.verifier } });
    const r = await inst.api('DELETE', '/api/v1/auth/cli/session', { token: t.body.token });
    expect(r.status).toBe(200);
    expect((await inst.api('GET', '/api/v1/auth/me', { token: t.body.token })).status).toBe(401);
  });
});
