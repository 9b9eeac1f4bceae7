/**
 * The snapshot format: everything needed to rebuild a HomeIndex without
 * re-reading files (the full-text index persists itself: fulltext/persist.ts).
 *
 * A text part, written a line at a time from the live index so that saving
 * never stalls the event loop, then columns that a warm start takes as
 * typed-array views, parsing nothing but one JSON array of strings:
 *
 *   {"format":"quire-home-index","version":7,"byteOrder":"LE"}
 *   rest                     one line per note: the JSON array of its facts other than the head's (`restText`)
 *   ["string", ...]          every string the columns name, by number (paths, etags, ids, tags, link targets…)
 *   "\n" × 0–7               so the numbers below start at a multiple of 8
 *   float64 × 5 a row        size, mtimeMs, ctimeMs, birthtimeMs, claimedAt (NaN: none)
 *   int32 × S                the strings' UTF-16 lengths summed (a check of the array)
 *   int32 × ROW a row        see ROW below: strings and ranges of a row's head
 *   int32 × A                string numbers that rows name by range (aliases, tags, block ids)
 *   int32 × L                the links' integers (5 a link: LinkTable's columns)
 *   int32 × L / 5            each link's target, a string number
 *   int32 × E                the links' headings, block ids and aliases, as string numbers (-1: none)
 *   int32 × R                where each link resolves (R = L / 5), or none (R = 0)
 *   int32 × 9                the counts: text bytes, strings bytes, S, files, notes, A, L, E, R
 *
 * A row is a file (the first `files` rows) or a note, in the order the
 * index holds them. A note's head (path, stat, ids, aliases, tags, block
 * ids, links: what the id, alias, tag, anchor and link maps need at once)
 * is in its row; its rest (frontmatter, title, headings, blocks, tasks,
 * word count) is kept as bytes and parsed the first time something reads
 * it (`decodeRest`, docs/performance.md, "Warm opening"). The rest holds no
 * string number, so that a note never read can be written to the next
 * snapshot as the very text it was read from. Format 6 had a JSON head per
 * note line: parsing 10k of them, and the garbage, was most of decoding a
 * snapshot.
 *
 * A link's resolution is the number of the path it resolves to (files, then
 * notes, in row order) or -1 (unresolved); a same-note link
 * (`[[#Heading]]`) has its note's. They are written only when they are the
 * index's settled state for every note written: no link was waiting to be
 * resolved when the writing began and the index took no write while it went
 * on (it is written in slices); otherwise R is 0 and the next start resolves
 * every link again, as it would without them.
 */
import { AppError } from '../core/errors.js';
import type { BlockAnchor, Heading, NoteFacts, Task } from '../markdown/facts.js';
import { LinkTable, NumsSink, type StringColumns } from './link-table.js';
import type { AnyFacts, FileStat, IndexedFacts } from './types.js';

/** Bump whenever the meaning of a snapshot changes: its shape or NoteFacts. */
export const INDEX_SNAPSHOT_VERSION = 7;
export const INDEX_SNAPSHOT_FORMAT = 'quire-home-index';

/** A snapshot this build cannot use; the caller should rebuild from the files. */
export class IndexSnapshotError extends AppError {
  constructor(reason: string, message: string) {
    super('internal', message, { details: { reason } });
    this.name = 'IndexSnapshotError';
  }
}

/** What a note line's head holds: what the index needs of a note at once. */
export interface NoteHead {
  /** The frontmatter id (NoteFacts.id). */
  id: string | null;
  aliases: string[];
  tags: string[];
  /** The ids of the note's block anchors, and of its tasks that carry one, in document order. */
  blockIds: readonly string[];
  taskBlockIds: readonly string[];
  links: LinkTable;
}

/**
 * A note as read from a snapshot (or sent by a scan thread, whose rests are
 * a snapshot's: vault/scan-wire.ts): its head, and where the rest of its
 * facts is, as UTF-8 JSON in the snapshot's text bytes (or the thread's
 * batch's: `restOf`, `decodeRest`).
 * Bytes, not a string: decoding the whole text to one string cost 20-40 ms
 * of a warm start on the 10k bench vault, and a text with any non-Latin-1
 * character is held by V8 at two bytes a character, in its heap.
 */
