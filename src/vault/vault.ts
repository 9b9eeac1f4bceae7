/**
 * A live vault: one Home on disk, its index, and the watcher that keeps the
 * index in step with edits made by other programs. Opening a vault scans the
 * Home (reusing the cached facts of files whose size, mtime and ctime, or
 * hash, did not change), then applies what the watcher saw meanwhile. Until the scan
 * is done, `whenReady` makes callers wait rather than answer from a
 * half-built index.
 */
import fs from 'node:fs';
import path from 'node:path';
import { AppError } from '../core/errors.js';
import { fieldsOf, PartialBuilder } from '../index/fulltext/document.js';
import { FullTextIndex, type PartialIndex } from '../index/fulltext/full-text.js';
import { decodeFullText, encodeFullText } from '../index/fulltext/persist.js';
import { HomeIndex, type FileStat } from '../index/home-index.js';
import { extractFacts } from '../markdown/extract.js';
import { writeChunksAtomic } from './atomic.js';
import { etagOf } from './etag.js';
import { Home, type HomeEvent } from './home.js';
import { isIgnoredPath } from './ignore.js';
import { PARALLEL_MIN, ScanPool, scanInline, scanOpenFlags, scanThreads, type ScanItem, type ScanResult } from './scan-pool.js';
import { isInside, walkTree, type WalkedFile } from './walk.js';
import type { HomeWatcher, WatchChange, WatcherStats } from './watcher.js';

export interface VaultProgress {
  done: number;
  total: number;
}

export interface VaultOptions {
  root: string;
  /** Where the index snapshot is kept between runs (the full-text index beside it, `<cacheFile>.search`); null for none. */
  cacheFile: string | null;
  /** Follow edits by other programs (default true). */
  watch?: boolean;
  /** Watcher quiet time before a batch (ms). */
  debounceMs?: number;
  onProgress?: (p: VaultProgress) => void;
  /** Worker threads for large scans (default: one per core, at most 4; 1 scans in this thread). */
  scanThreads?: number;
  onError?: (err: unknown) => void;
  /**
   * Index files and folders that symlinks lead to outside the Home, under
   * the link's path (default false: no link is followed). For a person
   * serving their own vault alone; docs/vault-disk.md, "Symlinks".
   */
  followSymlinks?: boolean;
  /**
   * The index's background work, and the clean-up of stale temp files, wait
   * for this too: the server's start, when the Home opens while it starts
   * (docs/performance.md, "Warm opening": on a warm start they otherwise ran
   * before the server listened, on the thread that starts it).
   */
  backgroundAfter?: Promise<unknown>;
}

export interface ScanStats {
  notes: number;
  files: number;
  /** Files whose facts were re-extracted (not taken from the cache). */
  parsed: number;
  ms: number;
}

const isNotePath = (rel: string) => rel.toLowerCase().endsWith('.md');

/** Whether a file found on disk is the one a snapshot recorded; a record without a ctime (none was known) is not trusted. */
const sameStat = (before: FileStat, f: FoundFile) => before.size === f.size && before.mtimeMs === f.mtimeMs && before.ctimeMs === f.ctimeMs;
const READ_CONCURRENCY = 32;

interface FoundFile {
  rel: string;
  abs: string;
  size: number;
  mtimeMs: number;
  /** Changes with every write and every utimes (a restored mtime), and a new inode gets a new one: what a warm start trusts a file by. */
  ctimeMs: number;
  birthtimeMs: number;
  /** Reached through a symlink to a file (followSymlinks only): opened following the link. */
  link: boolean;
}

/** The Home's files, found by `walkTree` (src/vault/walk.ts). */
class FileList {
  readonly files: FoundFile[] = [];
  notes = 0;

  constructor(
    /** Called when the list first holds PARALLEL_MIN notes. */
    private readonly onManyNotes: () => void,
  ) {}

  add(f: WalkedFile): void {
    const { st } = f;
    this.files.push({ rel: f.rel, abs: f.abs, size: st.size, mtimeMs: st.mtimeMs, ctimeMs: st.ctimeMs, birthtimeMs: st.birthtimeMs, link: f.link });
    if (isNotePath(f.rel) && ++this.notes === PARALLEL_MIN) this.onManyNotes();
  }
}

