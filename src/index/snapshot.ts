/**
 * The snapshot format: everything needed to rebuild a HomeIndex without
 * re-reading files (the full-text index persists itself: fulltext/persist.ts).
 *
 * A snapshot is text, one JSON value per line, so that a live index can be
 * written out a few lines at a time without stalling the event loop, and
 * read back line by line; then the links' integers as raw bytes:
 *
 *   {"format":"quire-home-index","version":6,"byteOrder":"LE"}
 *   ["f", path, stat]            one per non-note file
 *   ["s", string, ...]           strings the next lines refer to by number
 *   ["n", path, stat, claimedAt | null, derivedId, id, aliases, tags, blockIds, taskBlockIds, links] TAB rest
 *                                one per note; claimedAt when its claim on its id is older than its file
 *   "\n" × 0–3                  so the bytes below start at a multiple of 4
 *   int32 × L                    the links' integers (5 a link: LinkTable's columns)
 *   int32 × L / 5                each link's target, a number into the string table
 *   int32 × E                    the links' headings, block ids and aliases, as numbers (-1: none)
 *   int32 × R                    where each link resolves (R = L / 5), or none (R = 0)
 *   int32 L, E, R                the last 12 bytes
 *
 * `stat` is `[size, mtimeMs, etag, ctimeMs|null, birthtimeMs|null]`. A
 * note line is in two parts, split by its one raw tab (JSON text never has
 * one): its head, read at start-up, holds what the index needs at once (the
 * frontmatter id, aliases, tags and block ids, for the id, alias, tag and
 * anchor maps, and the links); its rest (`restText`: frontmatter, title,
 * headings, blocks, tasks, word count) is kept as bytes and parsed the first
 * time something reads it (`decodeRest`, docs/performance.md, "Warm
 * opening"). Tags are numbers into the string table that "s" lines build up
 * as they first appear; decoding shares each such string, which also keeps
 * a warm-started index small. The rest holds no such number, so that a
 * note never read can be written to the next snapshot as the very text it
 * was read from. A note's links are `[offset, count, null, [extras offset,
 * length] | null]` (`LinkTable.toColumns`): their integers are a view of
 * the bytes at the end, and their strings' numbers are read from there
 * too, not parsed number by number.
 *
 * A link's resolution is the number of the path it resolves to (files, then
 * notes, in the order of their lines) or -1 (unresolved); a same-note link
 * (`[[#Heading]]`) has its note's. They are written only when they are the
 * index's settled state for every note written: no link was waiting to be
 * resolved when the writing began and the index took no write while it went
 * on (it is written in slices); otherwise R is 0 and the next start resolves
 * every link again, as it would without them.
 */
import { AppError } from '../core/errors.js';
import type { BlockAnchor, Heading, NoteFacts, TagOccurrence, Task } from '../markdown/facts.js';
import { LinkTable, type NumsSink, type StringColumns, type StringSinks } from './link-table.js';
import type { AnyFacts, FileStat, IndexedFacts } from './types.js';

/** Bump whenever the meaning of a snapshot changes: its shape or NoteFacts. */
export const INDEX_SNAPSHOT_VERSION = 6;
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
 * A note as read from a snapshot: its head, and where the rest of its facts
 * is, as UTF-8 JSON in the snapshot's text bytes (`restOf`, `decodeRest`).
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

export function fileLine(path: string, stat: FileStat): string {
  return JSON.stringify(['f', path, encodeStat(stat)]);
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

  /** The "s" line for strings numbered since the last take, or null. */
  takeLine(): string | null {
    return this.fresh.length === 0 ? null : JSON.stringify(['s', ...this.takeStrings()]);
  }
}

/**
 * The lines for one note: its "s" line first when it brought new strings.
 * `rest`: `restText` of its facts, or the text a snapshot held (never
 * decoded since). Its links' integers go to `nums`, their strings' numbers
 * to `linkStrings`.
 */