export interface SnapshotNote extends NoteHead {
  bytes: Buffer;
  start: number;
  end: number;
}

/** The JSON text of a snapshot note's rest. */
export function restOf(note: SnapshotNote): string {
  return note.bytes.toString('utf8', note.start, note.end);
}

export type SnapshotRecord =
  | { kind: 'file'; path: string; stat: FileStat }
  | { kind: 'note'; path: string; stat: FileStat; note: SnapshotNote; claimedAt?: number; linkAt: number; derived: string };

export function headerLine(): string {
  return JSON.stringify({ format: INDEX_SNAPSHOT_FORMAT, version: INDEX_SNAPSHOT_VERSION, byteOrder: BYTE_ORDER });
}

/** Strings already written to a snapshot, by number; new ones wait in `fresh` for their "s" line. */
export class StringTable {
  private readonly numbers = new Map<string, number>();
  private fresh: string[] = [];

  ref(s: string | null): number | null {
    if (s === null) return null;
    let n = this.numbers.get(s);
    if (n === undefined) {
      n = this.numbers.size;
      this.numbers.set(s, n);
      this.fresh.push(s);
    }
    return n;
  }

  /** The strings numbered since the last take, in number order. */
  takeStrings(): string[] {
    const fresh = this.fresh;
    this.fresh = [];
    return fresh;
  }
}

export function blockIdsOf(blocks: readonly BlockAnchor[]): readonly string[] {
  return blocks.length === 0 ? NONE : blocks.map((b) => b.id);
}

export function taskBlockIdsOf(tasks: readonly Task[]): readonly string[] {
  let out: string[] | null = null;
  for (const t of tasks) if (t.blockId !== null) (out ??= []).push(t.blockId);
  return out ?? NONE;
}

const NONE: readonly string[] = Object.freeze([]);

/** The part of a note line parsed only when first read: its facts other than the head's (`decodeRest` is the inverse). */
export function restText(f: AnyFacts): string {
  return JSON.stringify(restFields(f));
}

/** The facts a note line's head does not hold, as one array: the snapshot's rest, which is also what a scan thread sends of a note besides its head (vault/scan-wire.ts). */
function restFields(f: AnyFacts): unknown[] {
  const range = f.frontmatterRange === null ? null : [f.frontmatterRange.start, f.frontmatterRange.end];
  return [f.frontmatter, f.frontmatterError, range, f.title, f.titleSource, f.frontmatterTags, flatHeadings(f.headings), flatBlocks(f.blocks), flatTasks(f.tasks), f.wordCount];
}

/** The inverse of `restFields`, with the head's facts (a note line's head, or a scan thread's): the whole facts, in NoteFacts' key order, without tag positions. Throws IndexSnapshotError when `x` is not a rest. */
function factsOf(path: string, x: unknown, head: Pick<NoteHead, 'id' | 'aliases' | 'tags' | 'links'>): IndexedFacts {
  if (!Array.isArray(x) || x.length !== 10) throw malformed();
  const [frontmatter, frontmatterError, range, title, titleSource, frontmatterTags, hs, bs, ts, wordCount] = x as [
    NoteFacts['frontmatter'],
    string | null,
    [number, number] | null,
    string,
    NoteFacts['titleSource'],
    string[],
    unknown[],
    unknown[],
    unknown[],
    number,
  ];
  if (!Array.isArray(frontmatterTags) || !Array.isArray(hs) || !Array.isArray(bs) || !Array.isArray(ts)) throw malformed();
  return {
    path,
    frontmatter,
    frontmatterError,
    frontmatterRange: range === null ? null : { start: range[0], end: range[1] },
    title,
    titleSource,
    id: head.id,
    aliases: head.aliases,
    frontmatterTags,
    tagOccurrences: [],
    tags: head.tags,
    headings: headingsOf(hs),
    blocks: blocksOf(bs),
    links: head.links,
    tasks: tasksOf(ts),
    wordCount,
  };
}

