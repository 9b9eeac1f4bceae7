/**
 * The floor for the read runs: a bare `node:http` server in its own process
 * that answers each path with the bytes the Quire server answered it with
 * (recorded by the parent), and does nothing else. The same load against it
 * shows what the load generator, the loopback and Node's HTTP stack cost on
 * this machine, as reading and hashing the files does for indexing.
 * Emits { url }; then `close` on stdin stops it.
 * Usage: child-replay.ts --bodies <file: JSON { [path]: base64 body }>
 */
import fs from 'node:fs';
import http from 'node:http';
import readline from 'node:readline';
import { emit, parseArgs } from './lib.js';

const args = parseArgs(process.argv.slice(2));
const recorded = JSON.parse(fs.readFileSync(String(args.bodies), 'utf8')) as Record<string, string>;
const bodies = new Map(Object.entries(recorded).map(([p, b64]) => [p, Buffer.from(b64, 'base64')]));

const server = http.createServer((req, res) => {
  const body = bodies.get(req.url ?? '');
  if (body === undefined) {
    res.writeHead(404).end();
    return;
  }
  res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': body.length });
  res.end(body);
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  const { port } = server.address() as { port: number };
  emit({ url: `http://127.0.0.1:${port}`, paths: bodies.size });
});
readline.createInterface({ input: process.stdin }).on('line', (l) => {
  if (l.trim() === 'close') server.close(() => process.exit(0));
});
