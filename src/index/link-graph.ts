/**
 * The link graph of a Home: which note or file each link resolves to, and
 * the backlinks of every target, kept up to date as notes and files come and
 * go. Resolution is deferred: a note's links are queued when it arrives and
 * resolved at the next `flush` (deferred-work.ts decides when), together, so
 * a bulk load resolves each link once. Links are registered by the keys
 * their target can match (name key, alias key: links.ts), so a new or
 * removed name or alias re-resolves only the links that carry it. A question
 * resolves only the queued links its answer depends on (`settleTarget`,
 * `settleSource`); any order of attaching notes gives the same graph.
 *
 * The note and file records (records.ts) belong to the HomeIndex; the graph
 * reads its maps and owns the records' link fields (`resolved`,
 * `unresolvedCount`, `attached`, `sources`, `built`).
 */
import {
  addToSortedMap,
  byLengthThenPath,
  byPath,
  dependsOnSource,
  keysOfTarget,
  nameKeyOfPath,
  removeFromSortedMap,
  resolveTarget,
  type PathLookup,
  type PathSet,
} from './links.js';
import type { LinkTable } from './link-table.js';
import { addRef, dropRefs, forEachRef, type Refs as LinkRefs } from './link-refs.js';
import type { FileRec, NoteRec, TargetRec } from './records.js';
import type { Backlink, BacklinkOccurrence, ResolvedLink, UnresolvedLink } from './types.js';

/** The links carrying one key, by source note (link-refs.ts). */
type Refs = LinkRefs<NoteRec>;

/** Resolutions taken from a snapshot, applied in path order from `next` (`LinkGraph.applyRestored`). */
interface Restoring {
  notes: readonly NoteRec[];
  starts: readonly number[];
  resolutions: Int32Array;
  paths: readonly string[];
  targets: TargetRec[] | null;
  order: number[] | null;
  next: number;
  /** Per note: applied in its turn (null: none yet). */
  done: Uint8Array | null;
  /**
   * Per path number: its sources were completed for a question
   * (`restoreSourcesOf`), so notes applied in turn are inserted there, in
   * path order, not appended (null: none was).
   */
  asked: Uint8Array | null;
}

/** Targets with at least this many linking notes keep their built Backlinks (see `backlinks`). */
const BACKLINKS_CACHED_FROM = 64;

export class LinkGraph {
  /**
   * Name key → note and file paths, shortest first; lowercased alias → note
   * paths, shortest first. Functions of the note and file maps, so a
   * snapshot's reading leaves them unmade (`deferNames`): they are made
   * (`names`) before the first resolution or change, or by the deferred
   * work (10k bench vault: 10k sorted-map insertions not needed to be ready).
   */
  private byName_: Map<string, PathSet> | null = new Map();
  private byAlias_: Map<string, PathSet> | null = new Map();
  /** While a snapshot's rows are read: file rows then change nothing else (`fileAdded`). */
  private loading = false;
  /** Name key or alias key → the links carrying it, as (note, link index) pairs. */
  private readonly linksByKey = new Map<string, Refs>();
  private readonly unresolvedSources = new Set<string>();
  /** Notes whose links are not resolved yet. */
  private readonly pendingNotes = new Set<NoteRec>();
  /** Keys whose (resolved) links must be resolved again. */
  private readonly pendingKeys = new Set<string>();
  /**
   * Notes whose links were restored resolved from a snapshot (`restore`) but
   * are not yet registered by key: until they are, `linksByKey` is
   * incomplete, so any key touched meanwhile is queued, and the first flush
   * that re-resolves a key registers them all first.
   */
  private readonly unkeyed = new Set<NoteRec>();
  /**
   * Resolutions `restore` took from a snapshot and has not applied yet: they
   * are applied (`applyRestored`) before anything reads or changes the
   * graph, or by the deferred work, so a warm start does not build 550k
   * `resolved` slots and the backlink lists before it is ready (10k bench
   * vault: ~40 ms of the main thread and the garbage collection they cause).
   */
  private restoring: Restoring | null = null;

  private readonly lookup: PathLookup;

  constructor(
    private readonly notesByPath: ReadonlyMap<string, NoteRec>,
    private readonly filesByPath: ReadonlyMap<string, FileRec>,
  ) {
    this.lookup = {
      has: (p) => notesByPath.has(p) || filesByPath.has(p),
      isNote: (p) => notesByPath.has(p),
      byName: (k) => this.byName.get(k),
      byAlias: (k) => this.byAlias.get(k),
    };
  }

