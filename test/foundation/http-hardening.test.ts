/**
 * The HTTP surface under hostile clients, through a real server on loopback and raw sockets:
 * every error is the envelope (even those Node's parser and Fastify's router answer), half-sent
 * requests are closed, one address cannot hold every connection, large bodies are admitted a
 * few at a time, and failed-token throttling never locks out a valid token or, behind a trusted
 * proxy, the other clients of the same proxy.
 */
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type RunningServer } from '../../src/server.js';
import { addUser } from '../../src/surfaces/cli/admin.js';
import { loadConfig, parseTrustProxy, type ConfigInput } from '../../src/core/config.js';
import { tempDir } from '../helpers/instance.js';

interface Instance {
  server: RunningServer;
  port: number;
  token: string;
  close(): Promise<void>;
}

async function start(config: ConfigInput = {}): Promise<Instance> {
  const dataDir = tempDir();
  const server = await startServer({ dataDir, host: '127.0.0.1', port: 0, log: () => undefined, ...config });
  const { token } = await addUser(server.services, { username: 'hana', role: 'owner' });
  return {
    server,
    port: Number(new URL(server.url).port),
    token,
    async close() {
      await server.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

interface RawResponse {
  status: number;
  headers: string;
  body: any;
  /** The server closed the connection (within the wait). */
  closed: boolean;
}

/** Sends bytes on a fresh connection and collects what comes back until the server closes it or `waitMs` passes. */
function raw(port: number, bytes: string | Buffer, waitMs = 15_000): Promise<RawResponse> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    const socket = net.connect(port, '127.0.0.1', () => socket.write(bytes));
    const finish = (closed: boolean) => {
      clearTimeout(timer);
      socket.destroy();
      const text = Buffer.concat(chunks).toString('utf8');
      const [head = '', ...rest] = text.split('\r\n\r\n');
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0);
      let body: unknown;
      try {
        body = JSON.parse(rest.join('\r\n\r\n'));
      } catch {
        body = rest.join('\r\n\r\n');
      }
      resolve({ status, headers: head.toLowerCase(), body, closed });
    };
    const timer = setTimeout(() => finish(false), waitMs);
    socket.on('data', (c) => chunks.push(c));
    socket.on('error', () => undefined);
    socket.on('close', () => finish(true));
  });
}

function expectEnvelope(r: { status: number; body: any }, status: number, code = 'bad_request') {
  expect(r.status).toBe(status);
  expect(Object.keys(r.body)).toEqual(['error']);
  expect(r.body.error.code).toBe(code);
  expect(r.body.error.message.length).toBeGreaterThan(0);
}

const get = (path: string, extra = '') => `GET ${path} HTTP/1.1\r\nHost: localhost\r\n${extra}\r\n`;

describe('settings', () => {
  it.each([
    [undefined, false],
    ['', false],
    ['0', false],
    ['false', false],
    ['1', 1],
    ['true', 1],
    ['2', 2],
    ['10.0.0.1', '10.0.0.1'],
    [' 10.0.0.1 , 192.168.0.0/16,loopback', '10.0.0.1,192.168.0.0/16,loopback'],
    ['::1,fd00::/8', '::1,fd00::/8'],
  ])('QUIRE_TRUST_PROXY=%j trusts %j', (text, trusted) => {
    expect(parseTrustProxy(text)).toEqual(trusted);
  });

  it.each(['proxy.example.org', '10.0.0.1;10.0.0.2', '*'])('QUIRE_TRUST_PROXY=%j is refused', (text) => {
    expect(() => parseTrustProxy(text)).toThrow(/QUIRE_TRUST_PROXY/);
  });

  it('refuses a headers timeout longer than the request timeout', () => {
    expect(() => loadConfig({ dataDir: '/tmp/x', headersTimeoutMs: 5000, requestTimeoutMs: 1000 }, {})).toThrow(/QUIRE_HEADERS_TIMEOUT_MS/);
    expect(loadConfig({ dataDir: '/tmp/x' }, {})).toMatchObject({ headersTimeoutMs: 10_000, requestTimeoutMs: 120_000, maxConnectionsPerIp: 256, trustProxy: false });
  });
});

