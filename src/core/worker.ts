/**
 * Worker threads run built JavaScript, the file named by URL beside the
 * module that starts them (dist/clips/extract-worker.js beside
 * dist/clips/clips.js).
 *
 * Tests run the sources: vitest transpiles them inside its own process,
 * which a worker does not inherit. A module running from src/ therefore
 * starts the same path under dist/, which the tests' global setup builds
 * when it is older than src/ (test/setup/build-dist.ts).
 */
import { Worker } from 'node:worker_threads';

const SRC = new URL('../', import.meta.url);
const DIST = new URL('../../dist/', import.meta.url);

/** The built file for `entry` (a `.js` URL beside its caller). */
export function builtFile(entry: URL): URL {
  if (!import.meta.url.endsWith('.ts') || !entry.href.startsWith(SRC.href)) return entry;
  return new URL(entry.href.slice(SRC.href.length), DIST);
}

/** Start a worker thread running the built module `entry`; `data` reaches it as `workerData.data`. */
export function startWorker(entry: URL, data: unknown = null, name = 'quire-worker'): Worker {
  return new Worker(builtFile(entry), { workerData: { data }, name });
}
