/**
 * The CalDAV server benchmark (docs/caldav.md, "Benchmark"): a calendar-multiget REPORT of
 * 500 events (calendar-data and ETags), as a phone's first sync of a calendar asks for it,
 * through a real server and HTTP Basic sign-in. Beside it: PROPFIND Depth 1 of the calendar
 * and an initial sync-collection. The events are generated (a tenth of them recurring, zoned
 * in 20 time zones, with descriptions of varied length).
 * Goal: the multiget ≤ 500 ms.
 */
import fs from 'node:fs';
import path from 'node:path';
import { BENCH_DIR, round, runChild, type Stats } from './lib.js';

const USER = 'davbench';
export const CALDAV_EVENTS = 500;
export const MULTIGET_GOAL_MS = 500;

export interface CaldavBenchResult {
  events: number;
  bytes: number;
  indexMs: number;
  coldMs: number;
  coldCpuMs: number;
  warm: Stats;
  warmCpu: Stats;
  propfind: Stats;
  initialSyncMs: number;
  verdict: { label: string; value: number; max: number; ok: boolean };
}

const pad = (n: number) => String(n).padStart(2, '0');

/** 500 event files in `Calendars/Work/` (deterministic). */
export function generateDavHome(home: string, events = CALDAV_EVENTS): void {
  const dir = path.join(home, 'Calendars', 'Work');
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'calendar.json'), JSON.stringify({ name: 'Work', color: '#3b82f6', visible: true }));
  const zones = Intl.supportedValuesOf('timeZone').filter((z) => z.includes('/'));
  for (let i = 0; i < events; i++) {
    const zone = zones[(i * 37) % zones.length]!;
    const day = 1 + (i % 28);
    const month = 1 + (i % 12);
    const hour = 8 + (i % 10);
    const uid = `dav-${i}@quire.test`;
    const lines = [
      'BEGIN:VCALENDAR', 'VERSION:2.0', 'PRODID:-//quire bench//EN', 'BEGIN:VEVENT', `UID:${uid}`, 'DTSTAMP:20260101T000000Z',
      `DTSTART;TZID=${zone}:2026${pad(month)}${pad(day)}T${pad(hour)}0000`, `DTEND;TZID=${zone}:2026${pad(month)}${pad(day)}T${pad(hour + 1)}0000`,
      `SUMMARY:Meeting ${i} <with> "quotes" & more`, `LOCATION:Room ${i % 40}`,
      `DESCRIPTION:${'Agenda item. '.repeat(1 + (i % 30))}`,
      ...(i % 10 === 0 ? ['RRULE:FREQ=WEEKLY;COUNT=20'] : []),
      'END:VEVENT', 'END:VCALENDAR', '',
    ];
    fs.writeFileSync(path.join(dir, `${uid}.ics`), lines.join('\r\n'));
  }
}

function ensureHome(log: (s: string) => void): string {
  const dataDir = path.join(BENCH_DIR, 'vaults', `caldav-${CALDAV_EVENTS}`);
  const home = path.join(dataDir, 'homes', USER);
  if (fs.existsSync(path.join(home, 'Calendars', 'Work', `dav-${CALDAV_EVENTS - 1}@quire.test.ics`))) return dataDir;
  fs.rmSync(dataDir, { recursive: true, force: true });
  log(`caldav: generating ${CALDAV_EVENTS} events under ${home}`);
  generateDavHome(home);
  return dataDir;
}

export async function runCaldavBench(opts: { runs?: number; log?: (s: string) => void } = {}): Promise<CaldavBenchResult> {
  const log = opts.log ?? ((s: string) => console.log(s));
  const dataDir = ensureHome(log);
  const r = await runChild<Omit<CaldavBenchResult, 'verdict'>>('caldav-child.ts', ['--data', dataDir, '--user', USER, '--runs', String(opts.runs ?? 20)], [], 300_000);
  const ms = (x: number) => `${round(x, 1)} ms`;
  log(
    `caldav (${r.events} events, multiget answer ${Math.round(r.bytes / 1024)} KiB; first request with the calendar index ${ms(r.indexMs)}): ` +
      `calendar-multiget first ${ms(r.coldMs)} (CPU ${ms(r.coldCpuMs)}), then p50 ${ms(r.warm.p50)} p90 ${ms(r.warm.p90)} max ${ms(r.warm.max)}; ` +
      `PROPFIND Depth 1 p50 ${ms(r.propfind.p50)}; initial sync-collection ${ms(r.initialSyncMs)}`,
  );
  const value = Math.max(r.coldMs, r.warm.p90);
  return { ...r, verdict: { label: `CalDAV calendar-multiget of ${CALDAV_EVENTS} events ≤ ${MULTIGET_GOAL_MS} ms`, value: round(value, 1), max: MULTIGET_GOAL_MS, ok: value <= MULTIGET_GOAL_MS } };
}

// `node dist-bench/bench/caldav.js` runs the CalDAV figures alone.
if (process.argv[1] && /caldav\.[jt]s$/.test(process.argv[1])) await runCaldavBench();
