/**
 * `npm run bench`: indexing and HTTP benchmarks on generated vaults.
 *
 *   npm run bench                         1k and 10k notes
 *   npm run bench -- --full               also 100k
 *   npm run bench -- --sizes 10000        only these sizes (comma-separated)
 *   npm run bench -- --duration 10        seconds per fixed-rate load run (default 5)
 *   npm run bench -- --max-duration 2     seconds per max-throughput run (default 2)
 *   npm run bench -- --warmup 10          seconds of load at the fixed rate, not counted, before each route's runs (default 10)
 *   npm run bench -- --no-floor           skip the replay floor (the same load against a bare server replaying the answers)
 *   npm run bench -- --rate 1000          fixed rate, req/s (default 1000)
 *   npm run bench -- --edits 200          external edits measured (default 200)
 *   npm run bench -- --edit-budget 60     seconds before the edit phase stops early (default 60)
 *   npm run bench -- --edit-probe search  see an edit through search instead of its new tag
 *   npm run bench -- --skip-http          indexing figures only
 *   npm run bench -- --routes note_backlinks,search   only these read routes under load
 *   npm run bench -- --skip-index         HTTP figures only (server starts from the last cold run's snapshot)
 *   npm run bench -- --phases             also time the cold-index phases separately
 *   npm run bench -- --index-runs 3       cold and warm index runs per size; the median counts (default 3 up to 10k notes, 1 above)
 *   npm run bench -- --child-timeout 300  seconds before an indexing child is killed
 *   npm run bench -- --skip-calendar      no calendar section; --calendar-only: only it (docs/calendar.md)
 *   npm run bench -- --skip-public        no public-link thumbnails section (bench/public-thumbs.ts)
 *   npm run bench -- --startup-runs 10    runs of each start-up figure (default 10; 0 skips them)
 *   npm run bench -- --skip-upload        no file drop section (bench/public-upload.ts: 1 GiB through tus vs cp)
 *   npm run bench -- --skip-collab        no collaboration section (bench/collab.ts)
 *   npm run bench -- --skip-cli           no command-line section (bench/cli.ts: vault daemon calls beside grep -rl)
 *   npm run bench -- --out bench/results.json
 *   npm run bench -- --cpu-prof DIR       CPU profiles of the index children (cold, warm) into DIR
 *   npm run bench -- --server-cpu-prof DIR  CPU profile of the server process (edits + load) into DIR
 *   npm run bench -- --server-node-args=--trace-gc-nvp --server-stdout FILE
 *                                         extra Node.js flags for the server (space-separated), and a file for its other stdout
 *
 * See docs/benchmarks.md for what each figure means.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { probe, runLoad, getJson, getRaw, measureEdits, pathsDrawn, startReplayChild, startServerChild, type LoadResult, type ServerChild } from './http-load.js';
import { BENCH_DIR, ChildTimeout, mb, parseArgs, round, runChild, SERVER_NODE_FLAGS, sleep } from './lib.js';
import { startupFigures } from './startup.js';
import { cliFigures } from './cli.js';
import { runCalendarBench } from './calendar.js';
import { runPublicThumbBench } from './public-thumbs.js';
import { runCalendarFeedBench } from './calendar-feed.js';
import { runPublicUploadBench } from './public-upload.js';
import { benchNoteText, DEFAULT_SEED, dirtyMarker, ensureVault, notePath, type BenchVault } from './vault-gen.js';
import { runCollabBench } from './collab.js';
import { runCaldavBench } from './caldav.js';
import { runCaldavSyncBench } from './caldav-sync.js';

const args = parseArgs(process.argv.slice(2));
const sizes: number[] = args.sizes
  ? String(args.sizes)
      .split(',')
      .map((s) => Number(s.trim()))
      .filter((n) => Number.isInteger(n) && n > 0)
  : args.full
    ? [1000, 10000, 100000]
    : [1000, 10000];
const seed = args.seed ? Number(args.seed) : DEFAULT_SEED;
const durationS = args.duration ? Number(args.duration) : 5;
const maxDurationS = args['max-duration'] ? Number(args['max-duration']) : 2;
const warmupS = args.warmup !== undefined ? Number(args.warmup) : 10;
const rate = args.rate ? Number(args.rate) : 1000;
const edits = args.edits !== undefined ? Number(args.edits) : 200;
const editBudgetS = args['edit-budget'] ? Number(args['edit-budget']) : 60;
const childTimeoutMs = (args['child-timeout'] ? Number(args['child-timeout']) : 300) * 1000;
const outFile = path.resolve(String(args.out ?? path.join(BENCH_DIR, 'results.json')));
const vaultsDir = path.join(BENCH_DIR, 'vaults');

/** The targets, for a 10k-note vault (~30 MB) on a 2-core machine; backlinks on 100k. */
const TARGETS = {
  coldMs: { max: 3000, size: 10000, label: 'cold index ≤ 3 s (10k)' },
  warmMs: { max: 1000, size: 10000, label: 'warm restart ≤ 1 s (10k)' },
  editP99: { max: 200, size: 10000, label: 'external edit p99 ≤ 200 ms (10k)' },
  readP99: { max: 10, size: 10000, label: 'read p99 ≤ 10 ms at 1,000 req/s (10k)' },
  backlinksP99_100k: { max: 5, size: 100000, label: 'backlinks p99 ≤ 5 ms at 1,000 req/s (100k)' },
  rssMB: { max: 250, size: 10000, label: 'RSS after indexing ≤ 250 MB (10k)' },
};

