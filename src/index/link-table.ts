/**
 * A note's links as columns, the form the index keeps them in.
 *
 * Links are most of what an index holds: the 10k-note bench vault has
 * 550,000 of them, and as `Link` objects (ten fields each) they took 85 MB
 * of a 142 MB heap and most of the garbage collector's marking work. Here a
 * link is five 32-bit integers, one target string (shared between notes:
 * see detach.ts) and, only for notes where some link has one, three more
 * string slots (heading, block id, alias). `at(i)` builds the `Link` when a
 * caller wants the record.
 */
import type { Link } from '../markdown/facts.js';

const NUMS = 5;
const EXTRAS = 3;
const MARKDOWN = 1;
const EMBED = 2;
const HAS_HEADING = 4;
const HAS_BLOCK = 8;
const HAS_ALIAS = 16;

export class LinkTable {
  static readonly EMPTY = new LinkTable(new Int32Array(0), [], null);

  private constructor(
    /** Per link: flags (MARKDOWN, EMBED), line, column, start, end. */
    private readonly nums: Int32Array,
    private readonly targets: readonly string[],
    /** Per link: heading, block id, alias; null when no link has any. */
    private readonly extras: ReadonlyArray<string | null> | null,
  ) {}

  static of(links: readonly Link[]): LinkTable {
    if (links.length === 0) return LinkTable.EMPTY;
    const nums = new Int32Array(links.length * NUMS);
    const targets = new Array<string>(links.length);
    let extras: Array<string | null> | null = null;
    for (let i = 0; i < links.length; i++) {
      const l = links[i]!;
      const o = i * NUMS;
      nums[o] = (l.kind === 'markdown' ? MARKDOWN : 0) | (l.embed ? EMBED : 0);
      nums[o + 1] = l.line;
      nums[o + 2] = l.column;
      nums[o + 3] = l.start;
      nums[o + 4] = l.end;
      targets[i] = l.target;
      if (l.heading !== null || l.blockId !== null || l.alias !== null) {
        extras ??= new Array<string | null>(links.length * EXTRAS).fill(null);
        extras[i * EXTRAS] = l.heading;
        extras[i * EXTRAS + 1] = l.blockId;
        extras[i * EXTRAS + 2] = l.alias;
      }
    }
    return new LinkTable(nums, targets, extras);
  }

  /**
   * From the snapshot's encoding (see `toFlat`), strings as numbers that
   * `str` turns back into strings. Throws a TypeError on a malformed one.
   */
  static fromFlat(flat: readonly unknown[], str: (n: unknown) => string | null): LinkTable {
    if (flat.length === 0) return LinkTable.EMPTY;
    const nums: number[] = [];
    const targets: string[] = [];
    let extras: Array<string | null> | null = null;
    let line = 0;
    let end = 0;
    let f = 0;
    const num = (): number => {
      const v = flat[f++];
      if (typeof v !== 'number') throw new TypeError('link table: malformed encoding');
      return v;
    };
    const string = (): string => {
      const v = str(num());
      if (v === null) throw new TypeError('link table: malformed encoding');
      return v;
    };
    while (f < flat.length) {
      const i = targets.length;
      const flags = num();
      targets.push(string());
      if (flags & (HAS_HEADING | HAS_BLOCK | HAS_ALIAS)) {
        extras ??= new Array<string | null>(i * EXTRAS).fill(null);
        extras.push(flags & HAS_HEADING ? string() : null, flags & HAS_BLOCK ? string() : null, flags & HAS_ALIAS ? string() : null);
      } else extras?.push(null, null, null);
      line += num();
      const column = num();
      const start = end + num();
      end = start + num();
      nums.push(flags & (MARKDOWN | EMBED), line, column, start, end);
    }
    // Copies sized exactly: arrays grown by push keep up to half again as many slots.
    return new LinkTable(Int32Array.from(nums), targets.slice(), extras?.slice() ?? null);
  }

  /**
   * The snapshot's encoding: per link `flags, target, [heading], [block id],
   * [alias], line - previous line, column, start - previous end, end -
   * start`, strings as numbers from `ref`, a string present only when its
   * flag says so. Deltas keep the numbers short: links are three quarters
   * of a snapshot.
   */
  toFlat(ref: (s: string) => number): number[] {
    const out: number[] = [];
    let line = 0;
    let end = 0;
    for (let i = 0; i < this.length; i++) {
      const o = i * NUMS;
      const heading = this.heading(i);
      const blockId = this.blockId(i);
      const alias = this.alias(i);
      const flags = this.nums[o]! | (heading !== null ? HAS_HEADING : 0) | (blockId !== null ? HAS_BLOCK : 0) | (alias !== null ? HAS_ALIAS : 0);
      out.push(flags, ref(this.targets[i]!));
      if (heading !== null) out.push(ref(heading));
      if (blockId !== null) out.push(ref(blockId));
      if (alias !== null) out.push(ref(alias));
      const start = this.nums[o + 3]!;
      out.push(this.nums[o + 1]! - line, this.nums[o + 2]!, start - end, this.nums[o + 4]! - start);
      line = this.nums[o + 1]!;
      end = this.nums[o + 4]!;
    }
    return out;
  }

  get length(): number {
    return this.targets.length;
  }

  kind(i: number): 'wikilink' | 'markdown' {
    return this.nums[i * NUMS]! & MARKDOWN ? 'markdown' : 'wikilink';
  }

  embed(i: number): boolean {
    return (this.nums[i * NUMS]! & EMBED) !== 0;
  }

  target(i: number): string {
    return this.targets[i]!;
  }

  heading(i: number): string | null {
    return this.extras === null ? null : this.extras[i * EXTRAS]!;
  }

  blockId(i: number): string | null {
    return this.extras === null ? null : this.extras[i * EXTRAS + 1]!;
  }

  alias(i: number): string | null {
    return this.extras === null ? null : this.extras[i * EXTRAS + 2]!;
  }

  line(i: number): number {
    return this.nums[i * NUMS + 1]!;
  }

  column(i: number): number {
    return this.nums[i * NUMS + 2]!;
  }

  /** The link as a record, fields in `Link`'s order. */
  at(i: number): Link {
    const o = i * NUMS;
    return {
      kind: this.kind(i),
      embed: this.embed(i),
      target: this.targets[i]!,
      heading: this.heading(i),
      blockId: this.blockId(i),
      alias: this.alias(i),
      line: this.nums[o + 1]!,
      column: this.nums[o + 2]!,
      start: this.nums[o + 3]!,
      end: this.nums[o + 4]!,
    };
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
