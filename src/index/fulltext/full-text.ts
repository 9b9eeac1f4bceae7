/**
 * The full-text index of one Home: fields `title`, `body`, `tags` and
 * `aliases` of every note, searched with MiniSearch's rules (query.ts).
 *
 * Documents are numbered in the order they were added; a changed note is
 * removed and added again under a new number. Postings live in one merged
 * `Segment` (compact, immutable) plus a small `TermPostings` delta for the
 * documents added since the last merge; removed documents are only marked,
 * and their postings skipped, until the next merge drops them and numbers
 * the rest densely again. Merges happen when the delta or the removed
 * documents grow past a fraction of the index, so their cost is spread
 * over many changes.
 *
 * Scan workers build `TermPostings` of their own (see `PartialIndex`),
 * which `expectPartials` merges in when they arrive, so a cold start
 * tokenizes a Home on every core and this thread only merges.
 */
import { EMPTY_SEGMENT, FIELD_BITS, FIELD_COUNT, mergeSegments, TermPostings, type FieldTexts, type MergePart, type Segment } from './postings.js';
import { QueryExecutor, type ExecuteOptions, type ExecutedHit, type QuerySource, type TermRef } from './query.js';
import { findTerm, fuzzyMatch, prefixRange } from './term-match.js';
import { queryTerms } from './tokenize.js';

/** Documents a scan worker tokenized, numbered 0… in `paths` order, with their postings. */
export interface PartialIndex {
  paths: string[];
  etags: string[];
  /** FIELD_COUNT lengths per document. */
  lengths: Int32Array;
  segment: Segment;
}

/** The state of an index, as a file stores it (persist.ts). */
export interface FullTextState {
  /** Path of each document number, null for removed ones. */
  paths: Array<string | null>;
  etags: string[];
  lengths: Int32Array;
  segment: Segment;
  /** Documents from this number on are in `delta`. */
  segmentLimit: number;
  delta: Array<[string, number[]]>;
}

/** Merge once the delta holds this fraction of the merged segment's postings (or removed documents this fraction of all). */
const MERGE_FRACTION = 0.1;
/** ...but never for fewer than this many delta postings (small indexes merge rarely). */
const MERGE_MIN_POSTINGS = 50_000;

export class FullTextIndex implements QuerySource {
  private paths: Array<string | null> = [];
  private etags: string[] = [];
  private lengths: Int32Array = new Int32Array(64 * FIELD_COUNT);
  private readonly docOf = new Map<string, number>();
  private live = 0;
  private removed = 0;
  private readonly lengthSums = new Float64Array(FIELD_COUNT);
  private segment: Segment = EMPTY_SEGMENT;
  private segmentLimit = 0;
  private delta = new TermPostings();
  /** The delta's terms, sorted; null when it changed since. */
  private deltaTerms: string[] | null = [];
  /** Scan workers' documents still being tokenized (see `expectPartials`); null when none are. */
  private awaited: Promise<void> | null = null;
  /** Paths set or deleted while `awaited`: the scan read them before, so their scan documents are older. */
  private readonly touched = new Set<string>();
  private readonly executor = new QueryExecutor(this);

  static fromState(s: FullTextState): FullTextIndex {
    const idx = new FullTextIndex();
    idx.paths = s.paths;
    idx.etags = s.etags;
    idx.lengths = s.lengths;
    idx.segment = s.segment;
    idx.segmentLimit = s.segmentLimit;
    for (const [term, pairs] of s.delta) for (let i = 0; i < pairs.length; i += 2) idx.delta.addPosting(term, pairs[i]!, pairs[i + 1]!);
    idx.deltaTerms = null;
    idx.recount();
    return idx;
  }

  /** Everything derived from `paths` and `lengths`: the path → document map and the counts. */
  private recount(): void {
    this.docOf.clear();
    this.lengthSums.fill(0);
    this.live = 0;
    this.removed = 0;
    for (let doc = 0; doc < this.paths.length; doc++) {
      const p = this.paths[doc];
      if (p == null) {
        this.removed++;
        continue;
      }
      this.docOf.set(p, doc);
      this.live++;
      this.countLengths(doc, 1);
    }
  }

  /**
   * Everything a file needs to restore this index, unaffected by later
   * changes (the arrays that change in place are copied; the segment never
   * changes, and field lengths are only ever appended).
   */
  state(): FullTextState {
    return {
      paths: this.paths.slice(),
      etags: this.etags.slice(),
      lengths: this.lengths.subarray(0, this.paths.length * FIELD_COUNT),
      segment: this.segment,
      segmentLimit: this.segmentLimit,
      delta: this.delta.toPairs(),
    };
  }

  get documents(): number {
    return this.live;
  }

  /** The ETag each document was indexed at, by path. */
  indexed(): Map<string, string> {
    const out = new Map<string, string>();
    for (const [p, doc] of this.docOf) out.set(p, this.etags[doc]!);
    return out;
  }

