/**
 * The feed from scan workers to the search thread (see search-worker.ts).
 *
 * A feed port carries batches of documents, then `end`, one message per
 * batch (a message costs far more than its contents). A document comes
 * without its body: the search thread reads the note's file when it indexes
 * the document, after the scan, rather than holding a Home's worth of text
 * in its queue meanwhile (see `SearchIndex.setFile`).
 */
import type { SearchDoc } from './search.js';

export type FeedMessage = { t: 'set'; docs: FedDoc[] } | { t: 'end' };

export interface FedDoc {
  /** The document, body empty. */
  doc: SearchDoc;
  /** The note's absolute path. */
  file: string;
  /** Where the body starts in the decoded text (a string index). */
  bodyStart: number;
  /** The ETag of the bytes the scan read. */
  etag: string;
}
