/**
 * Lookups over a compact term dictionary: a `string[]` of unique terms sorted
 * ascending by the default string comparison (UTF-16 code units). It replaces
 * MiniSearch's radix tree, so exact, prefix and fuzzy matching must give the
 * same answers as `SearchableMap#has`, `#atPrefix` and `#fuzzyGet`, which also
 * work on code units (an astral character counts as two).
 */

/** Index of `term` in `sorted`, or -1 (binary search). */
export function findTerm(sorted: readonly string[], term: string): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    const t = sorted[mid]!;
    if (t === term) return mid;
    if (t < term) lo = mid + 1;
    else hi = mid;
  }
  return -1;
}

/** The range [lo, hi) of `sorted` whose terms start with `prefix` (binary search; '' gives the whole array). */
export function prefixRange(sorted: readonly string[], prefix: string): [lo: number, hi: number] {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (sorted[mid]! < prefix) lo = mid + 1;
    else hi = mid;
  }
  // Every term >= prefix that starts with it sorts before every one that does
  // not, so "starts with prefix" is a monotone predicate over [lo, length).
  const start = lo;
  hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (sorted[mid]!.startsWith(prefix)) lo = mid + 1;
    else hi = mid;
  }
  return [start, lo];
}

/**
 * Every term of `sorted` within Levenshtein distance `maxDistance` of `query`: calls `onMatch(index, distance)`
 * once per matching term, in ascending index order. Same set and distances as SearchableMap#fuzzyGet.
 *
 * The sorted array is walked as an implicit trie: the terms sharing a prefix are
 * a contiguous range, and the children of a prefix of length d are the runs of
 * equal `charCodeAt(d)` inside it. A range whose first and last terms agree on
 * the next code unit has a single child, so the walk goes down without
 * searching, which is what a radix tree's compressed edges buy MiniSearch.
 * `maxDistance` must be a non-negative integer.
 */
export function fuzzyMatch(
  sorted: readonly string[],
  query: string,
  maxDistance: number,
  onMatch: (index: number, distance: number) => void,
): void {
  if (!Number.isInteger(maxDistance) || maxDistance < 0) {
    throw new RangeError(`maxDistance must be a non-negative integer, got ${maxDistance}`);
  }
  if (sorted.length === 0) return;
  new FuzzyWalk(sorted, query, maxDistance, onMatch).visit(0, sorted.length, 0);
}

/** A code unit no query has, for the row of a child that matches nothing in the band. */
const NO_UNIT = -1;

/**
 * One fuzzy walk. The Levenshtein matrix keeps one row per depth of the trie
 * (row i is the distance from the current prefix's first i code units to each
 * prefix of the query), so going back up the trie costs nothing and siblings
 * reuse the rows of their common ancestors.
 *
 * Only the diagonal band |i - j| <= k (k = maxDistance) is stored, as MiniSearch
 * only computes it: a cell whose distance is <= k lies on an optimal path that
 * never leaves the band, so cells outside it can stand in as k + 1 without
 * changing any distance <= k. Storing the band alone keeps the matrix at
 * (|query| + k + 1) x (2k + 3) cells, where MiniSearch's full matrix is
 * quadratic in the query length (~100 MB for a pasted 10,000-unit token).
 *
 * Slot s of row i holds column j = i - k + s, for s in [0, 2k]; slots -1 and
 * 2k + 1 are permanent k + 1 sentinels, which is why rows are 2k + 3 wide and
 * slot s lives at offset 1 + s. With that layout cell (i, j)'s neighbours are
 * (i - 1, j - 1) at the same slot of the row above, (i - 1, j) at the next
 * slot of the row above, and (i, j - 1) at the previous slot of the same row.
 */
class FuzzyWalk {
  private readonly q: Uint16Array;
  private readonly qLen: number;
  private readonly k: number;
  private readonly width: number;
  private readonly rows: Int32Array;
  /** Terms longer than this are more than k insertions away from the query. */
  private readonly maxDepth: number;
  /**
   * The distinct code units, ascending, of the query columns in row d + 1's
   * band are bandUnits[bandStart[d] .. bandStart[d + 1]).
   */
  private readonly bandUnits: Uint16Array;
  private readonly bandStart: Int32Array;

  constructor(
    private readonly sorted: readonly string[],
    query: string,
    maxDistance: number,
    private readonly onMatch: (index: number, distance: number) => void,
  ) {
    const qLen = query.length;
    const k = maxDistance;
    this.q = new Uint16Array(qLen);
    for (let j = 0; j < qLen; j++) this.q[j] = query.charCodeAt(j);
    this.qLen = qLen;
    this.k = k;
    this.width = 2 * k + 3;
    this.maxDepth = qLen + k;
    this.rows = new Int32Array((this.maxDepth + 1) * this.width).fill(k + 1);
    // Row 0: the empty prefix is j edits away from the query's first j units.
    for (let j = 0; j <= Math.min(k, qLen); j++) this.rows[1 + j + k] = j;
    this.bandUnits = new Uint16Array(this.maxDepth * (2 * k + 1));
    this.bandStart = new Int32Array(this.maxDepth + 1);
    let n = 0;
    for (let d = 0; d < this.maxDepth; d++) {
      this.bandStart[d] = n;
      const band = Array.from(this.q.subarray(Math.max(0, d - k), Math.min(qLen, d + 1 + k)));
      for (const c of new Set(band.sort((a, b) => a - b))) this.bandUnits[n++] = c;
    }
    this.bandStart[this.maxDepth] = n;
  }

