/**
 * The records the HomeIndex keeps per note and per file, shared by its parts
 * (home-index.ts, link-graph.ts, ids.ts, anchors.ts), and the pure functions
 * that build a note's entry from its facts and stat.
 */
import type { NoteFacts } from '../markdown/facts.js';
import { detachStrings } from './detach.js';
import { LinkTable } from './link-table.js';
import { decodeRest, restOf, type SnapshotNote } from './snapshot.js';
import type { AnyFacts, Backlink, FileEntry, FileStat, IndexedFacts, NoteEntry, TaskEntry } from './types.js';

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/**
 * What notes and files share as link targets (link-graph.ts). `sources`
 * holds the notes with at least one link resolving here, sorted by path, so
 * backlinks are read off in O(result) and kept sorted with a binary search
 * and a splice.
 */
export interface TargetRec {
  sources: NoteRec[] | null;
  /**
   * Parallel to `sources` once backlinks were asked for (null before): that
   * source's frozen Backlink, or null until asked for again after it changed.
   */
  built: Array<Backlink | null> | null;
}

export interface NoteRec extends TargetRec {
  entry: Mutable<NoteEntry>;
  stat: FileStat;
  /**
   * What the index's parts read of the facts, kept beside them so that a
   * note restored from a snapshot is not decoded for it (`restoredEntry`):
   * its links, its frontmatter id, and the ids of its block anchors and of
   * its tasks that carry one.
   */
  links: LinkTable;
  claimId: string | null;
  blockIds: readonly string[];
  taskBlockIds: readonly string[];
  /** Where each of `facts.links` resolves to (parallel array). */
  resolved: (string | null)[];
  unresolvedCount: number;
  /** Lowercased distinct aliases (keys of the link graph's alias map). */
  aliasKeys: readonly string[];
  readonly derived: string;
  /**
   * When this note began to claim its frontmatter id (ms): the file's birth
   * time when the claim is first seen, kept while later versions carry the
   * same id (a rename-style save makes a new inode, not a new claim). Of two
   * notes with one id, the earlier claim owns it (docs/index.md, "Ids").
   */
  claimedAt: number;
  /** False while the note's links are queued: not registered by key, not resolved (`resolved` is meaningless then). */
  attached: boolean;
}

export interface FileRec extends TargetRec {
  entry: FileEntry;
  stat: FileStat;
}

export const EMPTY: readonly never[] = Object.freeze([]);

export function copyStat(s: FileStat): FileStat {
  const out: FileStat = { size: s.size, mtimeMs: s.mtimeMs, etag: s.etag };
  if (s.ctimeMs !== undefined) out.ctimeMs = s.ctimeMs;
  if (s.birthtimeMs !== undefined) out.birthtimeMs = s.birthtimeMs;
  return out;
}

function parseCreated(v: unknown): number | null {
  if (v instanceof Date) {
    const t = v.getTime();
    return Number.isFinite(t) ? t : null;
  }
  if (typeof v === 'string' && v.trim() !== '') {
    const t = Date.parse(v.trim());
    return Number.isFinite(t) ? t : null;
  }
  return null;
}

export function createdOf(facts: AnyFacts, stat: FileStat): number {
  const fm = facts.frontmatter;
  if (fm !== null) {
    const c = parseCreated(fm['created']) ?? parseCreated(fm['date']);
    if (c !== null) return c;
  }
  // Whole milliseconds: file systems give fractional ones, and every time the API returns is an integer.
  if (stat.birthtimeMs !== undefined && stat.birthtimeMs > 0) return Math.floor(stat.birthtimeMs);
  return Math.floor(stat.mtimeMs);
}

/** When a note seen now for the first time with an id began to claim it: its file's birth, where the file system keeps one. */
export function claimTime(stat: FileStat): number {
  return stat.birthtimeMs !== undefined && stat.birthtimeMs > 0 ? stat.birthtimeMs : stat.mtimeMs;
}

export function entryOf(path: string, facts: IndexedFacts, stat: FileStat, id: string): Mutable<NoteEntry> {
  return {
    id,
    path,
    title: facts.title,
    aliases: facts.aliases,
    tags: facts.tags,
    frontmatter: facts.frontmatter,
    etag: stat.etag,
    size: stat.size,
    mtimeMs: stat.mtimeMs,
    created: createdOf(facts, stat),
    updated: Math.floor(stat.mtimeMs),
    wordCount: facts.wordCount,
    headings: facts.headings,
    facts,
  };
}

