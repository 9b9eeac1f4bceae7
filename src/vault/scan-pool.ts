/**
 * Reading, hashing and fact extraction of many notes on worker threads
 * (scan-worker.ts). Starting a thread costs a few hundred milliseconds, so
 * it pays only for large scans: the Vault uses it from PARALLEL_MIN notes.
 */
import fs from 'node:fs';
import os from 'node:os';
import type { Worker } from 'node:worker_threads';
import { startTsWorker } from '../core/ts-worker.js';
import { extractFacts } from '../markdown/extract.js';
import type { NoteFacts } from '../markdown/facts.js';
import { etagOf } from './etag.js';

/** Below this many notes to read, a scan runs in this thread. */
export const PARALLEL_MIN = 500;
const BATCH = 32;

export interface ScanItem {
  rel: string;
  abs: string;
  /** The ETag the index has for this path: when the bytes still hash to it, no facts are extracted. */
  knownEtag: string | null;
}

export interface ScanResult {
  rel: string;
  /** null: the file could not be read (gone meanwhile). */
  etag: string | null;
  /** null when unreadable or unchanged (`etag` equals `knownEtag`). */
  facts: NoteFacts | null;
  text: string | null;
}

/** Threads to use: one per core, at most 4 (the disk and the main thread's share set the limit beyond that). */
export function scanThreads(): number {
  return Math.max(1, Math.min(4, os.availableParallelism()));
}

/**
 * Scan `items` on `threads` workers, calling `onResult` on this thread as
 * results arrive (in no particular order). Rejects if a worker fails.
 */
export async function scanInWorkers(items: ScanItem[], threads: number, onResult: (r: ScanResult) => void): Promise<void> {
  let next = 0;
  const workers: Worker[] = [];
  try {
    await Promise.all(
      Array.from({ length: Math.min(threads, Math.ceil(items.length / BATCH)) }, (_, k) => {
        const w = startTsWorker(new URL('./scan-worker.ts', import.meta.url), null, `quire-scan-${k}`);
        workers.push(w);
        return new Promise<void>((resolve, reject) => {
          let inFlight = 0;
          const feed = () => {
            if (next >= items.length) {
              if (inFlight === 0) resolve();
              return;
            }
            const batch = items.slice(next, next + BATCH);
            next += batch.length;
            inFlight++;
            w.postMessage(batch);
          };
          w.on('message', (results: ScanResult[]) => {
            inFlight--;
            try {
              for (const r of results) onResult(r);
            } catch (e) {
              reject(e);
              return;
            }
            feed();
          });
          w.on('error', reject);
          w.on('exit', (code) => reject(new Error(`scan worker exited (code ${code})`)));
          // Two batches in flight: the worker starts the next while this thread takes in the last.
          feed();
          feed();
        });
      }),
    );
  } finally {
    await Promise.all(workers.map((w) => w.terminate()));
  }
}

/** The same scan in this thread, reading up to `concurrency` files at once. */
export async function scanInline(items: ScanItem[], concurrency: number, onResult: (r: ScanResult) => void): Promise<void> {
  let next = 0;
  const runner = async () => {
    while (next < items.length) {
      const it = items[next++]!;
      let bytes: Buffer;
      try {
        bytes = await fs.promises.readFile(it.abs);
      } catch {
        onResult({ rel: it.rel, etag: null, facts: null, text: null });
        continue;
      }
      const etag = etagOf(bytes);
      if (etag === it.knownEtag) {
        onResult({ rel: it.rel, etag, facts: null, text: null });
        continue;
      }
      const text = bytes.toString('utf8');
      onResult({ rel: it.rel, etag, facts: extractFacts(text, it.rel), text });
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, runner));
}
