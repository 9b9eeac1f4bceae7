/**
 * A short-lived record of the server's own changes to a Home, so the watcher
 * can flag (or drop) the file-system events they cause instead of having the
 * index process the same change twice.
 *
 * Matching is by content, never by time alone: an event is "own" only if the
 * file on disk is still what the server wrote (same ETag, or same
 * inode/size/mtime for a file the server moved) or is still absent after the
 * server deleted it. An outside edit that lands within the TTL therefore
 * never hides behind an own write. Entries expire after `ttlMs`
 * (default 30 s); an expired entry only costs one redundant re-index.
 */

/** What the watcher compares: enough to tell "untouched since" cheaply. */
export interface FileSig {
  ino: number;
  size: number;
  mtimeMs: number;
}

export function sameSig(a: FileSig, b: FileSig): boolean {
  return a.ino === b.ino && a.size === b.size && a.mtimeMs === b.mtimeMs;
}

/** The disk state the watcher observed for a path. */
export type ObservedState =
  | { exists: false }
  | {
      exists: true;
      sig: FileSig;
      /** Reads the file and hashes it; called only when a signature does not settle the question. */
      readEtag: () => Promise<string>;
    };

/** What the watcher needs; RecentWrites implements it. */
export interface OwnWriteCheck {
  isOwn(path: string, state: ObservedState): Promise<boolean>;
}

type Entry =
  | { kind: 'written'; etag: string; sig?: FileSig; at: number }
  | { kind: 'moved'; sig: FileSig; at: number }
  | { kind: 'deleted'; at: number };

const MAX_ENTRIES_PER_PATH = 4;

export class RecentWrites implements OwnWriteCheck {
  private readonly entries = new Map<string, Entry[]>();
  private lastPrune = 0;

  constructor(
    readonly ttlMs = 30_000,
    private readonly now: () => number = Date.now,
  ) {}

  private add(path: string, e: Entry): void {
    this.prune();
    const list = this.entries.get(path) ?? [];
    list.push(e);
    if (list.length > MAX_ENTRIES_PER_PATH) list.splice(0, list.length - MAX_ENTRIES_PER_PATH);
    this.entries.set(path, list);
  }

  /** The server wrote `etag` to `path` (sig: the file's stat after the write, if known). */
  noteWrite(path: string, etag: string, sig?: FileSig): void {
    this.add(path, sig ? { kind: 'written', etag, sig, at: this.now() } : { kind: 'written', etag, at: this.now() });
  }

  /** The server moved an untouched file to `path`; rename keeps inode, size and mtime. */
  noteMoved(path: string, sig: FileSig): void {
    this.add(path, { kind: 'moved', sig, at: this.now() });
  }

  /** The server removed `path` (deleted or moved away). */
  noteDelete(path: string): void {
    this.add(path, { kind: 'deleted', at: this.now() });
  }

  /** Live entries for a path (newest last). */
  get(path: string): readonly Entry[] {
    const cutoff = this.now() - this.ttlMs;
    return (this.entries.get(path) ?? []).filter((e) => e.at >= cutoff);
  }

  /** The latest live ETag the server wrote to `path`, if any. */
  lastEtag(path: string): string | undefined {
    const list = this.get(path);
    for (let i = list.length - 1; i >= 0; i--) {
      const e = list[i]!;
      if (e.kind === 'written') return e.etag;
    }
    return undefined;
  }

  get size(): number {
    return this.entries.size;
  }

  async isOwn(path: string, state: ObservedState): Promise<boolean> {
    const list = this.get(path);
    if (list.length === 0) return false;
    if (!state.exists) return list.some((e) => e.kind === 'deleted');
    if (list.some((e) => (e.kind === 'moved' || e.kind === 'written') && e.sig && sameSig(e.sig, state.sig))) return true;
    const etags = list.flatMap((e) => (e.kind === 'written' ? [e.etag] : []));
    if (etags.length === 0) return false;
    let current: string;
    try {
      current = await state.readEtag();
    } catch {
      return false;
    }
    return etags.includes(current);
  }

  /** Drops expired entries; runs at most once per second of activity. */
  prune(): void {
    const now = this.now();
    if (now - this.lastPrune < 1000) return;
    this.lastPrune = now;
    const cutoff = now - this.ttlMs;
    for (const [p, list] of this.entries) {
      const live = list.filter((e) => e.at >= cutoff);
      if (live.length === 0) this.entries.delete(p);
      else if (live.length !== list.length) this.entries.set(p, live);
    }
  }
}
