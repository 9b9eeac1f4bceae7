/**
 * The figures of docs/reliability.md, "Limits": server memory under ten concurrent 31 MB
 * bodies, how long half-sent requests are held open, and the latency of 200 concurrent distinct
 * note creations. Starts bench/request-limits-server.ts from a source tree (default this one;
 * `--root <dir>` measures another checkout, e.g. the commit before a change) in its own process.
 * Usage: npm run build -- --bench && node dist-bench/bench/request-limits.js [--root <dir>] [--half-sent-wait <s>]
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { benchScript, SERVER_NODE_FLAGS } from './lib.js';

const arg = (name: string, fallback: string) => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1]! : fallback;
};
const root = path.resolve(arg('--root', process.cwd()));
const halfSentWaitMs = Number(arg('--half-sent-wait', '40')) * 1000;
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'quire-limits-'));

const child = spawn(
  process.execPath,
  [...SERVER_NODE_FLAGS, ...benchScript('request-limits-server.ts'), '--data', dataDir],
  { cwd: root, stdio: ['pipe', 'pipe', 'inherit'] },
);
const first = await new Promise<string>((resolve) => readline.createInterface({ input: child.stdout! }).once('line', resolve));
const { url, token, pid } = JSON.parse(first) as { url: string; token: string; pid: number };
const { hostname, port } = new URL(url);

const rssMb = () => {
  const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Math.round(Number(m![1]) / 1024);
};

function request(method: string, route: string, body: Buffer | string | null, agent?: http.Agent): Promise<{ status: number; ms: number }> {
  const t0 = performance.now();
  return new Promise((resolve) => {
    const req = http.request(
      { host: hostname, port, method, path: route, agent, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'if-none-match': '*', ...(body ? { 'content-length': Buffer.byteLength(body) } : {}) } },
      (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode!, ms: performance.now() - t0 }));
      },
    );
    req.on('error', () => resolve({ status: 0, ms: performance.now() - t0 }));
    req.end(body ?? undefined);
  });
}

async function withPeakRss<T>(work: () => Promise<T>): Promise<{ result: T; baseline: number; peak: number }> {
  const baseline = rssMb();
  let peak = baseline;
  const timer = setInterval(() => (peak = Math.max(peak, rssMb())), 20);
  const result = await work();
  clearInterval(timer);
  return { result, baseline, peak: Math.max(peak, rssMb()) };
}

const counts = (xs: number[]) => Object.entries(xs.reduce<Record<number, number>>((a, s) => ((a[s] = (a[s] ?? 0) + 1), a), {})).map(([s, n]) => `${n}x${s}`).join(' ');
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.ceil((p / 100) * xs.length) - 1)]!;

// ---- 1. ten concurrent 31 MB bodies: to an action that takes a small body, and to a file write.
const big = (field: string) => Buffer.from(`{"${field}":"${'x'.repeat(31 * 1000 * 1000)}"}`);
for (const [label, route, field] of [
  ['profile update (small-body action)', '/api/v1/auth/me/profile', 'display_name'],
  ['file write (content action)', '/api/v1/files/content?path=Big/f', 'content'],
] as const) {
  const bodies = Array.from({ length: 10 }, () => big(field));
  const { result, baseline, peak } = await withPeakRss(() =>
    Promise.all(bodies.map((b, i) => request(route.startsWith('/api/v1/files') ? 'PUT' : 'PATCH', route.includes('?') ? `${route}${i}.txt` : route, b))),
  );
  console.log(`10 x 31 MB to ${label}: RSS ${baseline} -> peak ${peak} MB; statuses ${counts(result.map((r) => r.status))}`);
}

// ---- 2. half-sent requests: headers never finished.
{
  const n = 300;
  const t0 = performance.now();
  const closedAt: number[] = [];
  const sockets = Array.from({ length: n }, () => {
    const s = net.connect(Number(port), hostname, () => s.write(`GET /api/v1/system/info HTTP/1.1\r\nHost: x\r\nX-Slow: `));
    s.on('error', () => undefined);
    s.on('data', () => undefined);
    s.on('close', () => closedAt.push(performance.now() - t0));
    return s;
  });
  await new Promise((r) => setTimeout(r, halfSentWaitMs));
  for (const s of sockets) s.destroy();
  const closed = closedAt.length;
  console.log(
    `${n} half-sent requests: ${closed} closed by the server within ${halfSentWaitMs / 1000} s` +
      (closed ? ` (first after ${(Math.min(...closedAt) / 1000).toFixed(1)} s, last after ${(Math.max(...closedAt) / 1000).toFixed(1)} s)` : ''),
  );
}

// ---- 3. 200 concurrent distinct writes.
{
  const agent = new http.Agent({ keepAlive: true, maxSockets: 200 });
  const results = await Promise.all(
    Array.from({ length: 200 }, (_, i) => request('POST', '/api/v1/notes', JSON.stringify({ title: `Load note ${i}`, body: `Body ${i}\n` }), agent)),
  );
  const ms = results.map((r) => r.ms);
  console.log(`200 concurrent distinct creates: statuses ${counts(results.map((r) => r.status))}; p50 ${pct(ms, 50).toFixed(0)} ms, p99 ${pct(ms, 99).toFixed(0)} ms, max ${Math.max(...ms).toFixed(0)} ms`);
  agent.destroy();
}

child.stdin!.write('close\n');
await new Promise((r) => child.once('exit', r));
fs.rmSync(dataDir, { recursive: true, force: true });