/**
 * A snapshot note's facts, whole: its rest parsed, with its head's. Equal,
 * key order included, to the facts it was written from. Throws
 * IndexSnapshotError on a malformed rest (the head was checked at start-up,
 * the rest only now).
 */
export function decodeRest(path: string, note: SnapshotNote): IndexedFacts {
  return factsOf(path, parseLine(restOf(note)), note);
}

/** The columns of a snapshot: everything but its text (the header and the notes' rests). */
export interface SnapshotColumns {
  strings: readonly string[];
  files: number;
  notes: number;
  /** STAT_WIDTH a row. */
  floats: Float64Array;
  /** ROW a row. */
  rows: Int32Array;
  /** String numbers that rows name by range. */
  refs: Int32Array;
  /** The links' integers (LinkTable columns). */
  nums: Int32Array;
  /** The links' strings as string numbers: targets (one a link) and extras (-1: none). */
  linkStrings: StringColumns;
  /** Per link (by its first integer's offset / 5): the number of the path it resolves to, or -1; null when not stored. */
  resolutions: Int32Array | null;
}

/** A snapshot split into its text and its columns (`splitSnapshot`). */
export interface SnapshotParts extends SnapshotColumns {
  /** The text's bytes (a view of the snapshot's: notes keep it until their facts are read). */
  bytes: Buffer;
}

/** Numbers per row in `floats`. */
const STAT_WIDTH = 5;
/**
 * Integers per row in `rows`: path, etag, derived id (-1 for a file),
 * frontmatter id (-1: none) as string numbers; aliases, tags, block ids
 * and task block ids as [start, count] ranges of `refs`; the links' first
 * integer and count, their extras' start (-1: none) and length; the rest's
 * byte range in the text. A file uses the first two.
 */
const ROW = 18;
const COUNTS = 9;

/**
 * Collects a snapshot's columns while its text is written (HomeIndex's
 * snapshot writer): files first, then notes, each as its line is produced,
 * so that a row and its rest are taken from the index at the same moment.
 */
export class SnapshotBuilder {
  private readonly table = new StringTable();
  private readonly floats: number[] = [];
  private readonly rows: number[] = [];
  private readonly refs: number[] = [];
  private readonly nums = new NumsSink();
  private readonly linkStrings = { targets: new NumsSink(), extras: new NumsSink() };
  private files = 0;
  private notes = 0;

  file(path: string, stat: FileStat): void {
    if (this.notes > 0) throw new Error('snapshot: a file after a note');
    this.files++;
    this.stat(stat, undefined);
    this.rows.push(this.ref(path), this.ref(stat.etag));
    for (let i = 2; i < ROW; i++) this.rows.push(0);
  }

  /** A note whose rest is at bytes [restStart, restEnd) of the text. */
  note(path: string, stat: FileStat, head: NoteHead, derived: string, claimedAt: number | undefined, restStart: number, restEnd: number): void {
    this.notes++;
    this.stat(stat, claimedAt);
    const links = head.links.toColumns((s) => this.table.ref(s), this.nums, this.linkStrings) as [number, number, null, [number, number] | null];
    this.rows.push(this.ref(path), this.ref(stat.etag), this.ref(derived), head.id === null ? -1 : this.ref(head.id));
    this.range(head.aliases);
    this.range(head.tags);
    this.range(head.blockIds);
    this.range(head.taskBlockIds);
    this.rows.push(links[0], links[1], links[3]?.[0] ?? -1, links[3]?.[1] ?? 0, restStart, restEnd);
  }

