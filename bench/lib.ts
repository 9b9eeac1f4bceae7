/** Small helpers shared by the benchmark scripts. */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';

/** Where the running bench scripts are: dist-bench/bench/ when built (`npm run bench`), bench/ when run from source. */
const SCRIPTS_DIR = path.dirname(fileURLToPath(import.meta.url));
const FROM_SOURCE = import.meta.url.endsWith('.ts');
export const REPO_DIR = path.resolve(SCRIPTS_DIR, FROM_SOURCE ? '..' : '../..');
/** bench/ itself: generated vaults and results files. */
export const BENCH_DIR = path.join(REPO_DIR, 'bench');

/**
 * Node's arguments running the bench script `script` (named by its .ts
 * source) in a child process: its built file, or from source through tsx.
 */
export function benchScript(script: string): string[] {
  return FROM_SOURCE ? ['--import', 'tsx', path.join(SCRIPTS_DIR, script)] : [path.join(SCRIPTS_DIR, script.replace(/\.ts$/, '.js'))];
}

/**
 * The Node.js flags `quire serve` runs with: bin/server-node-flags, the list the launcher bin/quire reads.
 * QUIRE_BENCH_SERVER_FLAGS replaces the list for the bench's server and index children (`none`: no
 * flags), to measure what the flags still buy (docs/performance.md, "Are the flags still needed?").
 */
export const SERVER_NODE_FLAGS: string[] = serverNodeFlags(process.env.QUIRE_BENCH_SERVER_FLAGS);

function serverNodeFlags(override: string | undefined): string[] {
  if (override === 'none') return [];
  return (override ?? fs.readFileSync(path.join(REPO_DIR, 'bin', 'server-node-flags'), 'utf8')).trim().split(/\s+/).filter(Boolean);
}

/** The `quire` command as a person runs it (package.json "bin"): the launcher that picks the Node.js flags for each command. */
export const QUIRE = path.join(REPO_DIR, 'bin', 'quire');

/** `--name value` / `--name=value` / `--flag` parsing. */
export function parseArgs(argv: string[]): Record<string, string | true> {
  const out: Record<string, string | true> = {};
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (!a.startsWith('--')) continue;
    const eq = a.indexOf('=');
    if (eq > 0) out[a.slice(2, eq)] = a.slice(eq + 1);
    else if (i + 1 < argv.length && !argv[i + 1]!.startsWith('--')) out[a.slice(2)] = argv[++i]!;
    else out[a.slice(2)] = true;
  }
  return out;
}

/** Nearest-rank percentile of an ascending-sorted array. */
export function pct(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const k = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[k]!;
}

export function summarize(samples: number[]) {
  const s = [...samples].sort((a, b) => a - b);
  return {
    n: s.length,
    p50: round(pct(s, 50)),
    p90: round(pct(s, 90)),
    p99: round(pct(s, 99)),
    max: round(s[s.length - 1] ?? NaN),
    mean: round(s.reduce((a, b) => a + b, 0) / (s.length || 1)),
  };
}

/**
 * Runs `f` and adds its wall time and the process's CPU time, both in ms. A benchmark child
 * runs server and client in one process: on a busy machine the CPU time is the steadier figure.
 */
export async function timed<T extends object>(f: () => Promise<T>): Promise<T & { ms: number; cpuMs: number }> {
  const t = performance.now();
  const c = process.cpuUsage();
  const r = await f();
  const cpu = process.cpuUsage(c);
  return { ...r, ms: performance.now() - t, cpuMs: (cpu.user + cpu.system) / 1000 };
}

/** What `summarize` gives: sample count, percentiles, max and mean. */
export type Stats = ReturnType<typeof summarize>;

export const round = (x: number, d = 2) => (Number.isFinite(x) ? Math.round(x * 10 ** d) / 10 ** d : x);
export const mb = (bytes: number) => round(bytes / 1024 / 1024, 1);
export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Writes one JSON result line for the parent (prefixed so stray output cannot be mistaken for it). */
export function emit(obj: unknown): void {
  process.stdout.write(`@@RESULT ${JSON.stringify(obj)}\n`);
}

/**
 * Runs `node [nodeArgs] <script> [args]` in a fresh process and
 * returns the object it emitted.
 */
export function runChild<T>(script: string, args: string[], nodeArgs: string[] = [], timeoutMs = 0): Promise<T> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...nodeArgs, ...benchScript(script), ...args], {
      cwd: REPO_DIR,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    let timedOut = false;
    const timer = timeoutMs > 0 ? setTimeout(() => ((timedOut = true), child.kill('SIGKILL')), timeoutMs) : null;
    child.on('error', reject);
    child.on('close', (code) => {
      if (timer) clearTimeout(timer);
      if (timedOut) {
        reject(new ChildTimeout(`${script} did not finish within ${timeoutMs} ms`));
        return;
      }
      const line = out.split('\n').find((l) => l.startsWith('@@RESULT '));
      if (code !== 0 || !line) {
        reject(new Error(`${script} exited with ${code}\n${out.slice(-2000)}\n${err.slice(-4000)}`));
        return;
      }
      resolve(JSON.parse(line.slice('@@RESULT '.length)) as T);
    });
  });
}

export class ChildTimeout extends Error {}

/** A benchmark server kept running in its own process (see serverChild). */
export interface ServerChild<T> {
  child: ChildProcess;
  /** What the process emitted once it was ready. */
  first: T;
  /** Writes `cmd` as a line to the process's stdin; resolves with the next object it emits. */
  ask<R>(cmd: string): Promise<R>;
  /** Asks the process to `close` and waits until it has exited. */
  close(): Promise<void>;
}

/** Starts `node [nodeArgs] <script> [args]`, a server that answers lines on stdin with emitted objects, and waits for its first. */
export async function serverChild<T>(script: string, args: string[], nodeArgs: string[] = []): Promise<ServerChild<T>> {
  const child = spawn(process.execPath, [...nodeArgs, ...benchScript(script), ...args], { stdio: ['pipe', 'pipe', 'inherit'] });
  const waiting: Array<(v: any) => void> = [];
  readline.createInterface({ input: child.stdout! }).on('line', (l) => {
    if (l.startsWith('@@RESULT ')) waiting.shift()?.(JSON.parse(l.slice('@@RESULT '.length)));
  });
  const next = () => new Promise<any>((r) => waiting.push(r));
  const first = (await next()) as T;
  return {
    child,
    first,
    ask: (cmd) => {
      const r = next();
      child.stdin!.write(`${cmd}\n`);
      return r;
    },
    close: () =>
      new Promise((r) => {
        child.once('exit', () => r());
        child.stdin!.write('close\n');
      }),
  };
}
