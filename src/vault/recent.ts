/**
 * A short-lived record of the server's own changes to a Home, so the watcher
 * can flag (or drop) the file-system events they cause instead of having the
 * index process the same change twice.
 *
 * Only the echo of the server's latest change to a path counts as own
 * (docs/vault-disk.md, "Own writes"):
 * - a write: the file is the very one the server renamed into place (same
 *   inode, size and mtime), not merely one with the same bytes. A file that
 *   git or a person deleted and wrote back with identical bytes is a new
 *   file, and the index must see it;
 * - a move: the moved file, untouched (rename keeps inode, size and mtime);
 * - a delete: the path is still absent.
 * Earlier entries of the same path never match (the disk has moved on from
 * them), and once the watcher has reported a change of the path as not own
 * (`forget`), nothing recorded before counts any more: a folder moved out of
 * the Home and back brings back the very inodes the server wrote, yet the
 * index dropped them when they left. Entries expire after `ttlMs`
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
  /** The watcher reported a change of `path` as not own: earlier records of it no longer describe the disk. */
  forget?(path: string): void;
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
    if (sig) {
      // The signature taken after the rename completes the entry noted just before it.
      const last = this.entries.get(path)?.at(-1);
      if (last?.kind === 'written' && last.etag === etag && !last.sig) {
        last.sig = sig;
        last.at = this.now();
        return;
      }
      this.add(path, { kind: 'written', etag, sig, at: this.now() });
    } else this.add(path, { kind: 'written', etag, at: this.now() });
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

  /** Drops every record of `path`. */
  forget(path: string): void {
    this.entries.delete(path);
  }

  async isOwn(path: string, state: ObservedState): Promise<boolean> {
    const last = this.get(path).at(-1);
    if (last === undefined) return false;
    if (last.kind === 'deleted') return !state.exists;
    if (!state.exists) return false;
    if (last.sig) return sameSig(last.sig, state.sig);
    // Noted before the rename and not yet completed: the write is under way, so its bytes settle it.
    if (last.kind !== 'written') return false;
    try {
      return (await state.readEtag()) === last.etag;
    } catch {
      return false;
    }
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