  /** The bytes that follow a text of `textBytes` bytes: the strings, the padding and the columns. */
  tail(textBytes: number, resolutions: Int32Array | null): Uint8Array {
    return snapshotTail(textBytes, {
      strings: this.table.takeStrings(),
      files: this.files,
      notes: this.notes,
      floats: Float64Array.from(this.floats),
      rows: Int32Array.from(this.rows),
      refs: Int32Array.from(this.refs),
      nums: this.nums.take(),
      linkStrings: { targets: this.linkStrings.targets.take(), extras: this.linkStrings.extras.take() },
      resolutions,
    });
  }

  private ref(s: string): number {
    return this.table.ref(s)!;
  }

  private stat(s: FileStat, claimedAt: number | undefined): void {
    this.floats.push(s.size, s.mtimeMs, s.ctimeMs ?? NaN, s.birthtimeMs ?? NaN, claimedAt ?? NaN);
  }

  private range(strings: readonly string[]): void {
    this.rows.push(this.refs.length, strings.length);
    for (const s of strings) this.refs.push(this.ref(s));
  }
}

/** The bytes that end a snapshot whose text is `textBytes` long (`splitSnapshot` is the inverse). */
export function snapshotTail(textBytes: number, c: SnapshotColumns): Uint8Array {
  const strings = Buffer.from(JSON.stringify(c.strings));
  const pad = (8 - ((textBytes + strings.length) % 8)) % 8;
  const lengths = new Int32Array(c.strings.length);
  let sum = 0;
  for (let i = 0; i < lengths.length; i++) lengths[i] = sum += c.strings[i]!.length;
  const res = c.resolutions ?? new Int32Array(0);
  const counts = Int32Array.of(textBytes, strings.length, c.strings.length, c.files, c.notes, c.refs.length, c.nums.length, c.linkStrings.extras.length, res.length);
  const parts = [lengths, c.rows, c.refs, c.nums, c.linkStrings.targets, c.linkStrings.extras, res, counts];
  const out = new Uint8Array(strings.length + pad + c.floats.byteLength + parts.reduce((n, p) => n + p.byteLength, 0));
  out.set(strings);
  out.fill(10, strings.length, strings.length + pad);
  let at = strings.length + pad;
  for (const p of [c.floats, ...parts]) {
    out.set(new Uint8Array(p.buffer, p.byteOffset, p.byteLength), at);
    at += p.byteLength;
  }
  return out;
}

