/**
 * Worker threads running our TypeScript sources (no build step).
 *
 * A worker does not inherit the tsx loader the main thread runs under, and
 * registering it in the worker makes every module load a round trip to
 * tsx's hooks thread: about 350 ms before a scan worker could start work,
 * longer while the cores are busy. So a worker's entry is bundled with its
 * packages (bundle.mjs; about 0.15 s, once per process) into one plain ES
 * module in a private folder under the temporary folder, named by its
 * content hash, which starts in under 0.1 s. Later processes reuse it while
 * none of the files it was built from changed. Should esbuild be missing or
 * fail, the worker starts from ts-worker-boot.mjs, which registers tsx and
 * imports the entry.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { bundleEntry } from './bundle.mjs';

const BOOT = new URL('./ts-worker-boot.mjs', import.meta.url);

/** Entry URL → the bundle's path, or null when bundling failed (then tsx boots it). */
const bundles = new Map<string, string | null>();

/** This user's bundle folder, made private; null if it exists but is not this user's own. */
function bundleDir(): string | null {
  const uid = process.getuid?.();
  const dir = path.join(os.tmpdir(), `quire-workers-${uid ?? 'user'}`);
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const st = fs.statSync(dir);
  if (uid !== undefined && (st.uid !== uid || (st.mode & 0o022) !== 0)) return null;
  return dir;
}

/** The bundle of `entry`, packages included (bundle.mjs), made at most once per process. */
function bundleOf(entry: URL): string | null {
  const cached = bundles.get(entry.href);
  if (cached !== undefined) return cached;
  let out: string | null = null;
  if (process.env['QUIRE_WORKER_BUNDLE'] !== '0' && entry.protocol === 'file:') {
    try {
      const dir = bundleDir();
      out = dir === null ? null : bundleEntry(fileURLToPath(entry), { dir });
    } catch {
      out = null;
    }
  }
  bundles.set(entry.href, out);
  return out;
}

/** Start a worker thread running the TypeScript module at `entry` (a file URL); `data` reaches it as `workerData.data`. */
export function startTsWorker(entry: URL, data: unknown = null, name = 'quire-worker'): Worker {
  const workerData = { entry: entry.href, data };
  const bundle = bundleOf(entry);
  return new Worker(bundle ?? BOOT, { workerData, name });
}