export class Vault {
  readonly home: Home;
  readonly root: string;
  state: 'indexing' | 'ready' | 'closed' = 'indexing';
  progress: VaultProgress = { done: 0, total: 0 };
  stats: ScanStats | null = null;
  /** Counts changes to the index since it became ready, so derived views (sorted lists) know when to rebuild. */
  generation = 0;
  readonly ready: Promise<ScanStats>;

  private index_: HomeIndex | null = null;
  private watcher: HomeWatcher | null = null;
  private heldBatches: WatchChange[][] = [];
  private cacheTimer: NodeJS.Timeout | null = null;
  /** When the oldest change not in the cache files happened (null: none). */
  private firstUnsaved: number | null = null;
  /** When the last save started, and how long it took. */
  private lastSaveAt = 0;
  private lastSaveMs = 0;
  private dirty = false;
  /** Notes whose facts the opening scan extracted (not taken from the snapshot). */
  private parsed = 0;
  private saving: Promise<void> | null = null;
  private readonly listeners = new Set<(change: VaultChange) => void>();
  private readonly idleListeners = new Set<() => void>();
  /** realpath of the root, to tell a file from one reached through a link. */
  private rootReal: string | null = null;
  /** For each watcher batch being applied: the paths the server changed meanwhile. */
  private readonly ownDuringBatches = new Set<Set<string>>();

  constructor(private readonly opts: VaultOptions) {
    this.root = path.resolve(opts.root);
    this.home = new Home(this.root, { followSymlinks: this.opts.followSymlinks === true });
    this.home.onWritten((e) => this.onOwnChange(e));
    this.ready = this.open();
    this.ready.catch((e) => this.report(e));
  }

  /** The index, once ready. */
  get index(): HomeIndex {
    if (!this.index_ || this.state !== 'ready') {
      throw new AppError('service_unavailable', 'This Home is still being indexed; retry shortly', {
        details: { reason: 'indexing', done: String(this.progress.done), total: String(this.progress.total) },
        headers: { 'retry-after': '1' },
      });
    }
    return this.index_;
  }

