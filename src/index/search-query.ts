/**
 * Queries over MiniSearch's index without MiniSearch's result objects.
 *
 * `MiniSearch#search` builds a result object (score, terms, match) for
 * every matching document, merges those per query term, filters and sorts
 * them all; a common word matches most of a vault, so one query on the 10k
 * bench vault cost 15–45 ms, nearly all of it allocation. This executor
 * reads the same radix tree and postings, adds BM25+ scores into typed
 * arrays indexed by MiniSearch's short document ids, keeps only the best
 * `limit` documents, and describes only those. It ranks and scores exactly
 * as `MiniSearch#search` with the same options does (same arithmetic in the
 * same order, ties in MiniSearch's order; tested against it), with one
 * deliberate difference: postings of discarded documents that MiniSearch has
 * not vacuumed yet are left out of a term's document frequency, where
 * MiniSearch counts some of them depending on iteration order.
 */
import type { MiniSearchInternals, TermData } from './minisearch-internals.js';

/** How a query is expanded and scored; MiniSearch's defaults for weights and BM25. */
export interface QueryRules {
  /** Fields in MiniSearch's field order, with their boost. */
  fields: ReadonlyArray<readonly [field: string, boost: number]>;
  prefix: (term: string, i: number, terms: string[]) => boolean;
  /** Fraction of the term's length (rounded) or false. */
  fuzzy: (term: string, i: number, terms: string[]) => number | false;
}

const PREFIX_WEIGHT = 0.375;
const FUZZY_WEIGHT = 0.45;
const MAX_FUZZY = 6;
const BM25_K = 1.2;
const BM25_B = 0.7;
const BM25_D = 0.5;

/** A specific document term a query term reached, with its weight. */
interface Expansion {
  term: string;
  weight: number;
  data: TermData;
}

interface Spec {
  /** Index of the distinct query term (quality counts distinct query terms). */
  distinct: number;
  expansions: Expansion[];
}

export interface ExecutedHit {
  path: string;
  score: number;
  terms: string[];
  queryTerms: string[];
  match: Record<string, string[]>;
}

export interface ExecuteOptions {
  combineWith: 'AND' | 'OR';
  limit: number;
  accept?: (path: string) => boolean;
}

/** The most query terms whose matches are tracked in a 32-bit mask; longer queries go to MiniSearch itself. */
export const MAX_QUERY_TERMS = 30;

const EXPANSION_CACHE_SIZE = 500;
/** About 12 bytes each. */
const POSTINGS_CACHE_ENTRIES = 2_000_000;

interface CompiledPostings {
  docs: Int32Array;
  parts: Float64Array;
}

/**
 * Runs queries on one MiniSearch instance: scratch arrays indexed by short
 * document id, reused by every query, and caches that `changed()` clears
 * whenever a document is added or discarded.
 */
export class QueryExecutor {
  private capacity = 0;
  private specScore = new Float64Array(0);
  private specMark = new Int32Array(0);
  private total = new Float64Array(0);
  private specMask = new Uint32Array(0);
  private termMask = new Uint32Array(0);
  private order = new Int32Array(0);
  /** The last mark handed out for `specMark`. */
  private mark = 0;
  /**
   * Expansions by query term and position rules: fuzzy matching walks much
   * of the radix tree (most of a query's time for a long word), and people
   * repeat their searches.
   */
  private readonly expansionCache = new Map<string, Expansion[]>();
  /** Postings as typed arrays, by MiniSearch's postings map (see `compiled`). */
  private readonly postingsCache = new Map<Map<number, number>, CompiledPostings>();
  private postingsCached = 0;

  constructor(
    private readonly m: MiniSearchInternals,
    private readonly rules: QueryRules,
  ) {}

  /** After any document was added or discarded: expansions, document frequencies and lengths may all have changed. */
  changed(): void {
    this.expansionCache.clear();
    this.postingsCache.clear();
    this.postingsCached = 0;
  }

  private ensureCapacity(min: number): void {
    if (min <= this.capacity) return;
    const cap = Math.max(min, Math.ceil(this.capacity * 1.5), 1024);
    this.specScore = new Float64Array(cap);
    this.specMark = new Int32Array(cap);
    this.total = new Float64Array(cap);
    this.specMask = new Uint32Array(cap);
    this.termMask = new Uint32Array(cap);
    this.order = new Int32Array(cap);
    this.capacity = cap;
  }

  /** The query's terms after tokenizing and processing, as MiniSearch derives them. */
  queryTerms(query: string): string[] {
    const { tokenize, processTerm } = this.m._options;
    const out: string[] = [];
    for (const token of tokenize(query)) {
      const t = processTerm(token);
      if (Array.isArray(t)) {
        for (const x of t) if (x) out.push(x);
      } else if (t) out.push(t);
    }
    return out;
  }

