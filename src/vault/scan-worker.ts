/**
 * A scan worker thread: reads notes, hashes them and extracts their facts,
 * so that indexing a large Home uses every core. Once no batch is left to
 * take it says so (`ScanScanned`: the Home's opening can be ready), then
 * tokenizes the notes it scanned for the full-text index and sends their
 * postings as one `PartialIndex` (typed arrays, transferred, not copied)
 * for the main thread to merge. Protocol: scan-pool.ts.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parentPort } from 'node:worker_threads';
import { fieldsOf, PartialBuilder } from '../index/fulltext/document.js';
import type { FieldTexts } from '../index/fulltext/postings.js';
import { extractFacts } from '../markdown/extract.js';
import { etagOf } from './etag.js';
import { BATCH, scanOpenFlags, type ScanFinished, type ScanItem, type ScanRequest, type ScanScanned } from './scan-pool.js';
import { WireEncoder, type WireBatch } from './scan-wire.js';

const port = parentPort!;

// Detach a buffer before any code here is optimized. The first detach in a thread (a transfer
// is one) invalidates V8's ArrayBufferDetaching protector, and every function then optimized on
// the assumption that no buffer is ever detached (the tokenizer, word counting, tag scanning:
// whatever reads a typed array) is deoptimized and compiled again. Done now, it costs nothing.
const probe = new ArrayBuffer(8);
structuredClone(probe, { transfer: [probe] });

/** The notes this worker scanned, in scan order, to tokenize once every batch's facts are sent. */
const toTokenize: Array<{ rel: string; etag: string; fields: FieldTexts }> = [];

/**
 * The whole file at `abs`, in a buffer this worker reuses (valid until the
 * next call): `readFileSync` would allocate a buffer per note and ask the
 * file's size first, and the bytes are only hashed and decoded here.
 */
let buffer = Buffer.allocUnsafe(1 << 16);
function readWhole(abs: string, flags: number): Buffer {
  const fd = fs.openSync(abs, flags);
  try {
    let n = 0;
    for (;;) {
      if (n === buffer.length) {
        const bigger = Buffer.allocUnsafe(buffer.length * 2);
        buffer.copy(bigger, 0, 0, n);
        buffer = bigger;
      }
      const got = fs.readSync(fd, buffer, n, buffer.length - n, null);
      if (got === 0) return buffer.subarray(0, n);
      n += got;
    }
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * Tokenizing comes after every fact is sent: the Home's opening can be ready
 * and answer while this thread still works. On Linux this thread then gives
 * way (nice 10, this thread alone: a thread id is a pid to setpriority) to the
 * main thread's answers and to the other scan thread's last batches, which the
 * opening still waits for. Elsewhere, or without /proc, it keeps its priority.
 */
function lowerPriority(): void {
  try {
    os.setPriority(Number(path.basename(fs.readlinkSync('/proc/thread-self'))), 10);
  } catch {
    // not Linux: same priority as the other threads
  }
}

/** How this thread sends its facts (scan-wire.ts); reused from batch to batch. */
const wire = new WireEncoder();

function scan(items: ScanItem[]): WireBatch {
  for (const it of items) {
    let bytes: Buffer;
    try {
      bytes = readWhole(it.abs, scanOpenFlags(it));
    } catch {
      wire.add(it.rel, null, null);
      continue;
    }
    const etag = etagOf(bytes);
    if (etag === it.knownEtag) {
      wire.add(it.rel, etag, null);
      continue;
    }
    const text = bytes.toString('utf8');
    const facts = extractFacts(text, it.rel);
    toTokenize.push({ rel: it.rel, etag, fields: fieldsOf(it.rel, facts, text) });
    wire.add(it.rel, etag, facts);
  }
  return wire.take();
}

port.on('message', ({ items, next }: ScanRequest) => {
  for (let at = Atomics.add(next, 0, BATCH); at < items.length; at = Atomics.add(next, 0, BATCH)) {
    const batch = scan(items.slice(at, at + BATCH));
    const { linkNums, linkStrings, rests } = batch;
    port.postMessage(batch, [linkNums.buffer, linkStrings.targets.buffer, linkStrings.extras.buffer, rests.buffer] as ArrayBuffer[]);
  }
  const scanned: ScanScanned = { scanned: true };
  port.postMessage(scanned);
  lowerPriority();
  const fullText = new PartialBuilder();
  for (const n of toTokenize.splice(0)) fullText.add(n.rel, n.etag, n.fields);
  const partial = fullText.build();
  const done: ScanFinished = { finished: true, partial };
  const s = partial.segment;
  port.postMessage(done, [partial.lengths.buffer, s.starts.buffer, s.docs.buffer, s.tfs.buffer] as ArrayBuffer[]);
});