  etagOf(path: string): string | undefined {
    const doc = this.docOf.get(path);
    return doc === undefined ? undefined : this.etags[doc];
  }

  /** Index `fields` as the document of `path` (replacing any earlier one), indexed at `etag`. */
  set(path: string, fields: FieldTexts, etag: string): void {
    if (this.awaited !== null) this.touched.add(path);
    this.removeDoc(path);
    const doc = this.newDoc(path, etag);
    this.delta.add(doc, fields, this.lengths, doc * FIELD_COUNT);
    this.deltaTerms = null;
    this.countLengths(doc, 1);
    this.changed();
  }

  delete(path: string): void {
    if (this.awaited !== null) this.touched.add(path);
    if (this.removeDoc(path)) this.changed();
  }

  /**
   * Add the documents scan workers tokenized, replacing any earlier
   * document of the same paths but those in `skip`, and merge their
   * postings into the segment.
   */
  private addPartials(partials: readonly PartialIndex[], skip: ReadonlySet<string>): void {
    const parts: MergePart[] = [];
    for (const partial of partials) {
      if (partial.paths.length === 0) continue;
      const docMap = new Int32Array(partial.paths.length);
      for (let i = 0; i < partial.paths.length; i++) {
        const path = partial.paths[i]!;
        if (skip.has(path)) {
          docMap[i] = -1;
          continue;
        }
        this.removeDoc(path);
        const doc = this.newDoc(path, partial.etags[i]!);
        this.lengths.set(partial.lengths.subarray(i * FIELD_COUNT, i * FIELD_COUNT + FIELD_COUNT), doc * FIELD_COUNT);
        this.countLengths(doc, 1);
        docMap[i] = doc;
      }
      parts.push({ segment: partial.segment, docMap });
    }
    this.mergeWith(parts);
  }

  /**
   * Scan workers' documents that arrive after a Home's opening is ready
   * (the workers send every note's facts first, then tokenize): `partials`
   * is added and merged when it comes, except for the paths set or deleted
   * meanwhile, whose scan documents are older. Until then `whenComplete`
   * waits, and so does every search (HomeIndex.search): none answers from
   * a partial index. `partials` must not reject (the Vault tokenizes what
   * a failed worker left out itself).
   */
  expectPartials(partials: Promise<readonly PartialIndex[]>): void {
    if (this.awaited !== null) throw new Error('scan documents are awaited already');
    this.awaited = partials
      .then((parts) => this.addPartials(parts, this.touched))
      .finally(() => {
        this.awaited = null;
        this.touched.clear();
      });
  }

  /** Whether scan workers' documents are still awaited (`expectPartials`). */
  get awaiting(): boolean {
    return this.awaited !== null;
  }

  /** Resolves once no scan worker's documents are awaited (at once when none are). */
  whenComplete(): Promise<void> {
    return this.awaited ?? Promise.resolve();
  }

  private newDoc(path: string, etag: string): number {
    const doc = this.paths.length;
    this.paths.push(path);
    this.etags.push(etag);
    this.docOf.set(path, doc);
    this.live++;
    if ((doc + 1) * FIELD_COUNT > this.lengths.length) {
      const grown = new Int32Array(Math.max(this.lengths.length * 2, (doc + 1) * FIELD_COUNT));
      grown.set(this.lengths);
      this.lengths = grown;
    }
    return doc;
  }

  private removeDoc(path: string): boolean {
    const doc = this.docOf.get(path);
    if (doc === undefined) return false;
    this.docOf.delete(path);
    this.paths[doc] = null;
    this.etags[doc] = '';
    this.live--;
    this.removed++;
    this.countLengths(doc, -1);
    return true;
  }

  private countLengths(doc: number, sign: 1 | -1): void {
    for (let f = 0; f < FIELD_COUNT; f++) this.lengthSums[f]! += sign * this.lengths[doc * FIELD_COUNT + f]!;
  }

  private changed(): void {
    this.executor.changed();
    const big = Math.max(MERGE_MIN_POSTINGS, this.segment.docs.length * MERGE_FRACTION);
    if (this.delta.size > big || (this.removed > 1000 && this.removed > this.paths.length * MERGE_FRACTION)) this.mergeWith();
  }

