/**
 * Tag counts the way Obsidian's tag pane shows them: a note tagged `a/b/c`
 * counts toward `a/b/c`, `a/b` and `a` (once per note per tag path), tags
 * group ignoring case, and each tag path is displayed in its most used
 * spelling (ties: the smallest in code-unit order, so the result does not
 * depend on the order notes were indexed in).
 */
import type { TagCount } from './types.js';

/** The lowercased lookup key of a tag given by a caller: `#` stripped. */
export function tagKey(tag: string): string {
  return tag.replace(/^#+/u, '').toLowerCase();
}

/**
 * Where a tag's levels end: `a/b/c` ends levels at 1 and 3, then at its
 * length. A `/` at the start or right after another `/` does not end a
 * level. The spelling and the lowercased key of each level are cut at the
 * `/`s of the tag and of its lowercased form (the same `/`s; positions only
 * differ for the few characters whose lowercase is longer).
 */
function levelEnds(tag: string): number[] {
  const out: number[] = [];
  for (let i = 1; i < tag.length; i++) {
    if (tag.charCodeAt(i) === 47 /* / */ && tag.charCodeAt(i - 1) !== 47) out.push(i);
  }
  out.push(tag.length);
  return out;
}

/** A tag's levels: spellings and lowercased keys, shallowest first (the last is the tag itself). */
interface Levels {
  spellings: string[];
  keys: string[];
}

/** Levels per tag spelling: tags repeat across notes, so they are cut once. Restarted when large. */
let levelCache = new Map<string, Levels>();

function levelsOf(tag: string): Levels {
  let lv = levelCache.get(tag);
  if (lv !== undefined) return lv;
  const lower = tag.toLowerCase();
  const ends = levelEnds(tag);
  const lowerEnds = lower.length === tag.length ? ends : levelEnds(lower);
  lv = { spellings: [], keys: [] };
  for (let j = 0; j < ends.length; j++) {
    lv.spellings.push(ends[j] === tag.length ? tag : tag.slice(0, ends[j]));
    lv.keys.push(lowerEnds[j] === lower.length ? lower : lower.slice(0, lowerEnds[j]));
  }
  if (levelCache.size >= 50_000) levelCache = new Map();
  levelCache.set(tag, lv);
  return lv;
}

interface TagNode {
  /** Notes with exactly this tag (lowercased). */
  direct: Set<string>;
  /** Notes with this tag or a descendant. */
  nested: Set<string>;
  /** Spelling → number of (note, tag) uses. */
  spellings: Map<string, number>;
  /** `direct` and `nested` sorted by path, kept until either changes (a popular tag is listed far more often than it changes). */
  sortedDirect: string[] | null;
  sortedNested: string[] | null;
}

export class TagIndex {
  private readonly nodes = new Map<string, TagNode>();

  private node(key: string): TagNode {
    let n = this.nodes.get(key);
    if (n === undefined) {
      n = { direct: new Set(), nested: new Set(), spellings: new Map(), sortedDirect: null, sortedNested: null };
      this.nodes.set(key, n);
    }
    return n;
  }

  /** Index a note's tags (already deduplicated case-insensitively, as in NoteFacts.tags). */
  add(path: string, tags: readonly string[]): void {
    for (const tag of tags) {
      const { spellings, keys } = levelsOf(tag);
      let n: TagNode | undefined;
      for (let j = 0; j < keys.length; j++) {
        const spelling = spellings[j]!;
        n = this.node(keys[j]!);
        n.nested.add(path);
        n.sortedNested = null;
        n.spellings.set(spelling, (n.spellings.get(spelling) ?? 0) + 1);
      }
      n!.direct.add(path);
      n!.sortedDirect = null;
    }
  }

  /** Undo `add(path, tags)` with the same tags. */
  remove(path: string, tags: readonly string[]): void {
    // The note leaves every level any of its tags reached (several tags may
    // reach the same level: `a/b` and `a/c` both reach `a`).
    const reached = new Set<string>();
    for (const tag of tags) {
      const { spellings, keys } = levelsOf(tag);
      for (let j = 0; j < keys.length; j++) {
        const spelling = spellings[j]!;
        const key = keys[j]!;
        const n = this.nodes.get(key);
        if (n === undefined) continue;
        const c = (n.spellings.get(spelling) ?? 0) - 1;
        if (c > 0) n.spellings.set(spelling, c);
        else n.spellings.delete(spelling);
        reached.add(key);
      }
      const last = this.nodes.get(keys[keys.length - 1]!);
      if (last !== undefined) {
        last.direct.delete(path);
        last.sortedDirect = null;
      }
    }
    for (const key of reached) {
      const n = this.nodes.get(key)!;
      n.nested.delete(path);
      n.sortedNested = null;
      if (n.nested.size === 0) this.nodes.delete(key);
    }
  }

  /** Every tag path with its counts, sorted by key (lowercased tag). */
  list(): TagCount[] {
    const keys = [...this.nodes.keys()].sort();
    const out: TagCount[] = [];
    for (const key of keys) {
      const n = this.nodes.get(key)!;
      let best = '';
      let bestCount = -1;
      for (const [s, c] of n.spellings) {
        if (c > bestCount || (c === bestCount && s < best)) {
          best = s;
          bestCount = c;
        }
      }
      out.push({ tag: best, count: n.nested.size, direct: n.direct.size });
    }
    return out;
  }

  /** Paths of notes with the tag (and, when `nested`, any tag below it). */
  paths(tag: string, nested: boolean): ReadonlySet<string> | undefined {
    const n = this.nodes.get(tagKey(tag));
    if (n === undefined) return undefined;
    return nested ? n.nested : n.direct;
  }

  /** The same paths sorted in code-unit order; the array is shared: do not modify it. */
  sortedPaths(tag: string, nested: boolean): readonly string[] | undefined {
    const n = this.nodes.get(tagKey(tag));
    if (n === undefined) return undefined;
    if (nested) return (n.sortedNested ??= [...n.nested].sort());
    return (n.sortedDirect ??= [...n.direct].sort());
  }
}

/**
 * A TagIndex whose additions wait in a queue: adding a Home's 100k+ tag uses
 * costs a few hundred milliseconds, which would delay `ready`. The queue is
 * emptied by `flush` (the HomeIndex's deferred work, deferred-work.ts) and
 * before the tag list; a question about one tag adds only the notes it needs.
 */
export class DeferredTagIndex {
  private readonly index = new TagIndex();
  /** Notes whose tags are not in `index` yet, with those tags. */
  private readonly queued = new Map<string, readonly string[]>();

  /** Queue a note's tags (its previous ones removed first). */
  add(path: string, tags: readonly string[]): void {
    this.queued.set(path, tags);
  }

  /** Undo `add(path, tags)` with the same tags, whether or not they left the queue yet. */
  remove(path: string, tags: readonly string[]): void {
    if (!this.queued.delete(path)) this.index.remove(path, tags);
  }

  /** Notes with tags still queued. */
  get pending(): number {
    return this.queued.size;
  }

  /** Add queued notes' tags for up to `budgetMs` (default: all); true when none are left. */
  flush(budgetMs = Infinity): boolean {
    if (this.queued.size === 0) return true;
    const deadline = budgetMs === Infinity ? Infinity : performance.now() + budgetMs;
    let n = 0;
    for (const [path, tags] of this.queued) {
      this.queued.delete(path);
      this.index.add(path, tags);
      if ((++n & 255) === 0 && performance.now() > deadline) return false;
    }
    return true;
  }

  list(): TagCount[] {
    this.flush();
    return this.index.list();
  }

  paths(tag: string, nested: boolean): ReadonlySet<string> | undefined {
    this.flushFor(tagKey(tag));
    return this.index.paths(tag, nested);
  }

  sortedPaths(tag: string, nested: boolean): readonly string[] | undefined {
    this.flushFor(tagKey(tag));
    return this.index.sortedPaths(tag, nested);
  }

  /**
   * Add the queued notes whose tags reach `key` (the tag or one below it),
   * and only those: that tag's node is then what a whole flush makes it (its
   * notes, direct and nested, and its spellings' counts), and the others
   * stay queued. A note's tags are either queued or added, never both, so
   * the order they are added in does not matter.
   */
  private flushFor(key: string): void {
    if (this.queued.size === 0) return;
    for (const [path, tags] of this.queued) {
      if (!tags.some((t) => levelsOf(t).keys.includes(key))) continue;
      this.queued.delete(path);
      this.index.add(path, tags);
    }
  }
}
