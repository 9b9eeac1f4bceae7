/**
 * The calendar section of `npm run bench` (docs/benchmarks.md, "Calendar"):
 * a Home with 10,000 events (500 of them recurring) in 50 time zones, a
 * Daily note with timed log entries for every day of the year and 500 tasks
 * with due dates; `calendar_items` for one month and `calendar_range` for
 * one week under a fixed rate (default 200 req/s), windows drawn at random
 * (a month of 2026, a week of 2026: answers the window cache keeps), then
 * again with windows that are nearly all new (random start day and zone).
 * Goal: each p99 ≤ 15 ms.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { prng } from '../test/helpers/generate-vault.js';
import { fileNameForUid } from '../src/calendar/storage.js';
import { runLoad, type LoadResult } from './http-load.js';
import { BENCH_DIR, benchScript, REPO_DIR } from './lib.js';

export const CALENDAR_SHAPE = { events: 10_000, recurring: 500, zones: 50, calendars: 5, tasks: 500, year: 2026 };
const USER = 'calbench';

const pad = (n: number) => String(n).padStart(2, '0');
const DAY = 86_400_000;

function stamp(ms: number): string {
  const d = new Date(ms);
  return `${d.getUTCFullYear()}${pad(d.getUTCMonth() + 1)}${pad(d.getUTCDate())}T${pad(d.getUTCHours())}${pad(d.getUTCMinutes())}00`;
}

/** Writes the benchmark Home under `home` (deterministic for a seed); returns its shape. */
export function generateCalendarHome(home: string, seed = 7): typeof CALENDAR_SHAPE {
  const r = prng(seed);
  const zones = Intl.supportedValuesOf('timeZone').filter((z) => z.includes('/'));
  const picked = Array.from({ length: CALENDAR_SHAPE.zones }, (_, i) => zones[Math.floor((i * zones.length) / CALENDAR_SHAPE.zones)]!);
  const yearStart = Date.UTC(CALENDAR_SHAPE.year, 0, 1);
  for (let c = 0; c < CALENDAR_SHAPE.calendars; c++) {
    const dir = path.join(home, 'Calendars', `Cal${c}`);
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, 'calendar.json'), JSON.stringify({ name: `Calendar ${c}`, color: '#3b82f6', visible: true }));
  }
  for (let i = 0; i < CALENDAR_SHAPE.events; i++) {
    const uid = `bench-${i}@quire.test`;
    const zone = picked[i % picked.length]!;
    const start = yearStart + Math.floor(r() * 365) * DAY + (7 + Math.floor(r() * 12)) * 3_600_000;
    const recurring = i < CALENDAR_SHAPE.recurring;
    const rule = !recurring
      ? []
      : i % 5 === 0
        ? [`RRULE:FREQ=DAILY;COUNT=${20 + Math.floor(r() * 60)}`]
        : i % 5 === 1
          ? ['RRULE:FREQ=MONTHLY;BYDAY=2TU']
          : ['RRULE:FREQ=WEEKLY', `EXDATE;TZID=${zone}:${stamp(start + 14 * DAY)}`];
    const allDay = !recurring && i % 17 === 0;
    const lines = [
      'BEGIN:VCALENDAR', 'VERSION:2.0', 'PRODID:-//quire bench//EN', 'BEGIN:VEVENT', `UID:${uid}`, 'DTSTAMP:20260101T000000Z',
      ...(allDay
        ? [`DTSTART;VALUE=DATE:${stamp(start).slice(0, 8)}`, `DTEND;VALUE=DATE:${stamp(start + DAY).slice(0, 8)}`]
        : [`DTSTART;TZID=${zone}:${stamp(start)}`, `DTEND;TZID=${zone}:${stamp(start + 3_600_000)}`]),
      ...rule,
      `SUMMARY:Event ${i}`, `CATEGORIES:topic-${i % 40}`, 'LOCATION:Room 4', 'X-BENCH:1', 'END:VEVENT', 'END:VCALENDAR', '',
    ];
    fs.writeFileSync(path.join(home, 'Calendars', `Cal${i % CALENDAR_SHAPE.calendars}`, fileNameForUid(uid)), lines.join('\r\n'));
  }
  fs.mkdirSync(path.join(home, 'Journal'), { recursive: true });
  for (let d = 0; d < 365; d++) {
    const date = new Date(yearStart + d * DAY).toISOString().slice(0, 10);
    fs.writeFileSync(path.join(home, 'Journal', `${date}.md`), `## Log\n- 08:00 Coffee\n- 12:30–13:00 Lunch #food\n- 18:00 Run\n`);
  }
  const tasks = Array.from({ length: CALENDAR_SHAPE.tasks }, (_, i) => `- [ ] Task ${i} 📅 ${new Date(yearStart + Math.floor(r() * 365) * DAY).toISOString().slice(0, 10)}`);
  fs.writeFileSync(path.join(home, 'Tasks.md'), `# Tasks\n\n${tasks.join('\n')}\n`);
  return CALENDAR_SHAPE;
}