  /** Waits up to `timeoutMs` for the index; then answers 503 with progress rather than a partial answer. */
  async whenReady(timeoutMs = 15_000): Promise<HomeIndex> {
    if (this.state === 'ready') return this.index;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)));
    await Promise.race([this.ready.then(() => undefined), timeout]);
    clearTimeout(timer);
    return this.index;
  }

  /** The watcher's counters (null without one); `idle` is false while outside changes wait or are being applied. */
  watcherStats(): WatcherStats | null {
    return this.watcher?.stats() ?? null;
  }

  /** Subscribes to every content change (the server's own and external ones). */
  onChange(cb: (change: VaultChange) => void): () => void {
    this.listeners.add(cb);
    return () => this.listeners.delete(cb);
  }

  /**
   * Calls `cb` each time bulk work has just finished: the opening with its
   * background work, a snapshot save. (The server collects garbage then,
   * src/memory-tuning.ts.)
   */
  onIdle(cb: () => void): () => void {
    this.idleListeners.add(cb);
    return () => this.idleListeners.delete(cb);
  }

  private idle(): void {
    for (const cb of this.idleListeners) cb();
  }

  private report(e: unknown) {
    (this.opts.onError ?? ((err) => console.error('[quire vault]', err)))(e);
  }

  private async open(): Promise<ScanStats> {
    const started = performance.now();
    await fs.promises.mkdir(this.root, { recursive: true });
    const threads = this.opts.scanThreads ?? scanThreads();
    // Without a snapshot every note will be read: the scan threads start as soon as the walk has
    // found enough notes to need them, and boot while it goes on.
    let pool: ScanPool | null = null;
    let cold: boolean | null = null; // known once the snapshot is read
    const startPool = () => (pool ??= new ScanPool(threads));
    const list = new FileList(() => {
      if (cold && threads > 1) startPool();
    });
    if (this.opts.watch !== false) {
      // The watcher's start-up walk is the scan's list too: one walk of the Home, not two.
      this.watcher = this.home.watch({
        debounceMs: this.opts.debounceMs ?? 50,
        dropOwnWrites: true,
        followSymlinks: this.opts.followSymlinks === true,
        onBatch: (changes) => this.onBatch(changes),
        onError: (e) => this.report(e),
        onInitialFile: (f) => list.add(f),
      });
    }
    const [cached, fullText] = await Promise.all([this.loadSnapshot(), this.loadFullText()]);
    cold = cached === null;
    if (cold && threads > 1 && list.notes >= PARALLEL_MIN) startPool();
    // Notes whose full text is missing from its file (or the whole file) are read again below.
    const opts = { fullText: fullText ?? new FullTextIndex() };
    const index = (cached !== null ? this.fromSnapshot(cached, opts) : null) ?? new HomeIndex(opts);
    // A snapshot without its links' resolutions (saved before they were settled): save them once they are.
    if (cached !== null && index.pendingWork().notes > 0) this.dirty = true;
    index.holdBackground();
    try {
      await this.scan(index, threads, list, startPool);
    } catch (e) {
      await (pool as ScanPool | null)?.close();
      throw e;
    }
    this.index_ = index;
    this.state = 'ready';
    // After a cold opening the scan threads still tokenize the full text: they exit once it is in, and the
    // links' background work waits for it (on two cores it slowed them, and a search waits for them; a
    // backlinks question does the link work it needs itself).
    const scanned = pool as ScanPool | null;
    const fullTextIn = index.fullText.whenComplete().catch(() => undefined);
    void fullTextIn.then(() => scanned?.close());
    void Promise.all([fullTextIn, this.opts.backgroundAfter]).then(() => {
      index.releaseBackground();
      // Temp files of writes cut short by a crash or kill: a walk of their own (the opening's walk passes them by).
      if (this.state !== 'closed') this.home.removeStaleTemps().catch((e) => this.report(e));
    });
    for (const batch of this.heldBatches.splice(0)) await this.applyBatch(batch);
    // Answer requests first; the snapshot is only a head start for the next start (close() saves too).
    if (this.dirty) this.scheduleSave();
    void Promise.all([index.whenIdle(), fullTextIn]).then(() => this.idle());
    this.stats = { notes: index.noteCount, files: index.fileCount, parsed: this.parsed, ms: Math.round(performance.now() - started) };
    return this.stats;
  }

  /**
   * Reads into `index` what it lacks of the files `list` holds once the
   * watcher's start-up walk is done (or, unwatched, once this walks the Home
   * itself); `pool()` gives the scan threads (started on first call).
   */
  private async scan(index: HomeIndex, threads: number, list: FileList, pool: () => ScanPool): Promise<void> {
    if (this.watcher) await this.watcher.ready;
    else await walkTree(fs.realpathSync(this.root), '', { follow: this.opts.followSymlinks === true, ignored: isIgnoredPath, file: (f) => list.add(f) });
    const found = list.files;
    this.progress = { done: 0, total: found.length };
    // How many of the index's paths the walk found: when all of them (the usual warm start), none is gone,
    // and the removal below needs no set of the walk's paths.
    const heldBefore = index.noteCount + index.fileCount;
    let held = 0;
    const vanished: string[] = [];
    const toRead = new Map<string, FoundFile>();
    /** Whether the full text holds `rel` as recorded at `etag` (files other than notes have none). */
    const textInStep = (rel: string, etag: string) => index.fullText.etagOf(rel) === (index.noteByPath(rel) ? etag : undefined);
    for (const f of found) {
      const before = index.statOf(f.rel);
      if (before) held++;
      // Trusted by its stat alone, unread: same size, mtime and ctime as when its facts were taken. An edit
      // while the server was down that kept the size and restored the mtime (touch -d) still moved the ctime.
      if (before && sameStat(before, f) && textInStep(f.rel, before.etag)) {
        this.progress.done++;
      } else if (isNotePath(f.rel)) {
        toRead.set(f.rel, f);
      } else {
        index.upsertFile(f.rel, { size: f.size, mtimeMs: f.mtimeMs, ctimeMs: f.ctimeMs, etag: '', birthtimeMs: f.birthtimeMs });
        this.dirty = true;
        this.progress.done++;
      }
    }
    let lastReport = 0;
    const take = (r: ScanResult) => {
      const f = toRead.get(r.rel)!;
      this.progress.done++;
      const now = performance.now();
      if (this.opts.onProgress && now - lastReport > 1000) {
        lastReport = now;
        this.opts.onProgress({ ...this.progress });
      }
      if (r.etag === null) {
        vanished.push(r.rel); // since the walk
        return;
      }
      this.dirty = true;
      const stat = { size: f.size, mtimeMs: f.mtimeMs, ctimeMs: f.ctimeMs, etag: r.etag, birthtimeMs: f.birthtimeMs };
      if (r.note !== null) {
        index.upsertScanned(f.rel, r.note, stat);
        this.parsed++;
      } else if (r.facts === null) {
        index.upsertNote(f.rel, index.noteByPath(f.rel)!.facts, stat, null);
      } else {
        index.upsertNote(f.rel, r.facts, stat, r.text);
        this.parsed++;
      }
    };
    const items: ScanItem[] = [...toRead.values()].map((f) => {
      const before = index.statOf(f.rel);
      // Known bytes skip fact extraction, unless the full text lacks them (then the text is needed).
      const known = before && index.noteByPath(f.rel) && textInStep(f.rel, before.etag) ? before.etag : null;
      return { rel: f.rel, abs: f.abs, knownEtag: known, link: f.link };
    });
    if (items.length >= PARALLEL_MIN && threads > 1) {
      const { fullText } = await pool().run(items, take);
      // Searches wait for it (see FullTextIndex.expectPartials). The workers' parts come all together or not at all:
      // when one fails, every scanned note the full text lacks is tokenized here.
      index.fullText.expectPartials(
        fullText.catch((e) => {
          this.report(e);
          return this.tokenizeHere(index, items);
        }),
      );
    } else {
      await scanInline(items, READ_CONCURRENCY, take);
    }
    const gone = held === heldBefore ? vanished.filter((p) => index.has(p)) : this.notFound(index, found, vanished);
    for (const p of gone) {
      index.remove(p);
      this.dirty = true;
    }
    // Documents of a full-text file whose notes are gone (or were never in the snapshot). None when it holds
    // one for each note and no more (the usual warm start): a lookup per note, where listing its documents built a map.
    const text = index.fullText;
    if (text.documents === index.noteCount && [...index.notes()].every((n) => text.etagOf(n.path) !== undefined)) return;
    for (const p of text.indexed().keys()) {
      if (index.noteByPath(p) === undefined) {
        text.delete(p);
        this.dirty = true;
      }
    }
  }

  /** The index's paths that the walk did not find, or that vanished since. */
  private notFound(index: HomeIndex, found: readonly FoundFile[], vanished: readonly string[]): string[] {
    const seen = new Set(found.map((f) => f.rel));
    for (const p of vanished) seen.delete(p);
    return [...index.notes()].map((n) => n.path).concat([...index.files()].map((f) => f.path)).filter((p) => !seen.has(p));
  }

  /** The full text of the scanned notes the full-text index lacks, tokenized on this thread. */
  private async tokenizeHere(index: HomeIndex, items: ScanItem[]): Promise<PartialIndex[]> {
    const out = new PartialBuilder();
    for (const it of items) {
      const note = index.noteByPath(it.rel);
      const stat = index.statOf(it.rel);
      if (!note || !stat || index.fullText.etagOf(it.rel) === stat.etag) continue;
      const bytes = await fs.promises.readFile(it.abs, { flag: scanOpenFlags(it) }).catch(() => null);
      // Changed since the scan read it (or gone): the watcher's next look at it indexes it whole.
      if (bytes === null || etagOf(bytes) !== stat.etag) continue;
      out.add(it.rel, stat.etag, fieldsOf(it.rel, note.facts, bytes.toString('utf8')));
    }
    return [out.build()];
  }

  private async onBatch(changes: WatchChange[]): Promise<void> {
    if (this.state !== 'ready') {
      this.heldBatches.push(changes);
      return;
    }
    await this.applyBatch(changes);
  }

  /**
   * The bytes and stat of a Home file for the index; null when it must not
   * be indexed: gone, not a regular file, or reached through a symlink
   * (unless `followSymlinks` and the link leads out of the Home). The last
   * component is opened with O_NOFOLLOW, so a file swapped for a link after
   * the check is not read either.
   */
  private async readContent(rel: string): Promise<{ bytes: Buffer; st: fs.Stats } | null> {
    const abs = path.join(this.root, rel);
    let real: string;
    try {
      real = await fs.promises.realpath(abs);
    } catch {
      return null;
    }
    this.rootReal ??= await fs.promises.realpath(this.root);
    const plain = real === path.join(this.rootReal, ...rel.split('/'));
    // Through a link: inside the Home its target is indexed under its own path; outside only on opt-in.
    if (!plain && (!this.opts.followSymlinks || isInside(this.rootReal, real))) return null;
    let fh: fs.promises.FileHandle | undefined;
    try {
      fh = await fs.promises.open(plain ? real : abs, fs.constants.O_RDONLY | (plain ? fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK : fs.constants.O_NONBLOCK));
      const st = await fh.stat();
      if (!st.isFile()) return null;
      return { bytes: await fh.readFile(), st };
    } catch {
      return null;
    } finally {
      await fh?.close().catch(() => undefined);
    }
  }

  /** Re-reads the changed paths and replaces their facts; unchanged bytes are a no-op. */
  private async applyBatch(changes: WatchChange[]): Promise<void> {
    const index = this.index_!;
    // The server's own changes made while this batch is applied are newer than what it observed.
    const own = new Set<string>();
    this.ownDuringBatches.add(own);
    try {
      await this.applyChanges(index, changes, own);
    } finally {
      this.ownDuringBatches.delete(own);
    }
    this.scheduleSave();
  }

  private async applyChanges(index: HomeIndex, changes: WatchChange[], own: Set<string>): Promise<void> {
    const ownSince = (p: string) => own.size > 0 && [...own].some((o) => p === o || p.startsWith(o + '/'));
    for (const c of changes) {
      if (ownSince(c.path)) continue; // the index has the server's version; the watcher looks at the path again
      if (c.kind === 'delete') {
        if (index.has(c.path)) {
          index.remove(c.path);
          this.changed({ kind: 'delete', path: c.path, source: 'external' });
        }
        continue;
      }
      const content = await this.readContent(c.path);
      if (content === null) {
        // Not content (any more): a link, or gone since the watcher looked.
        if (index.has(c.path)) {
          index.remove(c.path);
          this.changed({ kind: 'delete', path: c.path, source: 'external' });
        }
        continue;
      }
      if (ownSince(c.path)) continue;
      const { bytes, st } = content;
      const etag = etagOf(bytes);
      const before = index.statOf(c.path);
      const stat: FileStat = { size: st.size, mtimeMs: st.mtimeMs, ctimeMs: st.ctimeMs, etag, birthtimeMs: st.birthtimeMs };
      if (before && before.etag === etag) {
        // Same bytes, new stat: recorded, so the next start trusts the file without reading it.
        if ((before.mtimeMs !== st.mtimeMs || before.ctimeMs !== st.ctimeMs) && isNotePath(c.path)) {
          index.upsertNote(c.path, index.noteByPath(c.path)!.facts, stat, null);
          this.generation++;
        }
        continue;
      }
      this.indexBytes(c.path, bytes, stat);
      this.changed({ kind: 'upsert', path: c.path, etag, source: 'external' });
    }
  }

  private indexBytes(rel: string, bytes: Buffer, stat: FileStat) {
    const index = this.index_!;
    if (isNotePath(rel)) {
      const text = bytes.toString('utf8');
      index.upsertNote(rel, extractFacts(text, rel), stat, text);
    } else {
      index.upsertFile(rel, stat);
    }
  }

  /** The server's own writes update the index at once, before the write call returns. */
  private onOwnChange(e: HomeEvent) {
    this.watcher?.look(e.path);
    if (e.kind === 'move') this.watcher?.look(e.from);
    for (const own of this.ownDuringBatches) {
      own.add(e.path);
      if (e.kind === 'move') own.add(e.from);
    }
    const index = this.index_;
    if (!index) return;
    if (e.kind === 'write') {
      const abs = path.join(this.root, e.path);
      let st: fs.Stats | null = null;
      try {
        st = fs.statSync(abs);
      } catch {
        st = null;
      }
      this.indexBytes(e.path, e.bytes, {
        size: e.bytes.length,
        mtimeMs: st?.mtimeMs ?? Date.now(),
        ...(st ? { ctimeMs: st.ctimeMs } : {}),
        etag: e.etag,
        birthtimeMs: st?.birthtimeMs ?? Date.now(),
      });
      this.changed({ kind: 'upsert', path: e.path, etag: e.etag, source: 'api' });
    } else if (e.kind === 'delete') {
      for (const p of this.pathsUnder(index, e.path, e.folder)) {
        index.remove(p);
        this.changed({ kind: 'delete', path: p, source: 'api' });
      }
    } else {
      for (const p of this.pathsUnder(index, e.from, e.folder)) {
        const to = e.path + p.slice(e.from.length);
        const abs = path.join(this.root, to);
        try {
          const bytes = fs.readFileSync(abs);
          const st = fs.statSync(abs);
          index.remove(p);
          this.indexBytes(to, bytes, { size: st.size, mtimeMs: st.mtimeMs, ctimeMs: st.ctimeMs, etag: etagOf(bytes), birthtimeMs: st.birthtimeMs });
          this.changed({ kind: 'move', from: p, path: to, source: 'api' });
        } catch (err) {
          this.report(err);
        }
      }
    }
    this.scheduleSave();
  }

  private pathsUnder(index: HomeIndex, rel: string, folder: boolean): string[] {
    if (!folder) return index.has(rel) ? [rel] : [];
    const prefix = rel + '/';
    const out: string[] = [];
    for (const n of index.notes()) if (n.path.startsWith(prefix)) out.push(n.path);
    for (const f of index.files()) if (f.path.startsWith(prefix)) out.push(f.path);
    return out;
  }

  private changed(change: VaultChange) {
    this.generation++;
    this.dirty = true;
    for (const cb of this.listeners) {
      try {
        cb(change);
      } catch (e) {
        this.report(e);
      }
    }
  }

  /**
   * Save the cache files once changes have stopped for SAVE_QUIET_MS, at the
   * latest SAVE_MAX_WAIT_MS after the first unsaved change, and never sooner
   * than SAVE_SPACING times the last save's duration after it began: the
   * snapshot of a 100k-note Home takes seconds of slices to write, and the
   * files, not the cache, are the truth.
   */
  private scheduleSave() {
    if (!this.opts.cacheFile) return;
    const now = Date.now();
    this.firstUnsaved ??= now;
    const due = Math.max(Math.min(now + SAVE_QUIET_MS, this.firstUnsaved + SAVE_MAX_WAIT_MS), this.lastSaveAt + this.lastSaveMs * SAVE_SPACING);
    if (this.cacheTimer) clearTimeout(this.cacheTimer);
    this.cacheTimer = setTimeout(() => {
      this.cacheTimer = null;
      this.saveSnapshot().catch((e) => this.report(e));
    }, Math.max(0, due - now));
    this.cacheTimer.unref();
  }

  /** The snapshot's bytes; null when there is none (a cache file that cannot be used is rebuilt from the files, which are the truth). */
  private async loadSnapshot(): Promise<Buffer | null> {
    if (!this.opts.cacheFile) return null;
    return readWhole(this.opts.cacheFile).catch(() => null);
  }

  /** The index in `data`; null when it is from another version or malformed (then the files are read again, as they are the truth). */
  private fromSnapshot(data: Buffer, opts: { fullText: FullTextIndex }): HomeIndex | null {
    try {
      return HomeIndex.fromSnapshot(data, opts);
    } catch {
      return null;
    }
  }

  /** The full-text index saved beside the snapshot; null when there is none this build can read. */
  private async loadFullText(): Promise<FullTextIndex | null> {
    if (!this.opts.cacheFile) return null;
    try {
      return FullTextIndex.fromState(decodeFullText(await readWhole(this.opts.cacheFile + '.search')));
    } catch {
      return null;
    }
  }

  /** Save the snapshot and the search index (when anything changed), one save at a time. */
  saveSnapshot(): Promise<void> {
    const run = async () => {
      if (!this.opts.cacheFile || !this.index_ || !this.dirty) return;
      // Links still being resolved are not stored (the next start would resolve them all again):
      // wait for the deferred work, a little.
      await settledOrLate(this.index_);
      await this.index_.fullText.whenComplete();
      this.dirty = false;
      this.firstUnsaved = null;
      const started = Date.now();
      const file = this.opts.cacheFile;
      const snapshot = this.index_.snapshotWriter();
      async function* chunks() {
        yield* inSlices(snapshot.lines);
        yield snapshot.tail();
      }
      await Promise.all([
        writeChunksAtomic(file, chunks(), { label: 'index cache' }),
        writeChunksAtomic(file + '.search', paced(encodeFullText(this.index_.fullText.state())), { label: 'full-text index cache' }),
      ]);
      this.lastSaveAt = started;
      this.lastSaveMs = Date.now() - started;
      this.idle();
    };
    const next = (this.saving ?? Promise.resolve()).then(run);
    this.saving = next.catch(() => undefined);
    return next;
  }

  async close(): Promise<void> {
    if (this.state === 'closed') return;
    await this.ready.catch(() => undefined);
    await this.index_?.fullText.whenComplete().catch(() => undefined);
    if (this.cacheTimer) clearTimeout(this.cacheTimer);
    this.cacheTimer = null;
    await this.watcher?.close();
    // Closed before the server's start ended (`backgroundAfter`): the links the save below stores are settled first.
    this.index_?.releaseBackground();
    // Files replaced in the last second are still kept aside for late writers: check them now, not never.
    await this.home.settleDisplaced().catch((e) => this.report(e));
    await this.saveSnapshot().catch((e) => this.report(e));
    this.state = 'closed';
  }
}

