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
 * Not a cross-process lock: two server processes on the same Homes are not a
 * supported deployment.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import path from 'node:path';
import { AppError } from '../core/errors.js';

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
    try {
      return await holds.run([...(holds.getStore() ?? []), hold], fn);
    } finally {
      hold.active = false; // callbacks scheduled inside fn may outlive it; they no longer hold the lock
      this.queued--;
      release();
    }
  }

  /** Runs `fn` outside any lock context (for listeners started while the lock is held). */
  static outside<T>(fn: () => T): T {
    return holds.exit(fn);
  }
}
