/**
 * Turns for work that runs on worker threads (clip extraction, canvas
 * exports): at most `concurrency` at once, at most `queueMax` waiting. Past
 * that the caller hears at once (503 with Retry-After) instead of waiting
 * minutes behind the others.
 */
import { AppError } from './errors.js';

export class Turns {
  private running = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(
    private readonly concurrency: number,
    private readonly queueMax: number,
    /** The 503's message, from how many run and wait. */
    private readonly busy: (running: number, waiting: number) => string,
  ) {}

  /** Waits for a turn; call the returned function when the work is done. */
  async take(): Promise<() => void> {
    if (this.running >= this.concurrency) {
      if (this.waiting.length >= this.queueMax) {
        throw new AppError('service_unavailable', this.busy(this.running, this.waiting.length), { headers: { 'retry-after': '10' } });
      }
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    }
    this.running++;
    return () => {
      this.running--;
      this.waiting.shift()?.();
    };
  }
}
