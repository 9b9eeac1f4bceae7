/**
 * Web push end to end: a local HTTPS "push service" (self-signed certificate,
 * allowed through QUIRE_PUSH_ALLOWED_HOSTS and trusted through the delivery's
 * agent) receives what a firing reminder sends; quiet hours hold it; 410 removes
 * the subscription.
 */
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import https from 'node:https';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInstance, tempDir, type TestInstance } from '../helpers/instance.js';
import { eventually } from '../helpers/wait.js';

let inst: TestInstance;
let user: { id: string; token: string };
let pushServer: https.Server;
let pushBase: string;
const received: { path: string; headers: Record<string, unknown>; bytes: number }[] = [];
let noteId: string;
let etag: string;
let certDir: string;

function subscription(p: string) {
  const ecdh = crypto.createECDH('prime256v1');
  ecdh.generateKeys();
  return {
    endpoint: `${pushBase}${p}`,
    keys: { p256dh: ecdh.getPublicKey().toString('base64url'), auth: crypto.randomBytes(16).toString('base64url') },
  };
}

async function fire(): Promise<any> {
  const r = await inst.api('POST', `/api/v1/notes/${noteId}/reminders`, {
    token: user.token,
    headers: { 'if-match': etag },
    body: { block_id: 'p1', instant: new Date(Date.now() + 150).toISOString() },
  });
  expect(r.status).toBe(201);
  return eventually(async () => {
    const l = await inst.api('GET', '/api/v1/notifications/inbox', { token: user.token });
    return l.body.items.find((i: any) => i.reminder_id === r.body.reminder_id);
  });
}

const hhmm = (d: Date) => `${String(d.getHours()).padStart(2, '0')}:${String(d.getMinutes()).padStart(2, '0')}`;

beforeAll(async () => {
  certDir = tempDir('quire-push-cert-');
  const key = path.join(certDir, 'key.pem');
  const cert = path.join(certDir, 'cert.pem');
  execFileSync('openssl', [
    'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes',
    '-keyout', key, '-out', cert, '-days', '1', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1',
  ], { stdio: 'ignore' });
  pushServer = https.createServer({ key: fs.readFileSync(key), cert: fs.readFileSync(cert) }, (req, res) => {
    let bytes = 0;
    req.on('data', (c: Buffer) => (bytes += c.length));
    req.on('end', () => {
      received.push({ path: req.url ?? '', headers: req.headers, bytes });
      res.statusCode = req.url?.startsWith('/gone') ? 410 : 201;
      res.end();
    });
  });
  await new Promise<void>((r) => pushServer.listen(0, '127.0.0.1', r));
  pushBase = `https://127.0.0.1:${(pushServer.address() as { port: number }).port}`;
  process.env.QUIRE_PUSH_ALLOWED_HOSTS = 'push.example.test, 127.0.0.1';
  // The local push service listens on 127.0.0.1: the operator's setting lets push reach it (docs/calendar-sync.md, "Outbound fetches").
  inst = await startInstance({ allowPrivateFetch: true });
  inst.server.services.reminders!.push.agent = new https.Agent({ ca: fs.readFileSync(cert) });
  user = await inst.user('pat');
  const n = await inst.api('POST', '/api/v1/notes', { token: user.token, body: { title: 'Push me', body: 'Ring the bell ^p1\n' } });
  noteId = n.body.id;
  etag = (await inst.api('GET', `/api/v1/notes/${noteId}`, { token: user.token })).headers.get('etag')!;
});

afterAll(async () => {
  await inst.close();
  delete process.env.QUIRE_PUSH_ALLOWED_HOSTS;
  await new Promise((r) => pushServer.close(r));
  fs.rmSync(certDir, { recursive: true, force: true });
});

