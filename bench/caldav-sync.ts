/**
 * CalDAV client sync benchmark (docs/calendar-sync.md, "Tests and benchmark"): a Quire server
 * syncing a Radicale account of 2,000 events: the initial sync (account creation to the end of
 * its job), a refresh with nothing changed, and a refresh with 10 events changed on the server.
 * Radicale's collection is written straight into its storage folder before it starts (2,000
 * PUTs would time Radicale, not Quire). Goals: 15 s, 300 ms, 1 s.
 */
import fs from 'node:fs';
import path from 'node:path';
import { startServer } from '../src/server.js';
import { addUser } from '../src/surfaces/cli/admin.js';
import { startRadicale, vevent } from '../test/caldav/sync-peers.js';
import { tempDir } from '../test/helpers/instance.js';

export const SYNC_EVENTS = 2_000;
export const GOALS = { initialMs: 15_000, unchangedMs: 300, changed10Ms: 1_000 };

export interface CaldavSyncBenchResult {
  events: number;
  initialMs: number;
  unchangedMs: number;
  changed10Ms: number;
  verdicts: Array<{ label: string; value: number; max: number; ok: boolean }>;
}

const day = (i: number) => {
  const d = new Date(Date.UTC(2026, 0, 1) + (i % 365) * 86_400_000);
  return d.toISOString().slice(0, 10).replace(/-/g, '');
};

export async function runCaldavSyncBench(opts: { log?: (line: string) => void } = {}): Promise<CaldavSyncBenchResult> {
  const log = opts.log ?? ((l: string) => console.log(l));
  const rad = await startRadicale('bench', 'bench-pw');
  const dataDir = tempDir('quire-sync-bench-');
  const server = await startServer({ dataDir, host: '127.0.0.1', port: 0, allowPrivateFetch: true, log: () => undefined });
  try {
    // Seed the collection on disk, then let Radicale see it (it reads its storage per request).
    const col = path.join(rad.dir, 'collections', 'collection-root', 'bench', 'work');
    fs.mkdirSync(col, { recursive: true });
    fs.writeFileSync(path.join(col, '.Radicale.props'), JSON.stringify({ tag: 'VCALENDAR', 'D:displayname': 'Work' }));
    for (let i = 0; i < SYNC_EVENTS; i++) fs.writeFileSync(path.join(col, `e${i}.ics`), vevent(`e${i}@bench`, `Event ${i} with a title of some length`, day(i)));
    // Radicale builds its item cache on the first listing of a collection written behind its back (~18 s
    // for 2,000 items here): that is the server's one-off cost, not the sync's, so it is paid before timing.
    await (await rad.dav('PROPFIND', '/bench/work/', '<?xml version="1.0"?><d:propfind xmlns:d="DAV:"><d:prop><d:getetag/></d:prop></d:propfind>', { depth: '1', 'content-type': 'application/xml' })).text();
    const { token } = await addUser(server.services, { username: 'syncbench', role: 'member' });
    const api = async (method: string, route: string, body?: unknown) => {
      const r = await fetch(server.url + route, { method, headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined });
      return (await r.json()) as any;
    };
    const jobs = server.services.jobs!;
    const timed = async (start: () => Promise<{ id: string }>) => {
      const t0 = performance.now();
      const job = await start();
      const done = await jobs.wait(job.id);
      if (done?.state !== 'succeeded') throw new Error(`sync job ${done?.state}: ${done?.error}`);
      return { ms: Math.round(performance.now() - t0), result: done.result };
    };
    const initial = await timed(async () => (await api('POST', '/api/v1/calendar/accounts', { endpoint: rad.url, username: 'bench', app_password: 'bench-pw' })).job);
    log(`[caldav-sync] initial sync of ${SYNC_EVENTS} events: ${initial.ms} ms ${JSON.stringify(initial.result)}`);
    const refresh = async () => (await api('POST', '/api/v1/calendar/calendars/Work/refresh')).job;
    await timed(refresh); // the first refresh after the initial sync reads the CTag once more
    const unchanged = await timed(refresh);
    log(`[caldav-sync] refresh, nothing changed: ${unchanged.ms} ms`);
    for (let i = 0; i < 10; i++) await rad.dav('PUT', `/bench/work/e${i * 150}.ics`, vevent(`e${i * 150}@bench`, `Event ${i * 150} changed`, day(i)));
    const changed = await timed(refresh);
    log(`[caldav-sync] refresh, 10 changed: ${changed.ms} ms ${JSON.stringify(changed.result)}`);
    const verdicts = [
      { label: 'initial sync of 2,000 events', value: initial.ms, max: GOALS.initialMs },
      { label: 'refresh, nothing changed', value: unchanged.ms, max: GOALS.unchangedMs },
      { label: 'refresh, 10 changed', value: changed.ms, max: GOALS.changed10Ms },
    ].map((v) => ({ ...v, ok: v.value <= v.max }));
    return { events: SYNC_EVENTS, initialMs: initial.ms, unchangedMs: unchanged.ms, changed10Ms: changed.ms, verdicts };
  } finally {
    await server.close();
    await rad.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const r = await runCaldavSyncBench();
  for (const v of r.verdicts) console.log(`${v.ok ? 'ok  ' : 'MISS'} ${v.label}: ${v.value} ms (goal ≤ ${v.max} ms)`);
}
