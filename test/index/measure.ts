/**
 * A quick local measurement of the per-Home index (not a test; nothing here
 * asserts). Run: `node --expose-gc --import tsx test/index/measure.ts [notes] [--generated]`
 *
 * Builds a synthetic vault (default 10k notes, ~3 KB each, ~10 wikilinks and
 * ~5 tags per note, some tasks and block ids), parses it with extractFacts
 * (not timed), then times: indexing from facts, the background full-text
 * catch-up, backlinks on a 100k-note index, snapshot round trip, and reports
 * heap/RSS.
 */
import { HomeIndex } from '../../src/index/home-index.js';
import { extractFacts } from '../../src/markdown/extract.js';
import { generateVault, prng } from '../helpers/generate-vault.js';
import type { NoteFacts } from '../../src/markdown/facts.js';

const N = Number(process.argv.slice(2).find((a) => /^\d+$/.test(a)) ?? 10_000);
const gc = (globalThis as { gc?: () => void }).gc ?? (() => undefined);
const mb = (n: number) => `${(n / 1e6).toFixed(1)} MB`;
const ms = (n: number) => `${n.toFixed(1)} ms`;
/** Process CPU time (user + system) in ms: less noisy than wall time on a busy machine. */
const cpuNow = () => {
  const c = process.cpuUsage();
  return (c.user + c.system) / 1000;
};

export function makeVault(count: number, seed: number): Array<{ path: string; text: string }> {
  const r = prng(seed);
  const vocab: string[] = [];
  for (let i = 0; i < 6000; i++) vocab.push(Math.floor(r() * 36 ** 6).toString(36).slice(0, 3 + Math.floor(r() * 6)));
  // Zipf-ish word choice: low indexes far more common.
  const word = () => vocab[Math.floor(vocab.length * r() ** 3)]!;
  const folder = (i: number) => (i % 7 === 0 ? '' : `area-${i % 13}/`);
  const tags = ['project', 'project/alpha', 'project/beta', 'area/health', 'area/work/meetings', 'todo', 'idea', 'reading/books', 'y2024', 'status/active'];
  const out: Array<{ path: string; text: string }> = [];
  for (let i = 0; i < count; i++) {
    const parts: string[] = [];
    const noteTags = Array.from({ length: 3 }, () => tags[Math.floor(r() * tags.length)]!);
    parts.push(`---\ntitle: Note ${i} ${word()}\ntags: [${noteTags.join(', ')}]\ncreated: 2024-0${1 + (i % 9)}-1${i % 10}\n${i % 5 === 0 ? `aliases: [alias-${i}]\n` : ''}---`);
    parts.push(`# Note ${i}`);
    let links = 0;
    while (parts.join('\n').length < 3000) {
      const sentence: string[] = [];
      for (let w = 0; w < 14; w++) {
        const k = r();
        if (k < 0.012 && links < 10) {
          const j = Math.floor(r() * count);
          sentence.push(r() < 0.8 ? `[[Note ${j}]]` : `[[${folder(j)}Note ${j}#Section|see ${j}]]`);
          links++;
        } else if (k < 0.016) sentence.push(`#${tags[Math.floor(r() * tags.length)]}`);
        else sentence.push(word());
      }
      parts.push(sentence.join(' ') + '.');
      if (r() < 0.08) parts.push(`- [${r() < 0.3 ? 'x' : ' '}] ${word()} ${word()} 📅 2024-05-0${1 + Math.floor(r() * 9)} ^t${i}x${parts.length}`);
      if (r() < 0.05) parts.push(`## Section ${word()}`);
    }
    while (links < 10) {
      parts.push(`Related: [[Note ${Math.floor(r() * count)}]]`);
      links++;
    }
    out.push({ path: `${folder(i)}Note ${i}.md`, text: parts.join('\n\n') + '\n' });
  }
  return out;
}

function stat(text: string) {
  return { size: text.length, mtimeMs: 1_700_000_000_000, etag: 'e' + text.length };
}

function percentile(xs: number[], p: number): number {
  const s = xs.slice().sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
}