/**
 * The entry of a note read from a snapshot or sent by a scan thread (whose
 * rests are a snapshot's, vault/scan-wire.ts): what the index needs at once
 * (path, ids, stat, aliases, tags) is there; title, frontmatter, created,
 * word count, headings and the facts are own getters (so a spread or JSON
 * copy of the entry reads them) that parse the rest of the note's snapshot
 * line the first time one is read (`decodeRest`), and keep the facts.
 */
export function restoredEntry(path: string, stat: FileStat, id: string, note: SnapshotNote): Mutable<NoteEntry> {
  const e = { id, path } as Mutable<NoteEntry> & { [LAZY]: Lazy };
  Object.defineProperty(e, LAZY, { value: { note, stat, facts: null, created: null } satisfies Lazy });
  Object.defineProperty(e, 'title', TITLE);
  e.aliases = note.aliases;
  e.tags = note.tags;
  Object.defineProperty(e, 'frontmatter', FRONTMATTER);
  e.etag = stat.etag;
  e.size = stat.size;
  e.mtimeMs = stat.mtimeMs;
  Object.defineProperty(e, 'created', CREATED);
  e.updated = Math.floor(stat.mtimeMs);
  Object.defineProperty(e, 'wordCount', WORD_COUNT);
  Object.defineProperty(e, 'headings', HEADINGS);
  Object.defineProperty(e, 'facts', FACTS);
  return e;
}

/** The snapshot text of a restored (or scanned) note's facts while they were never read; null once they were (or for any other entry). */
export function undecodedRest(e: NoteEntry): string | null {
  const lazy = (e as { [LAZY]?: Lazy })[LAZY];
  return lazy === undefined || lazy.note === null ? null : restOf(lazy.note);
}

const LAZY = Symbol('lazy facts');

interface Lazy {
  /** Null once decoded: the facts are the truth from then on, and the bytes are let go (once every note lets go, the snapshot's text is collected). */
  note: SnapshotNote | null;
  stat: FileStat;
  facts: IndexedFacts | null;
  /** Set by a re-stamp (upsertNote with the same facts), else computed on first read. */
  created: number | null;
}

function factsOf(e: object): IndexedFacts {
  const lazy = (e as { [LAZY]: Lazy })[LAZY];
  if (lazy.facts === null) {
    lazy.facts = decodeRest((e as NoteEntry).path, lazy.note!);
    lazy.note = null;
  }
  return lazy.facts;
}

const getter = (get: (this: object) => unknown): PropertyDescriptor => ({ get, enumerable: true });
const TITLE = getter(function () {
  return factsOf(this).title;
});
const FRONTMATTER = getter(function () {
  return factsOf(this).frontmatter;
});
const WORD_COUNT = getter(function () {
  return factsOf(this).wordCount;
});
const HEADINGS = getter(function () {
  return factsOf(this).headings;
});
const FACTS = getter(function () {
  return factsOf(this);
});
const CREATED: PropertyDescriptor = {
  enumerable: true,
  get(this: object) {
    const lazy = (this as { [LAZY]: Lazy })[LAZY];
    return (lazy.created ??= createdOf(factsOf(this), lazy.stat));
  },
  set(this: object, v: number) {
    (this as { [LAZY]: Lazy })[LAZY].created = v;
  },
};

/**
 * Facts as the index keeps them: without tag positions (only a rewrite of
 * the note's text needs them, and it extracts them from that text; kept,
 * they would be a quarter of a million small objects on a 10k-note Home),
 * strings detached from the note text unless `fresh`, links as a table.
 */
export function indexedFacts(given: AnyFacts, fresh: boolean): IndexedFacts {
  if (given.links instanceof LinkTable) return given.tagOccurrences.length === 0 ? (given as IndexedFacts) : { ...(given as IndexedFacts), tagOccurrences: [] };
  const facts: NoteFacts = { ...(given as NoteFacts), tagOccurrences: [] };
  if (!fresh) detachStrings(facts);
  return { ...facts, links: LinkTable.of(facts.links) };
}

export function aliasKeysOf(aliases: readonly string[]): readonly string[] {
  if (aliases.length === 0) return EMPTY;
  const out: string[] = [];
  for (const a of aliases) {
    const k = a.toLowerCase();
    if (k !== '' && !out.includes(k)) out.push(k);
  }
  return out;
}

/** The `i`th task of a note, as the index lists it. */
export function taskEntry(rec: NoteRec, i: number): TaskEntry {
  // Not `{ ...task, path, noteId }`: a spread copy that gains properties costs the old generation memory (docs/architecture.md, "What a request must not leave in the old generation").
  return Object.assign({}, rec.entry.facts.tasks[i]!, { path: rec.entry.path, noteId: rec.entry.id });
}
