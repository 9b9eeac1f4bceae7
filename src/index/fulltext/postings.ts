/**
 * Postings of the full-text index, in two forms.
 *
 * `TermPostings` is the mutable form: each term gets a number, and each
 * posting (term, `doc << 2 | field`, tf) goes into typed arrays, linked to
 * the term's previous posting, documents added in ascending order. Adding a
 * document costs one term-number lookup per distinct word of each field
 * (the tokenizer counts repeats; most lookups need no Map, see `slotTerm`);
 * a term whose last posting is this document and field has its tf raised
 * in place. No array per term: a scan worker's 5,000 notes make a few
 * typed arrays, not 40,000 growing JS arrays. Scan
 * workers fill one each, and the live index keeps one for the documents
 * changed since its last merge (its "delta").
 *
 * A `Segment` is the compact, immutable form: terms sorted, and per
 * (term, field) a run of ascending document numbers with their term
 * frequencies in typed arrays (CSR). On the 10k bench vault that is 1.7M
 * postings in about 14 MB, where MiniSearch's Maps took about 250 MB; typed
 * arrays also cost the garbage collector nothing to trace. Segments only
 * change by merging (`mergeSegments`), which drops removed documents and
 * renumbers the rest without changing their order.
 */
import { CACHE_SIZE, tokenizeCounted } from './tokenize.js';

/** Searchable fields, in field-id order (FIELD_COUNT of them). */
export const FIELDS = ['title', 'body', 'tags', 'aliases'] as const;
export const FIELD_COUNT = 4;
/** A pair's key is `doc << FIELD_BITS | field`. */
export const FIELD_BITS = 2;
const FIELD_MASK = FIELD_COUNT - 1;

export interface Segment {
  /** Unique, ascending (JavaScript string order). */
  terms: string[];
  /** Postings of term t in field f: indexes `starts[t·4+f]` to `starts[t·4+f+1]` of `docs`/`tfs`. */
  starts: Int32Array;
  /** Document numbers, ascending within each run. */
  docs: Int32Array;
  tfs: Int32Array;
}

export const EMPTY_SEGMENT: Segment = Object.freeze({
  terms: [],
  starts: new Int32Array(1),
  docs: new Int32Array(0),
  tfs: new Int32Array(0),
});

/** The four fields of one document, as text; the body is `body.slice(bodyFrom)` (default 0), see `fieldsOf`. */
export type FieldTexts = readonly [title: string, body: string, tags: string, aliases: string, bodyFrom?: number];

export class TermPostings {
  private readonly ids = new Map<string, number>();
  /** Term of each term number. */
  readonly terms: string[] = [];
  /** Per term number: its first and last posting (-1: none), and the last one's key (kept here, dense, not read from `keys`). */
  private first = new Int32Array(1024).fill(-1);
  private last = new Int32Array(1024).fill(-1);
  private lastKey = new Int32Array(1024).fill(-1);
  /** Per posting: its term number, key (`doc << FIELD_BITS | field`), tf, and the term's next posting (-1: none; linked only). */
  private termOf = new Int32Array(4096);
  private keys = new Int32Array(4096);
  private tfs = new Int32Array(4096);
  private next = new Int32Array(4096);
  private count = 0;
  private lastDoc = -1;
  /** Reused buffers of one field's terms, their counts and tokenizer cache entries (see `tokenizeCounted`). */
  private readonly scratch: string[] = [];
  private readonly scratchCounts: number[] = [];
  private readonly scratchSlots: number[] = [];
  /**
   * The term and term number last seen at each tokenizer cache entry: most
   * terms come from that cache, as the very string it holds, so comparing
   * them with this one costs less than the Map lookup (one per distinct
   * word of each field). Allocated by the first `add`.
   */
  private slotTerm: string[] | null = null;
  private slotId: Int32Array | null = null;

  /**
   * `linked`: each term's postings are chained, for `forEach` and `has`
   * (the live index's delta answers queries). A scan worker's postings only
   * become a segment (`toSegment` reads them in order), so it leaves the
   * chains out: a write to the term's previous posting, anywhere in arrays
   * of millions, for every posting added.
   */
  constructor(private readonly linked = true) {}

  /** Postings held (a measure of how much a merge would move). */
  get size(): number {
    return this.count;
  }

  /** The number of `term`, or -1. */
  termId(term: string): number {
    return this.ids.get(term) ?? -1;
  }

