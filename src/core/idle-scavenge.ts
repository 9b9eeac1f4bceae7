/**
 * Young-generation collections (scavenges) while no request is being
 * answered, rather than in the middle of a burst of them.
 *
 * A scavenge stops the process; on a large Home it pauses 5-8 ms, most of it
 * a walk over every page of the old generation, whatever the young one holds
 * (docs/benchmarks.md). V8 starts one when the young generation is full,
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
 * which is why `quire serve` runs Node with a larger one (SERVER_NODE_FLAGS
 * below; docs/architecture.md, "Memory").
 */
import type { Server, ServerResponse } from 'node:http';
import v8 from 'node:v8';
import { v8GarbageCollector } from './heap-compaction.js';

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

/**
 * The Node.js flags the server runs with. The `quire` launcher's first
 * line, `npm start` and the bench's server and index processes repeat
 * them; a test checks that they agree.
 *
 * - `--max-semi-space-size=32`: a young generation (two semi-spaces) of
 *   32 MB each instead of 16, so that the garbage of a burst of about a
 *   thousand requests (~21 KB each) fits in it.
 * - `--no-allocation-site-pretenuring`: opening a Home keeps nearly
 *   everything it allocates, so V8 marks allocation sites as long-lived and
 *   from then on allocates their objects straight in the old generation;
 *   code that requests share with the opening then leaves its short-lived
 *   objects there, and they hold young ones alive through scavenges. On
 *   the 100k bench Home that grew the old generation by 3 MB/s under any
 *   load, and brought full collections into the measured seconds
 *   (docs/architecture.md, "Memory").
 */
export const SERVER_NODE_FLAGS = ['--max-semi-space-size=32', '--no-allocation-site-pretenuring'] as const;

/** Per response: the scavenger counting it, until it is done or long-lived. */
const COUNTED = Symbol('idle-scavenge.counted');
type Counted = { [COUNTED]?: IdleScavenger | null };

/**
 * A response that stays open (an event stream) is not a request in flight:
 * the server is idle while it waits, so it stops being counted now.
 */
export function longLived(res: ServerResponse): void {
  const counted = res as ServerResponse & Counted;
  const scavenger = counted[COUNTED];
  if (!scavenger) return;
  counted[COUNTED] = null;
  scavenger.done();
}

function onClose(this: ServerResponse): void {
  longLived(this);
}

export class IdleScavenger {
  private readonly idleMs: number;
  private readonly minFill: number;
  private readonly collect: () => void;
  private readonly youngGeneration: () => { used: number; size: number };
  private inFlight = 0;
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

  /** Counts `server`'s requests from now on; returns the function that stops it. */
  attach(server: Server): () => void {
    server.on('request', this.onRequest);
    return () => {
      server.off('request', this.onRequest);
      if (this.timer !== null) clearTimeout(this.timer);
      this.timer = null;
    };
  }

  private readonly onRequest = (_req: unknown, res: ServerResponse & Counted) => {
    this.inFlight++;
    res[COUNTED] = this;
    res.once('close', onClose);
  };

  /** A counted response ended, or turned long-lived. */
  done(): void {
    if (--this.inFlight > 0) return;
    this.lastDone = performance.now();
    if (this.timer === null) this.arm(this.idleMs);
  }

  private arm(ms: number): void {
    this.timer = setTimeout(this.check, ms);
    this.timer.unref();
  }

  private readonly check = () => {
    this.timer = null;
    // A request came in since: its own end re-arms the check.
    if (this.inFlight > 0) return;
    const quiet = performance.now() - this.lastDone;
    if (quiet < this.idleMs) return this.arm(this.idleMs - quiet);
    const { used, size } = this.youngGeneration();
    if (worthScavenging(used, size, this.minFill)) {
      this.collect();
      this.runs++;
    }
  };
}
