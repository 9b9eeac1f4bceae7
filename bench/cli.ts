/**
 * Command-line figures on a 10,000-note vault (docs/cli.md): `quire --help`,
 * and backlinks, search and tag each as a first call (no daemon: cold with
 * no index snapshot, and with one) and as warm calls (the daemon running),
 * each beside `grep -rl` finding the same files and a bare `node -e 0`,
 * all measured from process start in the same run. Also the in-process
 * call (QUIRE_DAEMON=off), what every call cost before the daemon.
 *
 * Part of `npm run bench` (results.cli; --skip-cli); alone, after
 * `npm run build -- --bench`: node dist-bench/bench/cli.js [--runs 10] [--count 10000]
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { BENCH_DIR, parseArgs, QUIRE, REPO_DIR, round, runChild, summarize } from './lib.js';
import { ensureVault } from './vault-gen.js';

interface Ran {
  ms: number;
  code: number | null;
  out: string;
}

function timeRun(cmd: string, args: string[], env: NodeJS.ProcessEnv): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const t = performance.now();
    const child = spawn(cmd, args, { cwd: REPO_DIR, stdio: ['ignore', 'pipe', 'pipe'], env });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ ms: performance.now() - t, code, out }));
  });
}

interface Query {
  name: string;
  quire: string[];
  grep: string[];
}

export interface CliFigures {
  runs: number;
  notes: number;
  nodeBare: ReturnType<typeof summarize>;
  help: ReturnType<typeof summarize>;
  queries: Record<
    string,
    {
      /** Files quire answered / grep found. */
      files: number;
      grepFiles: number;
      grep: ReturnType<typeof summarize>;
      warm: ReturnType<typeof summarize>;
      inProcess: number;
      /** The warm calls were answered whole by the daemon (the thin client), not by the full command line. */
      thin: boolean;
    }
  >;
  /** First call with no daemon running: no snapshot in the cache (cold), then with one (the daemon's exit saved it). */
  firstCold: number;
  firstWithSnapshot: number;
  /** `quire serve --vault` on the same folder, from process start to its `index ready` line, beside the read+hash floor. */
  serve?: ServeFigures;
}

export interface ServeFigures {
  /** Walk, read and SHA-256 every file (child-floor.ts, inside its process): the median of one run before each cold/warm pair, so the floor sees the same load as the runs it divides. */
  floorMs: number;
  cold: number;
  warm: number;
  coldInFloors: number;
  warmInFloors: number;
}