  /**
   * Tokenize and add the fields of document `doc`, which must be greater than
   * every document added before; its field lengths (see tokenize.ts) go to
   * `lengths[at…at+3]`.
   */
  add(doc: number, fields: FieldTexts, lengths: Int32Array | number[], at = 0): void {
    if (doc <= this.lastDoc) throw new Error(`TermPostings: document ${doc} added after ${this.lastDoc}`);
    this.lastDoc = doc;
    const terms = this.scratch;
    const counts = this.scratchCounts;
    const slots = this.scratchSlots;
    const slotTerm = (this.slotTerm ??= new Array<string>(CACHE_SIZE).fill(''));
    const slotId = (this.slotId ??= new Int32Array(CACHE_SIZE));
    for (let f = 0; f < FIELD_COUNT; f++) {
      terms.length = 0;
      counts.length = 0;
      slots.length = 0;
      lengths[at + f] = tokenizeCounted(fields[f] as string, terms, counts, slots, f === 1 ? (fields[4] ?? 0) : 0);
      const key = (doc << FIELD_BITS) | f;
      for (let i = 0; i < terms.length; i++) {
        const term = terms[i]!;
        const e = slots[i]!;
        let id: number;
        if (e >= 0 && slotTerm[e] === term) {
          id = slotId[e]!;
        } else {
          id = this.idOf(term);
          if (e >= 0) {
            slotTerm[e] = term;
            slotId[e] = id;
          }
        }
        this.post(id, key, counts[i]!);
      }
    }
    terms.length = 0;
  }

  /** Add `tf` to `term`'s posting for `key`; keys of one term must come in ascending order. */
  addPosting(term: string, key: number, tf: number): void {
    this.post(this.idOf(term), key, tf);
  }

  /** The number of `term`, numbering it if it is new. */
  private idOf(term: string): number {
    let id = this.ids.get(term);
    if (id === undefined) {
      id = this.terms.length;
      this.ids.set(term, id);
      this.terms.push(term);
      if (id === this.last.length) {
        if (this.linked) this.first = grow(this.first, -1);
        this.last = grow(this.last, -1);
        this.lastKey = grow(this.lastKey, -1);
      }
    }
    return id;
  }

  private post(id: number, key: number, tf: number): void {
    const last = this.last[id]!;
    if (this.lastKey[id] === key) {
      this.tfs[last]! += tf;
      return;
    }
    const p = this.count++;
    if (p === this.keys.length) {
      this.termOf = grow(this.termOf, 0);
      this.keys = grow(this.keys, 0);
      this.tfs = grow(this.tfs, 0);
      if (this.linked) this.next = grow(this.next, 0);
    }
    this.termOf[p] = id;
    this.keys[p] = key;
    this.tfs[p] = tf;
    if (this.linked) {
      this.next[p] = -1;
      if (last >= 0) this.next[last] = p;
      else this.first[id] = p;
    }
    this.last[id] = p;
    this.lastKey[id] = key;
  }

  /** Calls `each(key, tf)` for the postings of term number `id`, in the order added. */
  forEach(id: number, each: (key: number, tf: number) => void): void {
    this.mustBeLinked();
    for (let p = this.first[id]!; p >= 0; p = this.next[p]!) each(this.keys[p]!, this.tfs[p]!);
  }

  /** Whether term number `id` has a posting for `key`. */
  has(id: number, key: number): boolean {
    this.mustBeLinked();
    for (let p = this.first[id]!; p >= 0; p = this.next[p]!) if (this.keys[p] === key) return true;
    return false;
  }

  /** The same postings as a Segment. */
  private mustBeLinked(): void {
    if (!this.linked) throw new Error('TermPostings: postings built without chains only become a segment');
  }

