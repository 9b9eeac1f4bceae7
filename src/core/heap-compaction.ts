/**
 * One full garbage collection, at a quiet moment, after bulk work has left
 * the heap much larger than what it keeps.
 *
 * Opening a large Home allocates about twice what its index keeps (the
 * snapshot's text, decoded facts, link resolution's scratch), and most of
 * it lives long enough to reach V8's old generation. With a large heap
 * limit V8 may leave it there for minutes, and meanwhile every young-
 * generation collection walks the old generation's pages: its pause grows
 * by about 3.5 ms per GB on the 2-core bench machine, and every request
 * that arrives during one waits for it. On the 100k-note bench Home the
 * server's heap stood at 1.9 GB for 1.0 GB of index: collecting once after
 * the opening halves each young-generation pause (see docs/benchmarks.md).
 *
 * The collection itself stops the process for 0.7-1.1 s on that Home, so it is
 * asked for only after bulk work, runs once the requests for it have
 * stopped for `quietMs`, and only when the heap has grown to `growth`
 * times what the last one left (and past `minHeapBytes`).
 */
import v8 from 'node:v8';
import vm from 'node:vm';

export interface HeapCompactionOptions {
  /** Below this heap size a collection is never worth its pause. */
  minHeapBytes?: number;
  /** Collect when the heap is this many times what the last collection left. */
  growth?: number;
  /** Wait this long after the last request before collecting. */
  quietMs?: number;
  /** Runs a full collection (default: V8's, see `v8GarbageCollector`). */
  collect?: () => void;
  /** The heap's current size in bytes (default: V8's used heap size). */
  heapBytes?: () => number;
}

/** Whether a heap of `heapBytes` is worth a full collection now. Pure, for tests. */
export function worthCompacting(heapBytes: number, lastAfterBytes: number, minHeapBytes: number, growth: number): boolean {
  return heapBytes >= minHeapBytes && heapBytes >= lastAfterBytes * growth;
}

type V8Gc = (options?: { type?: 'major' | 'minor' }) => void;
let v8Gc: V8Gc | null = null;

/**
 * V8's `gc()`, without exposing it to the application: the flag is on only
 * while a fresh context looks the function up (the idiom Jest's leak
 * detector uses); `--expose-gc` on the command line is used as is. Without
 * it (a runtime that refuses the flag) collections are left to V8, as they
 * would be anyway.
 */
export function v8GarbageCollector(): V8Gc {
  if (v8Gc === null) {
    let found = (globalThis as { gc?: unknown }).gc;
    if (typeof found !== 'function') {
      v8.setFlagsFromString('--expose-gc');
      found = vm.runInNewContext('typeof gc === "function" ? gc : undefined');
      v8.setFlagsFromString('--no-expose-gc');
    }
    v8Gc = typeof found === 'function' ? (found as V8Gc) : () => undefined;
  }
  return v8Gc;
}

const collectFully = () => v8GarbageCollector()();

/** What one collection did, for the server's log. */
export interface Collection {
  beforeBytes: number;
  afterBytes: number;
  ms: number;
}

export class HeapCompaction {
  private readonly minHeapBytes: number;
  private readonly growth: number;
  private readonly quietMs: number;
  private readonly collect: () => void;
  private readonly heapBytes: () => number;
  private timer: NodeJS.Timeout | null = null;
  private lastAfter = 0;
  private waiters: Array<() => void> = [];
  private readonly listeners = new Set<(c: Collection) => void>();
  /** Full collections run so far. */
  runs = 0;

  constructor(opts: HeapCompactionOptions = {}) {
    this.minHeapBytes = opts.minHeapBytes ?? 512 * 1024 * 1024;
    this.growth = opts.growth ?? 1.5;
    this.quietMs = opts.quietMs ?? 1000;
    this.collect = opts.collect ?? collectFully;
    this.heapBytes = opts.heapBytes ?? (() => v8.getHeapStatistics().used_heap_size);
  }

  /** Bulk work just finished: collect once nothing else has asked for `quietMs`, if the heap has grown enough. */
  request(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = setTimeout(() => this.run(), this.quietMs);
    this.timer.unref();
  }

  /** Calls `cb` after each collection (the server logs it: it is a pause of the whole process). */
  onCollected(cb: (c: Collection) => void): () => void {
    this.listeners.add(cb);
    return () => this.listeners.delete(cb);
  }

  /** Resolves when no collection is waiting to run. */
  settled(): Promise<void> {
    if (this.timer === null) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  private run(): void {
    this.timer = null;
    try {
      const beforeBytes = this.heapBytes();
      if (worthCompacting(beforeBytes, this.lastAfter, this.minHeapBytes, this.growth)) {
        const started = performance.now();
        this.collect();
        this.runs++;
        this.lastAfter = this.heapBytes();
        const done: Collection = { beforeBytes, afterBytes: this.lastAfter, ms: Math.round(performance.now() - started) };
        for (const cb of this.listeners) cb(done);
      }
    } finally {
      for (const resolve of this.waiters.splice(0)) resolve();
    }
  }
}

/** The process's one compaction scheduler: every Vault asks it, so several Homes opening together cost one collection. */
export const heapCompaction = new HeapCompaction();