/** A snapshot's text and columns; throws IndexSnapshotError when it is not one this build wrote. */
export function splitSnapshot(data: Uint8Array): SnapshotParts {
  const nl = data.indexOf(10);
  const header = parseLine(Buffer.from(data.buffer, data.byteOffset, nl < 0 ? data.length : nl).toString('utf8')) as Record<string, unknown> | null;
  if (typeof header !== 'object' || header === null || header['format'] !== INDEX_SNAPSHOT_FORMAT) {
    throw new IndexSnapshotError('index_snapshot_invalid', 'Not a Quire index snapshot');
  }
  if (header['version'] !== INDEX_SNAPSHOT_VERSION) {
    throw new IndexSnapshotError(
      'index_snapshot_version',
      `Index snapshot version ${String(header['version'])} is not ${INDEX_SNAPSHOT_VERSION}; rebuild the index`,
    );
  }
  // A data folder copied to a machine of the other byte order: its numbers would read as other numbers.
  if (header['byteOrder'] !== BYTE_ORDER) {
    throw new IndexSnapshotError('index_snapshot_byte_order', `Index snapshot byte order ${String(header['byteOrder'])} is not this machine's (${BYTE_ORDER}); rebuild the index`);
  }
  if (data.length < nl + 1 + COUNTS * 4 || data.length % 4 !== 0) throw malformed('its length');
  // Aligned for the typed arrays below: a file read whole is (its own buffer), anything else is copied once.
  const whole = data.byteOffset % 8 === 0 ? data : new Uint8Array(data);
  const counts = new Int32Array(whole.buffer, whole.byteOffset + whole.length - COUNTS * 4, COUNTS);
  const [textBytes, stringBytes, stringCount, files, notes, refCount, numCount, extraCount, resCount] = counts as unknown as number[];
  if (counts.some((n) => n < 0) || numCount! % LINK_INTS !== 0 || (resCount !== 0 && resCount! * LINK_INTS !== numCount)) throw malformed('its counts');
  const rowCount = files! + notes!;
  const linkCount = numCount! / LINK_INTS;
  const floatsAt = textBytes! + stringBytes!;
  const floatsAt8 = floatsAt + ((8 - (floatsAt % 8)) % 8);
  const intsAt = floatsAt8 + rowCount * STAT_WIDTH * 8;
  const intCount = stringCount! + rowCount * ROW + refCount! + numCount! + linkCount + extraCount! + resCount! + COUNTS;
  if (textBytes! <= nl || intsAt + intCount * 4 !== whole.length) throw malformed('its counts');
  const ints = new Int32Array(whole.buffer, whole.byteOffset + intsAt, intCount);
  let at = 0;
  const take = (n: number) => ints.subarray(at, (at += n));
  const lengths = take(stringCount!);
  const strings = parseLine(Buffer.from(whole.buffer, whole.byteOffset + textBytes!, stringBytes!).toString('utf8'));
  if (!Array.isArray(strings) || strings.length !== stringCount) throw malformed('its strings');
  for (let i = 0, sum = 0; i < strings.length; i++) {
    const s: unknown = strings[i];
    if (typeof s !== 'string' || lengths[i] !== (sum += s.length)) throw malformed('its strings');
  }
  // Views, not copies: the notes' rests and link tables keep them, so the file's bytes stay (30 MB on the 10k bench
  // vault, 6 MB more than copies of those parts would keep), where copying them cost 10-15 ms of every warm start.
  return {
    bytes: Buffer.from(whole.buffer, whole.byteOffset, textBytes!),
    strings: strings as string[],
    files: files!,
    notes: notes!,
    floats: new Float64Array(whole.buffer, whole.byteOffset + floatsAt8, rowCount * STAT_WIDTH),
    rows: take(rowCount * ROW),
    refs: take(refCount!),
    nums: take(numCount!),
    linkStrings: { targets: take(linkCount), extras: take(extraCount!) },
    resolutions: resCount === 0 ? null : take(resCount!),
  };
}

/** The records of a snapshot (`splitSnapshot`), checked; throws IndexSnapshotError on a malformed one. */
export function* readSnapshot(parts: SnapshotParts): Generator<SnapshotRecord> {
  const { bytes, strings, floats, rows, refs, nums, linkStrings } = parts;
  const str = (n: number, what: string): string => {
    const s = strings[n];
    if (s === undefined) throw malformed(what);
    return s;
  };
  const list = (start: number, count: number, what: string): string[] => {
    if (!(start >= 0 && count >= 0 && start + count <= refs.length)) throw malformed(what);
    if (count === 0) return NONE as string[];
    const out = new Array<string>(count);
    for (let i = 0; i < count; i++) out[i] = str(refs[start + i]!, what);
    return out;
  };
  const textStart = bytes.indexOf(10) + 1;
  for (let row = 0; row < parts.files + parts.notes; row++) {
    const o = row * ROW;
    const f = row * STAT_WIDTH;
    const stat: FileStat = { size: floats[f]!, mtimeMs: floats[f + 1]!, etag: str(rows[o + 1]!, 'an etag') };
    const ctime = floats[f + 2]!;
    const birth = floats[f + 3]!;
    if (ctime === ctime) stat.ctimeMs = ctime;
    if (birth === birth) stat.birthtimeMs = birth;
    const path = str(rows[o]!, 'a path');
    if (row < parts.files) {
      yield { kind: 'file', path, stat };
      continue;
    }
    const derived = str(rows[o + 2]!, 'a derived id');
    if (!DERIVED_ID.test(derived)) throw malformed('a derived id');
    const id = rows[o + 3] === -1 ? null : str(rows[o + 3]!, 'an id');
    const start = rows[o + 16]!;
    const end = rows[o + 17]!;
    // Only the rest's brackets are checked now; its JSON is parsed when the note's facts are first read.
    if (!(start >= textStart && end - start >= 2 && end <= bytes.length && bytes[start] === 91 && bytes[end - 1] === 93)) throw malformed('a note\'s rest');
    let links: LinkTable;
    try {
      links = LinkTable.fromRow(rows[o + 12]!, rows[o + 13]!, rows[o + 14]!, rows[o + 15]!, nums, strings, linkStrings);
    } catch (e) {
      if (e instanceof TypeError) throw malformed('a link');
      throw e;
    }
    const blockIds = list(rows[o + 8]!, rows[o + 9]!, 'a block id');
    const taskBlockIds = list(rows[o + 10]!, rows[o + 11]!, 'a block id');
    const note: SnapshotNote = {
      id,
      aliases: list(rows[o + 4]!, rows[o + 5]!, 'an alias'),
      tags: list(rows[o + 6]!, rows[o + 7]!, 'a tag'),
      blockIds,
      taskBlockIds,
      links,
      bytes,
      start,
      end,
    };
    const claimedAt = floats[f + 4]!;
    // Where this note's links start among all links (their resolutions are in that order).
    const linkAt = rows[o + 12]! / LINK_INTS;
    if (claimedAt === claimedAt) yield { kind: 'note', path, stat, note, claimedAt, linkAt, derived };
    else yield { kind: 'note', path, stat, note, linkAt, derived };
  }
}