interface CalendarServer {
  url: string;
  token: string;
  readyMs: number;
  calendarMs: number;
  rss: number;
  close(): Promise<void>;
}

function startCalendarServer(dataDir: string): Promise<CalendarServer> {
  const child = spawn(process.execPath, [...benchScript('calendar-server.ts'), '--data', dataDir, '--user', USER], { cwd: REPO_DIR, stdio: ['pipe', 'pipe', 'pipe'] });
  const errLines: string[] = [];
  readline.createInterface({ input: child.stderr! }).on('line', (l) => errLines.push(l));
  const exit = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => (child.kill('SIGKILL'), reject(new Error('calendar server did not start in 300 s'))), 300_000);
    exit.then(() => (clearTimeout(timer), reject(new Error(`calendar server exited\n${errLines.slice(-20).join('\n')}`))));
    readline.createInterface({ input: child.stdout! }).on('line', (l) => {
      if (!l.startsWith('@@RESULT ')) return;
      clearTimeout(timer);
      const info = JSON.parse(l.slice('@@RESULT '.length));
      resolve({
        ...info,
        close: async () => {
          child.stdin!.write('close\n');
          const killer = setTimeout(() => child.kill('SIGKILL'), 30_000);
          await exit;
          clearTimeout(killer);
        },
      });
    });
  });
}

export interface CalendarBenchResult {
  shape: typeof CALENDAR_SHAPE;
  readyMs: number;
  /** First calendar request: reading and parsing every event file into the calendar index. */
  calendarIndexMs: number;
  rssMB: number;
  items_month: LoadResult & { meanItems?: number };
  range_week: LoadResult;
  /** Windows that are (nearly) all new: what a request costs without the window cache. */
  items_month_uncached: LoadResult;
  range_week_uncached: LoadResult;
  verdicts: Array<{ label: string; p99: number; max: number; ok: boolean }>;
}

