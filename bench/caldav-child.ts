/**
 * The CalDAV benchmark's server process (bench/caldav.ts): a real Quire server on a Home whose
 * `Work` calendar holds the generated events; a client in the same process signs in with an
 * App Password (HTTP Basic) and times PROPFIND Depth 1 and calendar-multiget REPORTs.
 * Usage: caldav-child.ts --data <dataDir> --user <name> --runs <n>
 */
import path from 'node:path';
import { startServer } from '../src/server.js';
import { benchOwner } from './owner.js';
import { emit, parseArgs, summarize, timed } from './lib.js';

const args = parseArgs(process.argv.slice(2));
const dataDir = path.resolve(String(args.data));
const username = String(args.user);
const runs = Number(args.runs ?? 20);

const { token } = await benchOwner(dataDir, username);
const server = await startServer({ dataDir, host: '127.0.0.1', port: 0, log: () => undefined });

const ap = await fetch(`${server.url}/api/v1/auth/app-passwords`, {
  method: 'POST',
  headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
  body: JSON.stringify({ name: 'bench' }),
});
if (ap.status !== 201) throw new Error(`App Password: ${ap.status} ${await ap.text()}`);
const basic = `Basic ${Buffer.from(`${username}:${((await ap.json()) as { password: string }).password}`).toString('base64')}`;
const calendar = `/dav/calendars/${username}/Work/`;

async function dav(method: string, url: string, body: string, depth: string) {
  const r = await timed(async () => {
    const res = await fetch(server.url + url, { method, headers: { authorization: basic, depth, 'content-type': 'application/xml; charset=utf-8' }, body });
    return { status: res.status, text: await res.text() };
  });
  if (r.status !== 207) throw new Error(`${method} ${url} answered ${r.status}: ${r.text.slice(0, 300)}`);
  return { ms: r.ms, cpuMs: r.cpuMs, text: r.text, bytes: Buffer.byteLength(r.text) };
}

const PROPFIND = '<d:propfind xmlns:d="DAV:"><d:prop><d:getetag/><d:getcontenttype/></d:prop></d:propfind>';

// 1. The first request reads every event file of the Home into the calendar index (and starts the change log).
const first = await dav('PROPFIND', calendar, PROPFIND, '1');
// 2. The hrefs a client would ask for, from PROPFIND Depth 1 (what DAVx5 and vdirsyncer do).
const listing = await dav('PROPFIND', calendar, PROPFIND, '1');
const hrefs = [...listing.text.matchAll(/<d:href>([^<]+\.ics)<\/d:href>/g)].map((m) => m[1]!);
const multigetBody =
  '<c:calendar-multiget xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav"><d:prop><d:getetag/><c:calendar-data/></d:prop>' +
  hrefs.map((h) => `<d:href>${h}</d:href>`).join('') +
  '</c:calendar-multiget>';
// 3. The first multiget (nothing of it prepared), then repeated ones.
const cold = await dav('REPORT', calendar, multigetBody, '1');
const found = (cold.text.match(/BEGIN:VCALENDAR/g) ?? []).length;
if (found !== hrefs.length) throw new Error(`multiget returned ${found} of ${hrefs.length} events`);
const warm: number[] = [];
const warmCpu: number[] = [];
for (let i = 0; i < runs; i++) {
  const r = await dav('REPORT', calendar, multigetBody, '1');
  warm.push(r.ms);
  warmCpu.push(r.cpuMs);
}
const propfind: number[] = [];
for (let i = 0; i < runs; i++) propfind.push((await dav('PROPFIND', calendar, PROPFIND, '1')).ms);
const syncBody = '<d:sync-collection xmlns:d="DAV:"><d:sync-token/><d:sync-level>1</d:sync-level><d:prop><d:getetag/></d:prop></d:sync-collection>';
const sync = await dav('REPORT', calendar, syncBody, '1');

emit({
  events: hrefs.length,
  bytes: cold.bytes,
  indexMs: first.ms,
  coldMs: cold.ms,
  coldCpuMs: cold.cpuMs,
  warm: summarize(warm),
  warmCpu: summarize(warmCpu),
  propfind: summarize(propfind),
  initialSyncMs: sync.ms,
});
await server.close();
process.exit(0);