async function main() {
  gc();
  const heap0 = process.memoryUsage().heapUsed;
  // `--generated`: test/helpers/generate-vault.ts notes instead (link-dense: ~64 links and ~33 tag uses per note).
  let vault: Array<{ path: string; text: string }> | null = process.argv.includes('--generated') ? generateVault(1, N) : makeVault(N, 1);
  const bytes = vault.reduce((a, n) => a + Buffer.byteLength(n.text), 0);
  let t0 = performance.now();
  let facts: NoteFacts[] | null = vault.map((n) => extractFacts(n.text, n.path));
  const links = facts.reduce((a, f) => a + f.links.length, 0);
  const tagc = facts.reduce((a, f) => a + f.tags.length, 0);
  console.log(`vault: ${N} notes, ${mb(bytes)}, ${(links / N).toFixed(1)} links/note, ${(tagc / N).toFixed(1)} tags/note; extractFacts ${ms(performance.now() - t0)} (not counted)`);


  // 1. Indexing from facts (search documents queued; 'lazy' so nothing runs in between).
  let idx: HomeIndex | null = new HomeIndex({ mode: 'lazy' });
  t0 = performance.now();
  let c0 = cpuNow();
  for (let i = 0; i < N; i++) idx.upsertNote(vault[i]!.path, facts[i]!, stat(vault[i]!.text), vault[i]!.text);
  const tIndex = performance.now() - t0;
  const cIndex = cpuNow() - c0;
  t0 = performance.now();
  c0 = cpuNow();
  const unresolvedCount = idx.unresolved().length; // resolves every pending link
  const tLinks = performance.now() - t0;
  const cLinks = cpuNow() - c0;
  console.log(
    `index ${N} notes from facts: upserts with full text ${ms(tIndex)} (cpu ${ms(cIndex)}) + link resolution ${ms(tLinks)} (cpu ${ms(cLinks)}) = ${ms(tIndex + tLinks)} (${unresolvedCount} unresolved)`,
  );

  // Memory: drop the texts and our facts array (the index keeps its own references).
  vault = null;
  facts = null;
  gc();
  gc();
  const mu = process.memoryUsage();
  console.log(
    `memory after indexing (texts dropped): heap used ${mb(mu.heapUsed)}, of which the index ≈ ${mb(mu.heapUsed - heap0)} (facts + structures + full text); RSS ${mb(mu.rss)}`,
  );

  // Queries on the 10k index.
  const lat: number[] = [];
  for (let i = 0; i < 2000; i++) {
    const p = `${i % 7 === 0 ? '' : `area-${i % 13}/`}Note ${i % N}.md`;
    const s = performance.now();
    idx.backlinks(p);
    lat.push(performance.now() - s);
  }
  console.log(`backlinks (10k, first call per path incl. cache build): p50 ${(percentile(lat, 50) * 1000).toFixed(1)} µs, p99 ${(percentile(lat, 99) * 1000).toFixed(1)} µs`);
  t0 = performance.now();
  const hits = await idx.search('note', { limit: 20 });
  console.log(`search 'note': ${ms(performance.now() - t0)} (${hits.length} hits); tags(): ${idx.tags().length} tags`);

  // 2. Snapshot round trip.
  t0 = performance.now();
  const snap = idx.toSnapshot();
  const tTo = performance.now() - t0;
  t0 = performance.now();
  c0 = cpuNow();
  const back = HomeIndex.fromSnapshot(snap, { mode: 'lazy' });
  const tFrom = performance.now() - t0;
  const cFrom = cpuNow() - c0;
  t0 = performance.now();
  back.unresolved();
  const tBackLinks = performance.now() - t0;
  console.log(
    `snapshot: toSnapshot ${ms(tTo)} (${mb(snap.length)}), fromSnapshot ${ms(tFrom)} (cpu ${ms(cFrom)}) + link resolution ${ms(tBackLinks)}`,
  );
  idx = null;

  // 3. backlinks on a 100k-note index (synthetic facts, no full text).
  const big = new HomeIndex({ mode: 'lazy' });
  const r = prng(7);
  const M = 100_000;
  const mkLink = (target: string, line: number) => ({
    kind: 'wikilink' as const,
    embed: false,
    target,
    heading: null,
    blockId: null,
    alias: null,
    line,
    column: 1,
    start: 0,
    end: 0,
  });
  t0 = performance.now();
  for (let i = 0; i < M; i++) {
    const path = `f${i % 100}/n${i}.md`;
    const ls = Array.from({ length: 10 }, (_, k) => mkLink(`n${Math.floor(r() * M)}`, k + 1));
    const f: NoteFacts = {
      path,
      frontmatter: null,
      frontmatterError: null,
      frontmatterRange: null,
      title: `n${i}`,
      titleSource: 'filename',
      id: null,
      aliases: [],
      frontmatterTags: [],
      tagOccurrences: [],
      tags: [`t${i % 50}/s${i % 7}`],
      headings: [],
      blocks: [],
      links: ls,
      tasks: [],
      wordCount: 100,
    };
    big.upsertNote(path, f, { size: 100, mtimeMs: 1, etag: 'x' }, null);
  }
  const tBigUpserts = performance.now() - t0;
  big.unresolved();
  const tBig = performance.now() - t0;
  const lat2: number[] = [];
  const lat3: number[] = [];
  for (let i = 0; i < 5000; i++) {
    const j = Math.floor(r() * M);
    const p = `f${j % 100}/n${j}.md`;
    let s = performance.now();
    big.backlinks(p);
    lat2.push(performance.now() - s);
    s = performance.now();
    big.backlinks(p);
    lat3.push(performance.now() - s);
  }
  console.log(
    `100k index (1M links) built in ${ms(tBig)} (upserts ${ms(tBigUpserts)}); backlinks cold p50 ${(percentile(lat2, 50) * 1000).toFixed(1)} µs p99 ${(percentile(lat2, 99) * 1000).toFixed(1)} µs; cached p50 ${(percentile(lat3, 50) * 1000).toFixed(1)} µs p99 ${(percentile(lat3, 99) * 1000).toFixed(1)} µs`,
  );
  void back;
}

if (process.argv[1]?.endsWith('measure.ts')) await main();