/** Runs the calendar loads; `log` prints progress lines. */
export async function runCalendarBench(opts: { rate?: number; durationS?: number; warmupS?: number; log?: (s: string) => void; seed?: number }): Promise<CalendarBenchResult> {
  const rate = opts.rate ?? 200;
  const durationS = opts.durationS ?? 10;
  const warmupS = opts.warmupS ?? 5;
  const log = opts.log ?? ((s: string) => console.log(s));
  const dataDir = path.join(BENCH_DIR, 'vaults', `calendar-${opts.seed ?? 7}`);
  const home = path.join(dataDir, 'homes', USER);
  if (!fs.existsSync(path.join(home, 'Tasks.md'))) {
    fs.rmSync(dataDir, { recursive: true, force: true });
    log(`calendar: generating ${CALENDAR_SHAPE.events} events in ${home}`);
    generateCalendarHome(home, opts.seed ?? 7);
  }
  const server = await startCalendarServer(dataDir);
  try {
    log(`calendar: server ready in ${server.readyMs} ms; calendar index built in ${server.calendarMs} ms`);
    const y = CALENDAR_SHAPE.year;
    const month = (r: () => number) => {
      const m = 1 + Math.floor(r() * 12);
      const last = new Date(Date.UTC(y, m, 0)).getUTCDate();
      return `/api/v1/calendar/items?from=${y}-${pad(m)}-01&to=${y}-${pad(m)}-${last}&tz=Europe/Berlin`;
    };
    const week = (r: () => number) => {
      const start = Date.UTC(y, 0, 1) + Math.floor(r() * 358) * DAY;
      const d = (ms: number) => new Date(ms).toISOString().slice(0, 10);
      return `/api/v1/calendar/range?from=${d(start)}&to=${d(start + 6 * DAY)}&tz=America/New_York`;
    };
    const items = await runLoad({ base: server.url, token: server.token, pick: month, rate, durationS, warmupS });
    log(`calendar_items (one month, first page): p50 ${items.p50} p99 ${items.p99} max ${items.max} ms at ${items.rps} req/s, ${items.meanBytes} B, non2xx ${items.non2xx}`);
    const range = await runLoad({ base: server.url, token: server.token, pick: week, rate, durationS, warmupS });
    log(`calendar_range (one week): p50 ${range.p50} p99 ${range.p99} max ${range.max} ms at ${range.rps} req/s, ${range.meanBytes} B, non2xx ${range.non2xx}`);
    // Windows drawn so that nearly every request is a new one (random start day and zone): the cost without the window cache.
    const ZONES = ['Europe/Berlin', 'America/New_York', 'Australia/Sydney', 'Asia/Tokyo', 'UTC', 'America/Sao_Paulo', 'Asia/Kolkata', 'Europe/London', 'Pacific/Auckland', 'Africa/Cairo'];
    const fresh = (days: number, route: string) => (r: () => number) => {
      const start = Date.UTC(y, 0, 1) + Math.floor(r() * (365 - days)) * DAY;
      const d = (ms: number) => new Date(ms).toISOString().slice(0, 10);
      return `/api/v1/calendar/${route}?from=${d(start)}&to=${d(start + (days - 1) * DAY)}&tz=${ZONES[Math.floor(r() * ZONES.length)]}`;
    };
    const itemsFresh = await runLoad({ base: server.url, token: server.token, pick: fresh(31, 'items'), rate, durationS, warmupS });
    log(`calendar_items (31 days, uncached windows): p50 ${itemsFresh.p50} p99 ${itemsFresh.p99} max ${itemsFresh.max} ms at ${itemsFresh.rps} req/s, non2xx ${itemsFresh.non2xx}`);
    const rangeFresh = await runLoad({ base: server.url, token: server.token, pick: fresh(7, 'range'), rate, durationS, warmupS });
    log(`calendar_range (7 days, uncached windows): p50 ${rangeFresh.p50} p99 ${rangeFresh.p99} max ${rangeFresh.max} ms at ${rangeFresh.rps} req/s, non2xx ${rangeFresh.non2xx}`);
    const verdicts = [
      { label: 'calendar_items month p99 ≤ 15 ms', p99: items.p99, max: 15, ok: items.p99 <= 15 && items.non2xx === 0 },
      { label: 'calendar_range week p99 ≤ 15 ms', p99: range.p99, max: 15, ok: range.p99 <= 15 && range.non2xx === 0 },
    ];
    return { shape: CALENDAR_SHAPE, readyMs: server.readyMs, calendarIndexMs: server.calendarMs, rssMB: Math.round(server.rss / 1048576), items_month: items, range_week: range, items_month_uncached: itemsFresh, range_week_uncached: rangeFresh, verdicts };
  } finally {
    await server.close();
  }
}
