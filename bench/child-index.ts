/**
 * One indexing run in a fresh process: `new Vault({ root, cacheFile, watch: false })`
 * → time until `ready` (the full text included); then the time until a
 * first search has answered. RSS is taken right after `ready` (the target
 * figure), after that search, and (when run with --expose-gc) after a full GC.
 * Usage: child-index.ts --root <dir> --cache <file> [--fresh] (delete the cache first)
 */
import fs from 'node:fs';
import path from 'node:path';
import { Vault } from '../src/vault/vault.js';
import { emit, parseArgs } from './lib.js';

const args = parseArgs(process.argv.slice(2));
const root = path.resolve(String(args.root));
const cacheFile = path.resolve(String(args.cache));
if (args.fresh) {
  fs.rmSync(cacheFile, { force: true });
  fs.rmSync(cacheFile + '.search', { force: true });
}
const cachePresent = fs.existsSync(cacheFile);
const rss0 = process.memoryUsage().rss;

const t0 = performance.now();
const vault = new Vault({ root, cacheFile, watch: false, onError: (e) => console.error(e) });
const stats = await vault.ready;
const readyMs = performance.now() - t0;
const mem = process.memoryUsage();
const status = await vault.index.searchStatus();
const t1 = performance.now();
await vault.index.search('vault');
const searchReadyMs = performance.now() - t0;
const firstSearchMs = performance.now() - t1;
const memAfterSearch = process.memoryUsage();
// With --expose-gc: what stays alive once garbage is collected (the whole index: deferred
// link resolution and tags are finished first, so they count).
const gc = (globalThis as { gc?: () => void }).gc;
let memAfterGc: NodeJS.MemoryUsage | null = null;
if (gc) {
  vault.index.flush();
  gc();
  memAfterGc = process.memoryUsage();
}
await vault.close();
emit({
  cachePresent,
  readyMs: Math.round(readyMs),
  searchReadyMs: Math.round(searchReadyMs),
  firstSearchMs: Math.round(firstSearchMs),
  searchStatusAtReady: status,
  stats,
  rssBefore: rss0,
  rss: mem.rss,
  heapUsed: mem.heapUsed,
  rssAfterSearch: memAfterSearch.rss,
  heapUsedAfterSearch: memAfterSearch.heapUsed,
  rssAfterGc: memAfterGc?.rss ?? null,
  heapUsedAfterGc: memAfterGc?.heapUsed ?? null,
  cacheBytes: fs.existsSync(cacheFile) ? fs.statSync(cacheFile).size : 0,
});
