/**
 * What one request costs the server's heap, on the hot read routes of a bench Home: the
 * young-generation bytes each request allocates, the scavenges and full collections a
 * burst of requests causes, and how much the old generation grows per burst (garbage that
 * only a full collection frees: pretenured allocation sites, promoted request objects).
 * The figures of docs/performance.md, "Are the flags still needed?".
 *
 * The server runs in this process (startServer, with its memory tuning), the load in a child
 * process (autocannon), so that only the server's allocations are counted. Run it once with
 * the server's flags and once without, on a copy of the bench data (it starts a server on
 * the folder; other benches may be using bench/vaults/):
 *
 *   cp -a bench/vaults/n10000/data /tmp/bench-data
 *   npm run build -- --bench
 *   node [flags] dist-bench/bench/request-garbage.js --data /tmp/bench-data --targets bench/vaults/n10000/targets.json
 *     [--routes backlinks,get_note,search,not_found] [--bursts 10] [--requests 1000] [--rate 1000] [--count-bytes]
 *
 * --count-bytes: run Node with 256 MB semi-spaces (a diagnosis run only; the command is in
 * docs/performance.md) so that no scavenge falls in a burst and the young generation's growth is
 * what it allocated; each burst then starts with two forced scavenges. Otherwise bursts are `--gap`
 * ms apart (default 300), as traffic comes, and the server's idle scavenges run between them.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { constants, PerformanceObserver } from 'node:perf_hooks';
import v8 from 'node:v8';
import type { Caller } from '../src/accounts/caller.js';
import { v8GarbageCollector } from '../src/memory-tuning.js';
import { startServer } from '../src/server.js';
import { benchOwner } from './owner.js';
import { benchScript, emit, parseArgs, round, sleep, summarize } from './lib.js';

const args = parseArgs(process.argv.slice(2));

if (args.load) {
  // The load child: `amount` requests over `paths`, then the latency figures on stdout.
  const { default: autocannon } = await import('autocannon');
  const paths = JSON.parse(String(args.paths)) as string[];
  let i = 0;
  autocannon(
    {
      url: String(args.load),
      connections: 10,
      amount: Number(args.requests),
      ...(Number(args.rate) > 0 ? { overallRate: Number(args.rate) } : {}),
      timeout: 10,
      headers: { authorization: `Bearer ${String(args.token)}` },
      requests: [{ method: 'GET', setupRequest: (req) => ({ ...req, path: paths[i++ % paths.length]! }) }],
    },
    (err, res) => {
      if (err) throw err;
      emit({ requests: res.requests.total, non2xx: res.non2xx, errors: res.errors, p99: res.latency.p99, bytes: res.throughput.total });
    },
  );
} else {
  const dataDir = path.resolve(String(args.data));
  const t = JSON.parse(fs.readFileSync(path.resolve(String(args.targets)), 'utf8')) as {
    ids: string[];
    popular: { id: string };
    randomBacklinks: Array<{ id: string }>;
  };
  const requests = Number(args.requests ?? 1000);
  const bursts = Number(args.bursts ?? 10);
  const rate = Number(args.rate ?? 1000);
  const gapMs = Number(args.gap ?? 300);
  const countBytes = args['count-bytes'] === true;

  const youngMB = (v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space')?.space_size ?? 0) / 1024 / 1024;
  if (countBytes && youngMB < 128) process.stderr.write(`--count-bytes: the young generation holds ${Math.round(youngMB)} MB; scavenges will fall in the bursts (docs/performance.md)\n`);
  const { user, token } = await benchOwner(dataDir, String(args.user ?? 'bench'));
  const server = await startServer({ dataDir, host: '127.0.0.1', port: 0, log: () => undefined });
  const { vault } = await server.services.vaults.forCaller({ userId: user.id } as Caller);
  await vault.ready;
  await vault.index.search('vault');
  await vault.index.whenIdle();

  const enc = encodeURIComponent;
  const routes: Record<string, string[]> = {
    backlinks: t.randomBacklinks.map((x, k) => `/api/v1/notes/${enc(k % 10 === 0 ? t.popular.id : x.id)}/backlinks`),
    get_note: t.ids.map((id) => `/api/v1/notes/${enc(id)}`),
    search: ['note', 'vault', 'project', 'meeting', 'review'].map((w) => `/api/v1/notes/search?q=${w}`),
    not_found: ['/api/v1/notes/no-such-note/backlinks'],
  };
  let minor = 0;
  let major = 0;
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      const kind = (e as PerformanceEntry & { detail?: { kind?: number } }).detail?.kind;
      if (kind === constants.NODE_PERFORMANCE_GC_MINOR) minor++;
      else if (kind === constants.NODE_PERFORMANCE_GC_MAJOR) major++;
    }
  }).observe({ entryTypes: ['gc'] });
  const space = (name: string) => v8.getHeapSpaceStatistics().find((s) => s.space_name === name)?.space_used_size ?? 0;
  const load = (paths: string[], n: number) =>
    new Promise<{ requests: number; non2xx: number; p99: number; bytes: number }>((resolve, reject) => {
      const argv = [...benchScript('request-garbage.ts'), '--load', server.url, '--token', token, '--paths', JSON.stringify(paths), '--requests', String(n), '--rate', String(rate)];
      execFile(process.execPath, argv, { maxBuffer: 1 << 20 }, (err, out) => {
        if (err) return reject(err);
        const line = out.split('\n').find((l) => l.startsWith('@@RESULT '));
        return line ? resolve(JSON.parse(line.slice('@@RESULT '.length))) : reject(new Error(`load child: ${out}`));
      });
    });

  const out: Record<string, unknown> = {};
  for (const route of String(args.routes ?? 'backlinks,get_note,search,not_found').split(',')) {
    const paths = routes[route];
    if (!paths) throw new Error(`unknown route ${route}`);
    await load(paths, 3000); // compiles this route's code, as in a server that has been running
    const rows: Array<{ youngKB: number; oldKB: number; scavenges: number; full: number; p99: number; ok: number; respBytes: number }> = [];
    for (let b = 0; b < bursts; b++) {
      if (countBytes) {
        v8GarbageCollector()({ type: 'minor' });
        v8GarbageCollector()({ type: 'minor' });
      } else await sleep(gapMs);
      const young = space('new_space');
      const old = space('old_space');
      const [m, M] = [minor, major];
      const r = await load(paths, requests);
      // GC entries reach the observer a tick late.
      await sleep(5);
      rows.push({ youngKB: (space('new_space') - young) / 1024, oldKB: (space('old_space') - old) / 1024, scavenges: minor - m, full: major - M, p99: r.p99, ok: r.requests - r.non2xx, respBytes: r.bytes / r.requests });
    }
    const med = (f: (x: (typeof rows)[number]) => number) => summarize(rows.map(f)).p50;
    out[route] = {
      bursts,
      requests,
      ok: rows.reduce((a, x) => a + x.ok, 0),
      ...(countBytes ? { allocatedKBPerRequest: round(med((x) => x.youngKB) / requests, 2) } : { scavengesPerBurst: round(rows.reduce((a, x) => a + x.scavenges, 0) / bursts, 2) }),
      fullCollections: rows.reduce((a, x) => a + x.full, 0),
      oldGrowthKBPerBurst: Math.round(med((x) => x.oldKB)),
      p99msMedian: med((x) => x.p99),
      responseBytes: Math.round(rows[0]!.respBytes),
    };
  }
  emit({ nodeFlags: process.execArgv.join(' '), load: `${requests} requests a burst at ${rate > 0 ? `${rate} req/s` : 'full speed'}`, routes: out });
  await server.close();
  process.exit(0);
}
