/**
 * Start-up figures of the `quire` command, each measured from spawning the
 * process, beside a bare `node -e 0` measured in the same run (the floor no
 * command can beat): `--help`, `actions list`, an action run against a
 * server, and `serve` on a data folder whose one Home is empty until its
 * first answered request.
 *
 * Part of `npm run bench` (results.startup); alone, after
 * `npm run build -- --bench`: node dist-bench/bench/startup.js [--runs 10]
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs, QUIRE, REPO_DIR, round, summarize } from './lib.js';

interface Exited {
  ms: number;
  code: number | null;
  out: string;
}

/** Runs `cmd args` to its end; milliseconds from spawn to exit. `quire` is run as a person runs it, through the launcher bin/quire. */
function timeRun(cmd: string, args: string[], env: NodeJS.ProcessEnv = {}): Promise<Exited> {
  return new Promise((resolve, reject) => {
    const t = performance.now();
    const child = spawn(cmd, args, { cwd: REPO_DIR, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ ms: performance.now() - t, code, out }));
  });
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

/** One GET; resolves with the status, or null when nothing listens yet. */
function probe(url: string, token?: string): Promise<number | null> {
  return new Promise((resolve) => {
    const req = http.get(url, { headers: token ? { authorization: `Bearer ${token}` } : {} }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', () => resolve(null));
  });
}

/** Starts `quire serve` and polls until it answers a request; milliseconds from spawn to that answer. */
async function timeServe(dataDir: string, token: string): Promise<number> {
  const port = await freePort();
  const t = performance.now();
  const child = spawn(QUIRE, ['serve', '--data', dataDir, '--port', String(port)], { cwd: REPO_DIR, stdio: 'ignore' });
  try {
    const url = `http://127.0.0.1:${port}/api/v1/notes`;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`quire serve exited with ${child.exitCode}`);
      const status = await probe(url, token);
      if (status !== null) return performance.now() - t;
      await new Promise((r) => setTimeout(r, 5));
    }
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => (child.exitCode !== null ? r(null) : child.once('exit', r)));
  }
}

/** A server on `dataDir` for `action run --server` (listening until `close`). */
async function startServer(dataDir: string): Promise<{ url: string; close: () => Promise<void> }> {
  const port = await freePort();
  const child = spawn(QUIRE, ['serve', '--data', dataDir, '--port', String(port)], { cwd: REPO_DIR, stdio: 'ignore' });
  const url = `http://127.0.0.1:${port}`;
  while ((await probe(url)) === null) {
    if (child.exitCode !== null) throw new Error(`quire serve exited with ${child.exitCode}`);
    await new Promise((r) => setTimeout(r, 20));
  }
  return {
    url,
    close: () => new Promise((r) => (child.kill('SIGTERM'), child.exitCode !== null ? r() : child.once('exit', () => r()))),
  };
}

export interface StartupFigures {
  runs: number;
  /** Medians (ms) of each command, from spawn to exit (serve: to its first answered request). */
  nodeBare: ReturnType<typeof summarize>;
  help: ReturnType<typeof summarize>;
  actionsList: ReturnType<typeof summarize>;
  actionRunServer: ReturnType<typeof summarize>;
  serveFirstAnswer: ReturnType<typeof summarize>;
  /** Each median over the bare Node start's median. */
  inNodeStarts: Record<string, number>;
}

export async function startupFigures(runs = 10, log: (s: string) => void = console.log): Promise<StartupFigures> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'quire-bench-startup-'));
  try {
    const added = await timeRun(QUIRE, ['admin', 'user', 'add', '--username', 'bench', '--role', 'owner', '--data', dataDir]);
    if (added.code !== 0) throw new Error(`quire admin user add failed: ${added.out}`);
    const token = (JSON.parse(added.out.trim().split('\n').pop()!) as { token: string }).token;
    const samples: Record<'nodeBare' | 'help' | 'actionsList' | 'actionRunServer' | 'serveFirstAnswer', number[]> = {
      nodeBare: [],
      help: [],
      actionsList: [],
      actionRunServer: [],
      serveFirstAnswer: [],
    };
    // One warm-up of each, not counted (the first start reads the files from disk).
    await timeRun(process.execPath, ['-e', '0']);
    await timeRun(QUIRE, ['--help']);
    await timeRun(QUIRE, ['actions', 'list']);
    for (let i = 0; i < runs; i++) {
      samples.nodeBare.push((await timeRun(process.execPath, ['-e', '0'])).ms);
      samples.help.push((await timeRun(QUIRE, ['--help'])).ms);
      samples.actionsList.push((await timeRun(QUIRE, ['actions', 'list'])).ms);
    }
    const server = await startServer(dataDir);
    try {
      for (let i = 0; i <= runs; i++) {
        const r = await timeRun(QUIRE, ['action', 'run', 'account_security', '--server', server.url, '--token', token, '--json']);
        if (r.code !== 0) throw new Error(`quire action run --server failed: ${r.out}`);
        if (i > 0) samples.actionRunServer.push(r.ms);
      }
    } finally {
      await server.close();
    }
    for (let i = 0; i <= runs; i++) {
      const ms = await timeServe(dataDir, token);
      if (i > 0) samples.serveFirstAnswer.push(ms);
    }
    const s = Object.fromEntries(Object.entries(samples).map(([k, v]) => [k, summarize(v)])) as Record<keyof typeof samples, ReturnType<typeof summarize>>;
    const floor = s.nodeBare.p50;
    const inNodeStarts = Object.fromEntries(Object.entries(s).map(([k, v]) => [k, round(v.p50 / floor, 1)]));
    log(`  bare node -e 0: ${round(floor, 0)} ms (median of ${runs})`);
    for (const k of ['help', 'actionsList', 'actionRunServer', 'serveFirstAnswer'] as const) {
      log(`  quire ${LABELS[k]}: ${round(s[k].p50, 0)} ms = ${inNodeStarts[k]} bare Node starts (p90 ${round(s[k].p90, 0)} ms)`);
    }
    return { runs, ...s, inNodeStarts };
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

const LABELS = {
  help: '--help',
  actionsList: 'actions list',
  actionRunServer: 'action run account_security --server',
  serveFirstAnswer: 'serve → first answer (empty Home)',
} as const;

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const args = parseArgs(process.argv.slice(2));
  const figures = await startupFigures(args.runs ? Number(args.runs) : 10);
  if (args.json) console.log(JSON.stringify(figures, null, 2));
}