  private get byName(): Map<string, PathSet> {
    if (this.byName_ === null) this.makeNames();
    return this.byName_!;
  }

  private get byAlias(): Map<string, PathSet> {
    if (this.byAlias_ === null) this.makeNames();
    return this.byAlias_!;
  }

  /** The index is about to read a snapshot's rows into its (empty) maps: the name maps wait (`byName_`). */
  deferNames(): void {
    this.byName_ = null;
    this.byAlias_ = null;
    this.loading = true;
  }

  /** The snapshot's rows are all in the maps. */
  loaded(): void {
    this.loading = false;
  }

  /**
   * Before a change: the name maps, made from the note and file maps as
   * they stand (holding the change's own path already, for an addition:
   * its insertion below is then a no-op), so that the change applies to them.
   */
  private makeNamesNow(): void {
    if (this.byName_ === null) this.makeNames();
  }

  /** The name maps as the note and file maps make them (the order of insertion does not matter: each set is sorted). */
  private makeNames(): void {
    const byName = new Map<string, PathSet>();
    const byAlias = new Map<string, PathSet>();
    for (const path of this.filesByPath.keys()) addToSortedMap(byName, nameKeyOfPath(path), path, byLengthThenPath);
    for (const [path, rec] of this.notesByPath) {
      addToSortedMap(byName, nameKeyOfPath(path), path, byLengthThenPath);
      for (const a of rec.aliasKeys) addToSortedMap(byAlias, a, path, byLengthThenPath);
    }
    this.byName_ = byName;
    this.byAlias_ = byAlias;
  }

  // ---------------------------------------------------------------- changes

  /** A file is now in the file map: links naming it may resolve to it. */
  fileAdded(path: string): void {
    // A snapshot's file row: no link is registered yet for touchKey to queue, and the name maps wait.
    if (this.loading) return;
    this.applyRestored();
    this.makeNamesNow();
    const key = nameKeyOfPath(path);
    addToSortedMap(this.byName, key, path, byLengthThenPath);
    this.touchKey(key);
  }

  /** A file is going away: links to it fall back to the next candidate or become unresolved. */
  fileRemoved(rec: FileRec, path: string): void {
    this.applyRestored();
    this.makeNamesNow();
    this.orphanIncoming(rec, path);
    const key = nameKeyOfPath(path);
    removeFromSortedMap(this.byName, key, path, byLengthThenPath);
    this.touchKey(key);
  }

  /**
   * A note is in the note map with new facts (`isNew`: its path was not a
   * note before; `oldAliases`: the alias keys of its previous facts, already
   * unregistered by `detachNote`). Its links are queued; other notes' links
   * that may now resolve differently are too: those naming this path (when
   * it is new) and those naming an alias it gained or lost.
   */
  noteAdded(rec: NoteRec, isNew: boolean, oldAliases: readonly string[]): void {
    this.applyRestored();
    this.makeNamesNow();
    const path = rec.entry.path;
    const aliasKeys = rec.aliasKeys;
    const key = nameKeyOfPath(path);
    if (isNew) addToSortedMap(this.byName, key, path, byLengthThenPath);
    for (const a of aliasKeys) addToSortedMap(this.byAlias, a, path, byLengthThenPath);
    rec.attached = false;
    this.pendingNotes.add(rec);
    if (isNew) this.touchKey(key);
    for (const a of aliasKeys) if (!oldAliases.includes(a)) this.touchKey(a);
    for (const a of oldAliases) if (!aliasKeys.includes(a)) this.touchKey(a);
  }

  /** Unregister what `noteAdded` registered for the note's current facts, except its name (the path stays). */
  detachNote(rec: NoteRec): void {
    this.applyRestored();
    this.makeNamesNow();
    this.detachLinks(rec);
    for (const a of rec.aliasKeys) removeFromSortedMap(this.byAlias, a, rec.entry.path, byLengthThenPath);
  }

  /** A note (detached already) is going away: links to it fall back or become unresolved. */
  noteRemoved(rec: NoteRec, path: string): void {
    this.applyRestored();
    this.makeNamesNow();
    this.orphanIncoming(rec, path);
    const key = nameKeyOfPath(path);
    removeFromSortedMap(this.byName, key, path, byLengthThenPath);
    this.touchKey(key);
    for (const a of rec.aliasKeys) this.touchKey(a);
  }

