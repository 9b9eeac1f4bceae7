/**
 * The full-text index's file (`<cacheFile>.search`): one JSON line (format,
 * version, documents, terms, the delta), then the typed arrays as raw bytes
 * (little-endian, as every platform Node runs on), each 8-byte aligned.
 *
 * Loading is reading the file and taking typed-array views of it: about
 * 15 MB for the 10k bench vault, where MiniSearch's own JSON took seconds to
 * parse and turn back into Maps. A file that does not match exactly (format,
 * version, sizes) is refused as a whole; the caller then re-reads the notes.
 */
import { FIELD_COUNT, type Segment } from './postings.js';
import type { FullTextState } from './full-text.js';

/** Bump when the layout, the tokenizer or what goes into a document changes. */
export const FULL_TEXT_VERSION = 1;
const FORMAT = 'quire-fulltext';

interface Header {
  format: string;
  version: number;
  paths: Array<string | null>;
  etags: string[];
  segmentLimit: number;
  /** The segment's terms joined with '\n' (a separator, so never inside a term). */
  terms: string;
  postings: number;
  delta: Array<[string, number[]]>;
}

/** The file's bytes, as chunks to write in order. */
export function encodeFullText(s: FullTextState): Uint8Array[] {
  const header: Header = {
    format: FORMAT,
    version: FULL_TEXT_VERSION,
    paths: s.paths,
    etags: s.etags,
    segmentLimit: s.segmentLimit,
    terms: s.segment.terms.join('\n'),
    postings: s.segment.docs.length,
    delta: s.delta,
  };
  const head = Buffer.from(JSON.stringify(header) + '\n', 'utf8');
  const out: Uint8Array[] = [head, new Uint8Array(pad(head.length))];
  for (const a of [s.lengths.subarray(0, s.paths.length * FIELD_COUNT), s.segment.starts, s.segment.docs, s.segment.tfs]) {
    const bytes = new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
    out.push(bytes, new Uint8Array(pad(bytes.length)));
  }
  return out;
}

const pad = (n: number) => (8 - (n % 8)) % 8;

export class FullTextFileError extends Error {}

/** The state stored in `bytes`; throws FullTextFileError when they are not a file this build wrote. */
export function decodeFullText(bytes: Uint8Array): FullTextState {
  const nl = bytes.indexOf(0x0a);
  if (nl < 0) throw new FullTextFileError('no header');
  let header: Header;
  try {
    header = JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset, nl).toString('utf8')) as Header;
  } catch {
    throw new FullTextFileError('unreadable header');
  }
  if (header.format !== FORMAT || header.version !== FULL_TEXT_VERSION) throw new FullTextFileError('another format or version');
  const docCount = header.paths.length;
  const terms = header.terms === '' ? [] : header.terms.split('\n');
  // Views need 4-byte alignment of the underlying buffer: copy once if the file's bytes are not.
  const data = bytes.byteOffset % 8 === 0 ? bytes : new Uint8Array(bytes);
  let at = nl + 1 + pad(nl + 1);
  const take = (n: number): Int32Array => {
    if (at + n * 4 > data.length) throw new FullTextFileError('truncated');
    const view = new Int32Array(data.buffer, data.byteOffset + at, n);
    at += n * 4 + pad(n * 4);
    return view;
  };
  const lengths = take(docCount * FIELD_COUNT);
  const starts = take(terms.length * FIELD_COUNT + 1);
  const docs = take(header.postings);
  const tfs = take(header.postings);
  if (at !== data.length || starts[starts.length - 1] !== docs.length || header.etags.length !== docCount) {
    throw new FullTextFileError('sizes do not match');
  }
  const segment: Segment = { terms, starts, docs, tfs };
  return { paths: header.paths, etags: header.etags, lengths, segment, segmentLimit: header.segmentLimit, delta: header.delta };
}
