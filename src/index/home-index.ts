/**
 * The per-Home in-memory index: notes and files, ids, link resolution with
 * backlinks, tags, tasks, block anchors and full-text search, updated
 * incrementally. It knows nothing about the file system; the caller feeds it
 * facts (src/markdown) and stats. Rules and formats: docs/index.md.
 */
import { createHash } from 'node:crypto';
import type { BlockAnchor, NoteFacts } from '../markdown/facts.js';
import {
  addToSortedMap,
  allOf,
  firstOf,
  dependsOnSource,
  keysOfTarget,
  byLengthThenPath,
  byPath,
  nameKeyOfPath,
  removeFromSortedMap,
  resolveTarget,
  type PathLookup,
  type PathSet,
} from './links.js';
import { fieldsOf } from './fulltext/document.js';
import { FullTextIndex } from './fulltext/full-text.js';
import { fileLine, headerLine, noteLines, readSnapshot, StringTable } from './snapshot.js';
import { detachStrings } from './detach.js';
import { LinkTable } from './link-table.js';
import { addRef, dropRefs, forEachRef, type Refs as LinkRefs } from './link-refs.js';
import { TagIndex } from './tags.js';
import type {
  AnyFacts,
  Backlink,
  BacklinkOccurrence,
  FileEntry,
  FileStat,
  HomeIndexOptions,
  IndexedFacts,
  IndexingMode,
  NoteEntry,
  ResolvedLink,
  SearchHit,
  SearchOptions,
  TagCount,
  TaskEntry,
  UnresolvedLink,
} from './types.js';

export type {
  Backlink,
  BacklinkOccurrence,
  FileEntry,
  FileStat,
  HomeIndexOptions,
  IndexedFacts,
  NoteEntry,
  ResolvedLink,
  SearchHit,
  IndexingMode,
  SearchOptions,
  TagCount,
  TaskEntry,
  UnresolvedLink,
} from './types.js';
export { IndexSnapshotError, INDEX_SNAPSHOT_VERSION } from './snapshot.js';

/**
 * The id of a note without a usable frontmatter `id`: `p` followed by the
 * first 16 hex digits (64 bits) of SHA-256 over the UTF-8 Home-relative path.
 * Stable for a path, URL-safe, 17 characters; it changes when the note moves.
 */
