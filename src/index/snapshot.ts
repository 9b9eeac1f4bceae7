/**
 * The snapshot format: everything needed to rebuild a HomeIndex without
 * re-reading files (the full-text index persists itself: search-worker.ts).
 *
 * A snapshot is text, one JSON value per line, so that a live index can be
 * written out a few lines at a time without stalling the event loop, and
 * read back line by line:
 *
 *   {"format":"quire-home-index","version":3}
 *   ["f", path, stat]            one per non-note file
 *   ["s", string, ...]           strings the next lines refer to by number
 *   ["n", path, stat, facts]     one per note
 *   ["n", path, stat, facts, claimedAt]   a note whose claim on its id is older than its file
 *
 * `stat` is `[size, mtimeMs, etag, ctimeMs|null, birthtimeMs|null]`, and
 * `facts` the compact tuple of `encodeFacts`: field names are not repeated,
 * and the strings of links and tag occurrences (the same few targets,
 * headings and tags over and over) are numbers into the string table that
 * "s" lines build up as they first appear. Decoding shares each such string,
 * which also keeps a warm-started index small.
 */
import { AppError } from '../core/errors.js';
import type { BlockAnchor, Heading, NoteFacts, TagOccurrence, Task } from '../markdown/facts.js';
import { LinkTable, type NumsSink } from './link-table.js';
import type { AnyFacts, FileStat, IndexedFacts } from './types.js';

/** Bump whenever the meaning of a snapshot changes: its shape or NoteFacts. */
export const INDEX_SNAPSHOT_VERSION = 4;
export const INDEX_SNAPSHOT_FORMAT = 'quire-home-index';

/** A snapshot this build cannot use; the caller should rebuild from the files. */
export class IndexSnapshotError extends AppError {
  constructor(reason: string, message: string) {
    super('internal', message, { details: { reason } });
    this.name = 'IndexSnapshotError';
  }
}

export type SnapshotRecord =
  | { kind: 'file'; path: string; stat: FileStat }
  | { kind: 'note'; path: string; stat: FileStat; facts: IndexedFacts; claimedAt?: number };