  // ---------------------------------------------------------------- flushing

  /** Links queued or to re-resolve, and notes whose restored resolutions wait (`restoring`). */
  get pending(): { notes: number; keys: number; restoring: number } {
    const r = this.restoring;
    return { notes: this.pendingNotes.size, keys: this.pendingKeys.size, restoring: r === null ? 0 : r.notes.length - r.next };
  }

  /**
   * Whether any work is left: links to resolve. Restored links not yet
   * registered by key are not work until a change to the Home's names
   * queues a key (`touchKey`), which `flush` then does first: on a Home that
   * keeps its names, the keys of 550k links are never built.
   */
  hasPending(): boolean {
    return this.restoring !== null || this.byName_ === null || this.pendingKeys.size > 0 || this.pendingNotes.size > 0;
  }

  /** Whether every note's `resolved` is the current answer (what a snapshot may store). */
  settled(): boolean {
    this.applyRestored();
    return this.pendingKeys.size === 0 && this.pendingNotes.size === 0;
  }

  /**
   * Resolve pending links for up to `budgetMs` (default: all); true when none
   * are left. Each queued note's links are resolved once, however many notes
   * arrived meanwhile, so a bulk load resolves every link exactly once.
   */
  flush(budgetMs = Infinity): boolean {
    const deadline = budgetMs === Infinity ? Infinity : performance.now() + budgetMs;
    if (!this.applyRestored(deadline)) return false;
    this.makeNamesNow();
    if (this.pendingKeys.size === 0 && this.pendingNotes.size === 0) return true;
    const cache = new Map<string, string | null>();
    if (!this.flushKeys(budgetMs, deadline, cache)) return false;
    let n = 0;
    for (const rec of this.pendingNotes) {
      this.pendingNotes.delete(rec);
      this.attachLinks(rec, cache);
      if ((++n & 63) === 0 && performance.now() > deadline) return false;
    }
    return true;
  }

  /**
   * Re-resolve the links of the pending keys (until `deadline`); true when
   * none are left. Then every attached link resolves as it would after a
   * whole flush: whatever changed the Home's names since it was resolved
   * queued one of its keys. Only queued notes' links are left.
   */
  private flushKeys(budgetMs: number, deadline: number, cache: Map<string, string | null>): boolean {
    if (this.pendingKeys.size === 0) return true;
    // Re-resolving a key must see every link carrying it.
    if (!this.registerKeys(budgetMs)) return false;
    let n = 0;
    for (const key of this.pendingKeys) {
      this.pendingKeys.delete(key);
      this.reresolve(key, cache);
      if ((++n & 63) === 0 && performance.now() > deadline) return false;
    }
    return true;
  }

  /**
   * Do the deferred link work an answer about `path` as a target needs, and
   * no more: the pending keys, then, of the queued notes, only those with a
   * link that can resolve to `path`. A link resolves only to a path with its
   * name key, or to a note with its alias key (links.ts), so the others
   * cannot name it, whatever they resolve to. The rest stays queued for the
   * background work: after a cold opening of the 10k bench vault, a first
   * backlinks question attached 8 notes of 10,010 instead of all (550,000
   * links, about a second of the main thread). Finding them reads the queued
   * notes' target numbers, testing each distinct target string once
   * (`LinkTable.someTarget`, `targetHasKey`): no key strings are made for
   * 550k links (CPU of the question 45–50 → 25–30 ms there).
   */
  private settleTarget(path: string): void {
    this.restoreSourcesOf(path);
    const cache = new Map<string, string | null>();
    this.flushKeys(Infinity, Infinity, cache);
    if (this.pendingNotes.size === 0) return;
    const name = nameKeyOfPath(path);
    // A file has no aliases; a note's are its current ones (a link to an alias it lost queued that key above).
    const aliases = this.notesByPath.get(path)?.aliasKeys ?? [];
    // Each distinct target string (per strings array: 63k for the bench vault's 550k links) is tested once.
    const names = (target: string): boolean => targetHasKey(target, name, aliases);
    const seen = new Map<readonly string[], Int8Array>();
    for (const rec of this.pendingNotes) {
      if (!rec.links.someTarget(names, seen)) continue;
      this.pendingNotes.delete(rec);
      this.attachLinks(rec, cache);
    }
  }

