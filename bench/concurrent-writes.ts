/**
 * Latency of note creates against a real server on loopback (its own process,
 * bench/request-limits-server.ts): one at a time, 200 at once with distinct
 * titles, and 200 at once with one title (each numbered " 2", " 3"...).
 * Every create is a write under the Home's writer lock (docs/vault-disk.md,
 * "The writer lock"), so this measures how much of a write the lock serialises.
 * Usage: npm run build -- --bench && node dist-bench/bench/concurrent-writes.js [--n 200] [--rounds 3] [--single 50] [--data <dir>] [--prof <dir>]
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { benchScript, parseArgs, summarize } from './lib.js';

const args = parseArgs(process.argv.slice(2));
const n = Number(args.n ?? 200);
const rounds = Number(args.rounds ?? 3);
const singles = Number(args.single ?? 50);
const dataDir = typeof args.data === 'string' ? path.resolve(args.data) : fs.mkdtempSync(path.join(os.tmpdir(), 'quire-bench-writes-'));

// --prof <dir>: a CPU profile of the server, to see where its time goes.
const profArgs = typeof args.prof === 'string' ? ['--cpu-prof', `--cpu-prof-dir=${path.resolve(args.prof)}`] : [];
const child = spawn(process.execPath, [...profArgs, ...benchScript('request-limits-server.ts'), '--data', dataDir], {
  stdio: ['pipe', 'pipe', 'inherit'],
});
const first = await new Promise<string>((resolve, reject) => {
  const rl = readline.createInterface({ input: child.stdout! });
  rl.once('line', resolve);
  child.once('exit', (code) => reject(new Error(`server exited with ${code}`)));
});
const { url, token, pid } = JSON.parse(first) as { url: string; token: string; pid: number };

/** CPU time the server process has used so far (ms), from /proc (Linux). */
function serverCpuMs(): number {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(f[11]) + Number(f[12])) * 1000) / 100; // utime + stime, in clock ticks of 10 ms
  } catch {
    return NaN;
  }
}

async function create(title: string): Promise<number> {
  const t0 = performance.now();
  const res = await fetch(`${url}/api/v1/notes`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ title, body: `Body of ${title}\n` }),
  });
  await res.arrayBuffer();
  if (res.status !== 201 && res.status !== 200) throw new Error(`create ${title}: ${res.status}`);
  return performance.now() - t0;
}

async function burst(titles: string[]) {
  const t0 = performance.now();
  const cpu0 = serverCpuMs();
  const times = await Promise.all(titles.map(create));
  return { ...summarize(times), wall: Math.round(performance.now() - t0), serverCpu: Math.round(serverCpuMs() - cpu0) };
}

try {
  for (let i = 0; i < 10; i++) await create(`warm ${i}`);
  for (let r = 0; r < rounds; r++) {
    const single: number[] = [];
    for (let i = 0; i < singles; i++) single.push(await create(`single ${r} ${i}`));
    const s = summarize(single);
    const distinct = await burst(Array.from({ length: n }, (_, i) => `distinct ${r} ${i}`));
    const same = await burst(Array.from({ length: n }, () => `same ${r}`));
    console.log(JSON.stringify({ round: r, single: { p50: s.p50, p99: s.p99 }, distinct, same }));
  }
} finally {
  child.stdin!.end('close\n');
  await new Promise((r) => child.once('exit', r));
  if (typeof args.data !== 'string') fs.rmSync(dataDir, { recursive: true, force: true });
}
