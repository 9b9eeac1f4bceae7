/**
 * Where cold indexing time goes, phase by phase, in a fresh process:
 * walk, read+hash, extractFacts, HomeIndex.upsertNote (links and full text
 * deferred), full-text flush (in this thread), link resolution, toSnapshot
 * (the text), fromSnapshot (+ link resolution).
 * Usage: child-phases.ts --root <dir> [--limit N] (only the first N notes)
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { HomeIndex } from '../src/index/home-index.js';
import { fieldsOf } from '../src/index/fulltext/document.js';
import { FullTextIndex } from '../src/index/fulltext/full-text.js';
import { extractFacts } from '../src/markdown/extract.js';
import { emit, parseArgs } from './lib.js';

const args = parseArgs(process.argv.slice(2));
const root = path.resolve(String(args.root));
const limit = args.limit ? Number(args.limit) : Infinity;
const phases: Record<string, number> = {};
let t = performance.now();
const lap = (name: string) => {
  const now = performance.now();
  phases[name] = Math.round(now - t);
  t = now;
};

const files: string[] = [];
function walk(rel: string) {
  for (const e of fs.readdirSync(path.join(root, rel), { withFileTypes: true })) {
    const r = rel ? `${rel}/${e.name}` : e.name;
    if (e.isDirectory()) walk(r);
    else if (r.endsWith('.md')) files.push(r);
  }
}
walk('');
files.splice(limit);
lap('walk');
const texts: Array<{ rel: string; text: string; etag: string; size: number; mtimeMs: number }> = [];
for (const rel of files) {
  const abs = path.join(root, rel);
  const st = fs.statSync(abs);
  const b = fs.readFileSync(abs);
  texts.push({ rel, text: b.toString('utf8'), etag: createHash('sha256').update(b).digest('base64url'), size: st.size, mtimeMs: st.mtimeMs });
}
lap('readHash');
const facts = texts.map((x) => extractFacts(x.text, x.rel));
lap('extractFacts');
// Full text first, on its own; upsertNote is then told it is done (searchFed).
const fullText = new FullTextIndex();
for (let i = 0; i < texts.length; i++) fullText.set(texts[i]!.rel, fieldsOf(texts[i]!.rel, facts[i]!, texts[i]!.text), texts[i]!.etag);
lap('fullText');
// 'lazy': links and tags wait for the flush call, so it is timed on its own.
const index = new HomeIndex({ mode: 'lazy', fullText });
for (let i = 0; i < texts.length; i++) {
  const x = texts[i]!;
  index.upsertNote(x.rel, facts[i]!, { size: x.size, mtimeMs: x.mtimeMs, etag: x.etag }, null, true);
}
lap('upsertNote');
index.flush();
lap('linksFlush');
const snap = index.toSnapshot();
lap('toSnapshot');
HomeIndex.fromSnapshot(snap, { mode: 'lazy' }).flush();
lap('fromSnapshot');
emit({ notes: texts.length, phases, snapshotBytes: snap.length, rss: process.memoryUsage().rss });
