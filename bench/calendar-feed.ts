/**
 * The feed part of the calendar benchmark (docs/calendar.md, "Feeds"): the published feed of one
 * calendar holding all 10,000 events of bench/calendar.ts's Home (500 recurring, 50 zones).
 * Figures: the first request after start (the calendar index read from the files, then the
 * feed built), cold (index in memory, feed not built yet), busy-only cold, cached, and 304s.
 * Goal: cold ≤ 300 ms.
 */
import fs from 'node:fs';
import path from 'node:path';
import { CALENDAR_SHAPE, generateCalendarHome } from './calendar.js';
import { BENCH_DIR, round, runChild } from './lib.js';

const USER = 'feedbench';
export const FEED_COLD_GOAL_MS = 300;

interface Stats {
  n: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  mean: number;
}

export interface CalendarFeedBenchResult {
  events: number;
  bytes: number;
  busyBytes: number;
  firstMs: number;
  coldMs: number;
  busyColdMs: number;
  cached: Stats;
  notModified: Stats;
  verdict: { label: string; value: number; max: number; ok: boolean };
}

/** The benchmark Home with every event moved into calendar `Cal0`. */
function ensureHome(seed: number, log: (s: string) => void): string {
  const dataDir = path.join(BENCH_DIR, 'vaults', `calendar-feed-${seed}`);
  const home = path.join(dataDir, 'homes', USER);
  const cals = path.join(home, 'Calendars');
  if (fs.existsSync(path.join(cals, 'Cal0')) && !fs.existsSync(path.join(cals, 'Cal1'))) return dataDir;
  fs.rmSync(dataDir, { recursive: true, force: true });
  log(`calendar feed: generating ${CALENDAR_SHAPE.events} events in one calendar under ${home}`);
  generateCalendarHome(home, seed);
  for (const dir of fs.readdirSync(cals)) {
    if (dir === 'Cal0') continue;
    for (const f of fs.readdirSync(path.join(cals, dir))) if (f.endsWith('.ics')) fs.renameSync(path.join(cals, dir, f), path.join(cals, 'Cal0', f));
    fs.rmSync(path.join(cals, dir), { recursive: true });
  }
  return dataDir;
}

export async function runCalendarFeedBench(opts: { seed?: number; cachedRuns?: number; log?: (s: string) => void } = {}): Promise<CalendarFeedBenchResult> {
  const log = opts.log ?? ((s: string) => console.log(s));
  const dataDir = ensureHome(opts.seed ?? 7, log);
  const r = await runChild<Omit<CalendarFeedBenchResult, 'verdict'>>('calendar-feed-child.ts', ['--data', dataDir, '--user', USER, '--cached', String(opts.cachedRuns ?? 50)], [], 300_000);
  const ms = (x: number) => `${round(x, 1)} ms`;
  log(
    `calendar feed (${r.events} events, ${Math.round(r.bytes / 1024)} KiB): first request after start ${ms(r.firstMs)}; cold ${ms(r.coldMs)} ` +
      `(busy-only ${ms(r.busyColdMs)}, ${Math.round(r.busyBytes / 1024)} KiB); cached p50 ${ms(r.cached.p50)} p99 ${ms(r.cached.p99)}; 304 p50 ${ms(r.notModified.p50)} p99 ${ms(r.notModified.p99)}`,
  );
  const verdict = { label: `calendar feed cold ≤ ${FEED_COLD_GOAL_MS} ms (10k events)`, value: round(r.coldMs, 1), max: FEED_COLD_GOAL_MS, ok: r.coldMs <= FEED_COLD_GOAL_MS };
  return { ...r, verdict };
}

// `node bench/calendar-feed.ts` runs the feed figures alone.
if (process.argv[1] && /calendar-feed\.[jt]s$/.test(process.argv[1])) await runCalendarFeedBench();
