/** A worker for ts-worker.test.ts: TypeScript importing our sources and a CommonJS package (gray-matter). */
import matter from 'gray-matter';
import { parentPort, workerData } from 'node:worker_threads';
import { etagOf } from '../../src/vault/etag.js';

parentPort!.on('message', (text: string) => {
  parentPort!.postMessage({ etag: etagOf(Buffer.from(text)), data: matter(text).data, given: workerData.data, url: import.meta.url });
});
