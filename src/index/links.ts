/**
 * Link resolution, Obsidian style (rules in docs/index.md "Link resolution").
 *
 * Every candidate a link can resolve to shares the link's *name key*: the
 * last path segment of the target without a trailing `.md`, lowercased, which
 * is also the key of a Home path (file name, `.md` stripped, lowercased). The
 * only other way to resolve is a frontmatter alias equal to the whole target
 * ignoring case (the *alias key*). So when a path appears or disappears only
 * links with its name key, and when aliases change only links with those
 * alias keys, can change resolution; HomeIndex keeps reverse maps on both.
 * And only links carrying a path's name key or one of its alias keys can
 * resolve to it, which is all a backlinks question needs resolved
 * (link-graph.ts, `settleTarget`).
 */

/** What resolution needs to know about the Home. */
export interface PathLookup {
  /** A note or file exists at exactly this path. */
  has(path: string): boolean;
  isNote(path: string): boolean;
  /** Paths whose name key is `key`, sorted shortest first, then code-unit order. */
  byName(key: string): PathSet | undefined;
  /** Notes with an alias equal to `key` ignoring case, same order. */
  byAlias(key: string): PathSet | undefined;
}

/**
 * A sorted set of paths under one key: a single path is stored as the string
 * itself (the common case for names, block ids and ids), more as a sorted array.
 */
export type PathSet = string | string[];

/** The first path of a set, if any. */
export function firstOf(s: PathSet | undefined): string | undefined {
  return s === undefined ? undefined : typeof s === 'string' ? s : s[0];
}

/** All paths of a set, in order. */
export function allOf(s: PathSet | undefined): readonly string[] {
  return s === undefined ? [] : typeof s === 'string' ? [s] : s;
}

/** Shortest first, then code-unit order: the tie-break of name and alias matches. */
export function byLengthThenPath(a: string, b: string): number {
  return a.length - b.length || (a < b ? -1 : a > b ? 1 : 0);
}