const ROUTES = ['get_note', 'notes_list', 'note_backlinks', 'by_tag', 'search'] as const;
type RouteName = (typeof ROUTES)[number];
const SEARCH_WORDS = ['note', 'vault', 'project', 'meeting', 'review', 'garden', 'journal', 'idea', 'weekly', 'research'];

const log = (s: string) => console.log(s);
const results: any = {
  meta: {
    date: new Date().toISOString(),
    node: process.version,
    cpu: os.cpus()[0]?.model ?? 'unknown',
    cores: os.cpus().length,
    platform: `${os.platform()} ${os.release()} ${os.arch()}`,
    totalMemMB: Math.round(os.totalmem() / 1024 / 1024),
    /** 1/5/15-minute load averages when the run started: other work on the machine skews every figure. */
    loadavgAtStart: os.loadavg().map((x) => round(x, 2)),
    args: process.argv.slice(2),
    seed,
    rate,
    durationS,
    warmupS,
    maxDurationS,
    edits,
    editBudgetS,
  },
  targets: TARGETS,
  sizes: {} as Record<string, any>,
  verdicts: [] as any[],
};

function save() {
  fs.writeFileSync(outFile, JSON.stringify(results, null, 2) + '\n');
}

const profArgs = (flag: string) => (args[flag] ? ['--cpu-prof', `--cpu-prof-dir=${path.resolve(String(args[flag]))}`] : []);

async function child<T>(what: string, script: string, a: string[]): Promise<T | { error: string; timeout?: boolean }> {
  try {
    // The index children run with the server's Node.js flags: they stand for the server indexing a Home.
    return await runChild<T>(script, a, script === 'child-index.ts' ? [...SERVER_NODE_FLAGS, '--expose-gc', ...profArgs('cpu-prof')] : [], childTimeoutMs);
  } catch (e) {
    const timeout = e instanceof ChildTimeout;
    log(`  ${what}: ${timeout ? `TIMEOUT after ${childTimeoutMs / 1000} s` : 'FAILED'}${timeout ? '' : '\n' + String((e as Error).message).slice(0, 3000)}`);
    return { error: (e as Error).message.split('\n')[0]!, ...(timeout ? { timeout: true } : {}) };
  }
}

/**
 * `n` runs of an index child, each in a fresh process; the run with the
 * median ready time stands for them (one run on a shared VM can be off by
 * 10 % either way). Stops at the first failed run and returns it.
 */
async function indexRuns(what: string, a: string[], n: number): Promise<{ median: any; runs: any[] }> {
  const runs: any[] = [];
  for (let i = 0; i < n; i++) {
    const r: any = await child(what, 'child-index.ts', a);
    if (r.readyMs === undefined) return { median: r, runs: [...runs, r] };
    runs.push(r);
  }
  const byReady = [...runs].sort((x, y) => x.readyMs - y.readyMs);
  return { median: byReady[Math.floor((byReady.length - 1) / 2)], runs };
}

