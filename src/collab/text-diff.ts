/**
 * Text diffs and a three-way merge, the rules by which outside edits of a file (an editor, git,
 * another API write) enter an open collaborative document. Pure functions on UTF-16 strings:
 * positions are what Y.Text counts, and no edit boundary ever splits a surrogate pair (Yjs would
 * replace half a pair with U+FFFD).
 */

/** Replace `del` code units at `pos` (in the old text) with `ins`. */
export interface Edit {
  pos: number;
  del: number;
  ins: string;
}

/** Beyond this many changed lines the middle is replaced as one edit rather than searched further. */
const MAX_LINE_EDITS = 1000;

const isHigh = (c: number) => c >= 0xd800 && c <= 0xdbff;
const isLow = (c: number) => c >= 0xdc00 && c <= 0xdfff;

function commonPrefix(a: string, b: string, from = 0, aEnd = a.length, bEnd = b.length): number {
  let i = 0;
  const n = Math.min(aEnd, bEnd) - from;
  while (i < n && a.charCodeAt(from + i) === b.charCodeAt(from + i)) i++;
  // Never end inside a surrogate pair.
  if (i > 0 && i < n && isHigh(a.charCodeAt(from + i - 1))) i--;
  return i;
}

function commonSuffix(a: string, b: string, aStart: number, bStart: number): number {
  let i = 0;
  const n = Math.min(a.length - aStart, b.length - bStart);
  while (i < n && a.charCodeAt(a.length - 1 - i) === b.charCodeAt(b.length - 1 - i)) i++;
  if (i > 0 && i < n && isLow(a.charCodeAt(a.length - i))) i--;
  return i;
}

/** Lines with their line breaks, so that joining them gives the text back. */
function splitLines(s: string): string[] {
  const out: string[] = [];
  let start = 0;
  for (let i = 0; i < s.length; i++) {
    if (s.charCodeAt(i) === 10) {
      out.push(s.slice(start, i + 1));
      start = i + 1;
    }
  }
  if (start < s.length) out.push(s.slice(start));
  return out;
}

/**
 * Myers' O(ND) diff of two sequences: the pairs of equal runs as [aIndex, bIndex, length], or null
 * when more than `maxD` insertions and deletions would be needed.
 */
function myersMatches(a: readonly string[], b: readonly string[], maxD: number): Array<[number, number, number]> | null {
  const n = a.length;
  const m = b.length;
  const max = Math.min(n + m, maxD);
  const off = max + 1;
  let v = new Int32Array(2 * max + 3);
  const trace: Int32Array[] = [];
  let found = -1;
  for (let d = 0; d <= max; d++) {
    trace.push(v.slice());
    for (let k = -d; k <= d; k += 2) {
      let x = k === -d || (k !== d && v[off + k - 1]! < v[off + k + 1]!) ? v[off + k + 1]! : v[off + k - 1]! + 1;
      let y = x - k;
      while (x < n && y < m && a[x] === b[y]) {
        x++;
        y++;
      }
      v[off + k] = x;
      if (x >= n && y >= m) {
        found = d;
        break;
      }
    }
    if (found >= 0) break;
  }
  if (found < 0) return null;
  // Walk the trace back from the end, collecting the diagonal (equal) runs.
  const runs: Array<[number, number, number]> = [];
  let x = n;
  let y = m;
  for (let d = found; d > 0; d--) {
    const vd = trace[d]!;
    const k = x - y;
    const prevK = k === -d || (k !== d && vd[off + k - 1]! < vd[off + k + 1]!) ? k + 1 : k - 1;
    const prevX = vd[off + prevK]!;
    const prevY = prevX - prevK;
    const startX = prevK === k + 1 ? prevX : prevX + 1;
    const startY = startX - k;
    if (x > startX) runs.push([startX, startY, x - startX]);
    x = prevX;
    y = prevY;
  }
  if (x > 0) runs.push([0, 0, x]);
  v = new Int32Array(0);
  return runs.reverse();
}