export function noteLines(path: string, stat: FileStat, head: NoteHead, rest: string, table: StringTable, nums: NumsSink, linkStrings: StringSinks, derived: string, claimedAt?: number): string[] {
  // The derived id (a SHA-256 of the path) is stored: hashing 10k paths again took 30-80 ms of a warm start.
  const record: unknown[] = [
    'n',
    path,
    encodeStat(stat),
    claimedAt ?? null,
    derived,
    head.id,
    head.aliases,
    head.tags.map((t) => table.ref(t)),
    head.blockIds,
    head.taskBlockIds,
    head.links.toColumns((s) => table.ref(s), nums, linkStrings),
  ];
  const line = JSON.stringify(record) + '\t' + rest;
  const strings = table.takeLine();
  return strings === null ? [line] : [strings, line];
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

/** The facts a note line's head does not hold, as one array: the snapshot's rest, and part of what a scan thread sends (`encodeFacts`). */
function restFields(f: AnyFacts): unknown[] {
  const range = f.frontmatterRange === null ? null : [f.frontmatterRange.start, f.frontmatterRange.end];
  return [f.frontmatter, f.frontmatterError, range, f.title, f.titleSource, f.frontmatterTags, flatHeadings(f.headings), flatBlocks(f.blocks), flatTasks(f.tasks), f.wordCount];
}

/** The inverse of `restFields`, with the head's facts (a note line's head, or what a scan thread sends before its rest): the whole facts, in NoteFacts' key order. Throws IndexSnapshotError when `x` is not a rest. */
function factsOf(path: string, x: unknown, head: Pick<NoteHead, 'id' | 'aliases' | 'tags' | 'links'>, tagOccurrences: TagOccurrence[]): IndexedFacts {
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
    tagOccurrences,
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
  return factsOf(path, parseLine(restOf(note)), note, []);
}

/** The bytes that end a snapshot: padding, the links' integers, their strings' numbers, their resolutions and the three counts. */
export function snapshotTail(textBytes: number, nums: Int32Array, strings: StringColumns, resolutions: Int32Array | null): Uint8Array {
  const pad = (4 - (textBytes % 4)) % 4;
  const res = resolutions ?? new Int32Array(0);
  const ints = new Int32Array(nums.length + strings.targets.length + strings.extras.length + res.length + 3);
  let at = 0;
  for (const part of [nums, strings.targets, strings.extras, res]) {
    ints.set(part, at);
    at += part.length;
  }
  ints[at] = nums.length;
  ints[at + 1] = strings.extras.length;
  ints[at + 2] = res.length;
  const out = new Uint8Array(pad + ints.byteLength);
  out.fill(10, 0, pad);
  out.set(new Uint8Array(ints.buffer), pad);
  return out;
}

/** A snapshot split into its text and its integers; throws IndexSnapshotError when it is not one this build wrote. */
export interface SnapshotParts {
  /** The text's bytes (a copy: notes keep it until their facts are read, and a view would keep the whole file). */
  bytes: Buffer;
  /** The links' integers (LinkTable columns). */
  nums: Int32Array;
  /** The links' strings as numbers into the string table: targets (one a link) and extras (-1: none). */
  strings: StringColumns;
  /** Per link (by its first integer's offset / 5): the number of the path it resolves to, or -1; null when not stored. */
  resolutions: Int32Array | null;
}

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
  // A data folder copied to a machine of the other byte order: its integers would read as other numbers.
  if (header['byteOrder'] !== BYTE_ORDER) {
    throw new IndexSnapshotError('index_snapshot_byte_order', `Index snapshot byte order ${String(header['byteOrder'])} is not this machine's (${BYTE_ORDER}); rebuild the index`);
  }
  if (data.length < nl + 1 + 12) throw malformed();
  const view = new DataView(data.buffer, data.byteOffset, data.length);
  const numCount = view.getUint32(data.length - 12, NATIVE_LE);
  const extraCount = view.getUint32(data.length - 8, NATIVE_LE);
  const resCount = view.getUint32(data.length - 4, NATIVE_LE);
  if (numCount % LINK_INTS !== 0 || (resCount !== 0 && resCount * LINK_INTS !== numCount)) throw malformed();
  const linkCount = numCount / LINK_INTS;
  const intCount = numCount + linkCount + extraCount + resCount;
  const textBytes = data.length - 12 - intCount * 4;
  if (textBytes <= nl || textBytes % 4 !== 0) throw malformed();
  const at = data.byteOffset + textBytes;
  // A view when aligned (a file read whole is), a copy otherwise.
  const ints = at % 4 === 0 ? new Int32Array(data.buffer, at, intCount) : new Int32Array(data.slice(textBytes, textBytes + intCount * 4).buffer);
  const bytes = Buffer.from(data.subarray(0, textBytes));
  return {
    bytes,
    // A copy: the notes' link tables keep views of it for good, and a view would keep the whole file's bytes.
    nums: ints.slice(0, numCount),
    strings: { targets: ints.subarray(numCount, numCount + linkCount), extras: ints.subarray(numCount + linkCount, numCount + linkCount + extraCount) },
    resolutions: resCount === 0 ? null : ints.subarray(numCount + linkCount + extraCount),
  };
}

