/**
 * The server's memory tuning, in one module that only the server's start-up
 * wires (tuneServerMemory, called from src/server.ts): the domain knows
 * nothing of it. A Vault says when it goes idle after bulk work (its
 * opening, a snapshot save) and the HTTP surface counts the requests in
 * flight (src/surfaces/http/activity.ts); this module turns those moments
 * into garbage collections. docs/performance.md explains the figures.
 *
 * The Node.js flags the server runs with are listed in bin/server-node-flags,
 * which the launcher bin/quire applies to serve, demo and the vault daemon.
 */
import v8 from 'node:v8';
import vm from 'node:vm';

/** What the idle scavenger needs of the HTTP surface's request counting. */
export interface RequestCounter {
  readonly inFlight: number;
  /** Calls `cb` each time the last request in flight ends; returns the function that stops it. */
  onQuiet(cb: () => void): () => void;
}

/** What the heap compaction needs of a Vault. */
export interface IdleSource {
  /** Calls `cb` when bulk work has just finished; returns the function that stops it. */
  onIdle(cb: () => void): () => void;
}

/**
 * Wires the idle scavenger to `requests` and the heap compaction to every
 * Vault `onVaultOpened` reports, logging each full collection (it pauses
 * the whole process). Returns the function that undoes it.
 */
export function tuneServerMemory(opts: {
  requests: RequestCounter;
  onVaultOpened: (cb: (vault: IdleSource) => void) => () => void;
  log: (line: string) => void;
}): () => void {
  const MB = 1024 * 1024;
  const stopScavenges = new IdleScavenger().attach(opts.requests);
  const idleVaults = new Set<() => void>();
  const stopOpened = opts.onVaultOpened((vault) => idleVaults.add(vault.onIdle(() => heapCompaction.request())));
  const stopLog = heapCompaction.onCollected((c) =>
    opts.log(`heap collected after bulk work: ${Math.round(c.beforeBytes / MB)} -> ${Math.round(c.afterBytes / MB)} MB in ${c.ms} ms`),
  );
  return () => {
    stopScavenges();
    stopOpened();
    for (const stop of idleVaults) stop();
    stopLog();
  };
}

// ------------------------------------------------------- idle scavenges

/*
 * Young-generation collections (scavenges) while no request is being
 * answered, rather than in the middle of a burst of them.
 *
 * A scavenge stops the process; on a large Home it pauses 5-8 ms, most of it
 * a walk over every page of the old generation, whatever the young one holds
 * (docs/performance.md). V8 starts one when the young generation is full,
 * which under HTTP load means during a burst of requests: every request in
 * flight, and every one that arrives, waits for it. Traffic comes in bursts
 * (a page load asks for several things at once) with quiet gaps between
 * them, so once the server has answered everything and stayed quiet for
 * `idleMs`, it runs the scavenge itself when the young generation is at
 * least `minFill` full: the next burst then starts with room for its
 * garbage. Done then, almost nothing survives (no request is in flight), so
 * less reaches the old generation and V8's full collections come later.
 * Under steady load with no quiet gap nothing changes: V8 collects as usual.
 *
 * This pays off only when a burst's garbage fits in the young generation,
 * which is why `quire serve` runs Node with a larger one (the flags of
 * bin/server-node-flags; docs/performance.md).
 */

export interface IdleScavengeOptions {
  /** How long the server must have had no request in flight. */
  idleMs?: number;
  /** Scavenge only when the young generation is at least this full (0..1). */
  minFill?: number;
  /** Runs a young-generation collection (default: V8's). */
  collect?: () => void;
  /** The young generation's used bytes and the bytes it holds before V8 collects it (default: V8's new space). */
  youngGeneration?: () => { used: number; size: number };
}

/** Whether a young generation holding `used` of `size` bytes is worth collecting at a quiet moment. Pure, for tests. */
export function worthScavenging(used: number, size: number, minFill: number): boolean {
  return size > 0 && used >= size * minFill;
}

function newSpace(): { used: number; size: number } {
  const s = v8.getHeapSpaceStatistics().find((space) => space.space_name === 'new_space');
  // space_size counts both semi-spaces; what fills up is the one allocated into.
  return { used: s?.space_used_size ?? 0, size: (s?.space_used_size ?? 0) + (s?.space_available_size ?? 0) };
}

export class IdleScavenger {
  private readonly idleMs: number;
  private readonly minFill: number;
  private readonly collect: () => void;
  private readonly youngGeneration: () => { used: number; size: number };
  private requests: RequestCounter | null = null;
  private lastDone = 0;
  private timer: NodeJS.Timeout | null = null;
  /** Scavenges run so far. */
  runs = 0;

  constructor(opts: IdleScavengeOptions = {}) {
    this.idleMs = opts.idleMs ?? 20;
    this.minFill = opts.minFill ?? 0.25;
    this.collect = opts.collect ?? (() => v8GarbageCollector()({ type: 'minor' }));
    this.youngGeneration = opts.youngGeneration ?? newSpace;
  }

  /** Acts on `requests`' quiet moments from now on; returns the function that stops it. */
  attach(requests: RequestCounter): () => void {
    this.requests = requests;
    const stop = requests.onQuiet(this.onQuiet);
    return () => {
      stop();
      if (this.timer !== null) clearTimeout(this.timer);
      this.timer = null;
    };
  }

  private readonly onQuiet = () => {
    this.lastDone = performance.now();
    if (this.timer === null) this.arm(this.idleMs);
  };

  private arm(ms: number): void {
    this.timer = setTimeout(this.check, ms);
    this.timer.unref();
  }

  private readonly check = () => {
    this.timer = null;
    // A request came in since: its own end re-arms the check.
    if ((this.requests?.inFlight ?? 0) > 0) return;
    const quiet = performance.now() - this.lastDone;
    if (quiet < this.idleMs) return this.arm(this.idleMs - quiet);
    const { used, size } = this.youngGeneration();
    if (worthScavenging(used, size, this.minFill)) {
      this.collect();
      this.runs++;
    }
  };
}

// ------------------------------------------------------- heap compaction

/*
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
 * the opening halves each young-generation pause (docs/performance.md).
 *
 * The collection itself stops the process for 0.7-1.1 s on that Home, so it is
 * asked for only after bulk work, runs once the requests for it have
 * stopped for `quietMs`, and only when the heap has grown to `growth`
 * times what the last one left (and past `minHeapBytes`).
 */
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
