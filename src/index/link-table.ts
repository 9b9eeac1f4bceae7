/**
 * A note's links as columns, the form the index keeps them in.
 *
 * Links are most of what an index holds: the 10k-note bench vault has
 * 550,000 of them, and as `Link` objects (ten fields each) they took 85 MB
 * of a 142 MB heap and most of the garbage collector's marking work. Here a
 * link is five 32-bit integers (in a typed array, outside the JavaScript
 * heap), one target string (shared between notes: see detach.ts) and, only
 * for the few links that have any, three more string slots (heading, block
 * id, alias) whose place the link's first integer gives. `at(i)` builds the
 * `Link` when a caller wants the record.
 *
 * Why it matters beyond memory: every young-generation collection costs
 * time in proportion to the old heap's size (about 3.5 ms per GB here), and
 * those pauses are what a read request's p99 is made of on a large Home.
 */
import type { Link } from '../markdown/facts.js';

const NUMS = 5;
const EXTRAS = 3;
/** Flags, in the low bits of a link's first integer; above them, its extras slot + 1 (0: none). */
const MARKDOWN = 1;
const EMBED = 2;
const SLOT_SHIFT = 2;

/** Collects the integers of many link tables into one array (see `LinkTable.toColumns`). */
export class NumsSink {
  private parts: Int32Array[] = [];
  private length = 0;

  /** Appends `nums`; returns its offset. */
  put(nums: Int32Array): number {
    const at = this.length;
    this.parts.push(nums);
    this.length += nums.length;
    return at;
  }

  /** Everything put since the last take, as one array. */
  take(): Int32Array {
    const out = new Int32Array(this.length);
    let at = 0;
    for (const p of this.parts) {
      out.set(p, at);
      at += p.length;
    }
    this.parts = [];
    this.length = 0;
    return out;
  }
}

/** Where a snapshot's link strings go as numbers (`toColumns`): targets, one a link; extras, three a slot. */
export interface StringSinks {
  targets: NumsSink;
  extras: NumsSink;
}

/** The arrays `StringSinks` made, for `fromColumns`. */
export interface StringColumns {
  targets: Int32Array;
  extras: Int32Array;
}

export class LinkTable {
  static readonly EMPTY = new LinkTable(new Int32Array(0), new Int32Array(0), 0, 0, null, 0, 0, []);

  /**
   * The arrays are the table's own (`of`), or the columns of a whole
   * snapshot or batch (`fromRow`), read from `first` and `extrasAt`: not views
   * made per table, which cost a warm start of the 10k bench vault 25k
   * typed arrays (`subarray`, ~1 µs each, and garbage-collector work).
   */
  private constructor(
    /** Per link: flags (MARKDOWN, EMBED) and extras slot, line, column, start, end; this table's first link's at `first * NUMS`. */
    private readonly nums: Int32Array,
    /** Per link: its target, a number into `strings`; this table's first link's at `first`. */
    private readonly targets: Int32Array,
    private readonly first: number,
    private readonly count: number,
    /** Per extras slot: heading, block id, alias, as numbers into `strings` (-1: none), `extrasLength` from `extrasAt`; null when no link has any. */
    private readonly extras: Int32Array | null,
    private readonly extrasAt: number,
    private readonly extrasLength: number,
    /**
     * The strings the numbers above name: the table's own (`of`), or shared
     * with every table of a snapshot or batch (`fromRow`), whose numbers
     * are then its columns, not copied into arrays of strings (on the 10k
     * bench vault those arrays were 13 MB of a warm start's heap).
     */
    private readonly strings: readonly string[],
  ) {}