/** The records of a snapshot's text (`splitSnapshot`), checked; throws IndexSnapshotError on a malformed one. */
export function* readSnapshot(parts: SnapshotParts): Generator<SnapshotRecord> {
  const { bytes, nums, strings: linkStrings } = parts;
  let at = bytes.indexOf(10);
  const strings: string[] = [];
  let tab = bytes.indexOf(9);
  while (at >= 0 && at < bytes.length - 1) {
    const next = bytes.indexOf(10, at + 1);
    const end = next < 0 ? bytes.length : next;
    if (tab >= 0 && tab <= at) tab = bytes.indexOf(9, at + 1);
    const split = tab >= 0 && tab < end;
    const start = at + 1;
    at = next;
    if (start === end) continue;
    const line = bytes.toString('utf8', start, split ? tab : end);
    const r = parseLine(line);
    if (!Array.isArray(r) || typeof r[1] !== 'string' || (r[0] !== 'n') === split) throw malformed();
    if (r[0] === 's') {
      for (let i = 1; i < r.length; i++) strings.push(r[i] as string);
      continue;
    }
    const stat = decodeStat(r[2]);
    if (r[0] === 'f' && r.length === 3) {
      yield { kind: 'file', path: r[1], stat };
      continue;
    }
    if (r[0] !== 'n' || r.length !== 11) throw malformed();
    const [, path, , claimedAt, derived, id, aliases, tagRefs, blockIds, taskBlockIds, ls] = r as unknown[];
    if ((claimedAt !== null && typeof claimedAt !== 'number') || typeof derived !== 'string' || !DERIVED_ID.test(derived)) throw malformed();
    if ((id !== null && typeof id !== 'string') || !isStrings(aliases) || !Array.isArray(tagRefs) || !isStrings(blockIds) || !isStrings(taskBlockIds)) throw malformed();
    // Only the rest's brackets are checked now; its JSON is parsed when the note's facts are first read.
    if (end - tab < 3 || bytes[tab + 1] !== 91 || bytes[end - 1] !== 93) throw malformed();
    const tags = tagRefs.map((n) => {
      const s = strings[n as number];
      if (typeof n !== 'number' || s === undefined) throw malformed();
      return s;
    });
    let links: LinkTable;
    try {
      links = LinkTable.fromColumns(ls, nums, strings, linkStrings);
    } catch (e) {
      if (e instanceof TypeError) throw malformed();
      throw e;
    }
    const note: SnapshotNote = { id, aliases, tags, blockIds: blockIds.length === 0 ? NONE : blockIds, taskBlockIds: taskBlockIds.length === 0 ? NONE : taskBlockIds, links, bytes, start: tab + 1, end };
    // Where this note's links start among all links (their resolutions are in that order).
    const linkAt = ((ls as unknown[])[0] as number) / LINK_INTS;
    if (claimedAt !== null) yield { kind: 'note', path: path as string, stat, note, claimedAt: claimedAt as number, linkAt, derived };
    else yield { kind: 'note', path: path as string, stat, note, linkAt, derived };
  }
}