  /** The same for an answer about the links of the note at `path`: the pending keys, and that note if it is queued. */
  private settleSource(path: string): void {
    this.restoreLinksOf(path);
    const cache = new Map<string, string | null>();
    this.flushKeys(Infinity, Infinity, cache);
    const rec = this.notesByPath.get(path);
    if (rec !== undefined && this.pendingNotes.delete(rec)) this.attachLinks(rec, cache);
  }

  /**
   * Register restored notes' links by key for up to `budgetMs`; true when
   * none are left. Queries do not need it (their answers are the restored
   * resolutions); a change to the Home's names does, and `flush` calls this
   * before re-resolving the first key such a change queued.
   */
  private registerKeys(budgetMs: number): boolean {
    if (this.unkeyed.size === 0) return true;
    const deadline = budgetMs === Infinity ? Infinity : performance.now() + budgetMs;
    let n = 0;
    for (const rec of this.unkeyed) {
      this.unkeyed.delete(rec);
      const links = rec.links;
      for (let i = 0; i < links.length; i++) {
        const target = links.target(i);
        if (target === '') continue;
        const { alias: ak, name: nk } = keysOfTarget(target);
        this.addKey(nk, rec, i);
        if (ak !== nk) this.addKey(ak, rec, i);
      }
      if ((++n & 63) === 0 && performance.now() > deadline) return false;
    }
    return true;
  }

  /** A note read from a snapshot that holds its links' resolutions: its name and aliases are registered; `restore` does the rest. */
  noteRestored(rec: NoteRec): void {
    if (this.byName_ !== null) {
      const path = rec.entry.path;
      addToSortedMap(this.byName_, nameKeyOfPath(path), path, byLengthThenPath);
      for (const a of rec.aliasKeys) addToSortedMap(this.byAlias, a, path, byLengthThenPath);
    }
    rec.attached = false;
  }

  /**
   * Set the links of notes read from a snapshot (`noteRestored`; all its
   * notes and files are in the maps already) to their stored resolutions
   * instead of resolving them again: what `attachLinks` does, but for the
   * keys (`registerKeys`, later). Link `i` of `notes[j]` resolves to
   * `paths[resolutions[starts[j] + i]]`, or to nothing for -1. Throws a
   * TypeError when a resolution names no indexed path. Checked now, applied
   * later (`restoring`).
   */
  restore(notes: readonly NoteRec[], starts: readonly number[], resolutions: Int32Array, paths: readonly string[]): void {
    for (let j = 0; j < notes.length; j++) {
      const at = starts[j]!;
      if (!Number.isInteger(at) || at < 0 || at + notes[j]!.links.length > resolutions.length) throw new TypeError('link graph: restored links out of range');
    }
    // Every path names an indexed note or file (the caller checked), so a number in range names a target.
    for (let i = 0; i < resolutions.length; i++) {
      const k = resolutions[i]!;
      if (!(k >= -1 && k < paths.length)) throw new TypeError('link graph: a restored link resolves to no indexed path');
    }
    this.restoring = { notes, starts, resolutions, paths, targets: null, order: null, next: 0, done: null, asked: null };
  }

  /** Apply the restored resolutions (`restoring`) until `deadline`; true when none are left. */
  private applyRestored(deadline = Infinity): boolean {
    const r = this.restoring;
    if (r === null) return true;
    const notes = r.notes;
    // In path order, so each target's sources are appended in order.
    const order = (r.order ??= notes.map((_, j) => j).sort((a, b) => byPath(notes[a]!.entry.path, notes[b]!.entry.path)));
    const done = (r.done ??= new Uint8Array(notes.length));
    const targets = (r.targets ??= r.paths.map((p) => this.target(p)!));
    while (r.next < order.length) {
      const j = order[r.next++]!;
      const rec = notes[j]!;
      this.resolveRestored(r, j);
      const at = r.starts[j]!;
      for (let i = 0; i < rec.links.length; i++) {
        if (rec.links.target(i) === '') continue; // a same-note link: never a backlink
        const k = r.resolutions[at + i]!;
        if (k === -1) continue;
        if (r.asked !== null && r.asked[k] === 1) this.addSource(targets[k]!, rec);
        else appendSource(targets[k]!, rec);
      }
      rec.attached = true;
      this.unkeyed.add(rec);
      done[j] = 1;
      if ((r.next & 63) === 0 && performance.now() > deadline) return false;
    }
    this.restoring = null;
    return true;
  }

