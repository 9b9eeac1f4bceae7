/**
 * Worker threads run built JavaScript, a file of dist/ named by its path
 * there (dist/clips/extract-worker.js), whether the module starting them
 * runs from dist/, from the command line's bundle or from src/.
 *
 * Tests run the sources: vitest transpiles them inside its own process,
 * which a worker does not inherit, so a worker started from src/ runs the
 * same path under dist/, which the tests' global setup builds when it is
 * older than src/ (test/setup/build-dist.mjs).
 */
import { Worker } from 'node:worker_threads';
import { BUILT_TREE } from './install.js';

/** Start a worker thread running the built module `entry` (its path in dist/: 'vault/scan-worker.js'); `data` reaches it as `workerData.data`. */
export function startWorker(entry: string, data: unknown = null, name = 'quire-worker'): Worker {
  return new Worker(new URL(entry, BUILT_TREE), { workerData: { data }, name });
}
