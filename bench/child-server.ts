/**
 * A real Quire server on a benchmark vault, in its own process (so the load
 * generator does not share its event loop or core). Creates the user if
 * needed, starts the server, waits until the user's Home is indexed, writes
 * the request targets (note ids, tags, backlink counts) to --targets and
 * emits { url, token, readyMs, ... }. Then it reads commands on stdin, one a
 * line: `mem` (emits memory usage: RSS, heap, old generation, full
 * collections so far), `settle` (waits for the index's background work,
 * saves the index caches now and lets the heap compaction that follows
 * run, emits when done) and `close` (stops the server, exits).
 * Usage: child-server.ts --data <dataDir> --user <name> --targets <file> --count <notes>
 */
import fs from 'node:fs';
import path from 'node:path';
import { constants, PerformanceObserver } from 'node:perf_hooks';
import readline from 'node:readline';
import v8 from 'node:v8';
import type { Caller } from '../src/accounts/caller.js';
import { heapCompaction } from '../src/memory-tuning.js';
import { prng } from '../test/helpers/generate-vault.js';
import { startServer } from '../src/server.js';
import { benchOwner } from './owner.js';
import { emit, parseArgs } from './lib.js';
import { HUB_NOTES, notePath, topicCount } from './vault-gen.js';

const args = parseArgs(process.argv.slice(2));
const dataDir = path.resolve(String(args.data));
const username = String(args.user);
const count = Number(args.count);
const targetsFile = path.resolve(String(args.targets));
const log = (line: string) => process.stderr.write(`[server] ${line}\n`);

const { user, token } = await benchOwner(dataDir, username);

const t0 = performance.now();
const server = await startServer({ dataDir, host: '127.0.0.1', port: 0, log });
const listenMs = performance.now() - t0;
const { vault } = await server.services.vaults.forCaller({ userId: user.id } as Caller);
const stats = await vault.ready;
const readyMs = performance.now() - t0;
const index = vault.index;
await index.search('vault');
const searchReadyMs = performance.now() - t0;
const memAtReady = process.memoryUsage();

// ---- request targets
const r = prng(4242);
const idOf = (p: string) => index.noteByPath(p)?.id ?? null;
const sample = (n: number, pool: number) => Array.from({ length: n }, () => Math.floor(r() * pool));
const ids = sample(1000, count)
  .map((i) => idOf(notePath(i)))
  .filter((x): x is string => x !== null);
const randomBacklinks = sample(1000, count).map((i) => {
  const p = notePath(i);
  return { id: idOf(p)!, path: p, backlinks: index.backlinkCount(p) };
});
const popular = { id: idOf(notePath(0))!, path: notePath(0), backlinks: index.backlinkCount(notePath(0)) };
const hub = { id: idOf(`${HUB_NOTES[0]}.md`)!, path: `${HUB_NOTES[0]}.md`, backlinks: index.backlinkCount(`${HUB_NOTES[0]}.md`) };
const tagCounts = new Map(index.tags().map((t) => [t.tag.toLowerCase(), t.count]));
const topics = topicCount(count);
const topTag = { tag: 'topic-0', notes: tagCounts.get('topic-0') ?? 0 };
const randomTags = sample(500, topics).map((k) => ({ tag: `topic-${k}`, notes: tagCounts.get(`topic-${k}`) ?? 0 }));
const hugeTag = { tag: 'project', notes: tagCounts.get('project') ?? 0 };
const targets = { ids, popular, hub, randomBacklinks, topTag, randomTags, hugeTag };
fs.writeFileSync(targetsFile, JSON.stringify(targets));

emit({
  url: server.url,
  token,
  listenMs: Math.round(listenMs),
  readyMs: Math.round(readyMs),
  searchReadyMs: Math.round(searchReadyMs),
  stats,
  rss: memAtReady.rss,
  heapUsed: memAtReady.heapUsed,
  pid: process.pid,
});

const rl = readline.createInterface({ input: process.stdin });
let closing = false;
async function close() {
  if (closing) return;
  closing = true;
  const t = performance.now();
  await server.close();
  emit({ closed: true, closeMs: Math.round(performance.now() - t) });
  process.exit(0);
}
// Full (mark-compact) collections so far: the bench counts those during each read run.
let fullGcs = 0;
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) if ((e as PerformanceEntry & { detail?: { kind?: number } }).detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR) fullGcs++;
}).observe({ entryTypes: ['gc'] });
rl.on('line', (line) => {
  const cmd = line.trim();
  if (cmd === 'mem') {
    const m = process.memoryUsage();
    const oldSpace = v8.getHeapSpaceStatistics().find((s) => s.space_name === 'old_space')?.space_used_size ?? 0;
    emit({ rss: m.rss, heapUsed: m.heapUsed, oldSpace, fullGcs });
  } else if (cmd === 'settle') {
    // Finish the index's background work (links, tags, the full text's merge) and save what the
    // edits changed now, so every read run starts from the same, quiet state.
    const t = performance.now();
    const runs = heapCompaction.runs;
    const pendingAtSettle = vault.index.pendingWork();
    void vault.index
      .whenIdle()
      .then(() => vault.saveSnapshot())
      .then(() => heapCompaction.settled())
      .then(
        () => emit({ settled: true, ms: Math.round(performance.now() - t), compacted: heapCompaction.runs > runs, heapUsed: process.memoryUsage().heapUsed, pendingAtSettle }),
        (e: unknown) => emit({ settled: false, error: String(e) }),
      );
  } else if (cmd === 'close') void close();
});
rl.on('close', () => void close());