/** 1. floor, 2. cold index, 3. warm restart (each run in a fresh process). */
async function indexFigures(out: any, v: BenchVault, cacheFile: string, count: number) {
  out.floor = await child('floor', 'child-floor.ts', ['--root', v.root]);
  if (out.floor.ms !== undefined) log(`  floor (walk + read + sha256): ${out.floor.ms} ms`);

  // Three runs up to 10k notes; one at 100k, where a run takes half a minute and the targets do not apply.
  const n = args['index-runs'] !== undefined ? Math.max(1, Number(args['index-runs'])) : count <= 10000 ? 3 : 1;
  const cold = await indexRuns('cold index', ['--root', v.root, '--cache', cacheFile, '--fresh'], n);
  out.cold = cold.median;
  out.coldRuns = cold.runs.map((r) => ({ readyMs: r.readyMs, searchReadyMs: r.searchReadyMs, rss: r.rss }));
  if (out.cold.readyMs !== undefined) {
    log(
      `  cold index: ready in ${out.cold.readyMs} ms, searchable in ${out.cold.searchReadyMs} ms, RSS ${mb(out.cold.rss)} MB (heap ${mb(out.cold.heapUsed)} MB, ${out.cold.heapUsedAfterGc ? mb(out.cold.heapUsedAfterGc) : '?'} MB live after GC), cache ${mb(out.cold.cacheBytes)} MB${n > 1 ? ` (median of ${n} runs: ${out.coldRuns.map((r: any) => r.readyMs).join(' / ')} ms)` : ''}`,
    );
  }
  if (fs.existsSync(cacheFile) && out.cold.readyMs !== undefined) {
    const warm = await indexRuns('warm restart', ['--root', v.root, '--cache', cacheFile], n);
    out.warm = warm.median;
    out.warmRuns = warm.runs.map((r) => ({ readyMs: r.readyMs, searchReadyMs: r.searchReadyMs, rss: r.rss }));
    if (out.warm.readyMs !== undefined) {
      log(`  warm restart: ready in ${out.warm.readyMs} ms (${out.warm.stats.parsed} parsed), searchable in ${out.warm.searchReadyMs} ms, RSS ${mb(out.warm.rss)} MB${n > 1 ? ` (median of ${n} runs: ${out.warmRuns.map((r: any) => r.readyMs).join(' / ')} ms)` : ''}`);
    }
  } else {
    out.warm = { error: 'no cache file from the cold run' };
  }
  if (args.phases) {
    out.phases = await child('phases', 'child-phases.ts', ['--root', v.root]);
    if (out.phases.phases) log(`  phases (sync, ms): ${JSON.stringify(out.phases.phases)}`);
  }
}