  /** Set notes[j]'s `resolved` from its stored resolutions (not its place in the sources: `applyRestored`). */
  private resolveRestored(r: Restoring, j: number): void {
    const rec = r.notes[j]!;
    const at = r.starts[j]!;
    const path = rec.entry.path;
    const links = rec.links;
    const resolved = new Array<string | null>(links.length);
    let unresolved = 0;
    for (let i = 0; i < links.length; i++) {
      if (links.target(i) === '') {
        resolved[i] = path;
        continue;
      }
      const k = r.resolutions[at + i]!;
      if (k === -1) {
        resolved[i] = null;
        unresolved++;
      } else resolved[i] = r.paths[k]!;
    }
    rec.resolved = resolved;
    rec.unresolvedCount = unresolved;
    if (unresolved > 0) this.unresolvedSources.add(path);
  }

  /**
   * Before an answer about `path` as a target while restored resolutions
   * wait: the notes not applied yet with a stored resolution to `path` are
   * resolved and put in its sources now; the rest waits for the slices.
   * Nothing changed the graph since the snapshot was read (every change
   * applies them all first). A first backlinks question after a warm start
   * of the 10k bench vault applied all 550k (35–50 ms) for a note linked
   * from 8.
   */
  private restoreSourcesOf(path: string): void {
    const r = this.restoring;
    if (r === null) return;
    // Links queued too (not a warm start's state): their attaching inserts sources the in-turn appends assume absent.
    if (this.pendingNotes.size > 0 || this.pendingKeys.size > 0) {
      this.applyRestored();
      return;
    }
    const k = r.paths.indexOf(path);
    // Not among the snapshot's paths, or asked already: no restored link to add.
    if (k === -1 || (r.asked !== null && r.asked[k] === 1)) return;
    const picked: number[] = [];
    for (let j = 0; j < r.notes.length; j++) if ((r.done === null || r.done[j] === 0) && restoredLinksTo(r, j, k)) picked.push(j);
    // A hub's question (Home.md: 9,445 of 10,010 notes) reads most of them: all applied in turn are appended, not inserted.
    if (picked.length * 4 > r.notes.length - r.next) {
      this.applyRestored();
      return;
    }
    (r.asked ??= new Uint8Array(r.paths.length))[k] = 1;
    const t = (r.targets ??= r.paths.map((p) => this.target(p)!))[k]!;
    for (const j of picked) {
      this.resolveRestored(r, j);
      this.addSource(t, r.notes[j]!);
    }
  }

  /** The same for an answer about the links of the note at `path`: its resolutions (its outgoing links are read off them). */
  private restoreLinksOf(path: string): void {
    const r = this.restoring;
    const rec = this.notesByPath.get(path);
    if (r === null || rec === undefined) return;
    if (this.pendingNotes.size > 0 || this.pendingKeys.size > 0) {
      this.applyRestored();
      return;
    }
    const j = r.notes.indexOf(rec);
    if (j !== -1 && (r.done === null || r.done[j] === 0)) this.resolveRestored(r, j);
  }

  // ----------------------------------------------------------------- queries

  /** Resolve a link target written in `fromPath` (which need not be indexed) against the current Home. */
  resolve(fromPath: string, link: { target: string; kind: 'wikilink' | 'markdown' }): string | null {
    return resolveTarget(this.lookup, fromPath, link.target, link.kind);
  }

  /** Outgoing links of a note in document order, each with its resolution. */
  outgoing(path: string): ResolvedLink[] {
    this.settleSource(path);
    const rec = this.notesByPath.get(path);
    if (rec === undefined) return [];
    const links = rec.links;
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
    this.settleTarget(path);
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
    this.settleTarget(path);
    return this.target(path)?.sources?.length ?? 0;
  }

  /** Every unresolved link, by source path then document order. */
  unresolved(): UnresolvedLink[] {
    this.flush();
    const out: UnresolvedLink[] = [];
    for (const src of [...this.unresolvedSources].sort(byPath)) {
      const rec = this.notesByPath.get(src)!;
      const links = rec.links;
      for (let i = 0; i < links.length; i++) {
        if (rec.resolved[i] === null) out.push({ from: src, target: links.target(i), line: links.line(i) });
      }
    }
    return out;
  }

