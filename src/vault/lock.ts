/**
 * One writer at a time per Home, inside this process: an async FIFO mutex.
 * Every change the server makes to a Home's files runs inside `run()`, so
 * the read–compare–write of If-Match and the quota check see a stable disk
 * (apart from outside programs, which no in-process lock can stop; the
 * ETag check still catches their changes before the rename).
 *
 * Re-entrancy is not supported; calling `run()` of the same lock from inside
 * its own `fn` (on the same async chain) would wait forever, so it is
 * detected with AsyncLocalStorage and refused with an AppError.
 *
 * Across processes: two multi-user servers on the same Homes are not a
 * supported deployment, but one person's folder may be served by
 * `quire serve --vault` and written by the command line's vault daemon at
 * once. Those processes call `shareWriterLocksIn(dir)` first; from then on
 * each `run()` also holds a lock file in `dir` named after the Home's real
 * path (proper-lockfile: a lock left by a killed process goes stale after
 * 10 s), so one folder has one writer across processes (docs/cli.md).
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { AppError } from '../core/errors.js';

let sharedDir: string | null = null;

/** Makes every writer lock of this process also a lock file in `dir` (the user's state folder, never a Home). */
export function shareWriterLocksIn(dir: string): void {
  fs.mkdirSync(dir, { recursive: true });
  sharedDir = dir;
}

/** The lock file for a Home root in `dir`: one per real path, whatever path a process opened it by. */
export function writerLockFile(dir: string, root: string): string {
  let real: string;
  try {
    real = fs.realpathSync.native(root);
  } catch {
    real = path.resolve(root);
  }
  return path.join(dir, `${createHash('sha256').update(real).digest('hex').slice(0, 24)}.writer`);
}

type Lockfile = typeof import('proper-lockfile');
let lockfile: Lockfile | undefined;

async function lockAcrossProcesses(root: string): Promise<() => Promise<void>> {
  lockfile ??= createRequire(import.meta.url)('proper-lockfile') as Lockfile;
  const file = writerLockFile(sharedDir!, root);
  try {
    // The state folder may have been removed since the process started (a cleaner of old files in
    // the runtime folder); proper-lockfile would retry a missing folder for its whole 30 s.
    fs.mkdirSync(sharedDir!, { recursive: true });
    return await lockfile.lock(file, {
      realpath: false,
      stale: 10_000,
      // About 30 s of waiting for the other process's write before giving up.
      retries: { retries: 600, minTimeout: 5, maxTimeout: 50 },
      onCompromised: () => undefined, // the write under way finishes; the next one takes the lock again
    });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ELOCKED') {
      throw new AppError('service_unavailable', `Another Quire process has held the writer lock of ${root} for too long; retry shortly`, {
        details: { reason: 'writer_lock_busy' },
        headers: { 'retry-after': '1' },
      });
    }
    // Not another writer: the lock file itself cannot be made (a file where the folder should be, no permission).
    throw new AppError('internal', `Cannot take the writer lock of ${root}: ${(e as Error).message}`, {
      details: { reason: 'writer_lock_failed', lockFile: file },
    });
  }
}

interface Hold {
  lock: WriterLock;
  active: boolean;
}

const holds = new AsyncLocalStorage<readonly Hold[]>();

const byRoot = new Map<string, WriterLock>();

export class WriterLock {
  /** What the lock protects, for messages (e.g. the Home root). */
  readonly name: string;
  private tail: Promise<void> = Promise.resolve();
  private queued = 0;

  constructor(name = 'writer lock') {
    this.name = name;
  }

  /** The one lock for a Home root (resolved), shared by every Home object on that root. */
  static forRoot(root: string): WriterLock {
    const key = path.resolve(root);
    let lock = byRoot.get(key);
    if (!lock) {
      lock = new WriterLock(key);
      byRoot.set(key, lock);
    }
    return lock;
  }

  /** Callers waiting or running. */
  get pending(): number {
    return this.queued;
  }

  /** Whether the current async chain holds this lock. */
  heldHere(): boolean {
    return (holds.getStore() ?? []).some((h) => h.lock === this && h.active);
  }

  /**
   * Runs `fn` when every earlier caller has finished, in call order. The lock
   * is released when `fn` settles, whether it returned or threw.
   */
  async run<T>(fn: () => Promise<T>): Promise<T> {
    if (this.heldHere()) {
      throw new AppError('internal', 'The Home writer lock was requested again while already held by the same operation', {
        details: { reason: 'lock_reentered' },
      });
    }
    const prev = this.tail;
    let release!: () => void;
    const mine = new Promise<void>((resolve) => {
      release = resolve;
    });
    this.tail = prev.then(() => mine);
    this.queued++;
    await prev;
    const hold: Hold = { lock: this, active: true };
    let unlockFile: (() => Promise<void>) | null = null;
    try {
      if (sharedDir !== null) unlockFile = await lockAcrossProcesses(this.name);
      return await holds.run([...(holds.getStore() ?? []), hold], fn);
    } finally {
      hold.active = false; // callbacks scheduled inside fn may outlive it; they no longer hold the lock
      await unlockFile?.().catch(() => undefined);
      this.queued--;
      release();
    }
  }

  /** Runs `fn` outside any lock context (for listeners started while the lock is held). */
  static outside<T>(fn: () => T): T {
    return holds.exit(fn);
  }
}