async function benchSize(count: number) {
  const out: any = { loadavgAtStart: os.loadavg().map((x) => round(x, 2)) };
  results.sizes[count] = out;
  log(`\n== ${count.toLocaleString('en')} notes ==`);

  const tg = performance.now();
  const v: BenchVault = ensureVault(vaultsDir, count, seed, log);
  const m = v.manifest;
  out.vault = { notes: m.notes, files: m.files, MB: mb(m.bytes), noteMB: mb(m.noteBytes), avgNoteKB: round(m.noteBytes / m.notes / 1024, 2), reused: v.reused, genMs: v.reused ? 0 : Math.round(performance.now() - tg) };
  log(`  vault: ${m.notes} notes, ${m.files} files, ${mb(m.bytes)} MB (${v.reused ? 'reused' : `generated in ${out.vault.genMs} ms`})`);

  const cacheFile = path.join(v.dir, 'index-cache.ndjson');
  if (args['skip-index']) out.floor = out.cold = out.warm = { skipped: true };
  else await indexFigures(out, v, cacheFile, count);
  save();
  if (args['skip-http']) return;

  // Server: fresh state; start warm from the cold run's snapshot when there is one.
  fs.rmSync(path.join(v.dataDir, 'state'), { recursive: true, force: true });
  if (fs.existsSync(cacheFile) && (out.cold.readyMs !== undefined || args['skip-index'])) {
    fs.mkdirSync(path.join(v.dataDir, 'state', 'cache'), { recursive: true });
    const serverCache = path.join(v.dataDir, 'state', 'cache', `${v.user}.index.ndjson`);
    fs.copyFileSync(cacheFile, serverCache);
    if (fs.existsSync(cacheFile + '.search')) fs.copyFileSync(cacheFile + '.search', serverCache + '.search');
  }
  let server: ServerChild;
  try {
    server = await startServerChild({ dataDir: v.dataDir, user: v.user, count, targetsFile: path.join(v.dir, 'targets.json'),
      timeoutMs: childTimeoutMs * 2,
      nodeArgs: [...SERVER_NODE_FLAGS, ...profArgs('server-cpu-prof'), ...(args['server-node-args'] ? String(args['server-node-args']).split(/\s+/).filter(Boolean) : [])],
      stdoutFile: args['server-stdout'] ? path.resolve(String(args['server-stdout'])) : undefined,
    });
  } catch (e) {
    log(`  server: FAILED ${(e as Error).message}`);
    out.server = { error: (e as Error).message.split('\n')[0] };
    save();
    return;
  }
  const { url, token } = server.info;
  const t = server.targets;
  out.server = { startMs: server.info.readyMs, searchReadyMs: server.info.searchReadyMs, parsed: server.info.stats.parsed, rssAtReady: server.info.rss };
  log(`  server: Home ready in ${server.info.readyMs} ms (${server.info.stats.parsed} parsed), RSS ${mb(server.info.rss)} MB`);
  const edited = new Set<number>();
  /** Has the server save its index caches now (and collect the heap if that is due) and waits for it, so every read run starts from the same, quiet state; the ms it took. */
  const settle = async () => {
    const tw = performance.now();
    const s = await server.settle();
    await sleep(500);
    out.server.settle = { compacted: s.compacted ?? false, heapUsedAfter: s.heapUsed ?? null, pendingAtSettle: s.pendingAtSettle ?? null };
    const p = s.pendingAtSettle;
    if (p && p.notes + p.keys + p.tags > 0) log(`  background index work still pending at the settle, waited for: ${p.notes} notes' links, ${p.keys} link keys, ${p.tags} notes' tags`);
    if (s.compacted) log(`  heap collected after the save: ${mb(s.heapUsed ?? 0)} MB used`);
    return Math.round(performance.now() - tw);
  };
  try {
    // 4. external edit → visible
    if (edits > 0) {
      fs.writeFileSync(dirtyMarker(v.dir), 'edits in progress\n');
      const e = await measureEdits({
        base: url,
        token,
        root: v.root,
        count,
        edits,
        notePath,
        original: (i) => benchNoteText(seed, count, i),
        onEdited: (i) => edited.add(i),
        probe: args['edit-probe'] === 'search' ? 'search' : 'tag',
        budgetMs: editBudgetS * 1000,
      });
      out.edit = e;
      // The edits make the server save its index caches once they stop: now rather than during the reads.
      e.snapshotSettleMs = await settle();
      log(
        `  external edit → visible (${e.probe} probe): p50 ${e.p50} ms, p99 ${e.p99} ms, max ${e.max} ms (${e.edits} edits, ${e.timeouts} timeouts, ${e.polls} polls${e.stoppedEarly ? '; STOPPED EARLY' : ''}); snapshot save settled after ${e.snapshotSettleMs} ms`,
      );
      save();
    } else {
      // No edits: the server may still be saving caches it found stale at start.
      await settle();
    }

    // 5. read actions under load
    const listPaths = ['/api/v1/notes?limit=50', '/api/v1/notes?limit=50&sort=-updated', '/api/v1/notes?limit=50&sort=created'];
    let cursor: string | null = null;
    for (let k = 0; k < 20; k++) {
      const res = await getJson(url, token, `/api/v1/notes?limit=50${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      cursor = res.body?.next_cursor ?? null;
      if (!cursor) break;
      listPaths.push(`/api/v1/notes?limit=50&cursor=${encodeURIComponent(cursor)}`);
    }
    const at = <T>(r: () => number, xs: T[]) => xs[Math.floor(r() * xs.length)]!;
    const enc = encodeURIComponent;
    const picks: Record<RouteName, (r: () => number) => string> = {
      get_note: (r) => `/api/v1/notes/${enc(at(r, t.ids))}`,
      notes_list: (r) => at(r, listPaths),
      note_backlinks: (r) => `/api/v1/notes/${enc(r() < 0.1 ? t.popular.id : at(r, t.randomBacklinks).id)}/backlinks`,
      by_tag: (r) => `/api/v1/notes/tags/${r() < 0.1 ? t.topTag.tag : at(r, t.randomTags).tag}`,
      search: (r) => `/api/v1/notes/search?q=${at(r, SEARCH_WORDS)}`,
    };
    const avg = (xs: number[]) => round(xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length), 1);
    out.readMix = {
      get_note: `${t.ids.length} random notes`,
      notes_list: `${listPaths.length} pages (limit 50; first pages of 3 sorts, then title-order cursors)`,
      note_backlinks: `10% ${t.popular.path} (${t.popular.backlinks} backlinks), 90% random notes (avg ${avg(t.randomBacklinks.map((x) => x.backlinks))} backlinks)`,
      by_tag: `10% #${t.topTag.tag} (${t.topTag.notes} notes), 90% random #topic-N (avg ${avg(t.randomTags.map((x) => x.notes))} notes)`,
      search: `one of ${SEARCH_WORDS.length} common words (${SEARCH_WORDS.join(', ')}), default limit`,
    };
    out.read = {};
    for (const route of args.routes ? ROUTES.filter((r) => String(args.routes).split(',').includes(r)) : ROUTES) {
      // The same load first, not counted: both processes' code gets compiled for this route, as in a server that has been running.
      const m0 = await server.mem();
      const fixed: LoadResult = await runLoad({ base: url, token, pick: picks[route], rate, durationS, warmupS });
      const m1 = await server.mem();
      // What the fixed-rate run (warm-up included) left in the server's old generation, and the full collections it caused.
      const heap = { oldGrowthMBps: round((m1.oldSpace - m0.oldSpace) / 1024 / 1024 / (durationS + warmupS), 2), fullGcs: m1.fullGcs - m0.fullGcs };
      const max: LoadResult = await runLoad({ base: url, token, pick: picks[route], rate: null, durationS: maxDurationS, seed: 7 });
      out.read[route] = { fixed, max, heap };
      if (!args['no-floor']) out.read[route].floor = await replayFloor(url, token, picks[route], path.join(v.dir, `replay-${route}.json`));
      const bad = fixed.errors + fixed.non2xx + fixed.timeouts;
      const floor: LoadResult | undefined = out.read[route].floor;
      log(
        `  ${route.padEnd(15)} @${rate}/s: p50 ${fixed.p50} ms, p99 ${fixed.p99} ms (by second ${fixed.p99BySecond.join(' / ')}), ${fixed.rps} req/s${bad ? `, ${bad} ERRORS/non-2xx` : ''}, ~${Math.round(fixed.meanBytes / 1024)} KB/resp, old gen ${heap.oldGrowthMBps >= 0 ? '+' : ''}${heap.oldGrowthMBps} MB/s, ${heap.fullGcs} full GC | max ${max.rps} req/s (p99 ${max.p99} ms${max.errors + max.non2xx ? `, ${max.errors + max.non2xx} errors/non-2xx` : ''})${floor ? ` | replay floor p50 ${floor.p50} ms, p99 ${floor.p99} ms` : ''}`,
      );
      save();
    }

    // Pathological hubs, one request at a time (no load): not part of the targets.
    out.hubs = {
      backlinks_hub: { note: t.hub.path, backlinks: t.hub.backlinks, ...(await probe(url, token, `/api/v1/notes/${enc(t.hub.id)}/backlinks`, 10)) },
      by_tag_huge: { tag: t.hugeTag.tag, notes: t.hugeTag.notes, ...(await probe(url, token, `/api/v1/notes/tags/${t.hugeTag.tag}`, 10)) },
    };
    for (const [k, h] of Object.entries(out.hubs) as Array<[string, any]>) {
      log(`  ${k} (${h.note ?? '#' + h.tag}, ${h.backlinks ?? h.notes} items): p50 ${h.p50} ms, max ${h.max} ms, ${mb(h.bytes)} MB per response`);
    }
    const mem = await server.mem();
    out.server.rssAfterLoad = mem.rss;
    out.server.heapUsedAfterLoad = mem.heapUsed;
    log(`  server RSS after load: ${mb(mem.rss)} MB`);
  } finally {
    await server.close();
    for (const i of edited) fs.writeFileSync(path.join(v.root, notePath(i)), benchNoteText(seed, count, i));
    fs.rmSync(dirtyMarker(v.dir), { force: true });
    save();
  }
}

// ------------------------------------------------------------------ table

type Verdict = 'PASS' | 'FAIL' | 'n/a';
function verdict(ok: boolean | null): Verdict {
  return ok === null ? 'n/a' : ok ? 'PASS' : 'FAIL';
}

function report() {
  const cols = sizes.map((n) => results.sizes[n]);
  const num = (x: unknown, unit = '') => (typeof x === 'number' && Number.isFinite(x) ? `${x}${unit}` : x === undefined ? '-' : String(x));
  const rows: Array<{ label: string; values: string[]; target: string; verdict: Verdict | '' }> = [];
  const get = (n: number, f: (s: any) => unknown) => {
    try {
      return f(results.sizes[n]);
    } catch {
      return undefined;
    }
  };
  const has = (n: number) => sizes.includes(n) && results.sizes[n];
  const failText = (s: any) => (s?.timeout ? 'TIMEOUT' : s?.error ? 'ERROR' : undefined);
  const add = (label: string, f: (s: any) => unknown, unit: string, target?: { max: number; size: number }, readTarget = false) => {
    const values = cols.map((s) => {
      const v = (() => {
        try {
          return f(s);
        } catch {
          return undefined;
        }
      })();
      return num(v, typeof v === 'number' ? unit : '');
    });
    let v: Verdict | '' = '';
    if (target) {
      if (!has(target.size)) v = 'n/a';
      else {
        const x = get(target.size, f);
        const ok = typeof x === 'number' && x <= target.max;
        let extra = true;
        if (readTarget) extra = get(target.size, (s) => s.read && true) === true;
        v = verdict(ok && extra);
        results.verdicts.push({ metric: label, size: target.size, value: x ?? null, max: target.max, verdict: v });
      }
    }
    rows.push({ label, values, target: target ? `≤ ${target.max}${unit} @${target.size / 1000}k` : '', verdict: v });
  };
  results.verdicts = [];
  add('vault size', (s) => s.vault.MB, ' MB');
  add('floor: walk+read+sha256', (s) => s.floor.ms ?? failText(s.floor), ' ms');
  add('cold index → ready', (s) => s.cold.readyMs ?? failText(s.cold), ' ms', TARGETS.coldMs);
  add('  runs (ms; median above)', (s) => (s.coldRuns?.length > 1 ? s.coldRuns.map((r: any) => r.readyMs).join(' / ') : undefined), '');
  add('cold index → searchable', (s) => s.cold.searchReadyMs ?? failText(s.cold), ' ms');
  // The highest of the runs: a memory target is met only if every run met it.
  add('RSS after cold index', (s) => (s.cold.rss ? mb(Math.max(s.cold.rss, ...(s.coldRuns ?? []).map((r: any) => r.rss ?? 0))) : failText(s.cold)), ' MB', TARGETS.rssMB);
  add('  live heap after GC (cold)', (s) => (s.cold.heapUsedAfterGc ? mb(s.cold.heapUsedAfterGc) : undefined), ' MB');
  add('warm restart → ready', (s) => s.warm.readyMs ?? failText(s.warm), ' ms', TARGETS.warmMs);
  add('  runs (ms; median above)', (s) => (s.warmRuns?.length > 1 ? s.warmRuns.map((r: any) => r.readyMs).join(' / ') : undefined), '');
  add('warm restart → searchable', (s) => s.warm.searchReadyMs ?? failText(s.warm), ' ms');
  add('RSS after warm restart', (s) => (s.warm.rss ? mb(s.warm.rss) : failText(s.warm)), ' MB');
  add('index snapshot size', (s) => (s.cold.cacheBytes ? mb(s.cold.cacheBytes) : undefined), ' MB');
  if (!args['skip-http']) {
    add('server start (warm) → ready', (s) => s.server.startMs, ' ms');
    add('external edit p50', (s) => s.edit.p50, ' ms');
    add('external edit p99', (s) => s.edit.p99, ' ms', TARGETS.editP99);
    add('external edit max', (s) => s.edit.max, ' ms');
    // Routes left out by --routes have no figures, and so no verdict.
    for (const r of ROUTES.filter((route) => cols.some((s) => s.read?.[route] !== undefined))) {
      const badOf = (s: any) => s.read[r].fixed.errors + s.read[r].fixed.non2xx + s.read[r].fixed.timeouts;
      // A p99 only counts when the rate was met and nothing failed.
      const p99ok = (s: any) => {
        const f = s.read[r].fixed;
        return f.rps >= 0.95 * rate && badOf(s) === 0 ? f.p99 : `${f.p99}*`;
      };
      add(`${r} p50 @${rate}/s`, (s) => s.read[r].fixed.p50, ' ms');
      add(`${r} p99 @${rate}/s`, p99ok, ' ms', TARGETS.readP99);
      add(`  replay floor p50 / p99 (ms)`, (s) => (s.read[r].floor ? `${s.read[r].floor.p50} / ${s.read[r].floor.p99}` : undefined), ' ms');
      if (r === 'note_backlinks') {
        if (has(100000)) {
          const x = get(100000, p99ok);
          const v = verdict(typeof x === 'number' && x <= TARGETS.backlinksP99_100k.max);
          results.verdicts.push({ metric: 'note_backlinks p99 (100k)', size: 100000, value: x ?? null, max: 5, verdict: v });
          rows.push({ label: '  backlinks p99 target @100k', values: cols.map(() => ''), target: '≤ 5 ms @100k', verdict: v });
        } else rows.push({ label: '  backlinks p99 target @100k', values: cols.map(() => ''), target: '≤ 5 ms @100k', verdict: 'n/a' });
      }
      add(`${r} achieved req/s`, (s) => s.read[r].fixed.rps, '');
      add(`${r} errors+non2xx`, (s) => badOf(s), '');
      add(`${r} max req/s`, (s) => s.read[r].max.rps, '');
      add(`  old gen MB/s / full GCs`, (s) => (s.read[r].heap ? `${s.read[r].heap.oldGrowthMBps} / ${s.read[r].heap.fullGcs}` : undefined), '');
    }
    add('backlinks of hub note (1 req)', (s) => s.hubs.backlinks_hub.p50, ' ms');
    add('  hub backlinks / response MB', (s) => `${s.hubs.backlinks_hub.backlinks} / ${mb(s.hubs.backlinks_hub.bytes)}`, '');
    add('by_tag #project (1 req)', (s) => s.hubs.by_tag_huge.p50, ' ms');
    add('  #project notes / response MB', (s) => `${s.hubs.by_tag_huge.notes} / ${mb(s.hubs.by_tag_huge.bytes)}`, '');
    add('server RSS after load', (s) => (s.server.rssAfterLoad ? mb(s.server.rssAfterLoad) : undefined), ' MB');
  }
  const header = ['metric', ...sizes.map((n) => `${n / 1000}k notes`), 'target', 'verdict'];
  const table = [header, ...rows.map((r) => [r.label, ...r.values, r.target, r.verdict])];
  const widths = header.map((_, c) => Math.max(...table.map((row) => String(row[c] ?? '').length)));
  const line = (row: string[]) => row.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!))).join('  ');
  const text = [
    `Quire benchmark — ${results.meta.date}, Node ${results.meta.node}, ${results.meta.cpu} × ${results.meta.cores}, load average at start ${results.meta.loadavgAtStart.join(' / ')}`,
    line(header),
    line(widths.map((w) => '-'.repeat(w))),
    ...rows.map((r) => line([r.label, ...r.values, r.target, r.verdict])),
    '(* = p99 not valid for the target: the fixed rate was not reached or some requests failed)',
    ...startupLines(),
  ].join('\n');
  results.table = text.split('\n');
  log('\n' + text);
}