describe('web push', () => {
  it('serves one VAPID public key per instance', async () => {
    const a = await inst.api('GET', '/api/v1/notifications/vapid/public-key', { token: user.token });
    expect(a.status).toBe(200);
    expect(Buffer.from(a.body.public_key, 'base64url')).toHaveLength(65);
    const b = await inst.api('GET', '/api/v1/notifications/vapid/public-key', { token: user.token });
    expect(b.body.public_key).toBe(a.body.public_key);
    expect(inst.server.services.store.snapshot().vapid?.public_key).toBe(a.body.public_key);
  });

  it('rejects endpoints that are not HTTPS push service addresses', async () => {
    for (const endpoint of ['http://127.0.0.1:9/x', 'https://evil.example.com/push', 'https://fcm.googleapis.com.evil.test/x', 'not a url']) {
      const r = await inst.api('POST', '/api/v1/notifications/subscriptions', {
        token: user.token,
        body: { installation_id: 'i-bad', subscription: { ...subscription('/x'), endpoint } },
      });
      expect(r.status, endpoint).toBe(400);
      expect(r.body.error.code).toBe('push_endpoint_rejected');
    }
    const missing = await inst.api('POST', '/api/v1/notifications/subscriptions', {
      token: user.token,
      body: { installation_id: 'i-bad', subscription: { endpoint: `${pushBase}/x` } },
    });
    expect(missing.status).toBe(400);
    const fcm = await inst.api('POST', '/api/v1/notifications/subscriptions', {
      token: user.token,
      body: { installation_id: 'i-fcm', subscription: { ...subscription('/x'), endpoint: 'https://fcm.googleapis.com/fcm/send/abc' } },
    });
    expect(fcm.status).toBe(201);
    expect((await inst.api('DELETE', '/api/v1/notifications/subscriptions/i-fcm', { token: user.token })).status).toBe(200);
    expect((await inst.api('DELETE', '/api/v1/notifications/subscriptions/i-fcm', { token: user.token })).status).toBe(404);
  });

  it('a firing reminder sends one encrypted, VAPID-signed push', async () => {
    const s = await inst.api('POST', '/api/v1/notifications/subscriptions', {
      token: user.token,
      body: { installation_id: 'i-1', subscription: subscription('/sub/1') },
    });
    expect(s.status).toBe(201);
    const before = received.length;
    await fire();
    await eventually(() => received.length > before);
    await new Promise((r) => setTimeout(r, 300));
    const mine = received.slice(before);
    expect(mine).toHaveLength(1);
    expect(mine[0]!.path).toBe('/sub/1');
    expect(mine[0]!.headers['content-encoding']).toBe('aes128gcm');
    expect(String(mine[0]!.headers.authorization)).toMatch(/^vapid t=.+, k=/);
    expect(mine[0]!.bytes).toBeGreaterThan(0);
  });

  it('holds the push during quiet hours (inbox item at once) and sends it when they end', async () => {
    const now = new Date();
    const start = hhmm(new Date(now.getTime() - 60_000));
    const end = hhmm(new Date(now.getTime() + 3 * 60_000));
    await inst.api('PUT', '/api/v1/notifications/settings/quiet-hours', { token: user.token, body: { quiet_start: start, quiet_end: end } });
    const before = received.length;
    const item = await fire();
    expect(item.state).toBe('pending');
    await new Promise((r) => setTimeout(r, 700));
    expect(received.length).toBe(before);
    const held = await eventually(() => inst.server.services.store.snapshot().held_pushes?.find((h) => h.item_id === item.id));
    expect(held!.due_ms).toBeGreaterThan(Date.now());
    // Quiet hours moved (still covering now): the held push now waits for the new end.
    const later = hhmm(new Date(now.getTime() + 5 * 60_000));
    await inst.api('PUT', '/api/v1/notifications/settings/quiet-hours', { token: user.token, body: { quiet_start: start, quiet_end: later } });
    const moved = inst.server.services.store.snapshot().held_pushes!.find((h) => h.item_id === item.id)!;
    expect(moved.due_ms).toBeGreaterThan(held!.due_ms);
    await new Promise((r) => setTimeout(r, 300));
    expect(received.length).toBe(before);
    // Quiet hours switched off: the held push goes out at once.
    await inst.api('PUT', '/api/v1/notifications/settings/quiet-hours', { token: user.token, body: { quiet_start: '00:00', quiet_end: '00:00' } });
    await eventually(() => received.length > before);
    await new Promise((r) => setTimeout(r, 300));
    expect(received.length).toBe(before + 1);
    expect(inst.server.services.store.snapshot().held_pushes).toEqual([]);
  });

  it('a push service answering 410 removes the subscription', async () => {
    await inst.api('DELETE', '/api/v1/notifications/subscriptions/i-1', { token: user.token });
    const s = await inst.api('POST', '/api/v1/notifications/subscriptions', {
      token: user.token,
      body: { installation_id: 'i-gone', subscription: subscription('/gone/1') },
    });
    expect(s.status).toBe(201);
    const before = received.length;
    await fire();
    await eventually(() => received.slice(before).some((r) => r.path === '/gone/1'));
    await eventually(() => !(inst.server.services.store.snapshot().push_subscriptions ?? []).some((x) => x.installation_id === 'i-gone'));
    expect((await inst.api('DELETE', '/api/v1/notifications/subscriptions/i-gone', { token: user.token })).status).toBe(404);
  });
});