  // ---------------------------------------------------------------- internals

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
    this.addSource(this.target(path)!, src);
  }

  /** `src` as a source of `t`, in path order, once. */
  private addSource(t: TargetRec, src: NoteRec): void {
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
      const links = src.links;
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
    const links = rec.links;
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
    // Restored and not registered by key yet: only its incoming entries to drop.
    const keyed = !this.unkeyed.delete(rec);
    const links = rec.links;
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
    for (const k of keyed ? keys : []) {
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
    if (this.unkeyed.size > 0 || this.linksByKey.has(key)) this.pendingKeys.add(key);
  }

  /** Re-resolve every registered (so resolved) link carrying `key`. */
  private reresolve(key: string, cache: Map<string, string | null>): void {
    const refs = this.linksByKey.get(key);
    if (refs === undefined) return;
    forEachRef(refs, (src, i) => {
      const r = this.resolveCached(src.entry.path, src.links, i, cache);
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
}

/**
 * Whether a link `target` has the name key `name` or an alias key among
 * `aliases` (`keysOfTarget`): whether it can resolve to their path. An ASCII
 * target is compared code unit by code unit, making no key strings (its
 * lowercase is its A–Z as a–z: the first backlinks question after a cold
 * opening of the 10k bench vault asks this of 63k distinct targets); any
 * other goes through its keys (lowercasing may change its length, and a
 * sigma's depends on its neighbours).
 */
export function targetHasKey(target: string, name: string, aliases: readonly string[]): boolean {
  if (target === '') return false; // a same-note link: never a backlink
  const n = target.length;
  for (let i = 0; i < n; i++) {
    if (target.charCodeAt(i) > 127) {
      const k = keysOfTarget(target);
      return k.name === name || (aliases.length > 0 && aliases.includes(k.alias));
    }
  }
  const from = target.lastIndexOf('/') + 1;
  const md =
    n - from >= 3 &&
    target.charCodeAt(n - 3) === 46 /* . */ &&
    (target.charCodeAt(n - 2) | 32) === 109 /* m */ &&
    (target.charCodeAt(n - 1) | 32) === 100; /* d */
  if (asciiLowerIs(target, from, md ? n - 3 : n, name)) return true;
  for (const a of aliases) if (asciiLowerIs(target, 0, n, a)) return true;
  return false;
}

/** Whether the ASCII `s.slice(from, to)`, lowercased, is `key`. */
function asciiLowerIs(s: string, from: number, to: number, key: string): boolean {
  if (to - from !== key.length) return false;
  for (let i = from; i < to; i++) {
    let c = s.charCodeAt(i);
    if (c >= 65 && c <= 90) c |= 32;
    if (c !== key.charCodeAt(i - from)) return false;
  }
  return true;
}

/** Whether a stored resolution of restored note `j` is `paths[k]`: a link of it is a backlink of that path. */
function restoredLinksTo(r: Restoring, j: number, k: number): boolean {
  const at = r.starts[j]!;
  const end = at + r.notes[j]!.links.length;
  // A same-note link (`[[#x]]`, no target) is no backlink, whatever number it was stored with.
  for (let i = at; i < end; i++) if (r.resolutions[i] === k && r.notes[j]!.links.target(i - at) !== '') return true;
  return false;
}

/** `src` (not before any source already there in path order) as a source of `t`, once. */
function appendSource(t: TargetRec, src: NoteRec): void {
  if (t.sources === null) t.sources = [src];
  else if (t.sources[t.sources.length - 1] !== src) t.sources.push(src);
}

/** Insert `x` at `i` (small arrays: a shift loop; large ones: splice). */
function insertAt<T>(arr: T[], i: number, x: T): void {
  const n = arr.length;
  // Appending, the common case (notes attached in path order): a splice at the end costs ~5 pushes.
  if (i === n) {
    arr.push(x);
    return;
  }
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
  const links = src.links;
  for (let i = 0; i < links.length; i++) if (src.resolved[i] === path && links.target(i) !== '') return true;
  return false;
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

function buildBacklink(src: NoteRec, path: string): Backlink {
  const links = src.links;
  const occurrences: BacklinkOccurrence[] = [];
  for (let i = 0; i < links.length; i++) {
    if (src.resolved[i] === path && links.target(i) !== '') occurrences.push(occurrence(links, i));
  }
  return Object.freeze({ from: src.entry.path, occurrences: Object.freeze(occurrences) });
}
