/**
 * Worker threads running our TypeScript sources (no build step): a worker
 * starts from ts-worker-boot.mjs, which registers tsx and imports `entry`.
 */
import { Worker } from 'node:worker_threads';

const BOOT = new URL('./ts-worker-boot.mjs', import.meta.url);

/** Start a worker thread running the TypeScript module at `entry` (a file URL); `data` reaches it as `workerData.data`. */
export function startTsWorker(entry: URL, data: unknown = null, name = 'quire-worker'): Worker {
  return new Worker(BOOT, { workerData: { entry: entry.href, data }, name });
}