  static of(links: readonly Link[]): LinkTable {
    if (links.length === 0) return LinkTable.EMPTY;
    const nums = new Int32Array(links.length * NUMS);
    const targets = new Int32Array(links.length);
    const strings: string[] = [];
    const extras: number[] = [];
    const ref = (s: string | null) => (s === null ? -1 : strings.push(s) - 1);
    for (let i = 0; i < links.length; i++) {
      const l = links[i]!;
      targets[i] = ref(l.target);
      const slot = hasExtras(l) ? extras.length / EXTRAS + 1 : 0;
      if (slot !== 0) extras.push(ref(l.heading), ref(l.blockId), ref(l.alias));
      putLinkNums(nums, i * NUMS, l, slot);
    }
    return new LinkTable(nums, targets, 0, links.length, extras.length > 0 ? Int32Array.from(extras) : null, 0, extras.length, strings);
  }

  /**
   * The columns encoding, for a batch of notes crossing threads and for a
   * snapshot: the links' integers go to `nums` (one typed array per batch or
   * snapshot, see scan-pool.ts and snapshot.ts), and their strings, as
   * numbers from `ref`, to `strings` (-1 for none): the targets' one a link,
   * the extras' three a slot. The row keeps `[offset in nums, count, null,
   * [extras offset, length] | null]`. Nothing is decoded number by number
   * on the other side: `fromColumns` takes a view of the integers.
   */
  toColumns(ref: (s: string | null) => number | null, nums: NumsSink, strings: StringSinks): unknown[] {
    const refs = new Int32Array(this.count);
    for (let i = 0; i < refs.length; i++) refs[i] = ref(this.target(i))!;
    strings.targets.put(refs);
    let extras: number[] | null = null;
    if (this.extras !== null) {
      const e = new Int32Array(this.extrasLength);
      for (let i = 0; i < e.length; i++) {
        const n = this.extras[this.extrasAt + i]!;
        e[i] = n === -1 ? -1 : ref(this.strings[n]!)!;
      }
      extras = [strings.extras.put(e), e.length];
    }
    return [nums.put(this.nums.subarray(this.first * NUMS, (this.first + this.count) * NUMS)), this.count, null, extras];
  }

  /**
   * The inverse of `toColumns` (`table`: the strings `ref` numbered;
   * `strings`: the arrays its sinks made); throws a TypeError on a
   * malformed one. The table keeps views of the arrays, and `table` itself.
   */
  static fromColumns(x: unknown, nums: Int32Array, table: readonly string[], strings: StringColumns): LinkTable {
    if (!Array.isArray(x) || x.length !== 4) throw new TypeError('link table: malformed columns');
    const [offset, count, targetRefs, extraRefs] = x as [unknown, unknown, unknown, unknown];
    if (typeof offset !== 'number' || !Number.isInteger(offset) || typeof count !== 'number' || targetRefs !== null) throw new TypeError('link table: malformed columns');
    if (extraRefs === null) return LinkTable.fromRow(offset, count, -1, 0, nums, table, strings);
    const [at, length] = Array.isArray(extraRefs) ? (extraRefs as unknown[]) : [];
    if (typeof at !== 'number' || typeof length !== 'number' || at < 0) throw new TypeError('link table: malformed columns');
    return LinkTable.fromRow(offset, count, at, length, nums, table, strings);
  }

  /**
   * `fromColumns` with its numbers given one by one, as a snapshot's row
   * holds them: the links' first integer in `nums` and their count, their
   * extras' start in `strings.extras` (-1: none) and length.
   */
  static fromRow(offset: number, count: number, extrasAt: number, extrasLength: number, nums: Int32Array, table: readonly string[], strings: StringColumns): LinkTable {
    if (count === 0) return LinkTable.EMPTY;
    if (!(count > 0) || offset < 0 || offset % NUMS !== 0 || offset + count * NUMS > nums.length) throw new TypeError('link table: malformed columns');
    const at = offset / NUMS;
    const targets = strings.targets;
    if (at + count > targets.length) throw new TypeError('link table: malformed columns');
    for (let i = at; i < at + count; i++) if (!(targets[i]! >= 0 && targets[i]! < table.length)) throw new TypeError('link table: malformed columns');
    let extras: Int32Array | null = null;
    if (extrasAt !== -1) {
      extras = strings.extras;
      if (extrasLength % EXTRAS !== 0 || !(extrasAt >= 0 && extrasAt + extrasLength <= extras.length)) throw new TypeError('link table: malformed columns');
      for (let i = extrasAt; i < extrasAt + extrasLength; i++) if (!(extras[i]! >= -1 && extras[i]! < table.length)) throw new TypeError('link table: malformed columns');
    }
    const slots = extras === null ? 0 : extrasLength / EXTRAS;
    for (let i = 0; i < count; i++) if (nums[offset + i * NUMS]! >>> SLOT_SHIFT > slots) throw new TypeError('link table: malformed columns');
    return new LinkTable(nums, targets, at, count, extras, extras === null ? 0 : extrasAt, extras === null ? 0 : extrasLength, table);
  }

