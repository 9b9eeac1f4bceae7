/**
 * Query execution over the full-text index: MiniSearch's query rules and
 * BM25+ scoring, over our compact postings.
 *
 * Each query word expands to the index's terms it reaches (exact, prefix
 * for the last word, fuzzy from five characters), each with MiniSearch's
 * weight; scores are added into typed arrays indexed by document number,
 * only the best `limit` documents are kept and only those are described.
 * The arithmetic is MiniSearch's (same formulas, fields in the same order,
 * documents in the same order), so results rank as `MiniSearch#search` with
 * the same options ranks them; full-text.test.ts checks this against
 * MiniSearch on a generated vault. Sums over several expanded terms may
 * differ in the last bits, since expansions come in dictionary order here
 * and in radix-tree order there.
 */
import { FIELD_COUNT, FIELDS } from './postings.js';

/** Where a term's postings are: its index in the merged segment and its number in the delta (-1: none). */
export interface TermRef {
  term: string;
  base: number;
  delta: number;
}

/** What the executor reads from the index. */
export interface QuerySource {
  documentCount(): number;
  averageFieldLength(field: number): number;
  fieldLength(doc: number, field: number): number;
  pathOf(doc: number): string;
  /** One past the highest document number in use. */
  docLimit(): number;
  exact(term: string): TermRef | null;
  /** Terms longer than `prefix` that start with it. */
  withPrefix(prefix: string, out: (ref: TermRef) => void): void;
  /** Terms within `maxDistance` edits of `term`, with their distance. */
  fuzzy(term: string, maxDistance: number, out: (ref: TermRef, distance: number) => void): void;
  /** Calls `each(doc, tf)` for the live postings of `ref` in `field`, documents ascending. */
  postings(ref: TermRef, field: number, each: (doc: number, tf: number) => void): void;
  /** Whether `doc` has `ref` in `field`. */
  has(ref: TermRef, field: number, doc: number): boolean;
}

/** Field boosts in field order: title 3, body 1, tags 1.5, aliases 2. */
export const FIELD_BOOSTS: readonly number[] = FIELDS.map((f) => ({ title: 3, aliases: 2, tags: 1.5 })[f as string] ?? 1);

/**
 * Prefix matching only for the last query word (the one being typed) and
 * typo tolerance (one edit per five characters) only for words of five or
 * more characters: expanding every word is what made queries slow, and
 * short words have too many near neighbours to be useful fuzzy.
 */
export const prefixFor = (_term: string, i: number, terms: string[]): boolean => i === terms.length - 1;
export const fuzzyFor = (term: string): number | false => (term.length >= 5 ? 0.2 : false);

const PREFIX_WEIGHT = 0.375;
const FUZZY_WEIGHT = 0.45;
const MAX_FUZZY = 6;
const BM25_K = 1.2;
const BM25_B = 0.7;
const BM25_D = 0.5;

interface Expansion {
  ref: TermRef;
  weight: number;
}

interface Spec {
  /** Index of the distinct query term (MiniSearch's quality counts distinct query terms). */
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

/** Query words whose matches fit the 32-bit masks; the rest of a longer query is ignored. */
export const MAX_QUERY_TERMS = 30;

const EXPANSION_CACHE_SIZE = 500;
/** About 12 bytes each. */
const POSTINGS_CACHE_ENTRIES = 2_000_000;

interface CompiledPostings {
  docs: Int32Array;
  /** The term-frequency part of each document's BM25+ score. */
  parts: Float64Array;
}

/**
 * Runs queries on one index: scratch arrays indexed by document number,
 * reused by every query, and caches that `changed()` clears whenever the
 * index changes.
 */
export class QueryExecutor {
  private capacity = 0;
  private specScore = new Float64Array(0);
  private specMark = new Int32Array(0);
  private total = new Float64Array(0);
  private specMask = new Uint32Array(0);
  private termMask = new Uint32Array(0);
  private order = new Int32Array(0);
  /** Documents a query touched, and those one query word touched, in order: each document at most once. */
  private touched = new Int32Array(0);
  private specTouched = new Int32Array(0);
  private mark = 0;
  /** Expansions by query word and rules: fuzzy matching walks much of the dictionary, and people repeat their searches. */
  private readonly expansionCache = new Map<string, Expansion[]>();
  /** Live postings with their score parts, by term and field. */
  private readonly postingsCache = new Map<string, CompiledPostings>();
  private postingsCached = 0;

  constructor(private readonly src: QuerySource) {}

