/**
 * A scan worker thread: reads notes, hashes them and extracts their facts,
 * so that indexing a large Home uses every core. Protocol: scan-pool.ts.
 */
import fs from 'node:fs';
import { parentPort } from 'node:worker_threads';
import { extractFacts } from '../markdown/extract.js';
import { etagOf } from './etag.js';
import type { ScanItem, ScanResult } from './scan-pool.js';

const port = parentPort!;

port.on('message', (items: ScanItem[]) => {
  const out: ScanResult[] = [];
  for (const it of items) {
    let bytes: Buffer;
    try {
      bytes = fs.readFileSync(it.abs);
    } catch {
      out.push({ rel: it.rel, etag: null, facts: null, text: null });
      continue;
    }
    const etag = etagOf(bytes);
    if (etag === it.knownEtag) {
      out.push({ rel: it.rel, etag, facts: null, text: null });
      continue;
    }
    const text = bytes.toString('utf8');
    out.push({ rel: it.rel, etag, facts: extractFacts(text, it.rel), text });
  }
  port.postMessage(out);
});
