import { afterEach, describe, expect, it, vi } from 'vitest';
import { HeapCompaction, worthCompacting } from '../../src/memory-tuning.js';

const MB = 1024 * 1024;

describe('worthCompacting', () => {
  it.each([
    // heap, left by the last collection, minimum, growth, expected
    [100 * MB, 0, 512 * MB, 1.5, false], // small heap: never worth the pause
    [600 * MB, 0, 512 * MB, 1.5, true], // first time past the minimum
    [600 * MB, 500 * MB, 512 * MB, 1.5, false], // has not grown enough since
    [750 * MB, 500 * MB, 512 * MB, 1.5, true], // exactly 1.5 times
    [1900 * MB, 1000 * MB, 512 * MB, 1.5, true],
    [0, 0, 0, 1.5, true],
  ])('heap %d after %d (min %d, growth %d): %s', (heap, lastAfter, min, growth, expected) => {
    expect(worthCompacting(heap, lastAfter, min, growth)).toBe(expected);
  });
});

describe('HeapCompaction', () => {
  afterEach(() => vi.useRealTimers());

  it('collects once the requests have stopped for quietMs, not before', async () => {
    vi.useFakeTimers();
    const collect = vi.fn();
    const c = new HeapCompaction({ minHeapBytes: 0, quietMs: 100, collect, heapBytes: () => 10 * MB });
    c.request();
    vi.advanceTimersByTime(80);
    c.request();
    vi.advanceTimersByTime(80);
    expect(collect).not.toHaveBeenCalled();
    vi.advanceTimersByTime(20);
    expect(collect).toHaveBeenCalledTimes(1);
    expect(c.runs).toBe(1);
  });

  it('skips a heap below the minimum, and one that has not grown by `growth` since the last collection', () => {
    vi.useFakeTimers();
    let heap = 100 * MB;
    const collect = vi.fn(() => (heap = 400 * MB));
    const c = new HeapCompaction({ minHeapBytes: 200 * MB, growth: 1.5, quietMs: 10, collect, heapBytes: () => heap });
    c.request();
    vi.advanceTimersByTime(10);
    expect(collect).not.toHaveBeenCalled();
    heap = 900 * MB;
    c.request();
    vi.advanceTimersByTime(10);
    expect(collect).toHaveBeenCalledTimes(1); // leaves 400 MB
    heap = 550 * MB;
    c.request();
    vi.advanceTimersByTime(10);
    expect(collect).toHaveBeenCalledTimes(1); // under 1.5 × 400 MB
    heap = 600 * MB;
    c.request();
    vi.advanceTimersByTime(10);
    expect(collect).toHaveBeenCalledTimes(2);
  });

  it('tells its listeners what each collection did, until they unsubscribe', () => {
    vi.useFakeTimers();
    let heap = 900 * MB;
    const c = new HeapCompaction({ minHeapBytes: 0, growth: 0, quietMs: 10, collect: () => (heap = 400 * MB), heapBytes: () => heap });
    const seen: Array<[number, number]> = [];
    const stop = c.onCollected((x) => seen.push([x.beforeBytes / MB, x.afterBytes / MB]));
    c.request();
    vi.advanceTimersByTime(10);
    expect(seen).toEqual([[900, 400]]);
    stop();
    heap = 900 * MB;
    c.request();
    vi.advanceTimersByTime(10);
    expect(seen).toEqual([[900, 400]]);
    expect(c.runs).toBe(2);
  });

  it('settled() waits for a requested collection and resolves at once when none is waiting', async () => {
    const collect = vi.fn();
    const c = new HeapCompaction({ minHeapBytes: 0, quietMs: 20, collect, heapBytes: () => MB });
    await c.settled();
    c.request();
    await c.settled();
    expect(collect).toHaveBeenCalledTimes(1);
  });

  it('by default runs a real full collection without exposing gc() to the application', async () => {
    const hadGc = typeof (globalThis as { gc?: unknown }).gc === 'function';
    const c = new HeapCompaction({ minHeapBytes: 0, quietMs: 0 });
    let garbage: object[] | null = Array.from({ length: 200_000 }, (_, i) => ({ i }));
    const weak = new WeakRef(garbage);
    garbage = null;
    c.request();
    await c.settled();
    expect(c.runs).toBe(1);
    expect(weak.deref()).toBeUndefined();
    expect(typeof (globalThis as { gc?: unknown }).gc === 'function').toBe(hadGc);
  });
});
