/**
 * A scan worker thread: reads notes, hashes them and extracts their facts,
 * so that indexing a large Home uses every core. With a search feed, each
 * note's search document (without its text, which the search thread reads
 * from the file when it indexes it) goes straight to the search thread and
 * the main thread gets only facts. Protocol: scan-pool.ts.
 */
import fs from 'node:fs';
import { parentPort, type MessagePort } from 'node:worker_threads';
import type { FedDoc, FeedMessage } from '../index/search-feed.js';
import { searchDocOf } from '../index/search.js';
import { encodeFacts, StringTable } from '../index/snapshot.js';
import { extractFacts } from '../markdown/extract.js';
import { etagOf } from './etag.js';
import type { ScanBatch, ScanItem, ScanRequest, ScanRow } from './scan-pool.js';

const port = parentPort!;
let feed: MessagePort | null = null;

function scan(items: ScanItem[]): ScanBatch {
  const table = new StringTable();
  const results: ScanRow[] = [];
  const fed: FedDoc[] = [];
  for (const it of items) {
    let bytes: Buffer;
    try {
      bytes = fs.readFileSync(it.abs);
    } catch {
      results.push([it.rel, null, null, null]);
      continue;
    }
    const etag = etagOf(bytes);
    if (etag === it.knownEtag) {
      results.push([it.rel, etag, null, null]);
      continue;
    }
    const text = bytes.toString('utf8');
    const facts = extractFacts(text, it.rel);
    if (feed !== null) fed.push({ doc: searchDocOf(it.rel, facts, ''), file: it.abs, bodyStart: facts.frontmatterRange?.end ?? 0, etag });
    // The index does not keep tag positions (see HomeIndex.putNote): no need to send them.
    results.push([it.rel, etag, encodeFacts({ ...facts, tagOccurrences: [] }, table), feed === null ? text : null]);
  }
  if (feed !== null && fed.length > 0) {
    const m: FeedMessage = { t: 'set', docs: fed };
    feed.postMessage(m);
  }
  return { json: JSON.stringify({ strings: table.takeStrings(), results }) };
}

port.on('message', (m: ScanRequest) => {
  if (m.t === 'init') {
    feed = m.feed;
  } else if (m.t === 'scan') {
    port.postMessage(scan(m.items));
  } else {
    const end: FeedMessage = { t: 'end' };
    feed?.postMessage(end);
    feed?.close();
    feed = null;
    port.postMessage({ finished: true });
  }
});
