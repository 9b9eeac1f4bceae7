/**
 * src/core/outbound.ts requires TLS and zlib at the first fetch that needs them (not at every
 * start of the server): a compressed answer still arrives decoded, and an https address still
 * speaks TLS (here to a server that does not, which fails in the TLS handshake).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import zlib from 'node:zlib';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { outboundFetch } from '../../src/core/outbound.js';

const TEXT = 'A note fetched from elsewhere, '.repeat(40);
const ENCODE: Record<string, (b: Buffer) => Buffer> = {
  gzip: zlib.gzipSync,
  'x-gzip': zlib.gzipSync,
  deflate: zlib.deflateSync,
  br: zlib.brotliCompressSync,
  identity: (b) => b,
};

let server: http.Server;
let base: string;
beforeAll(async () => {
  server = http.createServer((req, res) => {
    const enc = req.url!.slice(1);
    res.writeHead(200, { 'content-type': 'text/plain', 'content-encoding': enc });
    res.end(ENCODE[enc]!(Buffer.from(TEXT)));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise((r) => server.close(r)));

it.each(Object.keys(ENCODE))('a %s answer arrives decoded', async (enc) => {
  const res = await outboundFetch(`http://${base}/${enc}`, { allowPrivate: true });
  expect(res.status).toBe(200);
  expect(res.body.toString('utf8')).toBe(TEXT);
});

it('an https address is fetched over TLS', async () => {
  // The plain HTTP server answers the TLS hello with HTTP: the handshake fails, naming TLS's error.
  await expect(outboundFetch(`https://${base}/identity`, { allowPrivate: true })).rejects.toMatchObject({
    message: expect.stringMatching(/^Could not fetch https:\/\/.*: (EPROTO|ERR_SSL_[A-Z_]+)/),
  });
});