/**
 * A file's bytes in as few reads as it takes (one, for a cache file), each
 * as large as what is left: fs.promises.readFile reads 512 KiB at a time,
 * and each read waits for the event loop, which a server starting up holds
 * for tens of milliseconds at a time (module loading): the 46 MB of the
 * 10k bench vault's cache files took ~90 turns, and arrived after the
 * server's start instead of during it (docs/performance.md, "Warm opening").
 */
async function readWhole(file: string): Promise<Buffer> {
  const fh = await fs.promises.open(file, 'r');
  try {
    // Its own memory, at offset 0: the snapshot's typed-array views need 8-byte alignment (snapshot.ts). The cache
    // files are replaced by rename, never written in place, so the size does not change under an open handle.
    const buf = Buffer.allocUnsafeSlow((await fh.stat()).size);
    let at = 0;
    while (at < buf.length) {
      const { bytesRead } = await fh.read(buf, at, buf.length - at, at);
      if (bytesRead === 0) break;
      at += bytesRead;
    }
    return at === buf.length ? buf : buf.subarray(0, at);
  } finally {
    await fh.close();
  }
}

const SAVE_QUIET_MS = 5_000;
/** How long a save waits for the index's deferred work (about 1 s of CPU after a cold open of 10k notes). */
const SAVE_SETTLE_MS = 5_000;