/** Spawns `quire serve --vault` (the launcher gives it the server's Node.js flags) and resolves at its `index ready` line: ms from spawn. */
function timeServeReady(root: string, env: NodeJS.ProcessEnv): Promise<number> {
  return new Promise((resolve, reject) => {
    const t = performance.now();
    const child = spawn(QUIRE, ['serve', '--vault', root, '--port', '0'], { cwd: REPO_DIR, stdio: ['ignore', 'pipe', 'pipe'], env });
    let out = '';
    const onData = (d: Buffer) => {
      out += d;
      if (/index ready/.test(out)) {
        const ms = performance.now() - t;
        child.kill('SIGTERM');
        child.once('exit', () => resolve(ms));
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('exit', (code) => (/index ready/.test(out) ? undefined : reject(new Error(`quire serve exited with ${code}: ${out.slice(-2000)}`))));
  });
}

/** Cold (no snapshot in the state folder) and warm (the snapshot the cold run saved), each the median of `runs`. */
export async function serveFigures(root: string, runs: number, log: (s: string) => void): Promise<ServeFigures> {
  const floors: number[] = [];
  const cold: number[] = [];
  const warm: number[] = [];
  for (let i = 0; i < runs; i++) {
    const state = fs.mkdtempSync(path.join(os.tmpdir(), 'quire-bench-serve-'));
    const env = { ...process.env, XDG_STATE_HOME: state, XDG_RUNTIME_DIR: path.join(state, 'run'), QUIRE_DATA: '', QUIRE_PORT: '' };
    try {
      floors.push((await runChild<{ ms: number }>('child-floor.ts', ['--root', root])).ms);
      cold.push(await timeServeReady(root, env));
      warm.push(await timeServeReady(root, env));
    } finally {
      fs.rmSync(state, { recursive: true, force: true });
    }
  }
  const c = summarize(cold).p50;
  const w = summarize(warm).p50;
  const floorMs = round(summarize(floors).p50, 0);
  const out = { floorMs, cold: round(c, 0), warm: round(w, 0), coldInFloors: round(c / floorMs), warmInFloors: round(w / floorMs) };
  log(`  serve --vault → index ready, from process start: cold ${out.cold} ms (${out.coldInFloors}× the floor, goal ≤ 2.5), warm ${out.warm} ms (${out.warmInFloors}×, goal ≤ 0.5); read+hash floor ${floorMs} ms (medians of ${runs})`);
  return out;
}

export async function cliFigures(opts: { runs?: number; count?: number; log?: (s: string) => void } = {}): Promise<CliFigures> {
  const runs = opts.runs ?? 10;
  const count = opts.count ?? 10_000;
  const log = opts.log ?? console.log;
  const v = ensureVault(path.join(BENCH_DIR, 'vaults'), count, undefined, log);
  const root = v.root;
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'quire-bench-cli-'));
  const env = {
    ...process.env,
    XDG_RUNTIME_DIR: path.join(tmp, 'run'),
    XDG_CACHE_HOME: path.join(tmp, 'cache'),
    XDG_STATE_HOME: path.join(tmp, 'state'),
    QUIRE_DAEMON: '',
  };
  // Run as a person runs it: through the launcher bin/quire, which starts a short command without Node.js flags
  // (Node's code cache then applies); the daemon a call starts gets the server's flags (client.ts).
  const quire = (args: string[], extra: NodeJS.ProcessEnv = {}) => timeRun(QUIRE, args, { ...env, ...extra });
  const queries: Query[] = [
    { name: 'backlinks', quire: ['backlinks', 'gen/1/note-1234.md'], grep: ['-rlE', String.raw`\[\[note-1234(\||\]|#)`, root] },
    { name: 'tag', quire: ['tag', 'topic-37'], grep: ['-rlwE', '#topic-37', root] },
    { name: 'search', quire: ['search', 'note-1234', '--limit', '200'], grep: ['-rliw', 'note-1234', root] },
  ];
  const lines = (r: Ran) => r.out.split('\n').filter((l) => l && !l.startsWith('…')).length;
  try {
    const stop = () => quire(['daemon', 'stop', '--vault', root]);
    const first = async () => {
      const r = await quire([...queries[0]!.quire, '--vault', root]);
      if (r.code !== 0) throw new Error(`quire ${queries[0]!.quire.join(' ')} failed: ${r.out}`);
      return r.ms;
    };
    const firstCold = await first();
    await stop(); // saves the snapshot to the cache folder
    const firstWithSnapshot = await first();
    log(`  first call (starts the daemon): ${Math.round(firstCold)} ms with no snapshot, ${Math.round(firstWithSnapshot)} ms with one`);

    const bare: number[] = [];
    // Warm means the daemon has finished its opening's background work (full text, snapshot save).
    const settle = async () => {
      const until = Date.now() + 120_000;
      while (Date.now() < until) {
        const st = await quire(['daemon', 'status', '--json']);
        if ((JSON.parse(st.out) as Array<{ warm?: boolean }>).some((d) => d.warm)) return;
        await new Promise((r) => setTimeout(r, 500));
      }
    };
    const help: number[] = [];
    await timeRun(process.execPath, ['-e', '0'], env);
    await quire(['--help']);
    for (let i = 0; i < runs; i++) {
      bare.push((await timeRun(process.execPath, ['-e', '0'], env)).ms);
      help.push((await quire(['--help'])).ms);
    }
    const out: CliFigures = { runs, notes: v.manifest.notes, nodeBare: summarize(bare), help: summarize(help), queries: {}, firstCold: round(firstCold, 0), firstWithSnapshot: round(firstWithSnapshot, 0) };
    for (const q of queries) {
      const warm: number[] = [];
      const grep: number[] = [];
      let files = 0;
      let grepFiles = 0;
      let thin = false;
      for (let i = 0; i <= runs; i++) {
        const r = await quire([...q.quire, '--vault', root]);
        if (r.code !== 0) throw new Error(`quire ${q.quire.join(' ')} failed: ${r.out}`);
        const g = await timeRun('grep', q.grep, env);
        files = lines(r);
        grepFiles = lines(g);
        if (i === 0) {
          await settle(); // the warm-up call started the daemon
          thin = (await quire([...q.quire, '--vault', root, '--verbose'])).out.includes('(thin client)');
          continue;
        }
        warm.push(r.ms);
        grep.push(g.ms);
      }
      await stop();
      const inProcess = (await quire([...q.quire, '--vault', root], { QUIRE_DAEMON: 'off' })).ms;
      out.queries[q.name] = { files, grepFiles, grep: summarize(grep), warm: summarize(warm), inProcess: round(inProcess, 0), thin };
      log(`  ${q.name.padEnd(9)} warm ${Math.round(out.queries[q.name]!.warm.p50)} ms (${files} files) | grep -rl ${Math.round(out.queries[q.name]!.grep.p50)} ms (${grepFiles} files) | in process, no daemon ${Math.round(inProcess)} ms${thin ? '' : ' (NOT through the thin client)'}`);
    }
    log(`  --help ${Math.round(out.help.p50)} ms; bare node -e 0 ${Math.round(out.nodeBare.p50)} ms (medians of ${runs})`);
    out.serve = await serveFigures(root, Math.min(runs, 3), log);
    return out;
  } finally {
    await quire(['daemon', 'stop', '--vault', root]);
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const args = parseArgs(process.argv.slice(2));
  const r = await cliFigures({ runs: args.runs ? Number(args.runs) : 10, count: args.count ? Number(args.count) : 10_000 });
  console.log(JSON.stringify(r, null, 2));
}