function parseLine(line: string): unknown {
  try {
    return JSON.parse(line);
  } catch {
    throw malformed();
  }
}

function malformed(what?: string): IndexSnapshotError {
  return new IndexSnapshotError('index_snapshot_invalid', what === undefined ? 'Index snapshot has a malformed record' : `Index snapshot has a malformed record: ${what}`);
}

const TASK_WIDTH = 7;
/** The integers at the end are in the machine's byte order (typed arrays'); the header names it, and a snapshot of the other order is rebuilt. */
const NATIVE_LE = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;
const BYTE_ORDER = NATIVE_LE ? 'LE' : 'BE';
/** The shape of `derivedId` (ids.ts). */
const DERIVED_ID = /^p[0-9a-f]{16}$/;
/** Integers per link in LinkTable's columns. */
const LINK_INTS = 5;

function flatHeadings(hs: readonly Heading[]): unknown[] {
  const out: unknown[] = [];
  for (const h of hs) out.push(h.level, h.text, h.line);
  return out;
}

function flatBlocks(bs: readonly BlockAnchor[]): unknown[] {
  const out: unknown[] = [];
  for (const b of bs) out.push(b.id, b.line, b.column);
  return out;
}

function flatTasks(ts: readonly Task[]): unknown[] {
  const out: unknown[] = [];
  for (const t of ts) out.push(t.line, t.status, t.text, t.blockId, t.due, t.depth, t.parentTaskLine);
  return out;
}

function headingsOf(hs: unknown[]): Heading[] {
  const out: Heading[] = [];
  for (let i = 0; i < hs.length; i += 3) out.push({ level: hs[i] as number, text: hs[i + 1] as string, line: hs[i + 2] as number });
  return out;
}

function blocksOf(bs: unknown[]): BlockAnchor[] {
  const out: BlockAnchor[] = [];
  for (let i = 0; i < bs.length; i += 3) out.push({ id: bs[i] as string, line: bs[i + 1] as number, column: bs[i + 2] as number });
  return out;
}

function tasksOf(ts: unknown[]): Task[] {
  const out: Task[] = [];
  for (let i = 0; i < ts.length; i += TASK_WIDTH) {
    const status = ts[i + 1] as string;
    out.push({
      line: ts[i] as number,
      status,
      checked: status === 'x' || status === 'X',
      cancelled: status === '-',
      text: ts[i + 2] as string,
      blockId: ts[i + 3] as string | null,
      due: ts[i + 4] as string | null,
      depth: ts[i + 5] as number,
      parentTaskLine: ts[i + 6] as number | null,
    });
  }
  return out;
}