export function headerLine(): string {
  return JSON.stringify({ format: INDEX_SNAPSHOT_FORMAT, version: INDEX_SNAPSHOT_VERSION });
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

/** The lines for one note: its "s" line first when it brought new strings. */
export function noteLines(path: string, stat: FileStat, facts: AnyFacts, table: StringTable, claimedAt?: number): string[] {
  const record: unknown[] = ['n', path, encodeStat(stat), encodeFacts(facts, table)];
  if (claimedAt !== undefined) record.push(claimedAt);
  const line = JSON.stringify(record);
  const strings = table.takeLine();
  return strings === null ? [line] : [strings, line];
}

/** The records of a snapshot text, checked; throws IndexSnapshotError when it is not one this build wrote. */
export function* readSnapshot(text: string): Generator<SnapshotRecord> {
  let at = text.indexOf('\n');
  const header = parseLine(at < 0 ? text : text.slice(0, at)) as Record<string, unknown> | null;
  if (typeof header !== 'object' || header === null || header['format'] !== INDEX_SNAPSHOT_FORMAT) {
    throw new IndexSnapshotError('index_snapshot_invalid', 'Not a Quire index snapshot');
  }
  if (header['version'] !== INDEX_SNAPSHOT_VERSION) {
    throw new IndexSnapshotError(
      'index_snapshot_version',
      `Index snapshot version ${String(header['version'])} is not ${INDEX_SNAPSHOT_VERSION}; rebuild the index`,
    );
  }
  const strings: string[] = [];
  while (at >= 0 && at < text.length - 1) {
    const next = text.indexOf('\n', at + 1);
    const line = text.slice(at + 1, next < 0 ? text.length : next);
    at = next;
    if (line === '') continue;
    const r = parseLine(line);
    if (!Array.isArray(r) || typeof r[1] !== 'string') throw malformed();
    if (r[0] === 's') {
      for (let i = 1; i < r.length; i++) strings.push(r[i] as string);
      continue;
    }
    const stat = decodeStat(r[2]);
    if (r[0] === 'f' && r.length === 3) yield { kind: 'file', path: r[1], stat };
    else if (r[0] === 'n' && r.length === 4) yield { kind: 'note', path: r[1], stat, facts: decodeFacts(r[1], r[3], strings) };
    else if (r[0] === 'n' && r.length === 5 && typeof r[4] === 'number') {
      yield { kind: 'note', path: r[1], stat, facts: decodeFacts(r[1], r[3], strings), claimedAt: r[4] };
    } else throw malformed();
  }
}

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

/**
 * NoteFacts as one array of its values in a fixed order; nested records
 * flattened into arrays of their fields, link and tag strings as numbers
 * from `table`. With `linkNums` (facts crossing threads), the links'
 * integers go there instead (see `LinkTable.toColumns`).
 */
export function encodeFacts(f: AnyFacts, table: StringTable, linkNums?: NumsSink): unknown[] {
  const tagOcc: unknown[] = [];
  for (const t of f.tagOccurrences) tagOcc.push(table.ref(t.tag), t.line, t.column, t.offset);
  const headings: unknown[] = [];
  for (const h of f.headings) headings.push(h.level, h.text, h.line);
  const blocks: unknown[] = [];
  for (const b of f.blocks) blocks.push(b.id, b.line, b.column);
  const linkTable = f.links instanceof LinkTable ? f.links : LinkTable.of(f.links);
  // Across threads (`linkNums`), the links' integers travel in one typed array per batch.
  const links = linkNums ? linkTable.toColumns((s) => table.ref(s), linkNums) : linkTable.toFlat((s) => table.ref(s)!);
  const refs = (a: readonly string[]) => a.map((t) => table.ref(t));
  const tasks: unknown[] = [];
  for (const t of f.tasks) tasks.push(t.line, t.status, t.text, t.blockId, t.due, t.depth, t.parentTaskLine);
  const range = f.frontmatterRange === null ? null : [f.frontmatterRange.start, f.frontmatterRange.end];
  return [
    f.frontmatter,
    f.frontmatterError,
    range,
    f.title,
    f.titleSource,
    f.id,
    f.aliases,
    refs(f.frontmatterTags),
    tagOcc,
    refs(f.tags),
    headings,
    blocks,
    links,
    tasks,
    f.wordCount,
  ];
}

/**
 * The inverse of `encodeFacts` (with the strings its table numbered, and
 * the `linkNums` array when it was given a sink): equal,
 * key order included, to the facts encoded, with links as a LinkTable.
 */
export function decodeFacts(path: string, x: unknown, strings: readonly string[], linkNums?: Int32Array): IndexedFacts {
  const str = (n: unknown): string | null => {
    if (n === null) return null;
    const s = strings[n as number];
    if (s === undefined) throw malformed();
    return s;
  };
  if (!Array.isArray(x) || x.length !== 15) throw malformed();
  const [frontmatter, frontmatterError, range, title, titleSource, id, aliases, frontmatterTagRefs, tagOcc, tagRefs, hs, bs, ls, ts, wordCount] = x as [
    NoteFacts['frontmatter'],
    string | null,
    [number, number] | null,
    string,
    NoteFacts['titleSource'],
    string | null,
    string[],
    unknown[],
    unknown[],
    unknown[],
    unknown[],
    unknown[],
    unknown[],
    unknown[],
    number,
  ];
  if (!Array.isArray(tagOcc) || !Array.isArray(hs) || !Array.isArray(bs) || !Array.isArray(ls) || !Array.isArray(ts)) throw malformed();
  if (!Array.isArray(frontmatterTagRefs) || !Array.isArray(tagRefs)) throw malformed();
  const strs = (a: unknown[]) =>
    a.map((n) => {
      const s = str(n);
      if (s === null) throw malformed();
      return s;
    });
  const tagOccurrences: TagOccurrence[] = [];
  for (let i = 0; i < tagOcc.length; i += 4) {
    tagOccurrences.push({ tag: str(tagOcc[i])!, line: tagOcc[i + 1] as number, column: tagOcc[i + 2] as number, offset: tagOcc[i + 3] as number });
  }
  const headings: Heading[] = [];
  for (let i = 0; i < hs.length; i += 3) headings.push({ level: hs[i] as number, text: hs[i + 1] as string, line: hs[i + 2] as number });
  const blocks: BlockAnchor[] = [];
  for (let i = 0; i < bs.length; i += 3) blocks.push({ id: bs[i] as string, line: bs[i + 1] as number, column: bs[i + 2] as number });
  let links: LinkTable;
  try {
    links = linkNums ? LinkTable.fromColumns(ls, linkNums, str) : LinkTable.fromFlat(ls, str);
  } catch (e) {
    if (e instanceof TypeError) throw malformed();
    throw e;
  }
  const tasks: Task[] = [];
  for (let i = 0; i < ts.length; i += TASK_WIDTH) {
    const status = ts[i + 1] as string;
    tasks.push({
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
  return {
    path,
    frontmatter,
    frontmatterError,
    frontmatterRange: range === null ? null : { start: range[0], end: range[1] },
    title,
    titleSource,
    id,
    aliases,
    frontmatterTags: strs(frontmatterTagRefs),
    tagOccurrences,
    tags: strs(tagRefs),
    headings,
    blocks,
    links,
    tasks,
    wordCount,
  };
}