  /** Best `limit` documents for `terms` (from `queryTerms`), best first; null when the query has too many terms. */
  execute(terms: string[], opts: ExecuteOptions): ExecutedHit[] | null {
    if (terms.length === 0) return [];
    if (terms.length > MAX_QUERY_TERMS) return null;
    this.ensureCapacity(this.m._nextId);
    const specs = this.specs(terms);
    const touched: number[] = [];
    if (specs.length === 1) {
      // One word (the common case): its scores are final (one query term: quality 1), in MiniSearch's order.
      this.scoreSpec(specs[0]!, this.nextMark(), touched);
      const best = this.selectBest(touched, this.specScore, 0, true, opts);
      return best.map(([doc, score]) => this.describe(doc, score, specs, terms, 1));
    }
    let seq = 0;
    const and = opts.combineWith === 'AND';
    const specTouched: number[] = [];
    for (let s = 0; s < specs.length; s++) {
      specTouched.length = 0;
      this.scoreSpec(specs[s]!, this.nextMark(), specTouched);
      const bit = 1 << s;
      const termBit = 1 << specs[s]!.distinct;
      for (const doc of specTouched) {
        if (this.specMask[doc] === 0) {
          this.total[doc] = this.specScore[doc]!;
          this.order[doc] = seq++;
          touched.push(doc);
        } else {
          this.total[doc] = this.total[doc]! + this.specScore[doc]!;
          // AND keeps the order of the last query term's matches (MiniSearch's combined map).
          if (and) this.order[doc] = seq++;
        }
        this.specMask[doc]! |= bit;
        this.termMask[doc]! |= termBit;
      }
    }
    // MiniSearch's final score: the sum times the number of distinct query terms matched.
    for (const doc of touched) this.total[doc] = this.total[doc]! * popcount(this.termMask[doc]!);
    const best = this.selectBest(touched, this.total, and ? 2 ** specs.length - 1 : 0, !and, opts);
    const hits = best.map(([doc, score]) => this.describe(doc, score, specs, terms, this.specMask[doc]!));
    for (const doc of touched) {
      this.specMask[doc] = 0;
      this.termMask[doc] = 0;
    }
    return hits;
  }

  /** A mark no document carries yet in `specMark` (see `scoreSpec`). */
  private nextMark(): number {
    if (this.mark === 0x7fffffff) {
      this.specMark.fill(0);
      this.mark = 0;
    }
    return ++this.mark;
  }

  private specs(terms: string[]): Spec[] {
    const distinct = new Map<string, number>();
    return terms.map((term, i) => {
      let d = distinct.get(term);
      if (d === undefined) distinct.set(term, (d = distinct.size));
      return { distinct: d, expansions: this.expansions(term, i, terms) };
    });
  }

  private expansions(term: string, i: number, terms: string[]): Expansion[] {
    const fuzzy = this.rules.fuzzy(term, i, terms);
    const prefix = this.rules.prefix(term, i, terms);
    const key = `${prefix ? 'p' : '-'}${fuzzy === false ? '' : fuzzy}:${term}`;
    const cached = this.expansionCache.get(key);
    if (cached !== undefined) return cached;
    const expansions: Expansion[] = [];
    const exact = this.m._index.get(term);
    if (exact !== undefined) expansions.push({ term, weight: 1, data: exact });
    let fuzzyMatches: Map<string, [TermData, number]> | undefined;
    if (fuzzy !== false) {
      const maxDistance = fuzzy < 1 ? Math.min(MAX_FUZZY, Math.round(term.length * fuzzy)) : fuzzy;
      if (maxDistance) fuzzyMatches = this.m._index.fuzzyGet(term, maxDistance);
    }
    if (prefix) {
      for (const [t, data] of this.m._index.atPrefix(term)) {
        const distance = t.length - term.length;
        if (!distance) continue;
        fuzzyMatches?.delete(t);
        expansions.push({ term: t, weight: (PREFIX_WEIGHT * t.length) / (t.length + 0.3 * distance), data });
      }
    }
    if (fuzzyMatches !== undefined) {
      for (const [t, [data, distance]] of fuzzyMatches) {
        if (!distance) continue;
        expansions.push({ term: t, weight: (FUZZY_WEIGHT * t.length) / (t.length + distance), data });
      }
    }
    if (this.expansionCache.size >= EXPANSION_CACHE_SIZE) this.expansionCache.delete(this.expansionCache.keys().next().value!);
    this.expansionCache.set(key, expansions);
    return expansions;
  }