/**
 * The same warm-up and fixed-rate load as a route's, against a bare HTTP
 * server that answers every path the load can draw with the bytes the Quire
 * server answered it with (fetched once, one at a time): what the load
 * generator, the loopback and Node's HTTP stack alone cost here.
 */
async function replayFloor(url: string, token: string, pick: (r: () => number) => string, bodiesFile: string): Promise<LoadResult> {
  const draws = Math.ceil(rate * (warmupS + durationS + 1));
  const bodies: Record<string, string> = {};
  for (const p of pathsDrawn(pick, [99], draws)) bodies[p] = (await getRaw(url, token, p)).bytes.toString('base64');
  fs.writeFileSync(bodiesFile, JSON.stringify(bodies));
  const replay = await startReplayChild(bodiesFile);
  try {
    return await runLoad({ base: replay.url, token, pick, rate, durationS, warmupS });
  } finally {
    await replay.close();
    fs.rmSync(bodiesFile, { force: true });
  }
}

/** The start-up figures under the table: each median, and as a multiple of a bare Node start. */
function startupLines(): string[] {
  const s = results.startup;
  if (!s?.nodeBare) return [];
  const ms = (k: string) => `${Math.round(s[k].p50)} ms`.padStart(9);
  return [
    '',
    `start-up, from process start (median of ${s.runs}):`,
    `  bare node -e 0                        ${ms('nodeBare')}`,
    `  quire --help                          ${ms('help')}  = ${s.inNodeStarts.help} bare Node starts (goal ≤ 4)`,
    `  quire actions list                    ${ms('actionsList')}  = ${s.inNodeStarts.actionsList}`,
    `  quire action run --server             ${ms('actionRunServer')}  = ${s.inNodeStarts.actionRunServer}`,
    `  quire serve → first answer (empty)    ${ms('serveFirstAnswer')}  = ${s.inNodeStarts.serveFirstAnswer} (goal ≤ 10)`,
  ];
}