const isStrings = (x: unknown): x is string[] => Array.isArray(x) && x.every((s) => typeof s === 'string');

function parseLine(line: string): unknown {
  try {
    return JSON.parse(line);
  } catch {
    throw malformed();
  }
}

function malformed(): IndexSnapshotError {
  return new IndexSnapshotError('index_snapshot_invalid', 'Index snapshot has a malformed record');
}

function encodeStat(s: FileStat): unknown[] {
  return [s.size, s.mtimeMs, s.etag, s.ctimeMs ?? null, s.birthtimeMs ?? null];
}

function decodeStat(x: unknown): FileStat {
  if (!Array.isArray(x) || typeof x[0] !== 'number' || typeof x[1] !== 'number' || typeof x[2] !== 'string') throw malformed();
  const s: FileStat = { size: x[0], mtimeMs: x[1], etag: x[2] };
  if (typeof x[3] === 'number') s.ctimeMs = x[3];
  if (typeof x[4] === 'number') s.birthtimeMs = x[4];
  return s;
}

const TASK_WIDTH = 7;
/** The integers at the end are in the machine's byte order (typed arrays'); the header names it, and a snapshot of the other order is rebuilt. */
const NATIVE_LE = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;
const BYTE_ORDER = NATIVE_LE ? 'LE' : 'BE';
/** The shape of `derivedId` (ids.ts). */
const DERIVED_ID = /^p[0-9a-f]{16}$/;
/** Integers per link in LinkTable's columns. */
const LINK_INTS = 5;

/**
 * NoteFacts as scan threads send them (scan-pool.ts): the head's facts (id,
 * aliases, tag occurrences and tags, tag strings as numbers from `table`,
 * links), then the same array as a snapshot's rest (`restFields`), so one
 * decoder (`factsOf`) serves both. The links' integers and
 * their strings' numbers go to the sinks of `columns` (see
 * `LinkTable.toColumns`).
 */
export function encodeFacts(f: AnyFacts, table: StringTable, columns: { nums: NumsSink; strings: StringSinks }): unknown[] {
  const tagOcc: unknown[] = [];
  for (const t of f.tagOccurrences) tagOcc.push(table.ref(t.tag), t.line, t.column, t.offset);
  const linkTable = f.links instanceof LinkTable ? f.links : LinkTable.of(f.links);
  // The links' integers travel in typed arrays.
  const links = linkTable.toColumns((s) => table.ref(s), columns.nums, columns.strings);
  return [f.id, f.aliases, tagOcc, f.tags.map((t) => table.ref(t)), links, restFields(f)];
}

/**
 * The inverse of `encodeFacts` (with the strings its table numbered, and
 * the arrays its `columns` sinks made): equal, key order included, to the
 * facts encoded, with links as a LinkTable.
 */
export function decodeFacts(path: string, x: unknown, strings: readonly string[], columns: { nums: Int32Array; strings: StringColumns }): IndexedFacts {
  const str = (n: unknown): string => {
    const s = strings[n as number];
    if (s === undefined) throw malformed();
    return s;
  };
  if (!Array.isArray(x) || x.length !== 6) throw malformed();
  const [id, aliases, tagOcc, tagRefs, ls, rest] = x as [string | null, string[], unknown[], unknown[], unknown[], unknown];
  if (!Array.isArray(tagOcc) || !Array.isArray(tagRefs) || !Array.isArray(ls)) throw malformed();
  const tagOccurrences: TagOccurrence[] = [];
  for (let i = 0; i < tagOcc.length; i += 4) {
    tagOccurrences.push({ tag: str(tagOcc[i]), line: tagOcc[i + 1] as number, column: tagOcc[i + 2] as number, offset: tagOcc[i + 3] as number });
  }
  let links: LinkTable;
  try {
    links = LinkTable.fromColumns(ls, columns.nums, strings, columns.strings);
  } catch (e) {
    if (e instanceof TypeError) throw malformed();
    throw e;
  }
  return factsOf(path, rest, { id, aliases, tags: tagRefs.map(str), links }, tagOccurrences);
}

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
