/**
 * The HTTP side of the benchmark: the server child, edit→visible latency,
 * fixed-rate and max-throughput load with autocannon, and sequential probes.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import readline from 'node:readline';
import autocannon, { type Result } from 'autocannon';
import { prng } from '../test/helpers/generate-vault.js';
import { benchScript, REPO_DIR, round, sleep, summarize } from './lib.js';

export interface ServerInfo {
  url: string;
  token: string;
  listenMs: number;
  readyMs: number;
  searchReadyMs: number;
  stats: { notes: number; files: number; parsed: number; ms: number };
  rss: number;
  heapUsed: number;
  pid: number;
}

export interface Targets {
  ids: string[];
  popular: { id: string; path: string; backlinks: number };
  hub: { id: string; path: string; backlinks: number };
  randomBacklinks: Array<{ id: string; path: string; backlinks: number }>;
  topTag: { tag: string; notes: number };
  randomTags: Array<{ tag: string; notes: number }>;
  hugeTag: { tag: string; notes: number };
}

export interface ServerChild {
  info: ServerInfo;
  targets: Targets;
  /** Memory of the server process now. */
  mem(): Promise<{ rss: number; heapUsed: number; oldSpace: number; fullGcs: number }>;
  /** Has the server save its index caches now; resolves when they are written and the heap compaction they ask for has run. */
  settle(): Promise<{ settled: boolean; ms?: number; compacted?: boolean; heapUsed?: number; pendingAtSettle?: { notes: number; keys: number; tags: number } }>;
  close(): Promise<void>;
  /** Server log lines (stderr) seen so far. */
  log: string[];
}

/** Starts bench/child-server.ts and waits until the Home is indexed. */
export function startServerChild(opts: {
  dataDir: string;
  user: string;
  count: number;
  targetsFile: string;
  timeoutMs: number;
  nodeArgs?: string[];
  /** Where to copy the server's other stdout lines (V8's --trace-gc output, say). */
  stdoutFile?: string;
}): Promise<ServerChild> {
  const child: ChildProcess = spawn(
    process.execPath,
    [...(opts.nodeArgs ?? []), ...benchScript('child-server.ts'), '--data', opts.dataDir, '--user', opts.user, '--count', String(opts.count), '--targets', opts.targetsFile],
    { cwd: REPO_DIR, stdio: ['pipe', 'pipe', 'pipe'] },
  );
  const log: string[] = [];
  const waiters: Array<(obj: any) => void> = [];
  readline.createInterface({ input: child.stderr! }).on('line', (l) => log.push(l));
  readline.createInterface({ input: child.stdout! }).on('line', (l) => {
    if (!l.startsWith('@@RESULT ')) {
      if (opts.stdoutFile) fs.appendFileSync(opts.stdoutFile, l + '\n');
      return;
    }
    const obj = JSON.parse(l.slice('@@RESULT '.length));
    waiters.shift()?.(obj);
  });
  const next = () => new Promise<any>((resolve) => waiters.push(resolve));
  let exited = false;
  const exit = new Promise<number | null>((resolve) => child.on('exit', (code) => ((exited = true), resolve(code))));

  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`server did not get ready within ${opts.timeoutMs} ms\n${log.slice(-20).join('\n')}`));
    }, opts.timeoutMs);
    exit.then((code) => {
      clearTimeout(timer);
      reject(new Error(`server exited early (${code})\n${log.slice(-40).join('\n')}`));
    });
    next().then((info: ServerInfo) => {
      clearTimeout(timer);
      const targets = JSON.parse(fs.readFileSync(opts.targetsFile, 'utf8')) as Targets;
      resolve({
        info,
        targets,
        log,
        mem: async () => {
          const p = next();
          child.stdin!.write('mem\n');
          return p;
        },
        settle: async () => {
          const p = next();
          child.stdin!.write('settle\n');
          return p;
        },
        close: async () => {
          if (exited) return;
          child.stdin!.write('close\n');
          const killer = setTimeout(() => child.kill('SIGKILL'), 60_000);
          await exit;
          clearTimeout(killer);
        },
      });
    });
  });
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 4 });

/** One GET with the bearer token: the response's bytes as they came. */
export function getRaw(base: string, token: string, urlPath: string): Promise<{ status: number; bytes: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = http.get(base + urlPath, { agent, headers: { authorization: `Bearer ${token}` } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, bytes: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
  });
}

/** One GET with the bearer token: status, body (parsed as JSON when it is), size and time until parsed. */
export async function getJson(base: string, token: string, urlPath: string): Promise<{ status: number; body: any; bytes: number; ms: number }> {
  const t0 = performance.now();
  const { status, bytes } = await getRaw(base, token, urlPath);
  let body: any = null;
  try {
    body = JSON.parse(bytes.toString('utf8'));
  } catch {
    body = bytes.toString('utf8');
  }
  return { status, body, bytes: bytes.length, ms: performance.now() - t0 };
}

