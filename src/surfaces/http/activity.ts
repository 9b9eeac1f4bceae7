/**
 * The requests in flight on the HTTP server, for what acts in the quiet
 * moments between bursts (the server's start-up wires the idle scavenger of
 * src/memory-tuning.ts to it). A response counts from its request until it
 * closes, or until it turns long-lived: the server is idle while an event
 * stream waits, so the stream stops counting when it opens (sse.ts).
 */
import type { Server, ServerResponse } from 'node:http';

/** Per response: the counter counting it, until it is done or long-lived. */
const COUNTED = Symbol('request-activity.counted');
type Counted = { [COUNTED]?: RequestActivity | null };

/** A response that stays open (an event stream) is not a request in flight: it stops being counted now. */
export function longLived(res: ServerResponse): void {
  const counted = res as ServerResponse & Counted;
  const activity = counted[COUNTED];
  if (!activity) return;
  counted[COUNTED] = null;
  activity.done();
}

function onClose(this: ServerResponse): void {
  longLived(this);
}

export class RequestActivity {
  private count = 0;
  private readonly quietListeners = new Set<() => void>();

  get inFlight(): number {
    return this.count;
  }

  /** Counts `server`'s requests from now on; returns the function that stops it. */
  attach(server: Server): () => void {
    server.on('request', this.onRequest);
    return () => server.off('request', this.onRequest);
  }

  /** Calls `cb` each time the last request in flight ends; returns the function that stops it. */
  onQuiet(cb: () => void): () => void {
    this.quietListeners.add(cb);
    return () => this.quietListeners.delete(cb);
  }

  private readonly onRequest = (_req: unknown, res: ServerResponse & Counted) => {
    this.count++;
    res[COUNTED] = this;
    res.once('close', onClose);
  };

  /** A counted response ended, or turned long-lived (longLived). */
  done(): void {
    if (--this.count > 0) return;
    for (const cb of this.quietListeners) cb();
  }
}
