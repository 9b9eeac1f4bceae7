/**
 * The feed benchmark's server process (bench/calendar-feed.ts): a real Quire server on a Home
 * whose one calendar holds 10,000 events (500 recurring); times GETs of its published feed.
 * Usage: calendar-feed-child.ts --data <dataDir> --user <name> --cached <n>
 */
import path from 'node:path';
import { loadConfig } from '../src/core/config.js';
import { openServices, startServer } from '../src/server.js';
import { addUser, issueAdminToken } from '../src/surfaces/cli/admin.js';
import { emit, parseArgs, summarize } from './lib.js';

const args = parseArgs(process.argv.slice(2));
const dataDir = path.resolve(String(args.data));
const username = String(args.user);
const cachedRuns = Number(args.cached ?? 50);

const services = await openServices(loadConfig({ dataDir }));
const exists = services.store.snapshot().users.some((u) => u.username === username);
const { token } = exists ? await issueAdminToken(services, username) : await addUser(services, { username, role: 'owner' });
const server = await startServer({ dataDir, host: '127.0.0.1', port: 0, log: () => undefined });

async function api(method: string, route: string, body?: unknown) {
  const res = await fetch(server.url + route, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  if (!res.ok) throw new Error(`${method} ${route} answered ${res.status}: ${await res.text()}`);
  return res.json() as Promise<any>;
}

async function timedGet(url: string, headers: Record<string, string> = {}) {
  const t = performance.now();
  const res = await fetch(server.url + new URL(url).pathname, { headers });
  const bytes = (await res.arrayBuffer()).byteLength;
  return { ms: performance.now() - t, status: res.status, bytes, etag: res.headers.get('etag') };
}

const feed = (name: string, detail: string) => api('POST', '/api/v1/calendar/feeds', { name, detail, source: 'calendar', source_id: 'Cal0' });

// 1. The first request after start: the calendar index is read and parsed from the files, then the feed built.
const first = await feed('first', 'full');
const firstGet = await timedGet(first.url);
// 2. Cold: a feed not built yet, the calendar index already in memory.
const cold = await feed('cold', 'full');
const coldGet = await timedGet(cold.url);
const busy = await feed('busy', 'busy_only');
const busyGet = await timedGet(busy.url);
// 3. Cached: the same collection version again; 4. conditional GETs answered 304.
const cached: number[] = [];
for (let i = 0; i < cachedRuns; i++) cached.push((await timedGet(cold.url)).ms);
const notModified: number[] = [];
for (let i = 0; i < cachedRuns; i++) {
  const r = await timedGet(cold.url, { 'if-none-match': coldGet.etag! });
  if (r.status !== 304) throw new Error(`conditional GET answered ${r.status}`);
  notModified.push(r.ms);
}
const events = (await api('GET', '/api/v1/calendar/calendars')).calendars.find((c: any) => c.id === 'Cal0')?.events;
emit({ events, bytes: coldGet.bytes, busyBytes: busyGet.bytes, firstMs: firstGet.ms, coldMs: coldGet.ms, busyColdMs: busyGet.ms, cached: summarize(cached), notModified: summarize(notModified) });
await server.close();
process.exit(0);