  /**
   * Walks the terms in [lo, hi), which all start with the same `depth` code
   * units, and whose row `depth` is already filled and within k somewhere.
   */
  visit(lo: number, hi: number, depth: number): void {
    const sorted = this.sorted;
    let d = depth;
    for (;;) {
      const first = sorted[lo]!;
      if (first.length === d) {
        // The term equal to the prefix sorts before its extensions.
        const distance = this.distanceAt(d);
        if (distance <= this.k) this.onMatch(lo, distance);
        if (++lo === hi) return;
      }
      // No term longer than maxDepth can match, and the rows stop there.
      if (d === this.maxDepth) return;
      const c = sorted[lo]!.charCodeAt(d);
      if (sorted[hi - 1]!.charCodeAt(d) !== c) break;
      if (this.fillRow(d + 1, c) > this.k) return;
      d++;
    }
    // Several children. Every code unit absent from the query's band at this
    // depth gives row d + 1 the same values, and a present one can only lower
    // them, so that one row tells whether the children must be enumerated.
    if (this.fillRow(d + 1, NO_UNIT) <= this.k) {
      // Every child stays within k: split the range into its runs.
      while (lo < hi) {
        const c = sorted[lo]!.charCodeAt(d);
        const end = runEnd(sorted, lo, hi, d, c);
        this.fillRow(d + 1, c);
        this.visit(lo, end, d + 1);
        lo = end;
      }
      return;
    }
    // Only the children whose code unit occurs in the band can stay within k,
    // and there are at most 2k + 1 of them: search for each rather than walking
    // past all their siblings, which is where most of the time went otherwise.
    // The row comes first because it costs no memory access to the terms.
    const units = this.bandUnits;
    for (let u = this.bandStart[d]!, uEnd = this.bandStart[d + 1]!; u < uEnd && lo < hi; u++) {
      const c = units[u]!;
      if (this.fillRow(d + 1, c) > this.k) continue;
      const start = lowerBound(sorted, lo, hi, d, c);
      if (start < hi && sorted[start]!.charCodeAt(d) === c) {
        lo = runEnd(sorted, start, hi, d, c);
        this.visit(start, lo, d + 1);
      } else {
        lo = start;
      }
    }
  }

  /** Distance from the current prefix of length `i` to the whole query, or k + 1 if it is outside the band. */
  private distanceAt(i: number): number {
    const s = this.qLen - i + this.k;
    return s < 0 || s > 2 * this.k ? this.k + 1 : this.rows[i * this.width + 1 + s]!;
  }

  /** Fills row `i` for a prefix whose last code unit is `c`; returns the row's minimum. */
  private fillRow(i: number, c: number): number {
    const { rows, q, k, width } = this;
    const cur = i * width + 1;
    const prev = cur - width;
    // Slots before max(0, k - i) or after sMax stand for columns before 0 or
    // after the query's end: no cell of the band reads them, so they are left alone.
    let s = Math.max(0, k - i);
    const sMax = Math.min(2 * k, this.qLen - i + k);
    let min = k + 1;
    if (s === k - i) {
      // Column 0: the prefix's i units all deleted.
      rows[cur + s] = i;
      min = i;
      s++;
    }
    for (let j = i - k + s; s <= sMax; s++, j++) {
      const rpl = rows[prev + s]! + (q[j - 1] === c ? 0 : 1);
      const del = rows[prev + s + 1]! + 1;
      const ins = rows[cur + s - 1]! + 1;
      const v = rpl < del ? (rpl < ins ? rpl : ins) : del < ins ? del : ins;
      rows[cur + s] = v;
      if (v < min) min = v;
    }
    return min;
  }
}

/** The first index in [lo, hi) whose code unit at `d` is >= `c`, or `hi`. */
function lowerBound(sorted: readonly string[], lo: number, hi: number, d: number, c: number): number {
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (sorted[mid]!.charCodeAt(d) < c) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * The end of the run of terms in [lo, hi) whose code unit at `d` is `c`, given
 * that `sorted[lo]` starts it. Galloping first, because most runs deep in the
 * trie are a handful of terms while the range can be large near the root.
 */
function runEnd(sorted: readonly string[], lo: number, hi: number, d: number, c: number): number {
  let inside = lo;
  let step = 1;
  while (inside + step < hi && sorted[inside + step]!.charCodeAt(d) === c) {
    inside += step;
    step *= 2;
  }
  let outside = Math.min(inside + step, hi);
  while (outside - inside > 1) {
    const mid = (inside + outside) >>> 1;
    if (sorted[mid]!.charCodeAt(d) === c) inside = mid;
    else outside = mid;
  }
  return outside;
}
