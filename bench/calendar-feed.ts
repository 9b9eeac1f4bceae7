/**
 * The feed part of the calendar benchmark (docs/calendar.md, "Feeds"): the published feed of one
 * calendar holding all 10,000 events of bench/calendar.ts's Home (500 recurring, 50 zones).
 * Figures: the calendar index built from the files (the first calendar request), the feed cold
 * (index in memory, nothing of the feed built or serialised yet), busy-only cold, cached, 304s,
 * and the first GET after one event changed.
 * Goal: cold ≤ 300 ms.
 */
import fs from 'node:fs';
import path from 'node:path';
import { CALENDAR_SHAPE, generateCalendarHome } from './calendar.js';
import { BENCH_DIR, round, runChild, type Stats } from './lib.js';

const USER = 'feedbench';
export const FEED_COLD_GOAL_MS = 300;

export interface CalendarFeedBenchResult {
  events: number;
  bytes: number;
  busyBytes: number;
  indexMs: number;
  coldMs: number;
  coldCpuMs: number;
  busyColdMs: number;
  busyColdCpuMs: number;
  cached: Stats;
  notModified: Stats;
  createMs: number;
  afterChangeMs: number;
  verdict: { label: string; value: number; max: number; ok: boolean };
  /** Every run's cold figures (wall and CPU ms). */
  runs: Array<{ coldMs: number; coldCpuMs: number; busyColdMs: number; busyColdCpuMs: number }>;
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

type Run = Omit<CalendarFeedBenchResult, 'verdict' | 'runs'>;

/** `runs` fresh server processes (a cold feed happens once per process); the run with the median cold time stands for them. */
export async function runCalendarFeedBench(opts: { seed?: number; runs?: number; cachedRuns?: number; log?: (s: string) => void } = {}): Promise<CalendarFeedBenchResult> {
  const log = opts.log ?? ((s: string) => console.log(s));
  const dataDir = ensureHome(opts.seed ?? 7, log);
  const runs: Run[] = [];
  for (let i = 0; i < (opts.runs ?? 3); i++) {
    runs.push(await runChild<Run>('calendar-feed-child.ts', ['--data', dataDir, '--user', USER, '--cached', String(opts.cachedRuns ?? 50)], [], 300_000));
  }
  const r = [...runs].sort((a, b) => a.coldMs - b.coldMs)[Math.floor((runs.length - 1) / 2)]!;
  const ms = (x: number) => `${round(x, 1)} ms`;
  log(
    `calendar feed (${r.events} events, ${Math.round(r.bytes / 1024)} KiB; calendar index ${ms(r.indexMs)}; median of ${runs.length} runs): ` +
      `cold ${ms(r.coldMs)} (CPU ${ms(r.coldCpuMs)}), busy-only cold ${ms(r.busyColdMs)} (CPU ${ms(r.busyColdCpuMs)}, ${Math.round(r.busyBytes / 1024)} KiB); cached p50 ${ms(r.cached.p50)} p99 ${ms(r.cached.p99)}; ` +
      `304 p50 ${ms(r.notModified.p50)} p99 ${ms(r.notModified.p99)}; after one event changed ${ms(r.afterChangeMs)}`,
  );
  const verdict = { label: `calendar feed cold ≤ ${FEED_COLD_GOAL_MS} ms (10k events)`, value: round(r.coldMs, 1), max: FEED_COLD_GOAL_MS, ok: r.coldMs <= FEED_COLD_GOAL_MS };
  const cold = runs.map((x) => ({ coldMs: round(x.coldMs, 1), coldCpuMs: round(x.coldCpuMs, 1), busyColdMs: round(x.busyColdMs, 1), busyColdCpuMs: round(x.busyColdCpuMs, 1) }));
  log(`  cold runs (wall/CPU ms): ${cold.map((x) => `${x.coldMs}/${x.coldCpuMs}`).join(', ')}; busy-only ${cold.map((x) => `${x.busyColdMs}/${x.busyColdCpuMs}`).join(', ')}`);
  return { ...r, verdict, runs: cold };
}

// `node bench/calendar-feed.ts` runs the feed figures alone.
if (process.argv[1] && /calendar-feed\.[jt]s$/.test(process.argv[1])) await runCalendarFeedBench();