// ------------------------------------------------------------------- main

const started = performance.now();
log(`Quire bench: sizes ${sizes.join(', ')}; load ${rate} req/s × ${durationS} s after ${warmupS} s of warm-up, max ${maxDurationS} s; ${edits} edits`);
try {
  const startupRuns = args['startup-runs'] !== undefined ? Number(args['startup-runs']) : 10;
  if (startupRuns > 0) {
    log('\nstart-up, from process start:');
    try {
      results.startup = await startupFigures(startupRuns, log);
    } catch (e) {
      log(`  FAILED: ${(e as Error).message.split('\n')[0]}`);
      results.startup = { error: (e as Error).message.split('\n')[0] };
    }
  }
  // The command line on a 10k-note vault (bench/cli.ts): --help, first and warm calls, each beside grep -rl and a bare Node start.
  if (!args['skip-cli'] && !args['calendar-only'] && startupRuns > 0) {
    log('\ncommand line on 10,000 notes, from process start:');
    try {
      results.cli = await cliFigures({ runs: startupRuns, log });
    } catch (e) {
      log(`  FAILED: ${(e as Error).message.split('\n')[0]}`);
      results.cli = { error: (e as Error).message.split('\n')[0] };
    }
  }
  if (args['calendar-only']) sizes.splice(0);
  for (const n of sizes) await benchSize(n);
  // The calendar section (bench/calendar.ts): its own Home and server, 200 req/s.
  if (!args['skip-calendar']) results.calendar = await runCalendarBench({ durationS, warmupS: Math.min(warmupS, 5), log });
  // Thumbnails of 200 photos through a public link (bench/public-thumbs.ts): cold, then cached.
  if (!args['skip-public']) results.publicThumbs = await runPublicThumbBench({ log });
  // The collaboration section (bench/collab.ts): its own server, 50 typists, 200 open documents.
  if (!args['skip-collab'] && !args['calendar-only']) results.collab = await runCollabBench({ log });
  // The published feed of a whole 10,000-event calendar (bench/calendar-feed.ts): cold and cached.
  if (!args['skip-calendar']) results.calendarFeed = await runCalendarFeedBench({ log });
  // The file drop (bench/public-upload.ts): 1 GiB through tus on loopback against cp, and the server's RSS growth.
  if (!args['skip-upload'] && !args['calendar-only']) results.publicUpload = await runPublicUploadBench({ log });
  // Quire's CalDAV server: a calendar-multiget of 500 events (bench/caldav.ts).
  if (!args['skip-calendar']) results.caldav = await runCaldavBench({ log });
  // Quire syncing a Radicale account of 2,000 events (bench/caldav-sync.ts): initial, unchanged, 10 changed.
  if (!args['skip-calendar']) results.caldavSync = await runCaldavSyncBench({ log });
} finally {
  results.meta.totalS = Math.round((performance.now() - started) / 1000);
  report();
  save();
  log(`\nresults: ${path.relative(process.cwd(), outFile)} (${results.meta.totalS} s)`);
}
