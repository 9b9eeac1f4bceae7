/**
 * Public shapes of the per-Home index (see docs/index.md). Everything handed
 * out is read-only: entries are the index's own objects (no copies), so a
 * caller must not mutate them.
 */
import type { Heading, Link, NoteFacts, Task } from '../markdown/facts.js';
import type { LinkTable } from './link-table.js';
import type { FullTextIndex } from './fulltext/full-text.js';

/** NoteFacts as the index keeps them: links as a LinkTable. */
export type IndexedFacts = Omit<NoteFacts, 'links'> & { readonly links: LinkTable };

/** Facts as extracted (links as records) or as indexed. */
export type AnyFacts = NoteFacts | IndexedFacts;

/** What the caller knows about a file on disk; recorded as given at upsert. */
export interface FileStat {
  size: number;
  mtimeMs: number;
  etag: string;
  ctimeMs?: number;
  birthtimeMs?: number;
}

/** One Markdown note. */
export interface NoteEntry {
  /** Frontmatter `id`, or `derivedId(path)` (also when another path owns the same frontmatter id). */
  readonly id: string;
  readonly path: string;
  readonly title: string;
  readonly aliases: readonly string[];
  /** All tags (frontmatter then inline), first spelling, deduplicated case-insensitively. */
  readonly tags: readonly string[];
  readonly frontmatter: Record<string, unknown> | null;
  readonly etag: string;
  readonly size: number;
  readonly mtimeMs: number;
  /** Frontmatter `created` (else `date`) in ms when parseable, else the birth time (when > 0), else mtime. */
  readonly created: number;
  /** mtime. */
  readonly updated: number;
  readonly wordCount: number;
  readonly headings: readonly Heading[];
  /**
   * The facts the note was indexed from, untouched except `tagOccurrences`,
   * which the index does not keep (always empty), and links, kept as a table.
   */
  readonly facts: IndexedFacts;
}

/** Any other Home file (attachment, .canvas, .base, .pdf, image, ...). */
export interface FileEntry {
  readonly path: string;
  readonly etag: string;
  readonly size: number;
  readonly mtimeMs: number;
}

/** An outgoing link with where it resolves to (null: unresolved; same-note links: the note itself). */
export type ResolvedLink = Link & { resolved: string | null };

/** One link occurrence in a linking note. */
export interface BacklinkOccurrence {
  readonly kind: 'wikilink' | 'markdown';
  readonly line: number;
  readonly column: number;
  readonly embed: boolean;
  readonly heading: string | null;
  readonly blockId: string | null;
  readonly alias: string | null;
}

/** A note linking to the queried path, with every linking occurrence in document order. */
export interface Backlink {
  /** Path of the linking note. */
  readonly from: string;
  readonly occurrences: readonly BacklinkOccurrence[];
}

export interface UnresolvedLink {
  from: string;
  target: string;
  line: number;
}

export interface TagCount {
  /** Display spelling: the most used spelling of this tag path, ties to the smallest (code-unit order). */
  tag: string;
  /** Notes with this tag or any nested tag below it. */
  count: number;
  /** Notes with exactly this tag. */
  direct: number;
}

/** A task of a note, with the note it lives in. */
export interface TaskEntry extends Task {
  path: string;
  noteId: string;
}

export interface SearchOptions {
  /** Maximum hits (default 50). */
  limit?: number;
  /** Only paths starting with this string (literally: pass `Projects/` for a folder). */
  pathPrefix?: string;
  /** Only notes with this tag or a nested tag below it (case-insensitive, leading `#` optional). */
  tag?: string;
  /** How query terms combine (default `AND`). */
  combineWith?: 'AND' | 'OR';
}

export interface SearchHit {
  path: string;
  id: string;
  title: string;
  score: number;
  /** Document terms that matched (after prefix/fuzzy expansion). */
  terms: string[];
  /** Query terms that matched. */
  queryTerms: string[];
  /** For each matched document term, the fields it was found in (`title`, `body`, `tags`, `aliases`). */
  match: Record<string, string[]>;
}

/**
 * When deferred work runs. Link resolution and the tag index are deferred;
 * everything else (notes, files, ids, tasks, blocks, full text) is updated
 * inside the upsert/remove call (a cold opening's full text comes from the
 * scan workers: `FullTextIndex.expectPartials`).
 * - `background` (default): pending work runs once the index has not been
 *   written to for `idleMs`, in short slices on the event loop;
 * - `sync`: inside `upsertNote`/`upsertFile`/`remove` (slow for bulk loads:
 *   links may be resolved twice);
 * - `lazy`: only when a query needs it, or on `flush()`.
 * In every mode a query first finishes the work it depends on (links for
 * `outgoing`/`backlinks`/`unresolved`, tags for `tags`/`notesWithTag` and a
 * search by tag, the merge for a search), so answers are never stale.
 */
export type IndexingMode = 'background' | 'sync' | 'lazy';

export interface HomeIndexOptions {
  mode?: IndexingMode;
  /** The full-text index to keep up to date (one loaded from its file); default: a new, empty one. */
  fullText?: FullTextIndex;
  /** Time budget of one background slice in ms (default 10). */
  sliceMs?: number;
  /** Background work waits until no write happened for this long, in ms (default 50). */
  idleMs?: number;
  /** How long a search waits for a cold opening's full text before answering 503, in ms (default 15 000, as a request waits for the index). */
  fullTextWaitMs?: number;
}