  /**
   * One segment of every live document (the merged segment, the delta and
   * `scanned`: scan workers' postings, their documents numbered after the
   * delta's by `addPartials`), numbered densely in the same order.
   */
  private mergeWith(scanned: readonly MergePart[] = []): void {
    const total = this.paths.length;
    const oldToNew = new Int32Array(total);
    const paths: string[] = [];
    const etags: string[] = [];
    const lengths = new Int32Array(Math.max(64, this.live) * FIELD_COUNT);
    for (let doc = 0; doc < total; doc++) {
      const p = this.paths[doc];
      if (p === null || p === undefined) {
        oldToNew[doc] = -1;
        continue;
      }
      oldToNew[doc] = paths.length;
      lengths.set(this.lengths.subarray(doc * FIELD_COUNT, doc * FIELD_COUNT + FIELD_COUNT), paths.length * FIELD_COUNT);
      paths.push(p);
      etags.push(this.etags[doc]!);
    }
    const parts: MergePart[] = [
      { segment: this.segment, docMap: oldToNew },
      { segment: this.delta.toSegment(), docMap: oldToNew },
    ];
    for (const u of scanned) {
      // A scan document replaced by a later one of the same partials maps to -1 like any other.
      const map = new Int32Array(u.docMap.length);
      for (let i = 0; i < map.length; i++) {
        const d = u.docMap[i]!;
        map[i] = d < 0 ? -1 : oldToNew[d]!;
      }
      parts.push({ segment: u.segment, docMap: map });
    }
    this.segment = mergeSegments(parts);
    this.paths = paths;
    this.etags = etags;
    this.lengths = lengths;
    this.segmentLimit = paths.length;
    this.delta = new TermPostings();
    this.deltaTerms = [];
    this.recount();
    this.executor.changed();
  }

  /** Best `limit` documents for the words of `q`; `accept` filters by path. */
  search(q: string, opts: ExecuteOptions): ExecutedHit[] {
    return this.executor.execute(queryTerms(q), opts);
  }

  // ------------------------------------------------------------ QuerySource

  documentCount(): number {
    return this.live;
  }

  averageFieldLength(field: number): number {
    return this.live === 0 ? 0 : this.lengthSums[field]! / this.live;
  }

  fieldLength(doc: number, field: number): number {
    return this.lengths[doc * FIELD_COUNT + field]!;
  }

  pathOf(doc: number): string {
    return this.paths[doc]!;
  }

  docLimit(): number {
    return this.paths.length;
  }

  private sortedDeltaTerms(): string[] {
    return (this.deltaTerms ??= this.delta.terms.slice().sort());
  }

  private ref(term: string, base: number): TermRef {
    return { term, base, delta: this.delta.termId(term) };
  }

  exact(term: string): TermRef | null {
    const base = findTerm(this.segment.terms, term);
    const ref = this.ref(term, base);
    return base < 0 && ref.delta < 0 ? null : ref;
  }

  withPrefix(prefix: string, out: (ref: TermRef) => void): void {
    const terms = this.segment.terms;
    const [lo, hi] = prefixRange(terms, prefix);
    const delta = this.sortedDeltaTerms();
    let [dlo, dhi] = prefixRange(delta, prefix);
    // Both ranges are sorted: merge them so a term in both comes once.
    let i = lo;
    while (i < hi || dlo < dhi) {
      const t = i < hi ? terms[i]! : null;
      const d = dlo < dhi ? delta[dlo]! : null;
      let term: string;
      let base = -1;
      if (d === null || (t !== null && t <= d)) {
        term = t!;
        base = i++;
        if (d === term) dlo++;
      } else {
        term = d;
        dlo++;
      }
      if (term.length > prefix.length) out(this.ref(term, base));
    }
  }

  fuzzy(term: string, maxDistance: number, out: (ref: TermRef, distance: number) => void): void {
    const terms = this.segment.terms;
    const seen = new Set<string>();
    fuzzyMatch(terms, term, maxDistance, (i, distance) => {
      seen.add(terms[i]!);
      out(this.ref(terms[i]!, i), distance);
    });
    const delta = this.sortedDeltaTerms();
    fuzzyMatch(delta, term, maxDistance, (i, distance) => {
      if (!seen.has(delta[i]!)) out(this.ref(delta[i]!, -1), distance);
    });
  }

  postings(ref: TermRef, field: number, each: (doc: number, tf: number) => void): void {
    if (ref.base >= 0) {
      const { starts, docs, tfs } = this.segment;
      const k = ref.base * FIELD_COUNT + field;
      const end = starts[k + 1]!;
      for (let i = starts[k]!; i < end; i++) {
        const doc = docs[i]!;
        if (this.paths[doc] != null) each(doc, tfs[i]!);
      }
    }
    if (ref.delta >= 0) {
      this.delta.forEach(ref.delta, (key, tf) => {
        if ((key & (FIELD_COUNT - 1)) !== field) return;
        const doc = key >>> FIELD_BITS;
        if (this.paths[doc] != null) each(doc, tf);
      });
    }
  }

  has(ref: TermRef, field: number, doc: number): boolean {
    if (doc >= this.segmentLimit) return ref.delta >= 0 && this.delta.has(ref.delta, (doc << FIELD_BITS) | field);
    if (ref.base < 0) return false;
    const { starts, docs } = this.segment;
    const k = ref.base * FIELD_COUNT + field;
    let lo = starts[k]!;
    let hi = starts[k + 1]!;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const d = docs[mid]!;
      if (d === doc) return true;
      if (d < doc) lo = mid + 1;
      else hi = mid;
    }
    return false;
  }
}