  toSegment(): Segment {
    // The default sort compares UTF-16 code units, the order every lookup assumes.
    const terms = this.terms.slice().sort();
    const rank = new Int32Array(terms.length);
    for (let r = 0; r < terms.length; r++) rank[this.ids.get(terms[r]!)!] = r;
    const starts = new Int32Array(terms.length * FIELD_COUNT + 1);
    const { termOf, keys, tfs: tf, count } = this;
    for (let p = 0; p < count; p++) starts[rank[termOf[p]!]! * FIELD_COUNT + (keys[p]! & FIELD_MASK) + 1]!++;
    for (let k = 1; k < starts.length; k++) starts[k]! += starts[k - 1]!;
    const docs = new Int32Array(count);
    const tfs = new Int32Array(count);
    const fill = starts.slice(0, starts.length - 1);
    // Postings were added in ascending document order, so each run fills in ascending order.
    for (let p = 0; p < count; p++) {
      const at = fill[rank[termOf[p]!]! * FIELD_COUNT + (keys[p]! & FIELD_MASK)]!++;
      docs[at] = keys[p]! >>> FIELD_BITS;
      tfs[at] = tf[p]!;
    }
    return { terms, starts, docs, tfs };
  }

  /** Each term with its postings as `[key, tf, …]` (a file's form of the delta). */
  toPairs(): Array<[string, number[]]> {
    return this.terms.map((term, id) => {
      const pairs: number[] = [];
      this.forEach(id, (key, tf) => pairs.push(key, tf));
      return [term, pairs];
    });
  }
}

/** `a` twice as long, the new half filled with `fill`. */
function grow(a: Int32Array<ArrayBuffer>, fill: number): Int32Array<ArrayBuffer> {
  const out = new Int32Array(a.length * 2);
  out.set(a);
  if (fill !== 0) out.fill(fill, a.length);
  return out;
}

/** One input of a merge: a segment, and what each of its document numbers becomes (-1: dropped). */
export interface MergePart {
  segment: Segment;
  docMap: Int32Array;
}

/**
 * One segment holding the postings of every part, with document numbers
 * mapped through each part's `docMap` (-1 drops the posting). Runs stay
 * ascending when every part's map is ascending on the documents it keeps
 * and each part's new numbers all follow the previous part's. Terms left
 * without postings are dropped.
 */
export function mergeSegments(parts: readonly MergePart[]): Segment {
  // Walk every part's sorted terms at once; `at[p]` is part p's next term.
  const at = new Int32Array(parts.length);
  const mergedTerms: string[] = [];
  /** Per merged term and part: that part's term index, or -1. */
  const sources: number[] = [];
  const counts: number[] = [];
  for (;;) {
    let term: string | null = null;
    for (let p = 0; p < parts.length; p++) {
      const t = parts[p]!.segment.terms[at[p]!];
      if (t !== undefined && (term === null || t < term)) term = t;
    }
    if (term === null) break;
    const base = sources.length;
    const countAt = counts.length;
    for (let f = 0; f < FIELD_COUNT; f++) counts.push(0);
    let kept = 0;
    for (let p = 0; p < parts.length; p++) {
      const { segment, docMap } = parts[p]!;
      if (segment.terms[at[p]!] !== term) {
        sources.push(-1);
        continue;
      }
      const t = at[p]!++;
      sources.push(t);
      for (let f = 0; f < FIELD_COUNT; f++) {
        const end = segment.starts[t * FIELD_COUNT + f + 1]!;
        let n = 0;
        for (let i = segment.starts[t * FIELD_COUNT + f]!; i < end; i++) if (docMap[segment.docs[i]!]! >= 0) n++;
        counts[countAt + f]! += n;
        kept += n;
      }
    }
    if (kept === 0) {
      sources.length = base;
      counts.length = countAt;
    } else {
      mergedTerms.push(term);
    }
  }
  const starts = new Int32Array(mergedTerms.length * FIELD_COUNT + 1);
  for (let k = 0; k < counts.length; k++) starts[k + 1] = starts[k]! + counts[k]!;
  const docs = new Int32Array(starts[starts.length - 1]!);
  const tfs = new Int32Array(docs.length);
  let out = 0;
  for (let m = 0; m < mergedTerms.length; m++) {
    for (let f = 0; f < FIELD_COUNT; f++) {
      for (let p = 0; p < parts.length; p++) {
        const t = sources[m * parts.length + p]!;
        if (t < 0) continue;
        const { segment, docMap } = parts[p]!;
        const end = segment.starts[t * FIELD_COUNT + f + 1]!;
        for (let i = segment.starts[t * FIELD_COUNT + f]!; i < end; i++) {
          const doc = docMap[segment.docs[i]!]!;
          if (doc < 0) continue;
          docs[out] = doc;
          tfs[out++] = segment.tfs[i]!;
        }
      }
    }
  }
  return { terms: mergedTerms, starts, docs, tfs };
}
