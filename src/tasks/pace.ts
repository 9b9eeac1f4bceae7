/**
 * Cooperative pacing for requests whose work grows with the Home (rows of a
 * `.base` view, task lists): the work runs in slices of about SLICE_MS on
 * the main thread and yields to the event loop between them, so other
 * requests are answered meanwhile (docs/bases.md "Responsiveness").
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import { AppError } from '../core/errors.js';

/** Work done before giving other requests a turn. */
export const SLICE_MS = 10;
/** Wall-clock time one paced request may take, pauses included. */
export const REQUEST_MAX_MS = 10_000;

export class Pacer {
  private sliceEnd: number;
  private readonly deadline: number;

  constructor(
    private readonly what = 'The request',
    private readonly maxMs = REQUEST_MAX_MS,
    private readonly sliceMs = SLICE_MS,
  ) {
    const now = performance.now();
    this.sliceEnd = now + sliceMs;
    this.deadline = now + this.maxMs;
  }

  /** True once the current slice has run its time: the caller then awaits `pause()`. Cheap enough to ask per row. */
  due(): boolean {
    return performance.now() >= this.sliceEnd;
  }

  /** Lets the event loop run (I/O, timers, other requests), then starts a new slice; past the deadline, fails with 503. */
  async pause(): Promise<void> {
    if (performance.now() > this.deadline) throw this.tooSlow();
    await nextTurn();
    const now = performance.now();
    // Time spent waiting for other requests counts towards the deadline, as the client waits for it too.
    if (now > this.deadline) throw this.tooSlow();
    this.sliceEnd = now + this.sliceMs;
  }

  private tooSlow() {
    const seconds = String(this.maxMs / 1000);
    return new AppError('service_unavailable', `${this.what} took more than ${seconds} s and was stopped; narrow it (filters, a smaller view) or retry when the server is less busy`, {
      details: { reason: 'request_too_slow', max_seconds: seconds },
    });
  }
}
