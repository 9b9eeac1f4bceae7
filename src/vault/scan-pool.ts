/**
 * Reading, hashing and fact extraction of many notes on worker threads
 * (scan-worker.ts); this thread takes their answers into the index.
 * Starting a thread costs a hundred milliseconds or more, so it pays only
 * for large scans: the Vault uses a pool from PARALLEL_MIN notes. (Having
 * this thread scan a share of the notes too, with one worker fewer, was
 * no faster on 2 cores: its share then waited on the index work, and its
 * heap grew by the scan's garbage.)
 *
 * Each worker takes its next batch itself, from a counter the workers share
 * (`Atomics.add` on a SharedArrayBuffer), rather than waiting for this
 * thread to send one: this thread is busy for long stretches while a Home
 * opens (loading the server's modules, taking results into the index), and
 * workers fed by it sat idle meanwhile (on the 10k bench vault, 0.5–1 s per
 * worker of `serve --vault`'s cold start).
 *
 * What crosses threads is kept cheap (scan-wire.ts): facts come back as
 * one JSON text per batch in a compact encoding (parsing JSON is far faster
 * than structured-cloning many small objects) but for the links' integers,
 * which come as one typed array per batch that the notes' link tables keep
 * views of (half the JSON text before, and decoding it number by number was
 * most of this thread's share); so do the numbers of the links' targets and
 * extras (550,000 numbers on the 10k bench vault, a third of the JSON
 * text, whose writing and parsing cost more than the arrays' copy). Each worker tokenizes its notes for the full text
 * itself and sends their postings once, at the end, as typed arrays (see
 * scan-worker.ts), so the note texts never cross threads. It does so after
 * every note's facts are sent: a Home's opening is ready on the facts alone
 * (about a third of the scan's work is the full text), and searches wait
 * for the rest (`FullTextIndex.expectPartials`).
 */
import fs from 'node:fs';
import os from 'node:os';
import type { Worker } from 'node:worker_threads';
import { startWorker } from '../core/worker.js';
import type { PartialIndex } from '../index/fulltext/full-text.js';
import { extractFacts } from '../markdown/extract.js';
import type { SnapshotNote } from '../index/snapshot.js';
import type { AnyFacts } from '../index/types.js';
import { etagOf } from './etag.js';
import { decodeBatch, type WireBatch } from './scan-wire.js';

/** Below this many notes to read, a scan runs in this thread. */
export const PARALLEL_MIN = 500;

export interface ScanItem {
  rel: string;
  abs: string;
  /** The ETag the index has for this path: when the bytes still hash to it, no facts are extracted. */
  knownEtag: string | null;
  /** The path is a symlink to follow (followSymlinks); otherwise the file is opened with O_NOFOLLOW. */
  link: boolean;
}

/** Open flags for a scanned file: a regular file that became a symlink since the walk is not read through it. */
export function scanOpenFlags(it: ScanItem): number {
  return it.link ? fs.constants.O_RDONLY : fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW;
}

export interface ScanResult {
  rel: string;
  /** null: the file could not be read (gone meanwhile). */
  etag: string | null;
  /** null when unreadable or unchanged (`etag` equals `knownEtag`), or when a scan worker sent `note` instead. */
  facts: AnyFacts | null;
  /** From a scan worker instead of `facts`: the note's head, and its other facts as bytes to parse when first read (HomeIndex.upsertScanned). */
  note: SnapshotNote | null;
  /** The note text; null when unchanged, or when it came from a scan worker (which tokenized it for the full text itself: its postings come in a `PartialIndex` of `run`). */
  text: string | null;
}

/**
 * A worker's one request: scan `items`, taking BATCH at a time from the shared counter `next`
 * (the index of the first item no worker has taken), answering each batch with a `WireBatch`.
 */
export interface ScanRequest {
  items: ScanItem[];
  next: Int32Array;
}

export const BATCH = 32;

