/**
 * The search engine's file (`<cacheFile>.search`): MiniSearch's index in a
 * compact form of our own.
 *
 * MiniSearch's `toJSON()` writes every postings list as an object keyed by
 * document id; parsing one gives dictionary-mode objects by the million,
 * and `loadJS` then turns each into a Map: on the 10k bench vault an 18 MB
 * file took the search thread about 2 s of CPU and several hundred MB at its
 * peak while the main thread was loading its own snapshot. Here postings are
 * flat number arrays (packed by JSON.parse) and loading fills MiniSearch's
 * own structures directly. Discarded documents are left out on save, so a
 * loaded engine needs no vacuum. A loaded engine equals the saved one
 * (`toJSON()` output compared in search-persist.test.ts).
 */
import MiniSearch, { type Options } from 'minisearch';
import { internalsOf, type TermData } from './minisearch-internals.js';

/** Bump when this shape, the MiniSearch options or what goes into a search document change. */
export const SEARCH_PERSIST_VERSION = 2;

export interface PersistedSearch {
  format: 'quire-search';
  version: number;
  /** [path, etag] of every document. */
  etags: Array<[string, string]>;
  /** Short id and path of every live document, flat: `[id, path, id, path, …]`. */
  documents: Array<number | string>;
  /** Each live document's field lengths, in `documents` order, `fieldCount` numbers each. */
  fieldLengths: number[];
  averageFieldLength: number[];
  nextId: number;
  /** The index's terms, and for each its postings: `[fieldId, n, doc, tf × n, fieldId, …]`. */
  terms: string[];
  postings: number[][];
}

/** The persisted form of `ms` with these ETags; null if MiniSearch's internals are not the ones this was written for. */
export function persistEngine<T>(ms: MiniSearch<T>, etags: Array<[string, string]>): PersistedSearch | null {
  const m = internalsOf(ms);
  if (m === null) return null;
  const fieldCount = Object.keys(m._fieldIds).length;
  const documents: Array<number | string> = [];
  const fieldLengths: number[] = [];
  for (const [id, path] of m._documentIds) {
    documents.push(id, path);
    const lengths = m._fieldLength.get(id) ?? [];
    for (let f = 0; f < fieldCount; f++) fieldLengths.push(lengths[f] ?? 0);
  }
  const terms: string[] = [];
  const postings: number[][] = [];
  for (const [term, data] of m._index) {
    const out: number[] = [];
    for (const [fieldId, docs] of data) {
      const at = out.length;
      out.push(fieldId, 0);
      let n = 0;
      for (const [doc, tf] of docs) {
        if (!m._documentIds.has(doc)) continue; // discarded, not vacuumed yet
        out.push(doc, tf);
        n++;
      }
      if (n === 0) out.length = at;
      else out[at + 1] = n;
    }
    if (out.length === 0) continue;
    terms.push(term);
    postings.push(out);
  }
  return {
    format: 'quire-search',
    version: SEARCH_PERSIST_VERSION,
    etags,
    documents,
    fieldLengths,
    averageFieldLength: [...m._avgFieldLength],
    nextId: m._nextId,
    terms,
    postings,
  };
}

/** A MiniSearch with `options` holding the persisted index; null when it cannot be loaded. Throws a TypeError on a malformed file. */
export function loadEngine<T>(p: PersistedSearch, options: Options<T>): MiniSearch<T> | null {
  const ms = new MiniSearch<T>(options);
  const m = internalsOf(ms);
  if (m === null) return null;
  const fieldCount = Object.keys(m._fieldIds).length;
  if (p.averageFieldLength.length !== fieldCount || p.fieldLengths.length !== (p.documents.length / 2) * fieldCount) throw new TypeError('search file: field lengths do not match');
  for (let i = 0; i < p.documents.length; i += 2) {
    const id = p.documents[i];
    const path = p.documents[i + 1];
    if (typeof id !== 'number' || typeof path !== 'string' || id >= p.nextId) throw new TypeError('search file: malformed document');
    m._documentIds.set(id, path);
    m._idToShortId.set(path, id);
    m._fieldLength.set(id, p.fieldLengths.slice((i / 2) * fieldCount, (i / 2 + 1) * fieldCount));
  }
  m._documentCount = m._documentIds.size;
  m._nextId = p.nextId;
  m._dirtCount = 0;
  m._avgFieldLength = [...p.averageFieldLength];
  if (p.terms.length !== p.postings.length) throw new TypeError('search file: terms and postings differ in number');
  for (let t = 0; t < p.terms.length; t++) {
    const flat = p.postings[t]!;
    const data: TermData = new Map();
    let k = 0;
    while (k < flat.length) {
      const fieldId = flat[k]!;
      const n = flat[k + 1]!;
      if (!(fieldId >= 0 && fieldId < fieldCount) || !(n > 0) || k + 2 + 2 * n > flat.length) throw new TypeError('search file: malformed postings');
      const docs = new Map<number, number>();
      for (let j = k + 2; j < k + 2 + 2 * n; j += 2) docs.set(flat[j]!, flat[j + 1]!);
      data.set(fieldId, docs);
      k += 2 + 2 * n;
    }
    m._index.set(p.terms[t]!, data);
  }
  return ms;
}

/** Cheap structural check of a persisted search index before trusting it. */
export function isLoadablePersistedSearch(x: unknown): x is PersistedSearch {
  if (typeof x !== 'object' || x === null) return false;
  const o = x as Record<string, unknown>;
  return (
    o['format'] === 'quire-search' &&
    o['version'] === SEARCH_PERSIST_VERSION &&
    Array.isArray(o['etags']) &&
    Array.isArray(o['documents']) &&
    Array.isArray(o['fieldLengths']) &&
    Array.isArray(o['averageFieldLength']) &&
    typeof o['nextId'] === 'number' &&
    Array.isArray(o['terms']) &&
    Array.isArray(o['postings'])
  );
}
