/**
 * Server-sent event streams (encoding `sse`). A handler returns `sse({...})`:
 * an SseStream that knows how to open a live stream on a sink and how to
 * answer with a bounded snapshot instead. The HTTP surface pipes it:
 *
 * - a request that accepts `text/event-stream` (EventSource, `curl -N -H
 *   'Accept: text/event-stream'`) gets the live stream;
 * - any other request (the command line and MCP going through HTTP, a plain
 *   `curl`) gets the snapshot as JSON, so a stream action never hangs a
 *   one-shot client. Off HTTP (local vault mode) the snapshot is what prints.
 *
 * A stream never blocks a writer: events go to a bounded per-stream queue
 * while the socket is congested; when the queue overflows it is dropped and
 * one `overflow` event is sent once the socket drains (clients then reduce
 * `poll_ms` and re-read current data). Heartbeat comments keep proxies from
 * closing idle streams. Every open stream is tracked per server and ended on
 * `close()` so shutdown never hangs. docs/changes.md describes the events.
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { ServerResponse } from 'node:http';
import { AppError, toAppError } from '../../core/errors.js';
import { longLived } from './activity.js';

export interface SseEvent {
  /** `id:` line; clients send the last one back as `Last-Event-ID`. */
  id?: string;
  /** `event:` line; omitted means the default `message`. */
  event?: string;
  data: unknown;
}

/** Where a stream writes. Writes never block and never throw. */
export interface SseSink {
  send(ev: SseEvent): void;
  /** A comment line (`: text`), ignored by clients. */
  comment(text: string): void;
  /** Ends the stream; idempotent. */
  close(): void;
  readonly closed: boolean;
  /** Runs once when the stream ends, whoever ended it. */
  onClose(cb: () => void): void;
}

/** What the surface knows about the connection. */
export interface SseConnection {
  ip: string;
  headers: Record<string, string | string[] | undefined>;
}

export interface SseSpec {
  /**
   * Starts the stream. May throw an AppError (e.g. 429) before anything is
   * written: the surface then answers with the error envelope. Events sent
   * during `open` are written right after the response headers.
   */
  open(sink: SseSink, conn: SseConnection): void;
  /** A bounded JSON answer for clients that do not read event streams. */
  snapshot(): unknown;
}

export class SseStream {
  constructor(readonly spec: SseSpec) {}
  /** Printed by surfaces that serialise outcomes (command line, MCP in local mode). */
  toJSON(): unknown {
    return this.spec.snapshot();
  }
}

export const sse = (spec: SseSpec): SseStream => new SseStream(spec);

export interface SseTuning {
  /** Heartbeat comment interval (ms). */
  heartbeatMs: number;
  /** Events a congested stream may hold before it overflows. */
  maxQueue: number;
}

/** `QUIRE_SSE_HEARTBEAT_MS` (default 15 000) and `QUIRE_SSE_MAX_QUEUE` (default 1 000), read when a stream opens. */
export function sseTuning(env: NodeJS.ProcessEnv = process.env): SseTuning {
  const num = (v: string | undefined, d: number) => {
    const n = Number(v);
    return v !== undefined && v !== '' && Number.isFinite(n) && n > 0 ? n : d;
  };
  return { heartbeatMs: num(env.QUIRE_SSE_HEARTBEAT_MS, 15_000), maxQueue: num(env.QUIRE_SSE_MAX_QUEUE, 1_000) };
}

export function formatEvent(ev: SseEvent): string {
  let out = '';
  if (ev.id !== undefined) out += `id: ${ev.id.replace(/[\r\n]/g, '')}\n`;
  if (ev.event !== undefined) out += `event: ${ev.event.replace(/[\r\n]/g, '')}\n`;
  const data = typeof ev.data === 'string' ? ev.data : JSON.stringify(ev.data);
  for (const line of data.split(/\r\n|\r|\n/)) out += `data: ${line}\n`;
  return out + '\n';
}

/** The minimal part of a Node response a sink writes to (tests pass a fake). */
export interface SseWritable {
  write(chunk: string): boolean;
  end(): void;
  once(event: 'drain' | 'close', cb: () => void): unknown;
  readonly writableEnded?: boolean;
  readonly destroyed?: boolean;
}

/**
 * The bounded queue between producers and a socket. While `write` reports
 * congestion, frames wait in the queue; past `maxQueue` the queue is dropped
 * and one `overflow` event goes out when the socket drains.
 */
export class QueueSink implements SseSink {
  private queue: string[] = [];
  private congested = false;
  private overflowed = false;
  private closed_ = false;
  private readonly closers: Array<() => void> = [];
  /** Frames written or queued before `start` (during `open`). */
  private started = false;
  /** How many times this stream overflowed (for tests and logs). */
  overflows = 0;

