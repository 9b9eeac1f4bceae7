/**
 * The feed from scan workers to the search thread (see search-worker.ts):
 * what a feed port carries, and how a scan worker packs it.
 */
import type { SearchDoc } from './search.js';

/**
 * What a feed port carries: batches of documents, then `end`. A document
 * comes without its body; the batch carries its notes' UTF-8 bytes one after
 * another in one buffer (transferred, not copied), and a document's body is
 * the decoded text of its `[start, end)` bytes from `bodyStart` (a string
 * index). One message per batch: a message costs far more than its bytes.
 */
export type FeedMessage = { t: 'set'; docs: FedDoc[]; bytes: Uint8Array } | { t: 'end' };

export interface FedDoc {
  doc: SearchDoc;
  start: number;
  end: number;
  bodyStart: number;
  etag: string;
}

/** A note to feed: its document without body, its bytes, where its body starts in the decoded text, its ETag. */
export interface FeedNote {
  doc: SearchDoc;
  bytes: Uint8Array;
  bodyStart: number;
  etag: string;
}

/** A feed message for these notes, with what to transfer. */
export function feedBatch(notes: readonly FeedNote[]): {
  message: FeedMessage;
  transfer: ArrayBuffer[];
} {
  let size = 0;
  for (const n of notes) size += n.bytes.byteLength;
  const bytes = new Uint8Array(size);
  const docs: FedDoc[] = [];
  let at = 0;
  for (const n of notes) {
    bytes.set(n.bytes, at);
    docs.push({ doc: n.doc, start: at, end: at + n.bytes.byteLength, bodyStart: n.bodyStart, etag: n.etag });
    at += n.bytes.byteLength;
  }
  return { message: { t: 'set', docs, bytes }, transfer: [bytes.buffer] };
}