  /** Adds one query term's BM25+ scores into `specScore`, listing each document once in `touched`. */
  private scoreSpec(spec: Spec, mark: number, touched: number[]): void {
    const { specScore, specMark } = this;
    const documentCount = this.m._documentCount;
    for (const { weight, data } of spec.expansions) {
      for (const [field, fieldBoost] of this.rules.fields) {
        const fieldId = this.m._fieldIds[field]!;
        const postings = data.get(fieldId);
        if (postings === undefined) continue;
        const { docs, parts } = this.compiled(postings, fieldId);
        const matching = docs.length;
        const invDocFreq = Math.log(1 + (documentCount - matching + 0.5) / (matching + 0.5));
        const factor = weight * fieldBoost;
        for (let i = 0; i < matching; i++) {
          const doc = docs[i]!;
          const weighted = factor * (invDocFreq * (BM25_D + parts[i]!));
          if (specMark[doc] === mark) specScore[doc] = specScore[doc]! + weighted;
          else {
            specMark[doc] = mark;
            specScore[doc] = weighted;
            touched.push(doc);
          }
        }
      }
    }
  }

  /**
   * One field's postings of a term as arrays: live documents in MiniSearch's
   * order and the term-frequency part of their BM25+ score. Discarded
   * documents keep postings until MiniSearch vacuums them; they have no
   * field lengths any more, which is how they are left out.
   */
  private compiled(postings: Map<number, number>, fieldId: number): CompiledPostings {
    const cached = this.postingsCache.get(postings);
    if (cached !== undefined) return cached;
    const avgFieldLength = this.m._avgFieldLength[fieldId]!;
    const docs = new Int32Array(postings.size);
    const parts = new Float64Array(postings.size);
    let n = 0;
    for (const [doc, termFreq] of postings) {
      const lengths = this.m._fieldLength.get(doc);
      if (lengths === undefined) continue;
      const fieldLength = lengths[fieldId]!;
      docs[n] = doc;
      parts[n++] = (termFreq * (BM25_K + 1)) / (termFreq + BM25_K * (1 - BM25_B + (BM25_B * fieldLength) / avgFieldLength));
    }
    const out = { docs: docs.subarray(0, n), parts: parts.subarray(0, n) };
    if (this.postingsCached + n > POSTINGS_CACHE_ENTRIES) this.changed();
    this.postingsCached += n;
    this.postingsCache.set(postings, out);
    return out;
  }

  /**
   * The best `limit` documents of `touched` by `scores`, then MiniSearch's
   * order (`inOrder`: `touched` is in that order, so a tie never beats a
   * document already kept; else `order` says), as [doc, score] pairs.
   * `required`: the spec mask AND needs (0: none).
   */
  private selectBest(touched: number[], scores: Float64Array, required: number, inOrder: boolean, opts: ExecuteOptions): Array<[number, number]> {
    const { specMask, order } = this;
    const best: Array<[number, number]> = [];
    const limit = opts.limit;
    if (limit <= 0) return best;
    let worst = -Infinity;
    for (const doc of touched) {
      const score = scores[doc]!;
      if (best.length === limit) {
        if (score < worst) continue;
        if (score === worst && (inOrder || order[doc]! > order[best[limit - 1]![0]]!)) continue;
      }
      if (required !== 0 && specMask[doc] !== required) continue;
      if (opts.accept !== undefined && !opts.accept(this.m._documentIds.get(doc)!)) continue;
      let i = best.length;
      while (i > 0) {
        const [d, sc] = best[i - 1]!;
        if (score > sc || (score === sc && !inOrder && order[doc]! < order[d]!)) i--;
        else break;
      }
      best.splice(i, 0, [doc, score]);
      if (best.length > limit) best.pop();
      worst = best.length === limit ? best[limit - 1]![1] : -Infinity;
    }
    return best;
  }

  /** The hit record of one document: its score, matched terms and the fields they matched in (`matched`: mask of the specs it matched). */
  private describe(doc: number, score: number, specs: Spec[], terms: string[], matched: number): ExecutedHit {
    const match: Record<string, string[]> = {};
    const queryTerms: string[] = [];
    for (let s = 0; s < specs.length; s++) {
      if ((matched & (1 << s)) === 0) continue;
      if (!queryTerms.includes(terms[s]!)) queryTerms.push(terms[s]!);
      for (const { term, data } of specs[s]!.expansions) {
        const fields: string[] = [];
        for (const [field] of this.rules.fields) if (data.get(this.m._fieldIds[field]!)?.has(doc)) fields.push(field);
        if (fields.length > 0) match[term] = fields;
      }
    }
    return { path: this.m._documentIds.get(doc)!, score, terms: Object.keys(match), queryTerms, match };
  }
}

function popcount(x: number): number {
  x -= (x >>> 1) & 0x55555555;
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  return (((x + (x >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24;
}