// ------------------------------------------------------------ edit → visible

export interface EditResult {
  edits: number;
  timeouts: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  mean: number;
  polls: number;
  pollErrors: number;
}

/**
 * `edits` times: pick a note not edited yet, rewrite it on disk with a new
 * unique word (also written as a tag), then poll every 2 ms until the note
 * is visible through the index: with probe `tag` (default) by
 * `GET /api/v1/notes/tags/<word>`, with probe `search` by
 * `GET /api/v1/notes/search?q=<word>`. Both answer from the index (a search
 * first applies pending full-text work), but a fuzzy search for a long unique
 * word costs tens of ms per poll on a 10k vault, which would dominate what is
 * measured. (`GET /api/v1/notes/{id}` cannot be used: it reads the file from
 * disk, so its ETag changes at once whatever the index knows.) Edits are
 * sequential, 20 ms apart (from one becoming visible to the next write).
 * The phase stops after `budgetMs` or after 5 timeouts in a row.
 */
export async function measureEdits(opts: {
  base: string;
  token: string;
  root: string;
  count: number;
  edits: number;
  notePath: (i: number) => string;
  original: (i: number) => string;
  onEdited: (i: number) => void;
  probe?: 'tag' | 'search';
  timeoutMs?: number;
  budgetMs?: number;
}): Promise<EditResult & { probe: string; stoppedEarly: boolean; samples: number[]; snapshotSettleMs?: number }> {
  const r = prng(777);
  const used = new Set<number>();
  const samples: number[] = [];
  let timeouts = 0;
  let polls = 0;
  let pollErrors = 0;
  const runTag = Date.now().toString(36);
  let consecutiveTimeouts = 0;
  let stoppedEarly = false;
  const probe = opts.probe ?? 'tag';
  const started = performance.now();
  for (let k = 0; k < opts.edits; k++) {
    // Stop rather than wait 10 s per edit when the watcher is not delivering, or the phase ran out of time.
    if (consecutiveTimeouts >= 5 || performance.now() - started > (opts.budgetMs ?? Infinity)) {
      stoppedEarly = true;
      break;
    }
    let i: number;
    do i = Math.floor(r() * opts.count);
    while (used.has(i) && used.size < opts.count);
    used.add(i);
    const rel = opts.notePath(i);
    const word = `qbench${runTag}x${k}z`;
    const text = opts.original(i) + `\nEdited: ${word} marker #${word}\n`;
    const probePath = probe === 'tag' ? `/api/v1/notes/tags/${word}` : `/api/v1/notes/search?q=${word}&limit=20`;
    opts.onEdited(i);
    const t0 = performance.now();
    fs.writeFileSync(path.join(opts.root, rel), text);
    let seen = false;
    while (performance.now() - t0 < (opts.timeoutMs ?? 10_000)) {
      polls++;
      try {
        const res = await getJson(opts.base, opts.token, probePath);
        if (res.status !== 200) pollErrors++;
        else if (Array.isArray(res.body?.items) && res.body.items.some((h: { path: string }) => h.path === rel)) {
          seen = true;
          break;
        }
      } catch {
        pollErrors++;
      }
      await sleep(2);
    }
    const ms = performance.now() - t0;
    if (!seen) timeouts++;
    consecutiveTimeouts = seen ? 0 : consecutiveTimeouts + 1;
    samples.push(ms);
    await sleep(20);
  }
  return { edits: samples.length, probe, stoppedEarly, timeouts, ...summarize(samples), polls, pollErrors, samples: samples.map((x) => round(x, 1)) };
}

// ------------------------------------------------------------------- load

export interface LoadResult {
  /** Requested rate (req/s), or null for the unthrottled run. */
  rate: number | null;
  durationS: number;
  requests: number;
  /** Responses per second actually achieved. */
  rps: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  mean: number;
  errors: number;
  timeouts: number;
  non2xx: number;
  /** Mean response body size. */
  meanBytes: number;
  /** p99 of the responses that arrived in each second of the run: where in the run the slow ones were. */
  p99BySecond: number[];
}