describe('errors Node and Fastify answer themselves are envelopes', () => {
  let inst: Instance;
  beforeAll(async () => {
    inst = await start();
  });
  afterAll(() => inst.close());

  it('431 for headers over 16 KiB, and for an over-long URL', async () => {
    const bigHeader = await raw(inst.port, get('/api/v1/system/info', `X-Big: ${'a'.repeat(20_000)}\r\n`));
    expectEnvelope(bigHeader, 431);
    expect(bigHeader.body.error.details.field).toBe('headers');
    const longUrl = await raw(inst.port, get(`/api/v1/notes/${'n'.repeat(20_000)}`));
    expectEnvelope(longUrl, 431);
  });

  it('400 for a malformed percent-encoding in a path parameter', async () => {
    const r = await raw(inst.port, get(`/api/v1/notes/%u002e%u002e/backlinks`, `Authorization: Bearer ${inst.token}\r\nConnection: close\r\n`));
    expectEnvelope(r, 400);
    expect(r.body.error.details).toMatchObject({ field: 'path', reason: 'bad_url' });
  });

  it('414 for a path parameter over 4,096 characters', async () => {
    const r = await raw(inst.port, get(`/api/v1/notes/${'n'.repeat(5000)}`, `Authorization: Bearer ${inst.token}\r\nConnection: close\r\n`));
    expectEnvelope(r, 414, 'name_too_long');
    expect(r.body.error.details).toEqual({ field: 'path', limit: '4096' });
  });

  it('413 for a declared body over the route limit, answered without reading it', async () => {
    const head = `POST /api/v1/notes HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${inst.token}\r\nContent-Type: application/json\r\nContent-Length: ${40 * 1024 * 1024}\r\n\r\n{"title":"`;
    const r = await raw(inst.port, head);
    expectEnvelope(r, 413);
    expect(r.body.error.details).toEqual({ field: 'body', limit: String(32 * 1024 * 1024) });
  });

  it('400 for bad JSON, 415 for another media type, 400 for bytes that are not HTTP', async () => {
    const post = (type: string, body: string) =>
      `POST /api/v1/notes HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\nAuthorization: Bearer ${inst.token}\r\nContent-Type: ${type}\r\nContent-Length: ${body.length}\r\n\r\n${body}`;
    expectEnvelope(await raw(inst.port, post('application/json', '{"title":')), 400);
    expectEnvelope(await raw(inst.port, post('application/xml', '<note/>')), 415);
    expectEnvelope(await raw(inst.port, 'HELLO THERE\r\n\r\n'), 400);
  });
});

describe('timeouts and connection limits', () => {
  let inst: Instance;
  beforeAll(async () => {
    inst = await start({ headersTimeoutMs: 1000, requestTimeoutMs: 2000, maxConnectionsPerIp: 5 });
  });
  afterAll(() => inst.close());

  it('answers 408 and closes a request whose headers never finish', async () => {
    const r = await raw(inst.port, 'GET /api/v1/system/info HTTP/1.1\r\nHost: localhost\r\nX-Slow: ');
    expect(r.closed).toBe(true);
    expectEnvelope(r, 408);
  });

  it('answers 408 and closes a request whose body never finishes', async () => {
    const r = await raw(
      inst.port,
      `POST /api/v1/notes HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${inst.token}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"title":`,
    );
    expect(r.closed).toBe(true);
    expectEnvelope(r, 408);
  });

  it('refuses a connection over the per-address limit with 429, and serves again once one closes', async () => {
    const idle = await Promise.all(
      Array.from({ length: 5 }, () => new Promise<net.Socket>((ok) => { const s = net.connect(inst.port, '127.0.0.1', () => ok(s)); })),
    );
    try {
      const refused = await raw(inst.port, get('/api/v1/system/info', 'Connection: close\r\n'));
      expectEnvelope(refused, 429, 'too_many_requests');
      expect(refused.body.error.details.reason).toBe('too_many_connections');
      expect(refused.headers).toContain('retry-after: 1');
    } finally {
      for (const s of idle) s.destroy();
    }
    await new Promise((r) => setTimeout(r, 100));
    const served = await raw(inst.port, get('/api/v1/system/info', 'Connection: close\r\n'));
    expect(served.status).not.toBe(429);
  });
});