/** The edits that turn `a` into `b`: line by line, each changed run of lines narrowed to the characters that differ. */
export function diffText(a: string, b: string): Edit[] {
  if (a === b) return [];
  // Common ends cut at line boundaries, so the lines compared below are whole lines.
  let pre = commonPrefix(a, b);
  pre = pre === 0 ? 0 : a.lastIndexOf('\n', pre - 1) + 1;
  let suf = commonSuffix(a, b, pre, pre);
  const sufStart = a.length - suf;
  if (sufStart > 0 && a.charCodeAt(sufStart - 1) !== 10) {
    const nl = a.indexOf('\n', sufStart);
    suf = nl < 0 ? 0 : a.length - nl - 1;
  }
  const aMid = a.slice(pre, a.length - suf);
  const bMid = b.slice(pre, b.length - suf);
  if (aMid.length === 0 || bMid.length === 0) return [{ pos: pre, del: aMid.length, ins: bMid }];
  const al = splitLines(aMid);
  const bl = splitLines(bMid);
  const runs = al.length > 1 || bl.length > 1 ? myersMatches(al, bl, MAX_LINE_EDITS) : null;
  if (!runs) return [narrow(a, pre, aMid.length, bMid)];
  const aOff = offsets(al);
  const bOff = offsets(bl);
  const edits: Edit[] = [];
  let ai = 0;
  let bi = 0;
  for (const [ax, bx, len] of [...runs, [al.length, bl.length, 0] as [number, number, number]]) {
    if (ax > ai || bx > bi) {
      const from = aOff[ai]!;
      edits.push(narrow(a, pre + from, aOff[ax]! - from, bMid.slice(bOff[bi]!, bOff[bx]!)));
    }
    ai = ax + len;
    bi = bx + len;
  }
  return edits;
}

function offsets(lines: readonly string[]): number[] {
  const out = [0];
  for (const l of lines) out.push(out[out.length - 1]! + l.length);
  return out;
}

/** One replacement narrowed to the characters that differ at its two ends. */
function narrow(a: string, pos: number, del: number, ins: string): Edit {
  const old = a.slice(pos, pos + del);
  const p = commonPrefix(old, ins);
  const s = commonSuffix(old, ins, p, p);
  return { pos: pos + p, del: del - p - s, ins: ins.slice(p, ins.length - s) };
}

/** Applies edits (sorted, not overlapping, positions in `a`) to `a`. */
export function applyEdits(a: string, edits: readonly Edit[]): string {
  let out = '';
  let at = 0;
  for (const e of edits) {
    out += a.slice(at, e.pos) + e.ins;
    at = e.pos + e.del;
  }
  return out + a.slice(at);
}

interface Sided extends Edit {
  side: 0 | 1;
}

/**
 * Three-way merge: `ours` and `theirs` both derive from `base`. Changes to different places are
 * both kept. Where both changed the same place: identical changes count once; when one side's
 * result there contains the other's, the larger one is kept; otherwise ours comes first, then
 * what theirs inserted, so that nobody's typed text is lost.
 */
export function merge3(base: string, ours: string, theirs: string): string {
  if (ours === theirs || theirs === base) return ours;
  if (ours === base) return theirs;
  const all: Sided[] = [
    ...diffText(base, ours).map((e) => ({ ...e, side: 0 as const })),
    ...diffText(base, theirs).map((e) => ({ ...e, side: 1 as const })),
  ];
  all.sort((x, y) => x.pos - y.pos || x.del - y.del || x.side - y.side);
  let out = '';
  let at = 0;
  for (let i = 0; i < all.length; ) {
    const start = all[i]!.pos;
    let end = start + all[i]!.del;
    let j = i + 1;
    // A cluster: edits that overlap, or pure insertions at the very same place.
    while (j < all.length) {
      const e = all[j]!;
      const overlaps = e.pos < end || (e.pos === start && end === start && e.del === 0);
      if (!overlaps) break;
      end = Math.max(end, e.pos + e.del);
      j++;
    }
    const cluster = all.slice(i, j);
    out += base.slice(at, start);
    const region = base.slice(start, end);
    const sideText = (side: 0 | 1) =>
      applyEdits(region, cluster.filter((e) => e.side === side).map((e) => ({ pos: e.pos - start, del: e.del, ins: e.ins })));
    const o = sideText(0);
    const t = sideText(1);
    if (!cluster.some((e) => e.side === 0)) out += t;
    else if (!cluster.some((e) => e.side === 1)) out += o;
    else if (o.includes(t)) out += o;
    else if (t.includes(o)) out += t;
    else out += o + cluster.filter((e) => e.side === 1).map((e) => e.ins).join('');
    at = end;
    i = j;
  }
  return out + base.slice(at);
}
