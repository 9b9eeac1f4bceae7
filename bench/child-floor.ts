/**
 * The floor: walk the vault, read every file and SHA-256 it (32 reads in
 * flight, like the indexer), in a fresh process. Nothing is parsed or kept.
 * Usage: child-floor.ts --root <dir>
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { emit, parseArgs } from './lib.js';

const args = parseArgs(process.argv.slice(2));
const root = path.resolve(String(args.root));

const t0 = performance.now();
const files: string[] = [];
async function walk(dir: string): Promise<void> {
  const entries = await fs.promises.readdir(dir, { withFileTypes: true });
  const subdirs: string[] = [];
  for (const e of entries) {
    const abs = path.join(dir, e.name);
    if (e.isDirectory()) subdirs.push(abs);
    else if (e.isFile()) files.push(abs);
  }
  for (const d of subdirs) await walk(d);
}
await walk(root);
const tWalk = performance.now();
let bytes = 0;
let next = 0;
await Promise.all(
  Array.from({ length: 32 }, async () => {
    while (next < files.length) {
      const f = files[next++]!;
      await fs.promises.stat(f); // the indexer stats every file too
      const b = await fs.promises.readFile(f);
      createHash('sha256').update(b).digest('base64url');
      bytes += b.length;
    }
  }),
);
const t1 = performance.now();
emit({ ms: Math.round(t1 - t0), walkMs: Math.round(tWalk - t0), files: files.length, bytes, rss: process.memoryUsage().rss });
