/**
 * The links carrying one key (a target's name or alias key): which notes
 * have them, and at which link index, so that they can be resolved again
 * when the key's meaning changes.
 *
 * Most keys are carried by a few links: they are stored flat, as pairs
 * `[source, link index, …]`, far fewer objects than a Map per key (1M links
 * on 100k notes). A hub's name is carried by most links of a Home (300k on
 * the 100k bench vault's `Home`), and editing any note that links to it
 * drops that note's links: with flat pairs, a scan of all of them, about
 * 100 ms an edit there. So past BIG pairs, a key's pairs also get an index
 * from source to where its pairs start (they are contiguous: a note's links
 * are added together); a dropped source's pairs become holes, and the pairs
 * are compacted once holes are half of them. That index costs one Map entry
 * per source, not per link.
 */

/** Flat pairs, for few links; `Big` past BIG pairs. */
export type Refs<S extends object> = Array<S | number> | Big<S>;

const BIG = 1024;

interface Big<S> {
  /** `[source, link index, …]`; a dropped source's pairs have null. */
  pairs: Array<S | number | null>;
  /** Where each source's pairs start. */
  starts: Map<S, number>;
  /** Pairs that are holes. */
  holes: number;
}

function isBig<S extends object>(refs: Refs<S>): refs is Big<S> {
  return !Array.isArray(refs);
}

/** `refs` with `src`'s link `i` added after its other links (a source's links are added together, in one go). */
export function addRef<S extends object>(refs: Refs<S> | undefined, src: S, i: number): Refs<S> {
  if (refs === undefined) return [src, i];
  if (!isBig(refs)) {
    refs.push(src, i);
    return refs.length < BIG * 2 ? refs : toBig(refs);
  }
  if (!refs.starts.has(src)) refs.starts.set(src, refs.pairs.length);
  refs.pairs.push(src, i);
  return refs;
}

function toBig<S extends object>(flat: Array<S | number | null>): Big<S> {
  const starts = new Map<S, number>();
  for (let k = 0; k < flat.length; k += 2) {
    const src = flat[k] as S;
    if (!starts.has(src)) starts.set(src, k);
  }
  return { pairs: flat, starts, holes: 0 };
}

/** Drop `src`'s links from `refs`; true when none are left. */
export function dropRefs<S extends object>(refs: Refs<S>, src: S): boolean {
  if (!isBig(refs)) {
    let w = 0;
    for (let r = 0; r < refs.length; r += 2) {
      if (refs[r] === src) continue;
      if (w !== r) {
        refs[w] = refs[r]!;
        refs[w + 1] = refs[r + 1]!;
      }
      w += 2;
    }
    refs.length = w;
    return w === 0;
  }
  const start = refs.starts.get(src);
  if (start === undefined) return false;
  refs.starts.delete(src);
  const { pairs } = refs;
  for (let k = start; k < pairs.length && pairs[k] === src; k += 2) {
    pairs[k] = null;
    refs.holes++;
  }
  if (refs.holes * 4 >= pairs.length) compact(refs);
  return refs.starts.size === 0;
}

function compact<S extends object>(refs: Big<S>): void {
  const { pairs } = refs;
  let w = 0;
  refs.starts.clear();
  for (let r = 0; r < pairs.length; r += 2) {
    const src = pairs[r];
    if (src === null) continue;
    if (w !== r) {
      pairs[w] = src!;
      pairs[w + 1] = pairs[r + 1]!;
    }
    if (!refs.starts.has(src as S)) refs.starts.set(src as S, w);
    w += 2;
  }
  pairs.length = w;
  refs.holes = 0;
}

/** Calls `each(source, link index)` for every link in `refs`. */
export function forEachRef<S extends object>(refs: Refs<S>, each: (src: S, i: number) => void): void {
  const pairs: Array<S | number | null> = isBig(refs) ? refs.pairs : refs;
  for (let k = 0; k < pairs.length; k += 2) {
    const src = pairs[k];
    if (src !== null) each(src as S, pairs[k + 1] as number);
  }
}