  constructor(
    private readonly out: SseWritable,
    private readonly maxQueue: number,
  ) {}

  get closed(): boolean {
    return this.closed_;
  }

  /** Called once the response headers are out: flushes what `open` sent. */
  start(): void {
    this.started = true;
    this.out.once('close', () => this.close());
    this.flush();
  }

  send(ev: SseEvent): void {
    this.push(formatEvent(ev));
  }

  comment(text: string): void {
    this.push(`: ${text.replace(/[\r\n]/g, ' ')}\n\n`);
  }

  private push(frame: string): void {
    if (this.closed_) return;
    if (!this.started || this.congested) {
      if (this.overflowed) return;
      if (this.queue.length >= this.maxQueue) {
        this.queue = [];
        this.overflowed = true;
        this.overflows++;
        return;
      }
      this.queue.push(frame);
      return;
    }
    this.writeFrame(frame);
  }

  private writeFrame(frame: string): void {
    if (this.out.destroyed || this.out.writableEnded) return this.close();
    const ok = this.out.write(frame);
    if (!ok && !this.congested) {
      this.congested = true;
      this.out.once('drain', () => {
        this.congested = false;
        this.flush();
      });
    }
  }

  private flush(): void {
    if (this.overflowed) {
      this.overflowed = false;
      this.queue = [];
      this.writeFrame(formatEvent({ event: 'overflow', data: { reason: 'client_too_slow', hint: 'reduce poll_ms and read current data' } }));
    }
    while (this.queue.length > 0 && !this.congested && !this.closed_) this.writeFrame(this.queue.shift()!);
  }

  onClose(cb: () => void): void {
    if (this.closed_) cb();
    else this.closers.push(cb);
  }

  close(): void {
    this.finish(true);
  }

  /** Ends the stream's producers without touching the response (open failed; the surface answers with an error). */
  abandon(): void {
    this.finish(false);
  }

  private finish(endOutput: boolean): void {
    if (this.closed_) return;
    this.closed_ = true;
    this.queue = [];
    for (const cb of this.closers.splice(0)) {
      try {
        cb();
      } catch {
        // a cleanup failing must not keep the stream open
      }
    }
    try {
      if (endOutput && this.started && !this.out.writableEnded) this.out.end();
    } catch {
      // socket already gone
    }
  }
}

/** Open streams per HTTP server, ended on close. */
const openStreams = new WeakMap<object, Set<SseSink>>();

function streamsOf(app: FastifyInstance): Set<SseSink> {
  const key = app.server;
  let set = openStreams.get(key);
  if (!set) openStreams.set(key, (set = new Set()));
  return set;
}

/** Ends every open stream before the server stops listening, so `app.close()` does not wait on them. */
export function installSse(app: FastifyInstance): void {
  app.addHook('preClose', (done) => {
    for (const s of [...streamsOf(app)]) s.close();
    done();
  });
}

function accepts(header: string | string[] | undefined): boolean {
  const v = Array.isArray(header) ? header.join(',') : header ?? '';
  return v.toLowerCase().includes('text/event-stream');
}

/** Writes an SseStream to a Fastify reply: live when the client reads streams, else the snapshot. */
export function pipeSse(res: FastifyReply, stream: SseStream, status = 200): FastifyReply {
  const req = res.request;
  if (!accepts(req.headers.accept)) {
    return res.code(status).type('application/json; charset=utf-8').send(JSON.stringify(stream.spec.snapshot() ?? null));
  }
  const raw: ServerResponse = res.raw;
  const tuning = sseTuning();
  const sink = new QueueSink(raw, tuning.maxQueue);
  try {
    stream.spec.open(sink, { ip: req.ip, headers: req.headers });
  } catch (e) {
    sink.abandon();
    const err = e instanceof AppError ? e : toAppError(e);
    if (err.headers) res.headers(err.headers);
    return res.code(err.status).type('application/json; charset=utf-8').send(err.toEnvelope());
  }
  if (sink.closed) return res.code(204).send();
  // From here on the stream owns the socket.
  res.hijack();
  longLived(raw);
  raw.writeHead(status, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache, no-transform',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
  });
  raw.flushHeaders?.();
  const all = streamsOf(res.server);
  all.add(sink);
  const beat = setInterval(() => sink.comment('heartbeat'), tuning.heartbeatMs);
  beat.unref();
  sink.onClose(() => {
    clearInterval(beat);
    all.delete(sink);
  });
  // A first comment makes clients see the stream as open at once.
  raw.write(': connected\n\n');
  sink.start();
  return res;
}
