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
   * From the snapshot's flat encoding: per link `flags, target, heading,
   * blockId, alias, line, column, start, end`, strings as numbers that
   * `str` turns back into strings (see snapshot.ts).
   */
  static fromFlat(flat: readonly unknown[], str: (n: unknown) => string | null): LinkTable {
    const n = flat.length / FLAT_WIDTH;
    if (!Number.isInteger(n)) throw new TypeError('link table: ragged encoding');
    if (n === 0) return LinkTable.EMPTY;
    const nums = new Int32Array(n * NUMS);
    const targets = new Array<string>(n);
    let extras: Array<string | null> | null = null;
    for (let i = 0; i < n; i++) {
      const f = i * FLAT_WIDTH;
      const o = i * NUMS;
      const target = str(flat[f + 1]);
      if (target === null) throw new TypeError('link table: link without a target');
      nums[o] = flat[f] as number;
      targets[i] = target;
      nums[o + 1] = flat[f + 5] as number;
      nums[o + 2] = flat[f + 6] as number;
      nums[o + 3] = flat[f + 7] as number;
      nums[o + 4] = flat[f + 8] as number;
      if (flat[f + 2] !== null || flat[f + 3] !== null || flat[f + 4] !== null) {
        extras ??= new Array<string | null>(n * EXTRAS).fill(null);
        extras[i * EXTRAS] = str(flat[f + 2]);
        extras[i * EXTRAS + 1] = str(flat[f + 3]);
        extras[i * EXTRAS + 2] = str(flat[f + 4]);
      }
    }
    return new LinkTable(nums, targets, extras);
  }

  /** The inverse of `fromFlat`, with `ref` numbering strings. */
  toFlat(ref: (s: string | null) => number | null): unknown[] {
    const out: unknown[] = [];
    for (let i = 0; i < this.length; i++) {
      const o = i * NUMS;
      out.push(this.nums[o], ref(this.targets[i]!), ref(this.heading(i)), ref(this.blockId(i)), ref(this.alias(i)));
      out.push(this.nums[o + 1], this.nums[o + 2], this.nums[o + 3], this.nums[o + 4]);
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

/** Values per link in the snapshot's flat encoding. */
export const FLAT_WIDTH = 9;