describe('large bodies are read a few at a time', () => {
  let inst: Instance;
  beforeAll(async () => {
    inst = await start({ largeBodyBudgetBytes: 3 * 1024 * 1024 });
  });
  afterAll(() => inst.close());

  it('answers 503 with Retry-After while the budget is in use, and takes the body after', async () => {
    const payload = (letter: string) => Buffer.from(JSON.stringify({ content: letter.repeat(2 * 1024 * 1024) }));
    /** A file write whose first KiB is sent at once and the rest on `finish()`. */
    const put = (file: string, body: Buffer) => {
      const req = http.request({
        port: inst.port,
        host: '127.0.0.1',
        method: 'PUT',
        path: `/api/v1/files/content?path=${file}`,
        headers: { authorization: `Bearer ${inst.token}`, 'content-type': 'application/json', 'content-length': body.length, 'if-none-match': '*' },
      });
      const response = new Promise<{ status: number; headers: http.IncomingHttpHeaders; body: any }>((resolve) => {
        req.on('response', (res) => {
          let text = '';
          res.on('data', (c) => (text += c));
          res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: JSON.parse(text) }));
        });
      });
      req.on('error', () => undefined);
      req.write(body.subarray(0, 1024));
      return { response, finish: () => req.end(body.subarray(1024)) };
    };
    const held = put('a.txt', payload('a'));
    await new Promise((r) => setTimeout(r, 200));
    const busy = put('b.txt', payload('b'));
    busy.finish();
    const refused = await busy.response;
    expect(refused.status).toBe(503);
    expect(refused.headers['retry-after']).toBe('1');
    expect(refused.body.error).toMatchObject({ code: 'service_unavailable', details: { reason: 'busy', field: 'body' } });
    held.finish();
    expect((await held.response).status).toBe(201);
    const after = put('c.txt', payload('c'));
    after.finish();
    expect((await after.response).status).toBe(201);
  });
});

describe('failed-token throttling', () => {
  const call = (port: number, token: string, forwardedFor?: string) =>
    new Promise<number>((resolve) => {
      const req = http.get(
        {
          port,
          host: '127.0.0.1',
          path: '/api/v1/auth/me',
          headers: { authorization: `Bearer ${token}`, ...(forwardedFor ? { 'x-forwarded-for': forwardedFor } : {}) },
        },
        (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode!));
        },
      );
      req.on('error', () => resolve(0));
    });
  const badTokens = async (port: number, n: number, forwardedFor?: string) => {
    for (let i = 0; i < n; i++) await call(port, `qs_not_a_real_token_${i}`, forwardedFor);
  };

  it('never blocks a valid token: 30 bad tokens, then a valid one from the same address works', async () => {
    const inst = await start();
    try {
      await badTokens(inst.port, 30);
      expect(await call(inst.port, 'qs_still_bad')).toBe(429);
      expect(await call(inst.port, inst.token)).toBe(200);
    } finally {
      await inst.close();
    }
  });

  it('behind a trusted proxy, counts each client of X-Forwarded-For separately', async () => {
    const inst = await start({ trustProxy: '127.0.0.1' });
    try {
      await badTokens(inst.port, 30, '203.0.113.1');
      expect(await call(inst.port, 'qs_bad', '203.0.113.1')).toBe(429);
      expect(await call(inst.port, 'qs_bad', '203.0.113.2')).toBe(401);
    } finally {
      await inst.close();
    }
  });

  it('without QUIRE_TRUST_PROXY, ignores X-Forwarded-For', async () => {
    const inst = await start();
    try {
      await badTokens(inst.port, 30, '203.0.113.1');
      expect(await call(inst.port, 'qs_bad', '203.0.113.2')).toBe(429);
    } finally {
      await inst.close();
    }
  });
});
