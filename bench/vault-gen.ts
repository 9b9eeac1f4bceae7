/**
 * Deterministic benchmark vaults, built on test/helpers/generate-vault.ts.
 *
 * A vault of `count` notes holds:
 * - `gen/<k>/note-<i>.md` (1,000 per folder): a generated note with 2–6
 *   sections (≈3 KB on average), followed by a "See also" section with 3–6
 *   wikilinks to other generated notes and 1–2 `#topic-<k>` tags. Link and
 *   tag targets are skewed (index = ⌊n·u²⌋), so a few notes and topics are
 *   popular (on 10k notes, note-0 has ~400 backlinks and topic-0 is on ~650
 *   notes) and most have few: a long tail;
 * - the ten notes the generator's own wikilinks point at (`Home.md`,
 *   `Ideas/Inbox.md`, ...), so those links resolve; nearly every note links
 *   to them, which makes them pathological hubs (measured separately);
 * - `assets/img-<k>.png`: one 2–16 KB binary attachment per 100 notes.
 *
 * The same (seed, count) always gives the same bytes. A manifest records
 * what was generated, so later runs reuse the files; a `DIRTY` marker
 * (left while the edit benchmark rewrites notes) forces regeneration.
 */
import fs from 'node:fs';
import path from 'node:path';
import { generateNote, NOTES, prng } from '../test/helpers/generate-vault.js';

/** Bump when the layout or content rules change (forces regeneration). */
export const GEN_VERSION = 3;
export const DEFAULT_SEED = 20240517;

/** The link targets generate.ts uses. */
export const HUB_NOTES = NOTES;

export interface GenNote {
  path: string;
  text: string;
}

export const notePath = (i: number) => `gen/${Math.floor(i / 1000)}/note-${i}.md`;
export const topicCount = (count: number) => Math.max(10, Math.round(count / 20));

/** Skewed pick in [0, n): index ⌊n·u²⌋, so low indexes are popular. */
function skewed(r: () => number, n: number): number {
  const u = r();
  return Math.min(n - 1, Math.floor(n * u * u));
}

/** Text of generated note `i` of a `count`-note vault. */
export function benchNoteText(seed: number, count: number, i: number): string {
  const r = prng((seed ^ 0x5bd1e995) + i * 2654435761);
  const sections = 2 + Math.floor(r() * 5);
  const base = generateNote(seed, i, { sections });
  const eol = base.includes('\r\n') ? '\r\n' : '\n';
  const links: string[] = [];
  const nLinks = 3 + Math.floor(r() * 4);
  for (let k = 0; k < nLinks; k++) {
    let j = skewed(r, count);
    if (j === i) j = (j + 1) % count;
    links.push(r() < 0.2 ? `[[note-${j}|see ${j}]]` : `[[note-${j}]]`);
  }
  const topics = topicCount(count);
  const tags = [`#topic-${skewed(r, topics)}`];
  if (r() < 0.5) tags.push(`#topic-${skewed(r, topics)}`);
  const tail = ['## See also', '', ...links.map((l) => `- ${l}`), '', `Topics: ${tags.join(' ')}`, ''].join(eol);
  return (base.endsWith(eol) ? base : base + eol) + eol + tail;
}

export function hubNoteText(seed: number, count: number, h: number): string {
  return `# ${HUB_NOTES[h]}\n\n` + generateNote(seed, count + 1_000_000 + h, { sections: 2 });
}

function attachmentBytes(seed: number, k: number): Buffer {
  const r = prng(seed * 31 + k * 977 + 5);
  const n = 2048 + Math.floor(r() * 14 * 1024);
  const b = Buffer.alloc(n);
  b.set([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  for (let i = 8; i < n; i++) b[i] = Math.floor(r() * 256);
  return b;
}

export interface VaultManifest {
  version: number;
  seed: number;
  count: number;
  notes: number;
  files: number;
  bytes: number;
  noteBytes: number;
  genMs: number;
}

export interface BenchVault {
  /** bench/vaults/n<count> */
  dir: string;
  /** Server data dir: <dir>/data */
  dataDir: string;
  /** The Home (vault root): <dataDir>/homes/<user> */
  root: string;
  user: string;
  manifest: VaultManifest;
  reused: boolean;
}

export const BENCH_USER = 'bench';

export function vaultDirs(baseDir: string, count: number) {
  const dir = path.join(baseDir, `n${count}`);
  const dataDir = path.join(dir, 'data');
  const root = path.join(dataDir, 'homes', BENCH_USER);
  return { dir, dataDir, root };
}

export const dirtyMarker = (dir: string) => path.join(dir, 'DIRTY');

/** Generates the vault unless an identical one is already on disk. */
export function ensureVault(baseDir: string, count: number, seed = DEFAULT_SEED, log: (s: string) => void = () => {}): BenchVault {
  const { dir, dataDir, root } = vaultDirs(baseDir, count);
  const manifestFile = path.join(dir, 'manifest.json');
  try {
    const m = JSON.parse(fs.readFileSync(manifestFile, 'utf8')) as VaultManifest;
    if (m.version === GEN_VERSION && m.seed === seed && m.count === count && !fs.existsSync(dirtyMarker(dir)) && fs.existsSync(root)) {
      return { dir, dataDir, root, user: BENCH_USER, manifest: m, reused: true };
    }
  } catch {
    // no manifest: generate
  }
  const t0 = performance.now();
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(root, { recursive: true });
  const made = new Set<string>();
  const write = (rel: string, data: string | Buffer) => {
    const abs = path.join(root, rel);
    const d = path.dirname(abs);
    if (!made.has(d)) {
      fs.mkdirSync(d, { recursive: true });
      made.add(d);
    }
    fs.writeFileSync(abs, data);
    return typeof data === 'string' ? Buffer.byteLength(data) : data.length;
  };
  let bytes = 0;
  let noteBytes = 0;
  let notes = 0;
  let files = 0;
  for (let i = 0; i < count; i++) {
    const n = write(notePath(i), benchNoteText(seed, count, i));
    bytes += n;
    noteBytes += n;
    notes++;
    files++;
    if (i > 0 && i % 20000 === 0) log(`  generated ${i}/${count} notes`);
  }
  for (let h = 0; h < HUB_NOTES.length; h++) {
    const n = write(`${HUB_NOTES[h]}.md`, hubNoteText(seed, count, h));
    bytes += n;
    noteBytes += n;
    notes++;
    files++;
  }
  for (let k = 0; k < Math.ceil(count / 100); k++) {
    bytes += write(`assets/img-${k}.png`, attachmentBytes(seed, k));
    files++;
  }
  const manifest: VaultManifest = { version: GEN_VERSION, seed, count, notes, files, bytes, noteBytes, genMs: Math.round(performance.now() - t0) };
  fs.writeFileSync(manifestFile, JSON.stringify(manifest, null, 2));
  return { dir, dataDir, root, user: BENCH_USER, manifest, reused: false };
}
