/**
 * The feed benchmark's server process (bench/calendar-feed.ts): a real Quire server on a Home
 * whose one calendar holds 10,000 events (500 recurring); times GETs of its published feed.
 * Usage: calendar-feed-child.ts --data <dataDir> --user <name> --cached <n>
 */
import path from 'node:path';
import { startServer } from '../src/server.js';
import { benchOwner } from './owner.js';
import { emit, parseArgs, summarize, timed } from './lib.js';

const args = parseArgs(process.argv.slice(2));
const dataDir = path.resolve(String(args.data));
const username = String(args.user);
const cachedRuns = Number(args.cached ?? 50);

const { token } = await benchOwner(dataDir, username);
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

const timedGet = (url: string, headers: Record<string, string> = {}) =>
  timed(async () => {
    const res = await fetch(server.url + new URL(url).pathname, { headers });
    return { status: res.status, bytes: (await res.arrayBuffer()).byteLength, etag: res.headers.get('etag') };
  });

const feed = (name: string, detail: string) => api('POST', '/api/v1/calendar/feeds', { name, detail, source: 'calendar', source_id: 'Cal0' });

// 1. The first calendar request after start reads and parses every event file into the calendar index.
let t = performance.now();
await api('GET', '/api/v1/calendar/calendars');
const indexMs = performance.now() - t;
// 2. Cold: no feed built yet, no event serialised yet.
const full = await feed('full', 'full');
const coldGet = await timedGet(full.url);
const busy = await feed('busy', 'busy_only');
const busyGet = await timedGet(busy.url);
// 3. Cached: the same collection version again; 4. conditional GETs answered 304.
const cached: number[] = [];
for (let i = 0; i < cachedRuns; i++) cached.push((await timedGet(full.url)).ms);
const notModified: number[] = [];
for (let i = 0; i < cachedRuns; i++) {
  const r = await timedGet(full.url, { 'if-none-match': coldGet.etag! });
  if (r.status !== 304) throw new Error(`conditional GET answered ${r.status}`);
  notModified.push(r.ms);
}
// 5. After one event changed: the document is rebuilt, the other 9,999 events' blocks reused.
t = performance.now();
const added = await api('POST', '/api/v1/calendar/events', {
  calendar_id: 'Cal0',
  icalendar: 'BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//bench//EN\r\nBEGIN:VEVENT\r\nDTSTAMP:20260101T000000Z\r\nDTSTART:20260601T100000Z\r\nDTEND:20260601T110000Z\r\nSUMMARY:New\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n',
});
const createMs = performance.now() - t;
const afterChange = await timedGet(full.url, { 'if-none-match': coldGet.etag! });
if (afterChange.status !== 200) throw new Error(`after a change the feed answered ${afterChange.status}`);
// The Home stays as generated for the next run.
await api('DELETE', `/api/v1/calendar/events/${encodeURIComponent(added.id)}`);
const events = (await api('GET', '/api/v1/calendar/calendars')).calendars.find((c: any) => c.id === 'Cal0')?.events;
emit({ events, bytes: coldGet.bytes, busyBytes: busyGet.bytes, indexMs, coldMs: coldGet.ms, coldCpuMs: coldGet.cpuMs, busyColdMs: busyGet.ms, busyColdCpuMs: busyGet.cpuMs, cached: summarize(cached), notModified: summarize(notModified), createMs, afterChangeMs: afterChange.ms });
await server.close();
process.exit(0);