/** Plain code-unit order. */
export function byPath(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function endsWithMd(s: string): boolean {
  const n = s.length;
  if (n < 3) return false;
  return (
    s.charCodeAt(n - 3) === 46 /* . */ &&
    (s.charCodeAt(n - 2) | 32) === 109 /* m */ &&
    (s.charCodeAt(n - 1) | 32) === 100 /* d */
  );
}

/**
 * The name key of a path or link target: its last segment, a trailing `.md`
 * (any case) removed, lowercased. Cut before it is lowercased, so that the
 * key of `ΑΣ.md` is the key of `[[ΑΣ]]`: lowercasing the whole path first
 * made its sigma a medial one (`ασ.md`, the `.` lets a word go on) and the
 * target's a final one (`ας`), and the note was found by its exact path but
 * not under its name key, which is how a new note finds the links to it.
 */
function nameKeyOf(s: string): string {
  const name = s.slice(s.lastIndexOf('/') + 1);
  return (endsWithMd(name) ? name.slice(0, -3) : name).toLowerCase();
}

/** The name key of a Home path: file name without `.md`, lowercased. */
export function nameKeyOfPath(path: string): string {
  return nameKeyOf(path);
}

/** The name key of a link target (same rule as paths, so candidates share it). */
export function nameKeyOfTarget(target: string): string {
  return nameKeyOf(target);
}

/** The alias key of a link target: the whole target, lowercased. */
export function aliasKeyOfTarget(target: string): string {
  return target.toLowerCase();
}

/** A link target's alias key (lowercased) and name key. */
export interface TargetKeys {
  readonly alias: string;
  readonly name: string;
}

/**
 * Keys per target string. Targets repeat across notes (and are shared by
 * detach.ts), so lowercasing and cutting happen once per distinct target,
 * and the keys come back as the same string objects, whose hashes V8 has
 * already computed. Restarted when large.
 */
let keyCache = new Map<string, TargetKeys>();

export function keysOfTarget(target: string): TargetKeys {
  let k = keyCache.get(target);
  if (k === undefined) {
    const alias = target.toLowerCase();
    const name = nameKeyOf(target);
    // The same string object when equal: its hash is computed once.
    k = { alias, name: name === alias ? alias : name };
    if (keyCache.size >= 200_000) keyCache = new Map();
    keyCache.set(target, k);
  }
  return k;
}

/** Whether resolving `target` depends on the linking note's folder. */
export function dependsOnSource(target: string, kind: 'wikilink' | 'markdown'): boolean {
  return kind === 'markdown' ? target.charCodeAt(0) !== 47 /* / */ : isExplicitRelative(target);
}

/**
 * Normalise a Home-relative path: drop `.` and empty segments, apply `..`.
 * Null when it climbs above the Home root or ends up empty.
 */
export function normalizePath(p: string): string | null {
  if (
    p !== '' &&
    p.indexOf('//') < 0 &&
    p.indexOf('./') < 0 &&
    p.charCodeAt(0) !== 47 &&
    p.charCodeAt(p.length - 1) !== 47 &&
    !p.endsWith('/.') &&
    !p.endsWith('/..') &&
    p !== '.' &&
    p !== '..'
  ) {
    return p;
  }
  const out: string[] = [];
  for (const seg of p.split('/')) {
    if (seg === '' || seg === '.') continue;
    if (seg === '..') {
      if (out.length === 0) return null;
      out.pop();
    } else out.push(seg);
  }
  return out.length === 0 ? null : out.join('/');
}

function dirname(path: string): string {
  const i = path.lastIndexOf('/');
  return i < 0 ? '' : path.slice(0, i);
}

function isExplicitRelative(t: string): boolean {
  return t.startsWith('./') || t.startsWith('../');
}

/** `p` itself or `p.md`, whichever exists first in the given order (0: only `p`; 1: `p.md`, then `p`; 2: `p`, then `p.md`). */
function tryExact(lookup: PathLookup, p: string | null, order: 0 | 1 | 2): string | null {
  if (p === null) return null;
  if (order === 0) return lookup.has(p) ? p : null;
  if (order === 1) {
    const md = p + '.md';
    if (lookup.has(md)) return md;
    return lookup.has(p) ? p : null;
  }
  if (lookup.has(p)) return p;
  const md = p + '.md';
  return lookup.has(md) ? md : null;
}

/**
 * The exact paths a link may name, in the order they are tried. Empty when
 * the target names a folder (ends with `/`, `.` or `..`), so that every
 * candidate's file name equals the target's last segment (+ `.md`).
 */
export function exactCandidates(fromPath: string, target: string, kind: 'wikilink' | 'markdown'): string[] {
  const out: string[] = [];
  const all: PathLookup = {
    has: (p) => {
      out.push(p);
      return false;
    },
    isNote: () => false,
    byName: () => undefined,
    byAlias: () => undefined,
  };
  findExact(all, fromPath, target, kind);
  return out;
}

function findExact(lookup: PathLookup, fromPath: string, target: string, kind: 'wikilink' | 'markdown'): string | null {
  const last = target.slice(target.lastIndexOf('/') + 1);
  if (last === '' || last === '.' || last === '..') return null;
  // 0: only as written (it ends in .md); 1: `.md` first (no extension: `[[Plan]]` is Plan.md); 2: as written, then `.md`.
  const order: 0 | 1 | 2 = endsWithMd(last) ? 0 : last.indexOf('.') < 0 ? 1 : 2;
  const absolute = target.charCodeAt(0) === 47; /* / */
  if (!absolute && (kind === 'markdown' || isExplicitRelative(target))) {
    const dir = dirname(fromPath);
    const found = tryExact(lookup, normalizePath(dir === '' ? target : dir + '/' + target), order);
    if (found !== null) return found;
  }
  return tryExact(lookup, normalizePath(absolute ? target.slice(1) : target), order);
}

/** The lowercased folder-qualified part a name match must end with, or null for a bare name. */
function suffixOf(target: string): string | null {
  if (target.indexOf('/') < 0) return null;
  const segs: string[] = [];
  for (const seg of target.split('/')) {
    if (seg === '' || seg === '.') continue;
    if (seg === '..') {
      if (segs.length > 0) segs.pop();
      continue;
    }
    segs.push(seg);
  }
  if (segs.length <= 1) return null;
  const s = segs.join('/');
  return (endsWithMd(s) ? s.slice(0, -3) : s).toLowerCase();
}

/** A path as a link would spell it for suffix matching: `.md` stripped, then lowercased (as name keys are). */
function linkPathOf(path: string): string {
  return (endsWithMd(path) ? path.slice(0, -3) : path).toLowerCase();
}

/**
 * Resolve `target` linked from `fromPath`. An empty target (a same-note link
 * such as `[[#Heading]]`) resolves to `fromPath`. Returns null when nothing matches.
 */
export function resolveTarget(
  lookup: PathLookup,
  fromPath: string,
  target: string,
  kind: 'wikilink' | 'markdown',
): string | null {
  if (target === '') return fromPath;
  // 1. Exact Home path (relative to the note for Markdown links and ./ ../ wikilinks).
  const exact = findExact(lookup, fromPath, target, kind);
  if (exact !== null) return exact;
  // 2. File name ignoring case, qualified by any folders given; shortest path, then code-unit order.
  const { alias: lower, name: key } = keysOfTarget(target);
  const last = target.slice(target.lastIndexOf('/') + 1);
  if (key !== '' && last !== '.' && last !== '..') {
    const candidates = lookup.byName(key);
    if (candidates !== undefined) {
      const onlyNotes = endsWithMd(target);
      const suffix = suffixOf(target);
      for (const c of typeof candidates === 'string' ? [candidates] : candidates) {
        if (onlyNotes && !lookup.isNote(c)) continue;
        if (suffix !== null) {
          const lp = linkPathOf(c);
          if (!(lp === suffix || (lp.endsWith(suffix) && lp.charCodeAt(lp.length - suffix.length - 1) === 47))) continue;
        }
        return c;
      }
    }
  }
  // 3. A note whose frontmatter alias equals the target ignoring case.
  return firstOf(lookup.byAlias(lower)) ?? null;
}

// ------------------------------------------------------------ sorted arrays

/** Insert `x` into sorted `arr` unless present; returns true when inserted. */
export function sortedInsert(arr: string[], x: string, cmp: (a: string, b: string) => number): boolean {
  let lo = 0;
  let hi = arr.length;
  // Fast path: appending in order (bulk loads in path order).
  if (hi > 0) {
    const c = cmp(arr[hi - 1]!, x);
    if (c < 0) {
      arr.push(x);
      return true;
    }
    if (c === 0) return false;
  } else {
    arr.push(x);
    return true;
  }
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    const c = cmp(arr[mid]!, x);
    if (c === 0) return false;
    if (c < 0) lo = mid + 1;
    else hi = mid;
  }
  arr.splice(lo, 0, x);
  return true;
}