  get length(): number {
    return this.count;
  }

  kind(i: number): 'wikilink' | 'markdown' {
    return this.nums[(this.first + i) * NUMS]! & MARKDOWN ? 'markdown' : 'wikilink';
  }

  embed(i: number): boolean {
    return (this.nums[(this.first + i) * NUMS]! & EMBED) !== 0;
  }

  target(i: number): string {
    return this.strings[this.targets[this.first + i]!]!;
  }

  /**
   * Whether some link's target is one `accepts` takes. The tables of a scan
   * batch or snapshot share their strings, so `seen` (one per question)
   * keeps, per strings array, each string's answer: `accepts` runs once per
   * distinct target, and the rest is integer reads. (Testing every string of
   * the shared arrays instead tests their tags and headings too: 230k strings
   * for 63k targets on the 10k bench vault, measured slower.)
   */
  someTarget(accepts: (target: string) => boolean, seen: Map<readonly string[], Int8Array>): boolean {
    const strings = this.strings;
    let marks = seen.get(strings);
    if (marks === undefined) seen.set(strings, (marks = new Int8Array(strings.length)));
    const targets = this.targets;
    for (let i = this.first, end = this.first + this.count; i < end; i++) {
      const n = targets[i]!;
      let m = marks[n]!;
      if (m === 0) marks[n] = m = accepts(strings[n]!) ? 1 : -1;
      if (m === 1) return true;
    }
    return false;
  }

  /** Extra `k` (0 heading, 1 block id, 2 alias) of link `i`. */
  private extra(i: number, k: number): string | null {
    const slot = this.nums[(this.first + i) * NUMS]! >>> SLOT_SHIFT;
    if (slot === 0) return null;
    const n = this.extras![this.extrasAt + (slot - 1) * EXTRAS + k]!;
    return n === -1 ? null : this.strings[n]!;
  }

  heading(i: number): string | null {
    return this.extra(i, 0);
  }

  blockId(i: number): string | null {
    return this.extra(i, 1);
  }

  alias(i: number): string | null {
    return this.extra(i, 2);
  }

  line(i: number): number {
    return this.nums[(this.first + i) * NUMS + 1]!;
  }

  column(i: number): number {
    return this.nums[(this.first + i) * NUMS + 2]!;
  }

  /** The link as a record, fields in `Link`'s order. */
  at(i: number): Link {
    const o = (this.first + i) * NUMS;
    return {
      kind: this.kind(i),
      embed: this.embed(i),
      target: this.target(i),
      heading: this.heading(i),
      blockId: this.blockId(i),
      alias: this.alias(i),
      line: this.nums[o + 1]!,
      column: this.nums[o + 2]!,
      start: this.nums[o + 3]!,
      end: this.nums[o + 4]!,
    };
  }

  /**
   * `at(i)` with the path it resolves to. Not `{ ...at(i), resolved }`: a
   * spread copy that gains a property costs the old generation memory on
   * every call (docs/architecture.md, "What a request must not leave in the old generation"); a literal that gains one does not.
   */
  resolvedAt(i: number, resolved: string | null): Link & { resolved: string | null } {
    const link = this.at(i) as Link & { resolved: string | null };
    link.resolved = resolved;
    return link;
  }

