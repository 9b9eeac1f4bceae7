/**
 * Throughput of the two Markdown fact extractors on generated, realistic
 * notes. Run: node --import tsx bench/markdown-extract.ts [MB]
 *
 * The fast extractor (src/markdown/extract.ts) runs over ~30 MB; the remark
 * reference (test/markdown/reference-extractor.ts) is ~60× slower, so it runs over a
 * 3 MB slice of the same notes and its MB/s is reported from that.
 */
import os from 'node:os';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { extractFacts } from '../src/markdown/extract.js';
import { referenceFacts } from '../test/markdown/reference-extractor.js';
import { generateNote } from '../test/helpers/generate-vault.js';

const targetMB = Number(process.argv[2] ?? 30);
const notes: Array<{ path: string; text: string }> = [];
let bytes = 0;
for (let i = 0; bytes < targetMB * 1e6; i++) {
  const text = generateNote(42, i);
  notes.push({ path: `bench/note-${i}.md`, text });
  bytes += Buffer.byteLength(text);
}
const mb = (n: number) => n / 1e6;

function run(label: string, fn: (t: string, p: string) => unknown, set: typeof notes): number {
  const size = set.reduce((s, n) => s + Buffer.byteLength(n.text), 0);
  // warm up
  for (let i = 0; i < Math.min(200, set.length); i++) fn(set[i]!.text, set[i]!.path);
  let best = Infinity;
  let bestCpu = Infinity;
  const rounds = label === 'reference' ? 1 : 3;
  let sink = 0;
  for (let r = 0; r < rounds; r++) {
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    for (const n of set) sink += (fn(n.text, n.path) as { wordCount: number }).wordCount;
    best = Math.min(best, (performance.now() - t0) / 1000);
    const c = process.cpuUsage(c0);
    bestCpu = Math.min(bestCpu, (c.user + c.system) / 1e6);
  }
  const rate = mb(size) / best;
  console.log(
    `${label.padEnd(9)} ${mb(size).toFixed(1).padStart(6)} MB in ${best.toFixed(2).padStart(6)} s  ` +
      `= ${rate.toFixed(2).padStart(7)} MB/s wall, ${(mb(size) / bestCpu).toFixed(2).padStart(7)} MB/s CPU time` +
      `  (${set.length} notes, checksum ${sink})`,
  );
  return rate;
}

console.log(`load average ${os.loadavg().map((l) => l.toFixed(1)).join(' ')} on ${os.cpus().length} CPUs (wall MB/s is only meaningful on an idle machine)`);
console.log(`generated ${notes.length} notes, ${mb(bytes).toFixed(1)} MB (avg ${(bytes / notes.length / 1000).toFixed(1)} kB)`);
const fast = run('fast', extractFacts, notes);
let refSet: typeof notes = [];
for (let i = 0, b = 0; i < notes.length && b < 3e6; i++) {
  refSet.push(notes[i]!);
  b += Buffer.byteLength(notes[i]!.text);
}
if (process.env.BENCH_SKIP_REFERENCE) refSet = [];
if (refSet.length > 0) {
  const ref = run('reference', referenceFacts, refSet);
  console.log(`fast / reference = ${(fast / ref).toFixed(0)}×`);
}

// The real Obsidian Help vault, when the shared corpora are present (repeated to ~10 MB).
const corpus = fileURLToPath(new URL('../../shared/corpora/obsidian-help-en', import.meta.url));
if (existsSync(corpus)) {
  const files: string[] = [];
  const walk = (d: string) => {
    for (const f of readdirSync(d)) {
      const p = join(d, f);
      if (statSync(p).isDirectory()) walk(p);
      else if (f.endsWith('.md')) files.push(p);
    }
  };
  walk(corpus);
  const real = files.map((f) => ({ path: f, text: readFileSync(f, 'utf8') }));
  const realSet: typeof notes = [];
  for (let b = 0; b < 10e6; ) for (const n of real) (realSet.push(n), (b += Buffer.byteLength(n.text)));
  run('help-vlt', extractFacts, realSet);
}
