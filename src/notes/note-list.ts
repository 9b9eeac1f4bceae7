/**
 * Lists of note records (`by_tag`, `notes_list`, search) and their JSON text.
 *
 * A tag on 650 notes answers 240 KB of JSON. `JSON.stringify` of it took
 * over 1 ms of the main thread per request, and the text (a two-byte string
 * as soon as one title has an accent) then had to be encoded again to be
 * sent. Each note record's JSON is kept as UTF-8 bytes until a field of it
 * changes, and a list's answer is those bytes joined: the same bytes, a
 * small fraction of the work, and no large string on the heap.
 */
import { lazyReply, type Reply } from '../actions/reply.js';
import type { NoteEntry } from '../index/home-index.js';

/** The note record every notes action returns. Times are Unix ms. */
export function noteRecord(n: NoteEntry) {
  return {
    id: n.id,
    path: n.path,
    title: n.title,
    tags: n.tags,
    aliases: n.aliases,
    etag: n.etag,
    created: n.created,
    updated: n.updated,
    size: n.size,
    word_count: n.wordCount,
    canvas: n.path.toLowerCase().endsWith('.excalidraw.md'),
  };
}
export type NoteRecord = ReturnType<typeof noteRecord>;

export interface SearchResult {
  entry: NoteEntry;
  score: number;
  terms: string[];
}

/** A page of notes, before they become records. */
export interface NotePage {
  entries: readonly NoteEntry[];
  next_cursor: string | null;
}

interface CachedJson {
  /** The entry fields that change in place (a re-stamp, an id handed over); the others never do. */
  id: string;
  etag: string;
  size: number;
  created: number;
  updated: number;
  bytes: Buffer;
}

const cache = new WeakMap<NoteEntry, CachedJson>();

/**
 * `JSON.stringify(value)` as UTF-8 in memory of its own, for keeping: a
 * small Buffer.from() is a slice of a shared 8 KB slab, which a long-lived
 * slice keeps alive.
 */
export function jsonBytes(value: unknown): Buffer {
  const text = JSON.stringify(value);
  const bytes = Buffer.allocUnsafeSlow(Buffer.byteLength(text));
  bytes.write(text);
  return bytes;
}

/** `JSON.stringify(noteRecord(n))` as UTF-8, cached while the entry is unchanged. */
export function noteRecordJson(n: NoteEntry): Buffer {
  const c = cache.get(n);
  if (c !== undefined && c.id === n.id && c.etag === n.etag && c.size === n.size && c.created === n.created && c.updated === n.updated) {
    return c.bytes;
  }
  const bytes = jsonBytes(noteRecord(n));
  cache.set(n, { id: n.id, etag: n.etag, size: n.size, created: n.created, updated: n.updated, bytes });
  return bytes;
}

/** The list as data: `{ items: records, next_cursor }`. */
export function noteList(page: NotePage) {
  return { items: page.entries.map(noteRecord), next_cursor: page.next_cursor };
}

const OPEN = Buffer.from('{"items":[');
const COMMA = Buffer.from(',');

/** The list as a reply whose JSON text is joined from cached record texts. */
export function noteListReply(page: NotePage): Reply {
  return lazyReply(() => noteList(page), { json: () => joinRecords(page.entries, page.next_cursor) });
}

/**
 * `{ items, next_cursor }` as UTF-8 JSON from each entry's cached record,
 * with `extra(i)` (a JSON text of further members, such as `"score":1`)
 * added to the i-th record when given.
 */
function joinRecords(entries: readonly NoteEntry[], nextCursor: string | null, extra?: (i: number) => string): Buffer {
  const parts: Buffer[] = [OPEN];
  entries.forEach((n, i) => {
    if (i > 0) parts.push(COMMA);
    const record = noteRecordJson(n);
    if (extra === undefined) parts.push(record);
    else parts.push(record.subarray(0, record.length - 1), Buffer.from(`,${extra(i)}}`));
  });
  parts.push(Buffer.from(`],"next_cursor":${JSON.stringify(nextCursor)}}`));
  return Buffer.concat(parts);
}

/** A search answer: note records with their `score` and matched `terms`. */
export function searchReply(hits: readonly SearchResult[]): Reply {
  return lazyReply(
    () => ({ items: hits.map((h) => Object.assign(noteRecord(h.entry), { score: h.score, terms: h.terms })), next_cursor: null }),
    { json: () => joinRecords(hits.map((h) => h.entry), null, (i) => `"score":${JSON.stringify(hits[i]!.score)},"terms":${JSON.stringify(hits[i]!.terms)}`) },
  );
}