/** Remove `x` from sorted `arr`; returns its former index or -1. */
export function sortedRemove(arr: string[], x: string, cmp: (a: string, b: string) => number): number {
  let lo = 0;
  let hi = arr.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    const c = cmp(arr[mid]!, x);
    if (c === 0) {
      arr.splice(mid, 1);
      return mid;
    }
    if (c < 0) lo = mid + 1;
    else hi = mid;
  }
  return -1;
}

/** Add `x` to the sorted set under `key` in `map`. */
export function addToSortedMap(
  map: Map<string, PathSet>,
  key: string,
  x: string,
  cmp: (a: string, b: string) => number,
): void {
  const cur = map.get(key);
  if (cur === undefined) map.set(key, x);
  else if (typeof cur === 'string') {
    const c = cmp(cur, x);
    if (c !== 0) map.set(key, c < 0 ? [cur, x] : [x, cur]);
  } else sortedInsert(cur, x, cmp);
}

/** Remove `x` from the sorted set under `key`, dropping the key when empty; returns its former index or -1. */
export function removeFromSortedMap(
  map: Map<string, PathSet>,
  key: string,
  x: string,
  cmp: (a: string, b: string) => number,
): number {
  const cur = map.get(key);
  if (cur === undefined) return -1;
  if (typeof cur === 'string') {
    if (cur !== x) return -1;
    map.delete(key);
    return 0;
  }
  const i = sortedRemove(cur, x, cmp);
  if (cur.length === 1) map.set(key, cur[0]!);
  else if (cur.length === 0) map.delete(key);
  return i;
}
