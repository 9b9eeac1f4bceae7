/**
 * A HEAD whose headers are over the limit (the fuzz harness sent a 100 KB Tus-Resumable to
 * public_upload_head) is answered 431 without a body: a body after a HEAD answer is read by the
 * client as garbage ("Data after Connection: close") instead of a status.
 */
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInstance, type TestInstance } from '../helpers/instance.js';

let inst: TestInstance;
beforeAll(async () => {
  inst = await startInstance();
});
afterAll(() => inst.close());

function send(method: string, path: string, headers: Record<string, string>): Promise<{ status: number; body: string } | { error: string }> {
  const base = new URL(inst.url);
  return new Promise((resolve) => {
    const r = http.request({ host: base.hostname, port: base.port, method, path, headers }, (res) => {
      let body = '';
      res.on('data', (c) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      res.on('error', (e) => resolve({ error: String(e) }));
    });
    r.on('error', (e) => resolve({ error: String(e) }));
    r.end();
  });
}

describe('headers over the limit', () => {
  it('a HEAD to an upload gets a clean 431 (no body), a GET still gets the envelope', async () => {
    const big = { 'tus-resumable': 'x'.repeat(100_000) };
    const head = await send('HEAD', '/api/v1/public/some-slug/uploads/0123456789abcdef', big);
    expect(head).toEqual({ status: 431, body: '' });
    const get = await send('GET', '/api/v1/public/some-slug', big);
    expect(get).toMatchObject({ status: 431 });
    expect(JSON.parse((get as { body: string }).body).error.details.field).toBe('headers');
  });
});
