/** A real EventSource client (npm `eventsource`) with a bearer token, collecting what it receives. */
import { EventSource } from 'eventsource';
import { eventually } from '../helpers/wait.js';

export interface Received {
  type: string;
  id: string;
  data: any;
}

export interface Stream {
  es: EventSource;
  events: Received[];
  errors: unknown[];
  opened: Promise<void>;
  /** Waits until an event matching `pred` has arrived; returns it. */
  waitFor(pred: (e: Received) => boolean, timeoutMs?: number): Promise<Received>;
  close(): void;
}

export function openStream(url: string, token: string, opts: { types: string[]; lastEventId?: string } = { types: [] }): Stream {
  const events: Received[] = [];
  const errors: unknown[] = [];
  const es = new EventSource(url, {
    fetch: (input, init) =>
      fetch(input, {
        ...init,
        headers: {
          ...(init?.headers as Record<string, string>),
          authorization: `Bearer ${token}`,
          ...(opts.lastEventId ? { 'last-event-id': opts.lastEventId } : {}),
        },
      }),
  });
  const opened = new Promise<void>((resolve, reject) => {
    es.addEventListener('open', () => resolve());
    es.addEventListener('error', (e) => {
      errors.push(e);
      if (es.readyState === EventSource.CLOSED) reject(e);
    });
  });
  opened.catch(() => undefined);
  for (const type of opts.types) {
    es.addEventListener(type, (e) => {
      const m = e as MessageEvent;
      events.push({ type, id: m.lastEventId, data: JSON.parse(m.data as string) });
    });
  }
  return {
    es,
    events,
    errors,
    opened,
    waitFor: (pred, timeoutMs = 5000) => eventually(() => events.find(pred), timeoutMs) as Promise<Received>,
    close: () => es.close(),
  };
}