  /** After any change to the index: expansions, document frequencies and lengths may all have changed. */
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
    this.touched = new Int32Array(cap);
    this.specTouched = new Int32Array(cap);
    this.mark = 0;
    this.capacity = cap;
  }

  /** Best `limit` documents for `terms` (see tokenize.ts `queryTerms`), best first. */
  execute(allTerms: string[], opts: ExecuteOptions): ExecutedHit[] {
    const terms = allTerms.slice(0, MAX_QUERY_TERMS);
    if (terms.length === 0) return [];
    this.ensureCapacity(this.src.docLimit());
    const specs = this.specs(terms);
    if (specs.length === 1) {
      // One word (the common case): its scores are final (quality 1), in MiniSearch's order.
      const n = this.scoreSpec(specs[0]!, this.nextMark(), this.touched);
      const best = this.selectBest(this.touched, n, this.specScore, 0, true, opts);
      return best.map(([doc, score]) => this.describe(doc, score, specs, terms, 1));
    }
    const { touched, specTouched, total, specScore, specMask, termMask, order } = this;
    let n = 0;
    let seq = 0;
    const and = opts.combineWith === 'AND';
    for (let s = 0; s < specs.length; s++) {
      const m = this.scoreSpec(specs[s]!, this.nextMark(), specTouched);
      const bit = 1 << s;
      const termBit = 1 << specs[s]!.distinct;
      for (let i = 0; i < m; i++) {
        const doc = specTouched[i]!;
        if (specMask[doc] === 0) {
          total[doc] = specScore[doc]!;
          order[doc] = seq++;
          touched[n++] = doc;
        } else {
          total[doc] = total[doc]! + specScore[doc]!;
          // AND keeps the order of the last query word's matches (MiniSearch's combined map).
          if (and) order[doc] = seq++;
        }
        specMask[doc]! |= bit;
        termMask[doc]! |= termBit;
      }
    }
    // MiniSearch's final score: the sum times the number of distinct query words matched.
    for (let i = 0; i < n; i++) {
      const doc = touched[i]!;
      total[doc] = total[doc]! * popcount(termMask[doc]!);
    }
    const best = this.selectBest(touched, n, total, and ? 2 ** specs.length - 1 : 0, !and, opts);
    const hits = best.map(([doc, score]) => this.describe(doc, score, specs, terms, specMask[doc]!));
    for (let i = 0; i < n; i++) {
      specMask[touched[i]!] = 0;
      termMask[touched[i]!] = 0;
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
    const fuzzy = fuzzyFor(term);
    const prefix = prefixFor(term, i, terms);
    const key = `${prefix ? 'p' : '-'}${fuzzy === false ? '' : fuzzy}:${term}`;
    const cached = this.expansionCache.get(key);
    if (cached !== undefined) return cached;
    const expansions: Expansion[] = [];
    const exact = this.src.exact(term);
    if (exact !== null) expansions.push({ ref: exact, weight: 1 });
    let fuzzyMatches: Map<string, [TermRef, number]> | undefined;
    if (fuzzy !== false) {
      const maxDistance = Math.min(MAX_FUZZY, Math.round(term.length * fuzzy));
      if (maxDistance) {
        const found = (fuzzyMatches = new Map());
        this.src.fuzzy(term, maxDistance, (ref, distance) => found.set(ref.term, [ref, distance]));
      }
    }
    if (prefix) {
      this.src.withPrefix(term, (ref) => {
        const distance = ref.term.length - term.length;
        fuzzyMatches?.delete(ref.term);
        expansions.push({ ref, weight: (PREFIX_WEIGHT * ref.term.length) / (ref.term.length + 0.3 * distance) });
      });
    }
    if (fuzzyMatches !== undefined) {
      for (const [ref, distance] of fuzzyMatches.values()) {
        if (!distance) continue;
        expansions.push({ ref, weight: (FUZZY_WEIGHT * ref.term.length) / (ref.term.length + distance) });
      }
    }
    if (this.expansionCache.size >= EXPANSION_CACHE_SIZE) this.expansionCache.delete(this.expansionCache.keys().next().value!);
    this.expansionCache.set(key, expansions);
    return expansions;
  }

  /** Adds one query word's BM25+ scores into `specScore`, listing each document once in `touched`; how many it listed. */
  private scoreSpec(spec: Spec, mark: number, touched: Int32Array): number {
    const { specScore, specMark } = this;
    let n = 0;
    const documentCount = this.src.documentCount();
    for (const { weight, ref } of spec.expansions) {
      for (let f = 0; f < FIELD_COUNT; f++) {
        const { docs, parts } = this.compiled(ref, f);
        const matching = docs.length;
        if (matching === 0) continue;
        const invDocFreq = Math.log(1 + (documentCount - matching + 0.5) / (matching + 0.5));
        const factor = weight * FIELD_BOOSTS[f]!;
        for (let i = 0; i < matching; i++) {
          const doc = docs[i]!;
          const weighted = factor * (invDocFreq * (BM25_D + parts[i]!));
          if (specMark[doc] === mark) specScore[doc] = specScore[doc]! + weighted;
          else {
            specMark[doc] = mark;
            specScore[doc] = weighted;
            touched[n++] = doc;
          }
        }
      }
    }
    return n;
  }

  private compiled(ref: TermRef, field: number): CompiledPostings {
    const key = field + ref.term;
    const cached = this.postingsCache.get(key);
    if (cached !== undefined) return cached;
    const avgFieldLength = this.src.averageFieldLength(field);
    const docList: number[] = [];
    const partList: number[] = [];
    this.src.postings(ref, field, (doc, termFreq) => {
      const fieldLength = this.src.fieldLength(doc, field);
      docList.push(doc);
      partList.push((termFreq * (BM25_K + 1)) / (termFreq + BM25_K * (1 - BM25_B + (BM25_B * fieldLength) / avgFieldLength)));
    });
    const out = { docs: Int32Array.from(docList), parts: Float64Array.from(partList) };
    if (this.postingsCached + docList.length > POSTINGS_CACHE_ENTRIES) {
      this.postingsCache.clear();
      this.postingsCached = 0;
    }
    this.postingsCached += docList.length;
    this.postingsCache.set(key, out);
    return out;
  }

  /**
   * The best `limit` of the first `n` documents of `touched` by `scores`, ties in MiniSearch's
   * order (`inOrder`: `touched` is in that order, so a tie never beats a
   * document already kept; else `order` says), as [doc, score] pairs.
   * `required`: the spec mask AND needs (0: none).
   */
  private selectBest(touched: Int32Array, n: number, scores: Float64Array, required: number, inOrder: boolean, opts: ExecuteOptions): Array<[number, number]> {
    const { specMask, order } = this;
    const limit = Math.min(opts.limit, n);
    if (limit <= 0) return [];
    // The kept documents, best first, in two arrays (no pair objects while most candidates are rejected).
    const bestDoc = new Int32Array(limit);
    const bestScore = new Float64Array(limit);
    let kept = 0;
    let worst = -Infinity;
    for (let t = 0; t < n; t++) {
      const doc = touched[t]!;
      const score = scores[doc]!;
      if (kept === limit) {
        if (score < worst) continue;
        if (score === worst && (inOrder || order[doc]! > order[bestDoc[limit - 1]!]!)) continue;
      }
      if (required !== 0 && specMask[doc] !== required) continue;
      if (opts.accept !== undefined && !opts.accept(this.src.pathOf(doc))) continue;
      let i = kept === limit ? limit - 1 : kept++;
      while (i > 0) {
        const sc = bestScore[i - 1]!;
        if (score > sc || (score === sc && !inOrder && order[doc]! < order[bestDoc[i - 1]!]!)) {
          bestDoc[i] = bestDoc[i - 1]!;
          bestScore[i] = sc;
          i--;
        } else break;
      }
      bestDoc[i] = doc;
      bestScore[i] = score;
      if (kept === limit) worst = bestScore[limit - 1]!;
    }
    const out: Array<[number, number]> = [];
    for (let i = 0; i < kept; i++) out.push([bestDoc[i]!, bestScore[i]!]);
    return out;
  }

  /** The hit record of one document: its score, the terms it matched and in which fields (`matched`: mask of the specs it matched). */
  private describe(doc: number, score: number, specs: Spec[], terms: string[], matched: number): ExecutedHit {
    const match: Record<string, string[]> = {};
    const queryTerms: string[] = [];
    for (let s = 0; s < specs.length; s++) {
      if ((matched & (1 << s)) === 0) continue;
      if (!queryTerms.includes(terms[s]!)) queryTerms.push(terms[s]!);
      for (const { ref } of specs[s]!.expansions) {
        const fields: string[] = [];
        for (let f = 0; f < FIELD_COUNT; f++) if (this.src.has(ref, f, doc)) fields.push(FIELDS[f]!);
        if (fields.length > 0) match[ref.term] = fields;
      }
    }
    return { path: this.src.pathOf(doc), score, terms: Object.keys(match), queryTerms, match };
  }
}

function popcount(x: number): number {
  x -= (x >>> 1) & 0x55555555;
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  return (((x + (x >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24;
}
