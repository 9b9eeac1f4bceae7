/**
 * The per-Home in-memory index: notes and files, ids, link resolution with
 * backlinks, tags, tasks, block anchors and full-text search, updated
 * incrementally. It knows nothing about the file system; the caller feeds it
 * facts (src/markdown) and stats. Rules and formats: docs/index.md.
 *
 * A composition: it owns the note and file records (records.ts) and keeps
 * its parts in step on every write: the link graph (link-graph.ts), ids
 * (ids.ts), the tag index (tags.ts), block anchors (anchors.ts) and the full
 * text (fulltext/). What is deferred (links, tags, the full text's merge)
 * runs when deferred-work.ts says.
 */
import { AppError } from '../core/errors.js';
import { fieldsOf } from './fulltext/document.js';
import { FullTextIndex } from './fulltext/full-text.js';
import { blockIdsOf, decodeRest, headerLine, IndexSnapshotError, readSnapshot, restText, SnapshotBuilder, splitSnapshot, taskBlockIdsOf, type SnapshotNote } from './snapshot.js';
import { NumsSink } from './link-table.js';
import { AnchorIndex } from './anchors.js';
import { DeferredWork } from './deferred-work.js';
import { derivedId, IdIndex } from './ids.js';
import { LinkGraph } from './link-graph.js';
import { aliasKeysOf, claimTime, copyStat, createdOf, EMPTY, entryOf, indexedFacts, restoredEntry, taskEntry, undecodedRest, type FileRec, type NoteRec } from './records.js';
import { DeferredTagIndex } from './tags.js';
import type { BlockAnchor } from '../markdown/facts.js';
import type {
  AnyFacts,
  Backlink,
  FileEntry,
  FileStat,
  HomeIndexOptions,
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
export { derivedId } from './ids.js';

export class HomeIndex {
  private readonly notesByPath = new Map<string, NoteRec>();
  private readonly filesByPath = new Map<string, FileRec>();
  private readonly graph = new LinkGraph(this.notesByPath, this.filesByPath);
  private readonly ids = new IdIndex(this.notesByPath);
  private readonly tagIndex = new DeferredTagIndex();
  private readonly anchors = new AnchorIndex(this.notesByPath);
  /** Full text of every note (fulltext/): updated inside each upsert and remove. */
  readonly fullText: FullTextIndex;
  private readonly fullTextWaitMs: number;
  private readonly deferred: DeferredWork;
  private writes = 0;

  constructor(opts: HomeIndexOptions = {}) {
    this.fullText = opts.fullText ?? new FullTextIndex();
    this.fullTextWaitMs = opts.fullTextWaitMs ?? 15_000;
    this.deferred = new DeferredWork(
      {
        runSlice: (budgetMs) => this.graph.flush(budgetMs) && this.tagIndex.flush(budgetMs),
        hasWork: () => this.graph.hasPending() || this.tagIndex.pending > 0,
      },
      opts.mode ?? 'background',
      opts.sliceMs ?? 10,
      opts.idleMs ?? 50,
    );
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
   * from JSON (`upsertScanned`), so their strings are flat already.
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

  /**
   * A note a scan thread read (vault/scan-wire.ts): its head, with the rest
   * of its facts as bytes parsed the first time something reads them, as a
   * note restored from a snapshot (`putRestored`); its full text comes from
   * that thread. At a path that holds a note already, the rest is parsed
   * now and the note replaced as by `upsertNote`.
   */
  upsertScanned(path: string, note: SnapshotNote, stat: FileStat): void {
    if (this.notesByPath.has(path)) return this.upsertNote(path, decodeRest(path, note), stat, null, true);
    if (this.filesByPath.has(path)) this.remove(path);
    this.putRestored(path, note, copyStat(stat), derivedId(path), undefined, false);
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
    this.graph.fileAdded(path);
    this.written();
  }

  /** Forget a note or file. Links to it fall back to the next candidate or become unresolved. */
  remove(path: string): void {
    const file = this.filesByPath.get(path);
    if (file !== undefined) {
      this.graph.fileRemoved(file, path);
      this.filesByPath.delete(path);
      this.written();
      return;
    }
    const rec = this.notesByPath.get(path);
    if (rec === undefined) return;
    this.detachNote(rec);
    this.graph.noteRemoved(rec, path);
    this.notesByPath.delete(path);
    this.ids.removeDerived(rec);
    this.fullText.delete(path);
    this.written();
  }

  /**
   * `fresh`: facts straight from JSON.parse (already flat, short strings
   * shared by V8), no need to detach.
   */
  private putNote(path: string, given: AnyFacts, stat: FileStat, fresh = false): void {
    const facts = indexedFacts(given, fresh);
    if (this.filesByPath.has(path)) this.remove(path);
    const rec = this.notesByPath.get(path);
    const blockIds = blockIdsOf(facts.blocks);
    const taskBlockIds = taskBlockIdsOf(facts.tasks);
    if (rec === undefined) {
      const derived = derivedId(path);
      this.addRec({
        entry: entryOf(path, facts, stat, derived),
        stat: copyStat(stat),
        links: facts.links,
        claimId: facts.id,
        blockIds,
        taskBlockIds,
        resolved: new Array<string | null>(facts.links.length),
        unresolvedCount: 0,
        aliasKeys: aliasKeysOf(facts.aliases),
        derived,
        claimedAt: claimTime(stat),
        attached: false,
        sources: null,
        built: null,
      }, false);
      return;
    }
    // Same path: links to it stay; everything the old facts registered goes.
    const oldAliases = rec.aliasKeys;
    const sameId = rec.claimId === facts.id;
    this.detachNote(rec);
    if (!sameId) rec.claimedAt = claimTime(stat);
    rec.entry = entryOf(path, facts, stat, rec.derived);
    rec.stat = copyStat(stat);
    rec.links = facts.links;
    rec.claimId = facts.id;
    rec.blockIds = blockIds;
    rec.taskBlockIds = taskBlockIds;
    rec.resolved = new Array<string | null>(facts.links.length);
    rec.aliasKeys = aliasKeysOf(facts.aliases);
    this.ids.claim(rec);
    this.graph.noteAdded(rec, false, oldAliases);
    this.attachNote(rec);
  }

  /**
   * A note read from a snapshot (or sent by a scan thread), at a path the
   * index does not hold yet: its facts other than the head's stay
   * undecoded (records.ts, `restoredEntry`). `restored`: the snapshot holds its links'
   * resolutions (set by the link graph's `restore` once every note is in),
   * so its links are not queued.
   */
  private putRestored(path: string, note: SnapshotNote, stat: FileStat, derived: string, claimedAt: number | undefined, restored: boolean): NoteRec {
    if (this.filesByPath.has(path) || this.notesByPath.has(path)) throw new IndexSnapshotError('index_snapshot_invalid', 'Index snapshot names a path twice');
    const rec: NoteRec = {
      entry: restoredEntry(path, stat, derived, note),
      stat,
      links: note.links,
      claimId: note.id,
      blockIds: note.blockIds,
      taskBlockIds: note.taskBlockIds,
      // Restored links get theirs from the link graph's `restore`.
      resolved: restored ? (EMPTY as never[]) : new Array<string | null>(note.links.length),
      unresolvedCount: 0,
      aliasKeys: aliasKeysOf(note.aliases),
      derived,
      claimedAt: claimedAt ?? claimTime(stat),
      attached: false,
      sources: null,
      built: null,
    };
    this.addRec(rec, restored);
    return rec;
  }

  /** Register a note new at its path with every part. */
  private addRec(rec: NoteRec, restored: boolean): void {
    this.notesByPath.set(rec.entry.path, rec);
    this.ids.addDerived(rec);
    this.ids.claim(rec);
    if (restored) this.graph.noteRestored(rec);
    else this.graph.noteAdded(rec, true, EMPTY);
    this.attachNote(rec);
  }

  /** Register the note's tags and block anchors. */
  private attachNote(rec: NoteRec): void {
    this.tagIndex.add(rec.entry.path, rec.entry.tags);
    this.anchors.add(rec.entry.path, rec.blockIds, rec.taskBlockIds);
  }

  /** Undo what `putNote` registered for the note's current facts, except the note map, name index and derived id. */
  private detachNote(rec: NoteRec): void {
    const path = rec.entry.path;
    this.graph.detachNote(rec);
    this.ids.release(rec);
    this.tagIndex.remove(path, rec.entry.tags);
    this.anchors.remove(path, rec.blockIds, rec.taskBlockIds);
  }

  /** After every public write. */
  private written(): void {
    this.writes++;
    this.deferred.written();
  }

  // ----------------------------------------------------------- deferred work

  /** Background work (links, tags, the full text's merge) waits until `releaseBackground`; see deferred-work.ts. */
  holdBackground(): void {
    this.deferred.hold();
  }

  releaseBackground(): void {
    this.deferred.release();
  }

  /** Resolves once no deferred work (links, tags, the full text's merge) is left (at once when there is none). */
  whenIdle(): Promise<void> {
    return this.deferred.whenIdle();
  }

  /** Finish all deferred work (links, tags, the full text's merge) now. */
  flush(): void {
    this.deferred.finish();
  }

  /**
   * Deferred work not done yet: notes with unresolved-yet links, keys to
   * re-resolve, notes with tags to add, notes whose links' resolutions from
   * a snapshot are not applied yet.
   */
  pendingWork(): { notes: number; keys: number; tags: number; restoring: number } {
    const links = this.graph.pending;
    return {
      notes: links.notes,
      keys: links.keys,
      tags: this.tagIndex.pending,
      restoring: links.restoring,
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
    return this.ids.noteById(id)?.entry;
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

  // ------------------------------------------------------------------ links

  /** Resolve a link target written in `fromPath` (which need not be indexed) against the current Home. */
  resolve(fromPath: string, link: { target: string; kind: 'wikilink' | 'markdown' }): string | null {
    return this.graph.resolve(fromPath, link);
  }

  /** Outgoing links of a note in document order, each with its resolution. */
  outgoing(path: string): ResolvedLink[] {
    return this.graph.outgoing(path);
  }

  /** Notes linking to `path` (note or file), sorted by source path, each with its occurrences in document order (link-graph.ts). */
  backlinks(path: string): Backlink[] {
    return this.graph.backlinks(path);
  }

  /** Number of notes linking to `path`. */
  backlinkCount(path: string): number {
    return this.graph.backlinkCount(path);
  }

  /** Every unresolved link, by source path then document order. */
  unresolved(): UnresolvedLink[] {
    return this.graph.unresolved();
  }

  // ------------------------------------------------------------------- tags

  /** Every tag path with `count` (notes with it or a nested tag) and `direct` (notes with exactly it), sorted by lowercased tag. */
  tags(): TagCount[] {
    return this.tagIndex.list();
  }

  /** Notes with the tag (and nested tags below it unless `nested: false`), case-insensitive, sorted by path. */
  notesWithTag(tag: string, opts: { nested?: boolean } = {}): NoteEntry[] {
    const paths = this.tagIndex.sortedPaths(tag, opts.nested ?? true);
    if (paths === undefined) return [];
    return paths.map((p) => this.notesByPath.get(p)!.entry);
  }

  // ---------------------------------------------------------- tasks, blocks

  /** Every task of every note (notes in indexing order, tasks in document order). */
  *tasks(): IterableIterator<TaskEntry> {
    for (const rec of this.notesByPath.values()) {
      const tasks = rec.entry.facts.tasks;
      for (let i = 0; i < tasks.length; i++) yield taskEntry(rec, i);
    }
  }

  /** Tasks with this block id, by path then line (block ids are unique per note, not per Home). */
  tasksByBlockId(blockId: string): TaskEntry[] {
    return this.anchors.tasksByBlockId(blockId);
  }

  /** The first task with this block id by path order (then line). */
  taskByBlockId(blockId: string): TaskEntry | undefined {
    return this.anchors.taskByBlockId(blockId);
  }

  /** Block anchors of a note in document order. */
  blocks(path: string): BlockAnchor[] {
    return this.anchors.blocks(path);
  }

  /** Where a block id is defined, by path then line. */
  blockOwner(blockId: string): Array<{ path: string; line: number }> {
    return this.anchors.blockOwner(blockId);
  }

  // ----------------------------------------------------------------- search

  /**
   * Waits for the scan workers' full text, but not without end (a worker
   * that hangs after sending its facts): past `fullTextWaitMs` the search
   * answers 503 with a retry hint, as a request to a Home still indexing
   * does (Vault.whenReady).
   */
  private async untilFullText(): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<boolean>((resolve) => (timer = setTimeout(resolve, this.fullTextWaitMs, true)));
    const tooLate = await Promise.race([this.fullText.whenComplete().then(() => false), late]);
    clearTimeout(timer);
    if (tooLate) {
      throw new AppError('service_unavailable', 'The search index of this Home is still being built; retry shortly', {
        details: { reason: 'indexing' },
        headers: { 'retry-after': '1' },
      });
    }
  }

  /** Full-text search (prefix, fuzzy, title boosted), best first; see fulltext/query.ts for the query rules. */
  async search(query: string, opts: SearchOptions = {}): Promise<SearchHit[]> {
    // A cold opening is ready before the scan workers' full text is in: never answer from part of it.
    if (this.fullText.awaiting) await this.untilFullText();
    let accept: ((path: string) => boolean) | undefined;
    const prefix = opts.pathPrefix;
    if (opts.tag !== undefined) {
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
   * The snapshot (snapshot.ts): its text line by line, each line taken from
   * the index when it is produced, so a caller may write a few lines, let
   * other work run, and go on; then `tail()`, the bytes that end it (call it
   * once the lines are all taken). Notes removed meanwhile may still appear
   * (the next scan drops them); each line is consistent in itself, since
   * facts and stat are replaced together and never mutated. Link
   * resolutions are kept only when no write happened meanwhile.
   */
  snapshotWriter(): { lines: Generator<string>; tail: () => Uint8Array } {
    const columns = new SnapshotBuilder();
    let textBytes = 0;
    let resolutions: Int32Array | null = null;
    const self = this;
    function* lines(): Generator<string> {
      const version = self.writes;
      let settled = self.graph.settled();
      const files = [...self.filesByPath.values()];
      const notes = [...self.notesByPath.values()];
      const numbers = new Map<string, number>();
      for (const r of files) numbers.set(r.entry.path, numbers.size);
      for (const r of notes) numbers.set(r.entry.path, numbers.size);
      const res: number[] = [];
      const header = headerLine();
      textBytes = Buffer.byteLength(header) + 1;
      yield header;
      for (const r of files) columns.file(r.entry.path, r.stat);
      // A claim older than the file's birth (kept across rename-style saves) is written down, so a restart keeps the id's owner.
      for (const r of notes) {
        const kept = r.claimId !== null && r.claimedAt !== claimTime(r.stat) ? r.claimedAt : undefined;
        // A note whose facts were never read since they came from a snapshot is written as the text it was read from.
        const rest = undecodedRest(r.entry) ?? restText(r.entry.facts);
        const head = { id: r.claimId, aliases: r.entry.aliases as string[], tags: r.entry.tags as string[], blockIds: r.blockIds, taskBlockIds: r.taskBlockIds, links: r.links };
        const start = textBytes;
        textBytes += Buffer.byteLength(rest) + 1;
        columns.note(r.entry.path, r.stat, head, r.derived, kept, start, textBytes - 1);
        yield rest;
        if (!settled) continue;
        if (!r.attached) settled = false;
        for (let i = 0; settled && i < r.links.length; i++) {
          const to = r.resolved[i];
          const n = to === null ? -1 : to === undefined ? undefined : numbers.get(to);
          if (n === undefined) settled = false;
          else res.push(n);
        }
      }
      if (settled && self.writes === version) resolutions = Int32Array.from(res);
    }
    return { lines: lines(), tail: () => columns.tail(textBytes, resolutions) };
  }

  /** The whole snapshot. */
  toSnapshot(): Buffer {
    const w = this.snapshotWriter();
    let text = '';
    for (const line of w.lines) text += line + '\n';
    return Buffer.concat([Buffer.from(text), w.tail()]);
  }

  /** Rebuild from a snapshot. Throws IndexSnapshotError on an unknown version or shape (rebuild from files then). */
  static fromSnapshot(data: Uint8Array, opts: HomeIndexOptions = {}): HomeIndex {
    const parts = splitSnapshot(data);
    const idx = new HomeIndex(opts);
    // What is a function of the note and file maps is made when first needed, not while the rows are read.
    idx.graph.deferNames();
    idx.ids.deferDerived();
    const res = parts.resolutions;
    const notes: NoteRec[] = [];
    const starts: number[] = [];
    const paths: string[] = [];
    for (const r of readSnapshot(parts)) {
      paths.push(r.path);
      if (r.kind === 'file') {
        idx.upsertFile(r.path, r.stat);
        continue;
      }
      notes.push(idx.putRestored(r.path, r.note, r.stat, r.derived, r.claimedAt, res !== null));
      starts.push(r.linkAt);
    }
    // One record per path: a snapshot this build wrote names each once (the two maps hold each path once, in one of them).
    if (idx.filesByPath.size + idx.notesByPath.size !== paths.length) throw new IndexSnapshotError('index_snapshot_invalid', 'Index snapshot names a path twice');
    idx.graph.loaded();
    if (res !== null) {
      try {
        idx.graph.restore(notes, starts, res, paths);
      } catch (e) {
        if (e instanceof TypeError) throw new IndexSnapshotError('index_snapshot_invalid', 'Index snapshot has a malformed link resolution');
        throw e;
      }
    }
    return idx;
  }
}
