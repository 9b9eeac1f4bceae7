/**
 * The full-text index's file (`<cacheFile>.search`): JSON lines, then the
 * typed arrays as raw bytes (little-endian, as every platform Node runs on),
 * each 8-byte aligned:
 *
 *     {"format":"quire-fulltext","version":2,"docs":N,"terms":T,...}
 *     [[path|null, etag], ...]          the documents, CHUNK a line
 *     "term\nterm\n..."                 the segment's terms, CHUNK a line
 *     [[term, [key, tf, ...]], ...]     the delta, CHUNK terms a line
 *     field lengths, starts, docs, tfs  raw Int32 arrays
 *
 * The file is written a chunk at a time (`encodeFullText` yields them), so
 * that a large Home's file (156 MB, 665k terms on the 100k bench vault)
 * never holds the event loop for long: one JSON text of it all took 100 ms.
 * Loading is reading the file, parsing its lines and taking typed-array views
 * of the rest: about 15 MB for the 10k bench vault, where MiniSearch's own
 * JSON took seconds to parse and turn back into Maps. A file that does not
 * match exactly (format, version, sizes) is refused as a whole; the caller
 * then re-reads the notes.
 */
import { FIELD_COUNT, type Segment } from './postings.js';
import type { FullTextState } from './full-text.js';

/** Bump when the layout, the tokenizer or what goes into a document changes. */
export const FULL_TEXT_VERSION = 2;
const FORMAT = 'quire-fulltext';
/** Entries a line. */
const CHUNK = 8192;

interface Header {
  format: string;
  version: number;
  docs: number;
  segmentLimit: number;
  terms: number;
  postings: number;
  deltaTerms: number;
}

/**
 * The file's bytes, chunk by chunk. The state is read as the chunks are
 * made: its arrays must not change meanwhile (`FullTextIndex.state()` hands
 * out copies of the ones that would).
 */
export function* encodeFullText(s: FullTextState): Generator<string | Uint8Array> {
  const header: Header = {
    format: FORMAT,
    version: FULL_TEXT_VERSION,
    docs: s.paths.length,
    segmentLimit: s.segmentLimit,
    terms: s.segment.terms.length,
    postings: s.segment.docs.length,
    deltaTerms: s.delta.length,
  };
  let bytes = 0;
  const line = (text: string) => {
    bytes += Buffer.byteLength(text) + 1;
    return text + '\n';
  };
  yield line(JSON.stringify(header));
  for (let i = 0; i < s.paths.length; i += CHUNK) {
    const docs: Array<[string | null, string]> = [];
    for (let d = i; d < Math.min(i + CHUNK, s.paths.length); d++) docs.push([s.paths[d] ?? null, s.etags[d]!]);
    yield line(JSON.stringify(docs));
  }
  // A term never holds a separator such as '\n'.
  for (let i = 0; i < s.segment.terms.length; i += CHUNK) yield line(JSON.stringify(s.segment.terms.slice(i, i + CHUNK).join('\n')));
  for (let i = 0; i < s.delta.length; i += CHUNK) yield line(JSON.stringify(s.delta.slice(i, i + CHUNK)));
  yield new Uint8Array(pad(bytes));
  for (const a of [s.lengths.subarray(0, s.paths.length * FIELD_COUNT), s.segment.starts, s.segment.docs, s.segment.tfs]) {
    yield new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
    yield new Uint8Array(pad(a.byteLength));
  }
}

const pad = (n: number) => (8 - (n % 8)) % 8;

export class FullTextFileError extends Error {}

/** The state stored in `bytes`; throws FullTextFileError when they are not a file this build wrote. */
export function decodeFullText(bytes: Uint8Array): FullTextState {
  let at = 0;
  const nextLine = (): unknown => {
    const nl = bytes.indexOf(0x0a, at);
    if (nl < 0) throw new FullTextFileError('truncated');
    const text = Buffer.from(bytes.buffer, bytes.byteOffset + at, nl - at).toString('utf8');
    at = nl + 1;
    try {
      return JSON.parse(text);
    } catch {
      throw new FullTextFileError('unreadable line');
    }
  };
  const header = nextLine() as Header;
  if (header?.format !== FORMAT || header.version !== FULL_TEXT_VERSION) throw new FullTextFileError('another format or version');
  const lines = (n: number) => Math.ceil(n / CHUNK);
  const paths: Array<string | null> = [];
  const etags: string[] = [];
  for (let i = lines(header.docs); i > 0; i--) {
    for (const [p, e] of nextLine() as Array<[string | null, string]>) {
      paths.push(p);
      etags.push(e);
    }
  }
  const terms: string[] = [];
  for (let i = lines(header.terms); i > 0; i--) for (const t of (nextLine() as string).split('\n')) terms.push(t);
  const delta: Array<[string, number[]]> = [];
  for (let i = lines(header.deltaTerms); i > 0; i--) for (const d of nextLine() as Array<[string, number[]]>) delta.push(d);
  if (paths.length !== header.docs || terms.length !== header.terms || delta.length !== header.deltaTerms) throw new FullTextFileError('counts do not match');
  at += pad(at);
  // Views need 4-byte alignment of the underlying buffer: copy once if the file's bytes are not.
  const data = bytes.byteOffset % 8 === 0 ? bytes : new Uint8Array(bytes);
  const take = (n: number): Int32Array => {
    if (at + n * 4 > data.length) throw new FullTextFileError('truncated');
    const view = new Int32Array(data.buffer, data.byteOffset + at, n);
    at += n * 4 + pad(n * 4);
    return view;
  };
  const lengths = take(header.docs * FIELD_COUNT);
  const starts = take(header.terms * FIELD_COUNT + 1);
  const docs = take(header.postings);
  const tfs = take(header.postings);
  if (at !== data.length || starts[starts.length - 1] !== docs.length) throw new FullTextFileError('sizes do not match');
  const segment: Segment = { terms, starts, docs, tfs };
  return { paths, etags, lengths, segment, segmentLimit: header.segmentLimit, delta };
}
