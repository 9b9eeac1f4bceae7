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
 * 100 ms an edit there. So past BIG pairs, a key's links are kept as runs,
 * one per source (a note's links are added together), with an index from
 * source to its run: one Map entry per source, not per link. A dropped
 * source's run becomes a hole, and the runs are compacted once holes are a
 * quarter of the links.
 */

/** Flat pairs, for few links; `Big` past BIG pairs. */
export type Refs<S extends object> = Array<S | number> | Big<S>;

const BIG = 1024;

/**
 * A key carried by many links, as runs: one run per source, its link
 * indices contiguous in `links`. The indices are in typed arrays, outside
 * the JavaScript heap: on the 100k bench vault these keys hold about 90 %
 * of all refs, and as pairs of tagged values (16 bytes a link) they took
 * 140 MB more of its heap (1,005 against 862 MB after opening).
 */
interface Big<S> {
  /** The source of each run, in the order added; null once its links are dropped. */
  srcs: Array<S | null>;
  /** Where each run starts in `links`; a run ends where the next one starts, the last at `size`. */
  starts: Int32Array;
  /** Link indices, run after run (the first `size` are used). */
  links: Int32Array;
  size: number;
  /** The run of each source that has links here. */
  runOf: Map<S, number>;
  /** Link indices in dropped runs. */
  holes: number;
}

function isBig<S extends object>(refs: Refs<S>): refs is Big<S> {
  return !Array.isArray(refs);
}

/** `a`, or a copy with room for at least `n` integers. */
function room(a: Int32Array, n: number): Int32Array {
  if (n <= a.length) return a;
  const out = new Int32Array(Math.max(n, a.length * 2));
  out.set(a);
  return out;
}

const runEnd = <S>(refs: Big<S>, run: number) => (run + 1 < refs.srcs.length ? refs.starts[run + 1]! : refs.size);

/** `refs` with `src`'s link `i` added after its other links (a source's links are added together, in one go). */
export function addRef<S extends object>(refs: Refs<S> | undefined, src: S, i: number): Refs<S> {
  if (refs === undefined) return [src, i];
  if (!isBig(refs)) {
    refs.push(src, i);
    return refs.length < BIG * 2 ? refs : toBig(refs);
  }
  const run = refs.runOf.get(src);
  if (run === undefined) newRun(refs, src);
  else if (run !== refs.srcs.length - 1) {
    // Not added together after all: move its earlier links to a new last run, so every run stays contiguous.
    const earlier = refs.links.slice(refs.starts[run]!, runEnd(refs, run));
    dropRun(refs, src, run);
    newRun(refs, src);
    for (const j of earlier) pushLink(refs, j);
  }
  pushLink(refs, i);
  return refs;
}

function newRun<S extends object>(refs: Big<S>, src: S): void {
  const run = refs.srcs.length;
  refs.srcs.push(src);
  refs.starts = room(refs.starts, run + 1);
  refs.starts[run] = refs.size;
  refs.runOf.set(src, run);
}

function pushLink<S>(refs: Big<S>, i: number): void {
  refs.links = room(refs.links, refs.size + 1);
  refs.links[refs.size++] = i;
}

function toBig<S extends object>(flat: Array<S | number>): Big<S> {
  const refs: Big<S> = { srcs: [], starts: new Int32Array(64), links: new Int32Array(flat.length), size: 0, runOf: new Map(), holes: 0 };
  for (let k = 0; k < flat.length; k += 2) addRef(refs, flat[k] as S, flat[k + 1] as number);
  return refs;
}

function dropRun<S extends object>(refs: Big<S>, src: S, run: number): void {
  refs.runOf.delete(src);
  refs.srcs[run] = null;
  refs.holes += runEnd(refs, run) - refs.starts[run]!;
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
  const run = refs.runOf.get(src);
  if (run === undefined) return false;
  dropRun(refs, src, run);
  if (refs.holes * 4 >= refs.size) compact(refs);
  return refs.runOf.size === 0;
}

/** Squeezes the dropped runs out, in place. */
function compact<S extends object>(refs: Big<S>): void {
  const { srcs, starts, links } = refs;
  let runs = 0;
  let size = 0;
  refs.runOf.clear();
  for (let run = 0; run < srcs.length; run++) {
    const src = srcs[run];
    if (src === null || src === undefined) continue;
    const from = starts[run]!;
    const to = runEnd(refs, run);
    srcs[runs] = src;
    starts[runs] = size;
    refs.runOf.set(src, runs++);
    links.copyWithin(size, from, to);
    size += to - from;
  }
  srcs.length = runs;
  refs.size = size;
  refs.holes = 0;
}

/** Calls `each(source, link index)` for every link in `refs`. */
export function forEachRef<S extends object>(refs: Refs<S>, each: (src: S, i: number) => void): void {
  if (!isBig(refs)) {
    for (let k = 0; k < refs.length; k += 2) each(refs[k] as S, refs[k + 1] as number);
    return;
  }
  const { srcs, starts, links } = refs;
  for (let run = 0; run < srcs.length; run++) {
    const src = srcs[run];
    if (src === null) continue;
    const to = runEnd(refs, run);
    for (let j = starts[run]!; j < to; j++) each(src!, links[j]!);
  }
}