/**
 * Runs autocannon against `base` with paths drawn (deterministically at
 * random) from `pick`. Latency percentiles are computed from every
 * response's own time (autocannon's histogram keeps whole milliseconds).
 * Coordinated-omission correction is off: with a fixed rate and a server
 * that keeps up, each response time is the service time; if it cannot keep
 * up, `rps` falls short of `rate`, which is reported.
 *
 * With `warmupS`, the same load runs that much longer first, on the same
 * autocannon instance and connections, and its responses are not counted:
 * a new instance's first seconds are slower even against a bare server
 * (the replay floor's p99 by second: 4.8, 4.2, 4.1, 3.1, 2.7 ms), so a
 * warm-up on an instance of its own left that in the measured window.
 * Errors, timeouts and non-2xx responses are counted over the whole run.
 */
export function runLoad(opts: {
  base: string;
  token: string;
  pick: (r: () => number) => string;
  rate: number | null;
  durationS: number;
  warmupS?: number;
  connections?: number;
  seed?: number;
}): Promise<LoadResult> {
  const r = prng(opts.seed ?? 99);
  const lat: number[] = [];
  const second: number[] = [];
  let bytes = 0;
  return new Promise((resolve, reject) => {
    const warmupS = opts.warmupS ?? 0;
    const t0 = performance.now() + warmupS * 1000;
    const inst = autocannon(
      {
        url: opts.base,
        connections: opts.connections ?? 10,
        duration: warmupS + opts.durationS,
        ...(opts.rate ? { overallRate: opts.rate, ignoreCoordinatedOmission: true } : {}),
        timeout: 10,
        headers: { authorization: `Bearer ${opts.token}` },
        requests: [{ method: 'GET', setupRequest: (req) => ({ ...req, path: opts.pick(r) }) }],
      },
      (err, res: Result) => {
        if (err) return reject(err);
        const wall = (performance.now() - t0) / 1000;
        const s = summarize(lat);
        const requests = lat.length;
        resolve({
          rate: opts.rate,
          durationS: round(wall, 2),
          requests,
          rps: round(requests / Math.max(res.duration ? res.duration - warmupS : wall, 0.001), 0),
          p50: s.p50,
          p90: s.p90,
          p99: s.p99,
          max: s.max,
          mean: s.mean,
          errors: res.errors,
          timeouts: res.timeouts,
          non2xx: res.non2xx,
          meanBytes: Math.round(bytes / Math.max(1, requests)),
          p99BySecond: p99BySecond(lat, second),
        });
      },
    );
    inst.on('response', (_client: unknown, _status: number, resBytes: number, responseTime: number) => {
      if (performance.now() < t0) return;
      lat.push(responseTime);
      second.push(Math.floor((performance.now() - t0) / 1000));
      bytes += resBytes;
    });
  });
}

function p99BySecond(lat: number[], second: number[]): number[] {
  const bySecond: number[][] = [];
  lat.forEach((ms, i) => (bySecond[second[i]!] ??= []).push(ms));
  return Array.from(bySecond, (xs) => (xs ? summarize(xs).p99 : 0));
}

/** `n` sequential requests (one at a time) to one path: latency and size. */
export async function probe(base: string, token: string, urlPath: string, n: number) {
  const lat: number[] = [];
  let bytes = 0;
  let non2xx = 0;
  let items: number | null = null;
  for (let k = 0; k < n; k++) {
    const res = await getJson(base, token, urlPath);
    if (res.status < 200 || res.status > 299) non2xx++;
    lat.push(res.ms);
    bytes = res.bytes;
    if (Array.isArray(res.body?.items)) items = res.body.items.length;
  }
  return { path: urlPath, ...summarize(lat), bytes, items, non2xx };
}

/** The distinct paths `pick` draws with these seeds in `n` draws each: what a `runLoad` with those seeds can ask for. */
export function pathsDrawn(pick: (r: () => number) => string, seeds: number[], n: number): string[] {
  const out = new Set<string>();
  for (const seed of seeds) {
    const r = prng(seed);
    for (let k = 0; k < n; k++) out.add(pick(r));
  }
  return [...out];
}

/** Starts bench/child-replay.ts answering each path of `bodiesFile` with its recorded bytes. */
export function startReplayChild(bodiesFile: string): Promise<{ url: string; close(): Promise<void> }> {
  const child = spawn(process.execPath, [...benchScript('child-replay.ts'), '--bodies', bodiesFile], {
    cwd: REPO_DIR,
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const exit = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  return new Promise((resolve, reject) => {
    exit.then(() => reject(new Error('replay server exited early')));
    readline.createInterface({ input: child.stdout! }).on('line', (l) => {
      if (!l.startsWith('@@RESULT ')) return;
      const { url } = JSON.parse(l.slice('@@RESULT '.length)) as { url: string };
      resolve({
        url,
        close: async () => {
          child.stdin!.write('close\n');
          const killer = setTimeout(() => child.kill('SIGKILL'), 10_000);
          await exit;
          clearTimeout(killer);
        },
      });
    });
  });
}