  toArray(): Link[] {
    const out = new Array<Link>(this.length);
    for (let i = 0; i < out.length; i++) out[i] = this.at(i);
    return out;
  }

  /** Serialised, the table is the list of links it stands for. */
  toJSON(): Link[] {
    return this.toArray();
  }
}

/**
 * Many notes' links written straight into one batch's columns: what
 * `LinkTable.of(links).toColumns(ref, …)` writes, without a table and its
 * typed arrays per note in between (a scan thread writes 550,000 links per
 * 10k notes: src/vault/scan-wire.ts). `write` each note's links, then
 * `take` the batch's arrays, which `fromColumns` reads the rows from.
 */
export class LinkColumnsWriter {
  private nums: Int32Array = new Int32Array(1 << 14);
  private numsN = 0;
  /** Per link, its target's number: the link at nums offset `o` has its target at `o / NUMS`. */
  private targets: Int32Array = new Int32Array(1 << 12);
  private extras: Int32Array = new Int32Array(1 << 10);
  private extrasN = 0;

  /** Writes `links` (their strings numbered by `ref`); returns their row, as `toColumns` does. */
  write(links: readonly Link[], ref: (s: string) => number): unknown[] {
    const count = links.length;
    const at = this.numsN;
    if (at + count * NUMS > this.nums.length) {
      this.nums = grown(this.nums, at + count * NUMS);
      this.targets = grown(this.targets, (at + count * NUMS) / NUMS);
    }
    const nums = this.nums;
    const targets = this.targets;
    const extrasAt = this.extrasN;
    let slots = 0;
    for (let i = 0; i < count; i++) {
      const l = links[i]!;
      const o = at + i * NUMS;
      targets[o / NUMS] = ref(l.target);
      const slot = hasExtras(l) ? ++slots : 0;
      if (slot !== 0) {
        if (this.extrasN + EXTRAS > this.extras.length) this.extras = grown(this.extras, this.extrasN + EXTRAS);
        const e = this.extras;
        e[this.extrasN] = l.heading === null ? -1 : ref(l.heading);
        e[this.extrasN + 1] = l.blockId === null ? -1 : ref(l.blockId);
        e[this.extrasN + 2] = l.alias === null ? -1 : ref(l.alias);
        this.extrasN += EXTRAS;
      }
      putLinkNums(nums, o, l, slot);
    }
    this.numsN = at + count * NUMS;
    return [at, count, null, slots === 0 ? null : [extrasAt, slots * EXTRAS]];
  }

  /** The integers and string numbers written since the last take. */
  take(): { nums: Int32Array; strings: StringColumns } {
    const out = {
      nums: this.nums.slice(0, this.numsN),
      strings: { targets: this.targets.slice(0, this.numsN / NUMS), extras: this.extras.slice(0, this.extrasN) },
    };
    this.numsN = 0;
    this.extrasN = 0;
    return out;
  }
}

function hasExtras(l: Link): boolean {
  return l.heading !== null || l.blockId !== null || l.alias !== null;
}

/** Link `l`'s NUMS integers at `nums[o]`: flags and extras slot (1-based; 0: none), line, column, start, end. */
function putLinkNums(nums: Int32Array, o: number, l: Link, slot: number): void {
  nums[o] = (l.kind === 'markdown' ? MARKDOWN : 0) | (l.embed ? EMBED : 0) | (slot << SLOT_SHIFT);
  nums[o + 1] = l.line;
  nums[o + 2] = l.column;
  nums[o + 3] = l.start;
  nums[o + 4] = l.end;
}

function grown(a: Int32Array, atLeast: number): Int32Array {
  const b = new Int32Array(Math.max(a.length * 2, atLeast));
  b.set(a);
  return b;
}