/** A worker's message once no batch is left to take: every note it scanned has been sent. */
export interface ScanScanned {
  scanned: true;
}

/** A worker's last message: the full text of the notes it scanned. */
export interface ScanFinished {
  finished: true;
  partial: PartialIndex;
}

/** Threads to use: one per core, at most 4 (the disk and the main thread's share set the limit beyond that). */
export function scanThreads(): number {
  return Math.max(1, Math.min(4, os.availableParallelism()));
}

/**
 * Scan workers, started before the list of files to scan is complete:
 * starting a thread takes longer than walking a large Home's folders, so
 * the Vault starts the pool as soon as the walk shows a scan will need it,
 * and the threads boot while the walk goes on. `run` once, then `close`.
 */
export class ScanPool {
  private readonly workers: Worker[] = [];
  private readonly exiting: Array<Promise<number>> = [];
  /** A worker's failure before `run` took over its errors. */
  private failed: Error | null = null;

  /** Starts `threads` workers. */
  constructor(threads: number) {
    for (let k = 0; k < threads; k++) {
      const w = startWorker('vault/scan-worker.js', null, `quire-scan-${k}`);
      w.on('error', (e) => (this.failed ??= e));
      this.workers.push(w);
    }
  }

  /**
   * Scan `items`, calling `onResult` on this thread as results arrive (in
   * no particular order); resolves once every result has come. Its
   * `fullText` then resolves to the full text of the notes parsed, one
   * `PartialIndex` per worker. Either rejects if a worker fails.
   */
  async run(items: ScanItem[], onResult: (r: ScanResult) => void): Promise<{ fullText: Promise<PartialIndex[]> }> {
    const next = new Int32Array(new SharedArrayBuffer(4));
    const scanned: Array<Promise<void>> = [];
    const finished: Array<Promise<PartialIndex>> = [];
    for (const w of this.workers) {
      let onScanned!: () => void;
      let failScan!: (e: unknown) => void;
      scanned.push(new Promise<void>((resolve, reject) => ((onScanned = resolve), (failScan = reject))));
      finished.push(
        new Promise<PartialIndex>((resolve, reject) => {
          const fail = (e: unknown) => {
            failScan(e);
            reject(e);
          };
          if (this.failed) return fail(this.failed);
          w.on('message', (m: WireBatch | ScanScanned | ScanFinished) => {
            if ('scanned' in m) return onScanned();
            if ('finished' in m) {
              // Done: its thread exits while this one merges, rather than after (≈50 ms on 10k notes).
              this.exiting.push(w.terminate());
              return resolve(m.partial);
            }
            try {
              for (const [rel, etag, note] of decodeBatch(m)) onResult({ rel, etag, facts: null, note, text: null });
            } catch (e) {
              fail(e);
            }
          });
          w.on('error', fail);
          w.on('exit', (code) => fail(new Error(`scan worker exited (code ${code})`)));
          const request: ScanRequest = { items, next };
          w.postMessage(request);
        }),
      );
    }
    // By worker, so the documents' order (which breaks score ties) does not depend on which worker finished first.
    const fullText = Promise.all(finished);
    // Observed here, so a failure seen first through `scanned` is not also an unhandled rejection.
    fullText.catch(() => undefined);
    await Promise.all(scanned);
    return { fullText };
  }

  async close(): Promise<void> {
    await Promise.all([...this.exiting.splice(0), ...this.workers.splice(0).map((w) => w.terminate())]);
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
        bytes = await fs.promises.readFile(it.abs, { flag: scanOpenFlags(it) });
      } catch {
        onResult({ rel: it.rel, etag: null, facts: null, note: null, text: null });
        continue;
      }
      const etag = etagOf(bytes);
      if (etag === it.knownEtag) {
        onResult({ rel: it.rel, etag, facts: null, note: null, text: null });
        continue;
      }
      const text = bytes.toString('utf8');
      onResult({ rel: it.rel, etag, facts: extractFacts(text, it.rel), note: null, text });
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, runner));
}
