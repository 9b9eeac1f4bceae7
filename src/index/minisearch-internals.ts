/**
 * The parts of a MiniSearch instance that Quire reads and fills directly,
 * past its public API: the faster `addDocument` (search.ts), the query
 * executor (search-query.ts) and the engine file (search-persist.ts). They
 * are MiniSearch 7's private fields, so `internalsOf` checks they are there
 * before any of those is used; without them each falls back to MiniSearch's
 * own methods (or, for the file, to rebuilding the engine).
 */
import type MiniSearch from 'minisearch';

/** field id → (short document id → term frequency). */
export type TermData = Map<number, Map<number, number>>;

/* eslint-disable @typescript-eslint/no-explicit-any */
export interface MiniSearchInternals {
  _options: {
    extractField: any;
    stringifyField: any;
    tokenize: (text: string, field?: string) => string[];
    processTerm: (term: string, field?: string) => string | string[] | null | undefined | false;
    fields: string[];
    idField: string;
  };
  /** The radix tree: term → TermData. */
  _index: Iterable<[string, TermData]> & {
    get(term: string): TermData | undefined;
    set(term: string, data: TermData): unknown;
    fetch(term: string, initial: () => TermData): TermData;
    atPrefix(prefix: string): Iterable<[string, TermData]>;
    fuzzyGet(term: string, maxDistance: number): Map<string, [TermData, number]>;
  };
  _documentIds: Map<number, string>;
  _idToShortId: Map<unknown, number>;
  _fieldIds: Record<string, number>;
  _fieldLength: Map<number, number[]>;
  _avgFieldLength: number[];
  _documentCount: number;
  _nextId: number;
  _dirtCount: number;
  addDocumentId(id: unknown): number;
  saveStoredFields(shortId: number, doc: unknown): void;
  addFieldLength(shortId: number, fieldId: number, count: number, length: number): void;
}
/* eslint-enable @typescript-eslint/no-explicit-any */

/** `ms`'s internals, or null when they are not the ones described above. */
export function internalsOf<T>(ms: MiniSearch<T>): MiniSearchInternals | null {
  const m = ms as unknown as Partial<MiniSearchInternals>;
  const ix = m._index;
  const ok =
    typeof m._options?.tokenize === 'function' &&
    typeof m._options?.processTerm === 'function' &&
    typeof ix?.get === 'function' &&
    typeof ix?.set === 'function' &&
    typeof ix?.fetch === 'function' &&
    typeof ix?.atPrefix === 'function' &&
    typeof ix?.fuzzyGet === 'function' &&
    typeof ix?.[Symbol.iterator] === 'function' &&
    m._documentIds instanceof Map &&
    m._idToShortId instanceof Map &&
    m._fieldLength instanceof Map &&
    typeof m._fieldIds === 'object' &&
    Array.isArray(m._avgFieldLength) &&
    typeof m._documentCount === 'number' &&
    typeof m._nextId === 'number' &&
    typeof m._dirtCount === 'number' &&
    typeof m.addDocumentId === 'function' &&
    typeof m.saveStoredFields === 'function' &&
    typeof m.addFieldLength === 'function';
  return ok ? (m as MiniSearchInternals) : null;
}
