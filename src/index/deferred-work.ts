/**
 * When the HomeIndex's deferred work runs (the modes: `IndexingMode` in
 * types.ts). The work itself (link resolution, the tag queue) belongs to
 * the index; this scheduler only knows how to run a slice of it and whether
 * any is left.
 *
 * Background scheduling (mode `background`): deferred work runs only once
 * the index has not been written to for `idleMs`, so a bulk load (a vault
 * scan) is not slowed down by it and resolves each link once at the end;
 * then it runs in slices of `sliceMs`, with the event loop free in between.
 */
import type { IndexingMode } from './types.js';

export interface DeferredSteps {
  /** Run sliced work for up to `budgetMs` (Infinity: all of it); true when none is left. */
  runSlice(budgetMs: number): boolean;
  /** Whether any work is left. */
  hasWork(): boolean;
}

export class DeferredWork {
  private held = false;
  /** When the index was last written to, for idle detection. */
  private lastWrite = 0;
  private timer: NodeJS.Timeout | NodeJS.Immediate | null = null;
  /** Callers of `whenIdle`, resolved when the deferred work is done. */
  private idleWaiters: Array<() => void> = [];

  constructor(
    private readonly steps: DeferredSteps,
    private readonly mode: IndexingMode,
    private readonly sliceMs: number,
    private readonly idleMs: number,
  ) {}

  /** After every write to the index: run the sliced work now (`sync`) or let the background scheduler know. */
  written(): void {
    this.lastWrite = performance.now();
    if (this.mode === 'sync') this.steps.runSlice(Infinity);
    else this.schedule();
  }

  /** Finish all deferred work now. */
  finish(): void {
    this.steps.runSlice(Infinity);
    this.wakeIdleWaiters();
  }

  /**
   * Background work waits until `release` (it still runs when a read needs
   * it). The Vault holds it while it opens a Home: the scan's last moments
   * (workers finishing, the full text merging) leave the index quiet long
   * enough for it to start, and it then slowed the scan down instead of
   * running once the Home is ready.
   */
  hold(): void {
    this.held = true;
  }

  release(): void {
    this.held = false;
    this.schedule();
  }

  /** Resolves once no deferred work is left (at once when there is none). */
  whenIdle(): Promise<void> {
    if (!this.steps.hasWork()) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private wakeIdleWaiters(): void {
    if (this.idleWaiters.length === 0 || this.steps.hasWork()) return;
    for (const resolve of this.idleWaiters.splice(0)) resolve();
  }

  private schedule(): void {
    if (this.mode !== 'background' || this.timer !== null || this.held) return;
    if (!this.steps.hasWork()) return this.wakeIdleWaiters();
    this.timer = setTimeout(() => this.tick(), this.idleMs);
    this.timer.unref();
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
    if (!this.steps.runSlice(this.sliceMs)) {
      // Not unref'd: an unref'd immediate lets the event loop block in its poll for the next
      // timer or I/O, so each slice waited for whatever came next (measured: 1.4 s of work over
      // 35–63 s after a warm open of the 10k bench vault). The work is finite, so this keeps a
      // process alive only until it is done.
      this.timer = setImmediate(() => this.tick());
      return;
    }
    this.wakeIdleWaiters();
  }
}