/** Once the index's deferred work is done, or after SAVE_SETTLE_MS. */
function settledOrLate(index: HomeIndex): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<void>((resolve) => (timer = setTimeout(resolve, SAVE_SETTLE_MS)));
  return Promise.race([index.whenIdle(), late]).finally(() => clearTimeout(timer));
}
const SAVE_MAX_WAIT_MS = 60_000;
const SAVE_SPACING = 10;

/** Time one slice of snapshot writing may hold the event loop. */
const SLICE_MS = 8;

/**
 * Lines joined into chunks of about `SLICE_MS` of work each, with the event
 * loop free between chunks (the write of each chunk is awaited), so saving
 * a large index never stalls requests.
 */
async function* inSlices(lines: Iterator<string>): AsyncGenerator<string> {
  let chunk = '';
  let deadline = performance.now() + SLICE_MS;
  let n = 0;
  for (let r = lines.next(); !r.done; r = lines.next()) {
    chunk += r.value + '\n';
    if ((++n & 31) === 0 && performance.now() > deadline) {
      yield chunk;
      chunk = '';
      await new Promise((resolve) => setImmediate(resolve));
      deadline = performance.now() + SLICE_MS;
    }
  }
  if (chunk !== '') yield chunk;
}

/** The chunks of `parts`, with the event loop free between them. */
async function* paced<T>(parts: Iterable<T>): AsyncGenerator<T> {
  for (const part of parts) {
    yield part;
    await new Promise((resolve) => setImmediate(resolve));
  }
}

export type VaultChange =
  | { kind: 'upsert'; path: string; etag: string; source: 'api' | 'external' }
  | { kind: 'delete'; path: string; source: 'api' | 'external' }
  | { kind: 'move'; from: string; path: string; source: 'api' };