export function derivedId(path: string): string {
  return 'p' + createHash('sha256').update(path, 'utf8').digest('hex').slice(0, 16);
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/** The links carrying one key, by source note (link-refs.ts). */
type Refs = LinkRefs<NoteRec>;

/**
 * What notes and files share as link targets. `sources` holds the notes
 * with at least one link resolving here, sorted by path, so backlinks are
 * read off in O(result) and kept sorted with a binary search and a splice.
 */
interface TargetRec {
  sources: NoteRec[] | null;
  /**
   * Parallel to `sources` once backlinks were asked for (null before): that
   * source's frozen Backlink, or null until asked for again after it changed.
   */
  built: Array<Backlink | null> | null;
}

interface NoteRec extends TargetRec {
  entry: Mutable<NoteEntry>;
  stat: FileStat;
  /** Where each of `facts.links` resolves to (parallel array). */
  resolved: (string | null)[];
  unresolvedCount: number;
  /** Lowercased distinct aliases (keys of `byAlias`). */
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

interface FileRec extends TargetRec {
  entry: FileEntry;
  stat: FileStat;
}

const EMPTY: readonly never[] = Object.freeze([]);

/** Targets with at least this many linking notes keep their built Backlinks (see `backlinks`). */
const BACKLINKS_CACHED_FROM = 64;

function copyStat(s: FileStat): FileStat {
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

function createdOf(facts: AnyFacts, stat: FileStat): number {
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
function claimTime(stat: FileStat): number {
  return stat.birthtimeMs !== undefined && stat.birthtimeMs > 0 ? stat.birthtimeMs : stat.mtimeMs;
}

function occurrence(links: LinkTable, i: number): BacklinkOccurrence {
  return Object.freeze({
    kind: links.kind(i),
    line: links.line(i),
    column: links.column(i),
    embed: links.embed(i),
    heading: links.heading(i),
    blockId: links.blockId(i),
    alias: links.alias(i),
  });
}

function entryOf(path: string, facts: IndexedFacts, stat: FileStat, id: string): Mutable<NoteEntry> {
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
 * Facts as the index keeps them: without tag positions (only a rewrite of
 * the note's text needs them, and it extracts them from that text; kept,
 * they would be a quarter of a million small objects on a 10k-note Home),
 * strings detached from the note text unless `fresh`, links as a table.
 */
function indexedFacts(given: AnyFacts, fresh: boolean): IndexedFacts {
  if (given.links instanceof LinkTable) return given.tagOccurrences.length === 0 ? (given as IndexedFacts) : { ...(given as IndexedFacts), tagOccurrences: [] };
  const facts: NoteFacts = { ...(given as NoteFacts), tagOccurrences: [] };
  if (!fresh) detachStrings(facts);
  return { ...facts, links: LinkTable.of(facts.links) };
}

function aliasKeysOf(facts: AnyFacts): readonly string[] {
  if (facts.aliases.length === 0) return EMPTY;
  const out: string[] = [];
  for (const a of facts.aliases) {
    const k = a.toLowerCase();
    if (k !== '' && !out.includes(k)) out.push(k);
  }
  return out;
}

export class HomeIndex {
  private readonly notesByPath = new Map<string, NoteRec>();
  private readonly filesByPath = new Map<string, FileRec>();
  /** Name key → note and file paths, shortest first. */
  private readonly byName = new Map<string, PathSet>();
  /** Lowercased alias → note paths, shortest first. */
  private readonly byAlias = new Map<string, PathSet>();
  /** Name key or alias key → the links carrying it, as (note, link index) pairs. */
  private readonly linksByKey = new Map<string, Refs>();
  private readonly unresolvedSources = new Set<string>();
  /** Frontmatter id → paths claiming it, earliest claim first (`byClaim`); the first owns it. */
  private readonly idClaims = new Map<string, PathSet>();
  /** derivedId → path (whether or not that note uses it). */
  private readonly derivedIds = new Map<string, string>();
  private readonly tagIndex = new TagIndex();
  /**
   * Notes whose tags are not in `tagIndex` yet, with those tags. Adding a
   * Home's 100k+ tag uses costs a few hundred milliseconds, which would
   * delay `ready`; it is deferred work like link resolution, done before any
   * tag query and in the background.
   */
  private readonly tagsPending = new Map<string, readonly string[]>();
  /** Block id → paths of notes with that anchor, in path order. */
  private readonly blockIdx = new Map<string, PathSet>();
  /** Block id → paths of notes with a task carrying that id, in path order. */
  private readonly taskBlockIdx = new Map<string, PathSet>();
  /** Full text of every note (fulltext/): updated inside each upsert and remove. */
  readonly fullText: FullTextIndex;
  private readonly mode: IndexingMode;
  private held = false;
  private readonly sliceMs: number;
  private readonly idleMs: number;
  /** When the index was last written to (upsert/remove), for idle detection. */
  private lastWrite = 0;
  private writes = 0;
  private timer: NodeJS.Timeout | NodeJS.Immediate | null = null;
  /** Callers of `whenIdle`, resolved when the deferred work is done. */
  private idleWaiters: Array<() => void> = [];
  /** Notes whose links are not resolved yet. */
  private readonly pendingNotes = new Set<NoteRec>();
  /** Keys whose (resolved) links must be resolved again. */
  private readonly pendingKeys = new Set<string>();

  private readonly lookup: PathLookup = {
    has: (p) => this.notesByPath.has(p) || this.filesByPath.has(p),
    isNote: (p) => this.notesByPath.has(p),
    byName: (k) => this.byName.get(k),
    byAlias: (k) => this.byAlias.get(k),
  };

  constructor(opts: HomeIndexOptions = {}) {
    this.mode = opts.mode ?? 'background';
    this.sliceMs = opts.sliceMs ?? 10;
    this.idleMs = opts.idleMs ?? 50;
    this.fullText = opts.fullText ?? new FullTextIndex();
  }

  // ------------------------------------------------------------------ writes

  /**
   * Index a Markdown note, replacing everything known about `path`. `text` is
   * the full note text, for the full-text index. `text: null` means the text
   * did not change since the last upsert of this path: the full-text document is
   * kept as it is (a new path gets one without body, under no ETag, so that
   * whoever keeps the full text in step knows to send the text). Passing the
   * very facts object already indexed (a re-stamp: same bytes, new mtime)
   * only records the stat. `searchFed`: the full text of this note comes
   * from elsewhere (a scan worker tokenized it); such facts come decoded
   * from JSON, so their strings are flat already.
   */
  upsertNote(path: string, facts: AnyFacts, stat: FileStat, text: string | null, searchFed = false): void {
    const old = this.notesByPath.get(path);
    if (old !== undefined && old.entry.facts === facts) {
      old.stat = copyStat(stat);
      const e = old.entry;
      e.etag = stat.etag;
      e.size = stat.size;
      e.mtimeMs = stat.mtimeMs;
      e.updated = Math.floor(stat.mtimeMs);
      e.created = createdOf(facts, stat);
    } else {
      this.putNote(path, facts, stat, searchFed);
    }
    if (text !== null && !searchFed) {
      this.fullText.set(path, fieldsOf(path, facts, text), stat.etag);
    } else if (old === undefined && !searchFed) {
      this.fullText.set(path, fieldsOf(path, facts, ''), '');
    }
    this.written();
  }

  /** Index any other file (known for link resolution and listings). */
  upsertFile(path: string, stat: FileStat): void {
    if (this.notesByPath.has(path)) this.remove(path);
    const entry: FileEntry = Object.freeze({ path, etag: stat.etag, size: stat.size, mtimeMs: stat.mtimeMs });
    const rec = this.filesByPath.get(path);
    if (rec !== undefined) {
      rec.entry = entry;
      rec.stat = copyStat(stat);
      return;
    }
    this.filesByPath.set(path, { entry, stat: copyStat(stat), sources: null, built: null });
    const key = nameKeyOfPath(path);
    addToSortedMap(this.byName, key, path, byLengthThenPath);
    this.touchKey(key);
    this.written();
  }

  /** Forget a note or file. Links to it fall back to the next candidate or become unresolved. */
  remove(path: string): void {
    const file = this.filesByPath.get(path);
    if (file !== undefined) {
      this.orphanIncoming(file, path);
      this.filesByPath.delete(path);
      const key = nameKeyOfPath(path);
      removeFromSortedMap(this.byName, key, path, byLengthThenPath);
      this.touchKey(key);
      this.written();
      return;
    }
    const rec = this.notesByPath.get(path);
    if (rec === undefined) return;
    this.detachNote(rec);
    this.orphanIncoming(rec, path);
    this.notesByPath.delete(path);
    this.derivedIds.delete(rec.derived);
    const key = nameKeyOfPath(path);
    removeFromSortedMap(this.byName, key, path, byLengthThenPath);
    this.fullText.delete(path);
    this.touchKey(key);
    for (const a of rec.aliasKeys) this.touchKey(a);
    this.written();
  }

  /** `fresh`: facts straight from JSON.parse (already flat, short strings shared by V8), no need to detach. */
  private putNote(path: string, given: AnyFacts, stat: FileStat, fresh = false, claimedAt?: number): void {
    const facts = indexedFacts(given, fresh);
    if (this.filesByPath.has(path)) this.remove(path);
    let rec = this.notesByPath.get(path);
    const isNew = rec === undefined;
    const oldAliases: readonly string[] = rec?.aliasKeys ?? EMPTY;
    const aliasKeys = aliasKeysOf(facts);
    if (rec === undefined) {
      const derived = derivedId(path);
      rec = {
        entry: entryOf(path, facts, stat, derived),
        stat: copyStat(stat),
        resolved: new Array<string | null>(facts.links.length),
        unresolvedCount: 0,
        aliasKeys,
        derived,
        claimedAt: claimedAt ?? claimTime(stat),
        attached: false,
        sources: null,
        built: null,
      };
      this.notesByPath.set(path, rec);
      this.derivedIds.set(derived, path);
    } else {
      // Same path: links to it stay; everything the old facts registered goes.
      const sameId = rec.entry.facts.id === facts.id;
      this.detachNote(rec);
      if (claimedAt !== undefined) rec.claimedAt = claimedAt;
      else if (!sameId) rec.claimedAt = claimTime(stat);
      rec.entry = entryOf(path, facts, stat, rec.derived);
      rec.stat = copyStat(stat);
      rec.resolved = new Array<string | null>(facts.links.length);
      rec.aliasKeys = aliasKeys;
    }
    const key = nameKeyOfPath(path);
    if (isNew) addToSortedMap(this.byName, key, path, byLengthThenPath);
    for (const a of aliasKeys) addToSortedMap(this.byAlias, a, path, byLengthThenPath);
    this.claimId(rec);
    this.registerLinks(rec);
    this.tagsPending.set(path, facts.tags);
    for (const b of facts.blocks) addToSortedMap(this.blockIdx, b.id, path, byPath);
    for (const t of facts.tasks) if (t.blockId !== null) addToSortedMap(this.taskBlockIdx, t.blockId, path, byPath);

    // Other notes' links that may now resolve differently: those naming this
    // path (when it is new) and those naming an alias it gained or lost.
    if (isNew) this.touchKey(key);
    for (const a of aliasKeys) if (!oldAliases.includes(a)) this.touchKey(a);
    for (const a of oldAliases) if (!aliasKeys.includes(a)) this.touchKey(a);
  }

  /** Undo what `putNote` registered for the note's current facts, except the note map, name index and derived id. */
  private detachNote(rec: NoteRec): void {
    const path = rec.entry.path;
    const facts = rec.entry.facts;
    this.detachLinks(rec);
    for (const a of rec.aliasKeys) removeFromSortedMap(this.byAlias, a, path, byLengthThenPath);
    this.releaseId(rec);
    if (!this.tagsPending.delete(path)) this.tagIndex.remove(path, facts.tags);
    for (const b of facts.blocks) removeFromSortedMap(this.blockIdx, b.id, path, byPath);
    for (const t of facts.tasks) if (t.blockId !== null) removeFromSortedMap(this.taskBlockIdx, t.blockId, path, byPath);
  }

  // -------------------------------------------------------------------- ids

  private claimId(rec: NoteRec): void {
    const id = rec.entry.facts.id;
    rec.entry.id = rec.derived;
    if (id === null) return;
    const path = rec.entry.path;
    addToSortedMap(this.idClaims, id, path, this.byClaim);
    const claims = allOf(this.idClaims.get(id));
    if (claims[0] === path) {
      rec.entry.id = id;
      const prev = claims[1] !== undefined ? this.notesByPath.get(claims[1]) : undefined;
      if (prev !== undefined) prev.entry.id = prev.derived;
    }
  }

  /** Claims on one id: the earliest first, then by path (both notes are in `notesByPath` while claiming). */
  private readonly byClaim = (a: string, b: string): number =>
    this.notesByPath.get(a)!.claimedAt - this.notesByPath.get(b)!.claimedAt || byPath(a, b);

  private releaseId(rec: NoteRec): void {
    const id = rec.entry.facts.id;
    rec.entry.id = rec.derived;
    if (id === null) return;
    const i = removeFromSortedMap(this.idClaims, id, rec.entry.path, this.byClaim);
    if (i === 0) {
      const next = firstOf(this.idClaims.get(id));
      if (next !== undefined) this.notesByPath.get(next)!.entry.id = id;
    }
  }

  // ------------------------------------------------------------------ links

  private target(path: string): TargetRec | undefined {
    return this.notesByPath.get(path) ?? this.filesByPath.get(path);
  }

  private addKey(key: string, src: NoteRec, i: number): void {
    const refs = this.linksByKey.get(key);
    const after = addRef(refs, src, i);
    if (after !== refs) this.linksByKey.set(key, after);
  }

  /** A link of `src` now resolves to `path` (src.resolved already says so). */
  private addIncoming(path: string, src: NoteRec): void {
    const t = this.target(path)!;
    const sources = t.sources;
    if (sources === null) {
      t.sources = [src];
      return;
    }
    const p = src.entry.path;
    const n = sources.length;
    const last = sources[n - 1]!.entry.path;
    let k: number;
    if (last < p) k = ~n; // appending: the common case when notes arrive in path order
    else if (last === p) k = n - 1;
    else k = findSource(sources, p);
    if (k >= 0) {
      if (t.built !== null) t.built[k] = null;
      return;
    }
    insertAt(sources, ~k, src);
    if (t.built !== null) insertAt(t.built, ~k, null);
  }

  /** A link of `src` no longer resolves to `path` (src.resolved already says so). */
  private removeIncoming(path: string, src: NoteRec): void {
    const t = this.target(path);
    if (t === undefined || t.sources === null) return; // the target itself is gone
    const k = findSource(t.sources, src.entry.path);
    if (k < 0) return;
    if (!linksTo(src, path)) this.dropSource(t, k);
    else if (t.built !== null) t.built[k] = null;
  }

  /**
   * `path` is going away: links resolving to it become unresolved for now
   * (their key is queued, so they are resolved again on the next flush; if
   * the same path comes back, they find the new record).
   */
  private orphanIncoming(t: TargetRec, path: string): void {
    if (t.sources === null) return;
    for (const src of t.sources) {
      const links = src.entry.facts.links;
      for (let i = 0; i < links.length; i++) {
        if (src.resolved[i] === path && links.target(i) !== '') {
          src.resolved[i] = null;
          src.unresolvedCount++;
        }
      }
      this.unresolvedSources.add(src.entry.path);
    }
    t.sources = null;
    t.built = null;
  }

  private dropSource(t: TargetRec, k: number): void {
    if (t.sources!.length === 1) {
      t.sources = null;
      t.built = null;
    } else {
      t.sources!.splice(k, 1);
      t.built?.splice(k, 1);
    }
  }

  /** Queue a note's links: they are registered by key and resolved together, when links are next flushed. */
  private registerLinks(rec: NoteRec): void {
    rec.attached = false;
    this.pendingNotes.add(rec);
  }

  /**
   * Resolve a link during a flush. Nothing changes the Home during a flush,
   * and most links (wikilinks not starting with ./ or ../) resolve the same
   * from every note, so those answers are shared through `cache`.
   */
  private resolveCached(from: string, links: LinkTable, i: number, cache: Map<string, string | null>): string | null {
    const target = links.target(i);
    const kind = links.kind(i);
    if (dependsOnSource(target, kind)) return resolveTarget(this.lookup, from, target, kind);
    let r = cache.get(target);
    if (r === undefined) {
      r = resolveTarget(this.lookup, from, target, kind);
      cache.set(target, r);
    }
    return r;
  }

  /** Register a queued note's links by key and resolve them. */
  private attachLinks(rec: NoteRec, cache: Map<string, string | null>): void {
    const path = rec.entry.path;
    const links = rec.entry.facts.links;
    let unresolved = 0;
    for (let i = 0; i < links.length; i++) {
      const target = links.target(i);
      if (target === '') {
        rec.resolved[i] = path;
        continue;
      }
      const { alias: ak, name: nk } = keysOfTarget(target);
      this.addKey(nk, rec, i);
      if (ak !== nk) this.addKey(ak, rec, i);
      const r = this.resolveCached(path, links, i, cache);
      rec.resolved[i] = r;
      if (r === null) unresolved++;
      else this.addIncoming(r, rec);
    }
    rec.unresolvedCount = unresolved;
    if (unresolved > 0) this.unresolvedSources.add(path);
    rec.attached = true;
  }

  private detachLinks(rec: NoteRec): void {
    if (!rec.attached) {
      // Queued only: nothing registered yet.
      this.pendingNotes.delete(rec);
      return;
    }
    const links = rec.entry.facts.links;
    const keys: string[] = [];
    const targets: string[] = [];
    for (let i = 0; i < links.length; i++) {
      const target = links.target(i);
      if (target === '') continue;
      const { alias: ak, name: nk } = keysOfTarget(target);
      if (!keys.includes(nk)) keys.push(nk);
      if (ak !== nk && !keys.includes(ak)) keys.push(ak);
      const r = rec.resolved[i];
      if (r !== null && r !== undefined && !targets.includes(r)) targets.push(r);
    }
    for (const k of keys) {
      const refs = this.linksByKey.get(k);
      if (refs === undefined) continue;
      if (dropRefs(refs, rec)) this.linksByKey.delete(k);
    }
    for (const p of targets) {
      const t = this.target(p);
      if (t === undefined || t.sources === null) continue;
      const k = findSource(t.sources, rec.entry.path);
      if (k >= 0 && t.sources[k] === rec) this.dropSource(t, k);
    }
    rec.attached = false;
    rec.unresolvedCount = 0;
    this.pendingNotes.delete(rec);
    this.unresolvedSources.delete(rec.entry.path);
  }

  /** Links carrying `key` (name or alias key) may resolve differently now. */
  private touchKey(key: string): void {
    if (this.linksByKey.has(key)) this.pendingKeys.add(key);
  }

  /** Re-resolve every registered (so resolved) link carrying `key`. */
  private reresolve(key: string, cache: Map<string, string | null>): void {
    const refs = this.linksByKey.get(key);
    if (refs === undefined) return;
    forEachRef(refs, (src, i) => {
      const r = this.resolveCached(src.entry.path, src.entry.facts.links, i, cache);
      const old = src.resolved[i]!;
      if (r === old) return;
      src.resolved[i] = r;
      if (old === null) src.unresolvedCount--;
      else this.removeIncoming(old, src);
      if (r === null) src.unresolvedCount++;
      else this.addIncoming(r, src);
      if (src.unresolvedCount > 0) this.unresolvedSources.add(src.entry.path);
      else this.unresolvedSources.delete(src.entry.path);
    });
  }

  /** After every public write: resolve now (`sync`) or let the background scheduler know. */
  private written(): void {
    this.writes++;
    this.lastWrite = performance.now();
    if (this.mode === 'sync') {
      this.flushLinks();
      this.flushTags();
    } else this.schedule();
  }

  /**
   * Background scheduling (mode `background`): deferred work runs only once
   * the index has not been written to for `idleMs`, so a bulk load (a vault
   * scan) is not slowed down by it and resolves each link once at the end;
   * then it runs in slices of `sliceMs`, links first, with the event loop
   * free in between.
   */
  private schedule(): void {
    if (this.mode !== 'background' || this.timer !== null || this.held) return;
    if (!this.hasDeferredWork()) return this.wakeIdleWaiters();
    this.timer = setTimeout(() => this.tick(), this.idleMs);
    this.timer.unref();
  }

  /**
   * Background work waits until `releaseBackground` (it still runs when a
   * read needs it). The Vault holds it while it opens a Home: the scan's
   * last moments (workers finishing, the full text merging) leave the
   * index quiet long enough for it to start, and it then slowed the scan
   * down instead of running once the Home is ready.
   */
  holdBackground(): void {
    this.held = true;
  }

  releaseBackground(): void {
    this.held = false;
    this.schedule();
  }

  /** Resolves once no deferred work (links, tags, the full text's merge) is left (at once when there is none). */
  whenIdle(): Promise<void> {
    if (!this.hasDeferredWork()) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private wakeIdleWaiters(): void {
    if (this.idleWaiters.length === 0 || this.hasDeferredWork()) return;
    for (const resolve of this.idleWaiters.splice(0)) resolve();
  }

  private hasDeferredWork(): boolean {
    return this.pendingKeys.size > 0 || this.pendingNotes.size > 0 || this.tagsPending.size > 0 || this.fullText.hasPendingMerge;
  }

  private tick(): void {
    this.timer = null;
    if (this.held) return;
    const quiet = performance.now() - this.lastWrite;
    if (quiet < this.idleMs) {
      this.timer = setTimeout(() => this.tick(), Math.max(1, this.idleMs - quiet));
      this.timer.unref();
      return;
    }
    const linksDone = this.flushLinks(this.sliceMs);
    const tagsDone = linksDone && this.flushTags(this.sliceMs);
    if (!tagsDone) {
      this.timer = setImmediate(() => this.tick());
      this.timer.unref();
      return;
    }
    // Last, and in one piece (a merge does not pause): the scan's full text, if a search has not merged it yet.
    this.fullText.mergePending();
    this.wakeIdleWaiters();
  }

  /**
   * Resolve pending links for up to `budgetMs` (default: all); true when none
   * are left. Each queued note's links are resolved once, however many notes
   * arrived meanwhile, so a bulk load resolves every link exactly once.
   */
  private flushLinks(budgetMs = Infinity): boolean {
    if (this.pendingKeys.size === 0 && this.pendingNotes.size === 0) return true;
    const deadline = budgetMs === Infinity ? Infinity : performance.now() + budgetMs;
    const cache = new Map<string, string | null>();
    let n = 0;
    for (const key of this.pendingKeys) {
      this.pendingKeys.delete(key);
      this.reresolve(key, cache);
      if ((++n & 63) === 0 && performance.now() > deadline) return false;
    }
    for (const rec of this.pendingNotes) {
      this.pendingNotes.delete(rec);
      this.attachLinks(rec, cache);
      if ((++n & 63) === 0 && performance.now() > deadline) return false;
    }
    return true;
  }

  /** Add pending notes' tags for up to `budgetMs` (default: all); true when none are left. */
  private flushTags(budgetMs = Infinity): boolean {
    if (this.tagsPending.size === 0) return true;
    const deadline = budgetMs === Infinity ? Infinity : performance.now() + budgetMs;
    let n = 0;
    for (const [path, tags] of this.tagsPending) {
      this.tagsPending.delete(path);
      this.tagIndex.add(path, tags);
      if ((++n & 255) === 0 && performance.now() > deadline) return false;
    }
    return true;
  }

  /** Finish all deferred work (links, tags, the full text's merge) now. */
  flush(): void {
    this.flushLinks();
    this.flushTags();
    this.fullText.mergePending();
    this.wakeIdleWaiters();
  }

  /** Deferred work not done yet: notes with unresolved-yet links, keys to re-resolve, notes with tags to add. */
  pendingWork(): { notes: number; keys: number; tags: number } {
    return {
      notes: this.pendingNotes.size,
      keys: this.pendingKeys.size,
      tags: this.tagsPending.size,
    };
  }

  // ------------------------------------------------------------------ reads

  /**
   * Counts the writes (upserts and removes) the index has taken: an answer
   * derived from the index stays right while this is unchanged.
   */
  get version(): number {
    return this.writes;
  }

  has(path: string): boolean {
    return this.notesByPath.has(path) || this.filesByPath.has(path);
  }

  get noteCount(): number {
    return this.notesByPath.size;
  }

  get fileCount(): number {
    return this.filesByPath.size;
  }

  /** The note with this id (a frontmatter id's owner first, then derived ids). */
  noteById(id: string): NoteEntry | undefined {
    const owner = firstOf(this.idClaims.get(id));
    if (owner !== undefined) return this.notesByPath.get(owner)?.entry;
    const p = this.derivedIds.get(id);
    if (p === undefined) return undefined;
    const e = this.notesByPath.get(p)?.entry;
    return e !== undefined && e.id === id ? e : undefined;
  }

  noteByPath(path: string): NoteEntry | undefined {
    return this.notesByPath.get(path)?.entry;
  }

  fileByPath(path: string): FileEntry | undefined {
    return this.filesByPath.get(path)?.entry;
  }

  /** All notes, in the order they were first indexed. */
  *notes(): IterableIterator<NoteEntry> {
    for (const rec of this.notesByPath.values()) yield rec.entry;
  }

  /** All non-note files, in the order they were first indexed. */
  *files(): IterableIterator<FileEntry> {
    for (const rec of this.filesByPath.values()) yield rec.entry;
  }

  /** The stat recorded at upsert for a note or file. */
  statOf(path: string): FileStat | undefined {
    return (this.notesByPath.get(path) ?? this.filesByPath.get(path))?.stat;
  }

  /** Resolve a link target written in `fromPath` (which need not be indexed) against the current Home. */
  resolve(fromPath: string, link: { target: string; kind: 'wikilink' | 'markdown' }): string | null {
    return resolveTarget(this.lookup, fromPath, link.target, link.kind);
  }

  /** Outgoing links of a note in document order, each with its resolution. */
  outgoing(path: string): ResolvedLink[] {
    this.flushLinks();
    const rec = this.notesByPath.get(path);
    if (rec === undefined) return [];
    const links = rec.entry.facts.links;
    const out: ResolvedLink[] = new Array(links.length);
    for (let i = 0; i < links.length; i++) out[i] = links.resolvedAt(i, rec.resolved[i]!);
    return out;
  }

  /**
   * Notes linking to `path` (note or file), sorted by source path, each with
   * its occurrences in document order. Same-note links without a target
   * (`[[#Heading]]`) are not backlinks; `[[Self]]` is. The sources are kept
   * sorted; for a target with BACKLINKS_CACHED_FROM or more, each Backlink
   * (frozen) is kept until that source's links to `path` change.
   */
  backlinks(path: string): Backlink[] {
    this.flushLinks();
    const t = this.target(path);
    if (t === undefined || t.sources === null) return [];
    const sources = t.sources;
    // Kept only for well-linked targets: cached for every note, Backlinks would hold the
    // whole link graph again as objects (100 MB on the 10k bench vault), and a few are cheap to build.
    if (sources.length < BACKLINKS_CACHED_FROM && t.built === null) return sources.map((src) => buildBacklink(src, path));
    const built = (t.built ??= new Array<Backlink | null>(sources.length).fill(null));
    const out: Backlink[] = new Array(sources.length);
    for (let k = 0; k < sources.length; k++) {
      let b = built[k]!;
      if (b === null) b = built[k] = buildBacklink(sources[k]!, path);
      out[k] = b;
    }
    return out;
  }

  /** Number of notes linking to `path`. */
  backlinkCount(path: string): number {
    this.flushLinks();
    return this.target(path)?.sources?.length ?? 0;
  }

  /** Every unresolved link, by source path then document order. */
  unresolved(): UnresolvedLink[] {
    this.flushLinks();
    const out: UnresolvedLink[] = [];
    for (const src of [...this.unresolvedSources].sort(byPath)) {
      const rec = this.notesByPath.get(src)!;
      const links = rec.entry.facts.links;
      for (let i = 0; i < links.length; i++) {
        if (rec.resolved[i] === null) out.push({ from: src, target: links.target(i), line: links.line(i) });
      }
    }
    return out;
  }

  // ------------------------------------------------------------------- tags

  /** Every tag path with `count` (notes with it or a nested tag) and `direct` (notes with exactly it), sorted by lowercased tag. */
  tags(): TagCount[] {
    this.flushTags();
    return this.tagIndex.list();
  }

  /** Notes with the tag (and nested tags below it unless `nested: false`), case-insensitive, sorted by path. */
  notesWithTag(tag: string, opts: { nested?: boolean } = {}): NoteEntry[] {
    this.flushTags();
    const paths = this.tagIndex.sortedPaths(tag, opts.nested ?? true);
    if (paths === undefined) return [];
    return paths.map((p) => this.notesByPath.get(p)!.entry);
  }

  // ---------------------------------------------------------- tasks, blocks

  private taskEntry(rec: NoteRec, i: number): TaskEntry {
    // Not `{ ...task, path, noteId }`: a spread copy that gains properties costs the old generation memory (docs/architecture.md, "What a request must not leave in the old generation").
    return Object.assign({}, rec.entry.facts.tasks[i]!, { path: rec.entry.path, noteId: rec.entry.id });
  }

  /** Every task of every note (notes in indexing order, tasks in document order). */
  *tasks(): IterableIterator<TaskEntry> {
    for (const rec of this.notesByPath.values()) {
      const tasks = rec.entry.facts.tasks;
      for (let i = 0; i < tasks.length; i++) yield this.taskEntry(rec, i);
    }
  }

  /** Tasks with this block id, by path then line (block ids are unique per note, not per Home). */
  tasksByBlockId(blockId: string): TaskEntry[] {
    const out: TaskEntry[] = [];
    for (const p of allOf(this.taskBlockIdx.get(blockId))) {
      const rec = this.notesByPath.get(p)!;
      const tasks = rec.entry.facts.tasks;
      for (let i = 0; i < tasks.length; i++) if (tasks[i]!.blockId === blockId) out.push(this.taskEntry(rec, i));
    }
    return out;
  }

  /** The first task with this block id by path order (then line). */
  taskByBlockId(blockId: string): TaskEntry | undefined {
    const p = firstOf(this.taskBlockIdx.get(blockId));
    if (p === undefined) return undefined;
    const rec = this.notesByPath.get(p)!;
    const i = rec.entry.facts.tasks.findIndex((t) => t.blockId === blockId);
    return i < 0 ? undefined : this.taskEntry(rec, i);
  }

  /** Block anchors of a note in document order. */
  blocks(path: string): BlockAnchor[] {
    return this.notesByPath.get(path)?.entry.facts.blocks.slice() ?? [];
  }

  /** Where a block id is defined, by path then line. */
  blockOwner(blockId: string): Array<{ path: string; line: number }> {
    const out: Array<{ path: string; line: number }> = [];
    for (const p of allOf(this.blockIdx.get(blockId))) {
      for (const b of this.notesByPath.get(p)!.entry.facts.blocks) if (b.id === blockId) out.push({ path: p, line: b.line });
    }
    return out;
  }

  // ----------------------------------------------------------------- search

  /** Full-text search (prefix, fuzzy, title boosted), best first; see fulltext/query.ts for the query rules. */
  async search(query: string, opts: SearchOptions = {}): Promise<SearchHit[]> {
    let accept: ((path: string) => boolean) | undefined;
    const prefix = opts.pathPrefix;
    if (opts.tag !== undefined) {
      this.flushTags();
      const tagged = this.tagIndex.paths(opts.tag, true);
      if (tagged === undefined) return [];
      accept = prefix === undefined ? (p) => tagged.has(p) : (p) => p.startsWith(prefix) && tagged.has(p);
    } else if (prefix !== undefined) {
      accept = (p) => p.startsWith(prefix);
    }
    const results = this.fullText.search(query, { combineWith: opts.combineWith ?? 'AND', limit: opts.limit ?? 50, ...(accept ? { accept } : {}) });
    const out: SearchHit[] = [];
    for (const r of results) {
      const rec = this.notesByPath.get(r.path);
      if (rec === undefined) continue;
      out.push({
        path: rec.entry.path,
        id: rec.entry.id,
        title: rec.entry.title,
        score: r.score,
        terms: r.terms,
        queryTerms: r.queryTerms,
        match: r.match,
      });
    }
    return out;
  }

  /** Documents in the full-text index. */
  searchStatus(): { documents: number } {
    return { documents: this.fullText.documents };
  }

  // --------------------------------------------------------------- snapshot

  /**
   * The snapshot (snapshot.ts), line by line: each line is taken from the
   * index when it is produced, so a caller may write a few lines, let other
   * work run, and go on. Notes removed meanwhile may still appear (the next
   * scan drops them); each line is consistent in itself, since facts and
   * stat are replaced together and never mutated.
   */
  *snapshotLines(): Generator<string> {
    yield headerLine();
    const files = [...this.filesByPath.values()];
    const notes = [...this.notesByPath.values()];
    for (const r of files) yield fileLine(r.entry.path, r.stat);
    const table = new StringTable();
    // A claim older than the file's birth (kept across rename-style saves) is written down, so a restart keeps the id's owner.
    for (const r of notes) {
      const kept = r.entry.facts.id !== null && r.claimedAt !== claimTime(r.stat) ? r.claimedAt : undefined;
      yield* noteLines(r.entry.path, r.stat, r.entry.facts, table, kept);
    }
  }

  /** The whole snapshot as one text. */
  toSnapshot(): string {
    let out = '';
    for (const line of this.snapshotLines()) out += line + '\n';
    return out;
  }

  /** Rebuild from a snapshot text. Throws IndexSnapshotError on an unknown version or shape (rebuild from files then). */
  static fromSnapshot(text: string, opts: HomeIndexOptions = {}): HomeIndex {
    const idx = new HomeIndex(opts);
    for (const r of readSnapshot(text)) {
      if (r.kind === 'file') idx.upsertFile(r.path, r.stat);
      else idx.putNote(r.path, r.facts, r.stat, true, r.claimedAt);
    }
    return idx;
  }
}

/** Insert `x` at `i` (small arrays: a shift loop; large ones: splice). */
function insertAt<T>(arr: T[], i: number, x: T): void {
  const n = arr.length;
  if (n > 32) {
    arr.splice(i, 0, x);
    return;
  }
  arr.push(x);
  for (let j = n; j > i; j--) arr[j] = arr[j - 1]!;
  arr[i] = x;
}

/** Binary search of `path` in sources sorted by path: its index, or ~insertion point. */
function findSource(sources: NoteRec[], path: string): number {
  let lo = 0;
  let hi = sources.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const p = sources[mid]!.entry.path;
    if (p < path) lo = mid + 1;
    else if (p > path) hi = mid - 1;
    else return mid;
  }
  return ~lo;
}

/** Whether any link of `src` (other than a same-note `[[#x]]`) resolves to `path`. */
function linksTo(src: NoteRec, path: string): boolean {
  const links = src.entry.facts.links;
  for (let i = 0; i < links.length; i++) if (src.resolved[i] === path && links.target(i) !== '') return true;
  return false;
}

function buildBacklink(src: NoteRec, path: string): Backlink {
  const links = src.entry.facts.links;
  const occurrences: BacklinkOccurrence[] = [];
  for (let i = 0; i < links.length; i++) {
    if (src.resolved[i] === path && links.target(i) !== '') occurrences.push(occurrence(links, i));
  }
  return Object.freeze({ from: src.entry.path, occurrences: Object.freeze(occurrences) });
}
