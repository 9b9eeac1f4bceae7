/**
 * The deferred-work scheduler on its own (src/index/deferred-work.ts): what
 * each mode runs, and when, with stand-in work that needs a given number of
 * slices. HomeIndex's use of it is covered by notes.test.ts and property.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { DeferredWork, type DeferredSteps } from '../../src/index/deferred-work.js';

/** Work needing `slices` budgeted slices (or one unbudgeted); `log` records each call. */
function work(slices: number): { log: string[]; steps: DeferredSteps } {
  const log: string[] = [];
  let left = slices;
  return {
    log,
    steps: {
      runSlice(budgetMs) {
        log.push(budgetMs === Infinity ? 'all' : `slice ${budgetMs}`);
        left = budgetMs === Infinity ? 0 : left - 1;
        return left <= 0;
      },
      hasWork: () => left > 0,
    },
  };
}

const turns = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('DeferredWork', () => {
  it('background: once writes stop, runs slices of sliceMs until done and wakes whenIdle', async () => {
    const { log, steps } = work(3);
    const d = new DeferredWork(steps, 'background', 7, 5);
    d.written();
    expect(log).toEqual([]);
    await d.whenIdle();
    expect(log).toEqual(['slice 7', 'slice 7', 'slice 7']);
  });

  it('background: held work does not start until released', async () => {
    const { log, steps } = work(1);
    const d = new DeferredWork(steps, 'background', 10, 1);
    d.hold();
    d.written();
    await turns(30);
    expect(log).toEqual([]);
    d.release();
    await d.whenIdle();
    expect(log).toEqual(['slice 10']);
  });

  it('sync: each write runs the sliced work at once', () => {
    const { log, steps } = work(2);
    new DeferredWork(steps, 'sync', 10, 50).written();
    expect(log).toEqual(['all']);
  });

  it('lazy: writes run nothing; finish runs everything and wakes whenIdle', async () => {
    const { log, steps } = work(2);
    const d = new DeferredWork(steps, 'lazy', 10, 1);
    d.written();
    let idle = false;
    void d.whenIdle().then(() => (idle = true));
    await turns(20);
    expect(log).toEqual([]);
    expect(idle).toBe(false);
    d.finish();
    await turns(0);
    expect(log).toEqual(['all']);
    expect(idle).toBe(true);
  });

  it('background: slices follow one another while the process has nothing else to do (they do not wait for the next timer)', async () => {
    // A server at rest: one timer far off, no I/O. Each slice once waited for whatever woke the event loop next.
    const { log, steps } = work(20);
    const d = new DeferredWork(steps, 'background', 1, 1);
    let wakes = 0;
    const far = setInterval(() => wakes++, 400);
    try {
      d.written();
      await d.whenIdle();
    } finally {
      clearInterval(far);
    }
    expect(log.length).toBe(20);
    expect(wakes).toBeLessThan(2);
  });

  it('whenIdle resolves at once when nothing is deferred', async () => {
    const { steps } = work(0);
    await expect(new DeferredWork(steps, 'lazy', 10, 50).whenIdle()).resolves.toBeUndefined();
  });
});
