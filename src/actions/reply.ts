/**
 * What a handler may return besides plain JSON data: a status, headers (an
 * ETag above all), or bytes and text for the `base64` and `text` encodings.
 */
export interface ReplyOptions {
  status?: number;
  etag?: string;
  headers?: Record<string, string>;
  /** For text and byte responses. */
  contentType?: string;
  /**
   * The body's JSON text (UTF-8), for a handler that can produce it more
   * cheaply than `JSON.stringify(body)` (lists of records whose JSON is
   * cached). Must give exactly that text; the HTTP surface sends it, the
   * others use `body`.
   */
  json?: () => Buffer;
  /**
   * The body as a stream of bytes, for the HTTP surface only (a handler offers it when
   * `ctx.surface` is `http`): a large file goes out without being read whole. `body` is then unused.
   */
  stream?: NodeJS.ReadableStream;
}

export class Reply {
  private value: unknown;

  constructor(
    body: unknown,
    readonly options: ReplyOptions = {},
    /** Builds the body on first use; cleared once it has (see `lazyReply`). */
    private make?: () => unknown,
  ) {
    this.value = body;
  }

  /** The data; a lazy reply builds it on first use (see `lazyReply`). */
  get body(): unknown {
    if (this.make !== undefined) {
      this.value = this.make();
      this.make = undefined;
    }
    return this.value;
  }
}

export const reply = (body: unknown, options: ReplyOptions = {}): Reply => new Reply(body, options);

/**
 * A reply whose data is built only if a surface asks for it: with `json`,
 * the HTTP surface sends those bytes and never does. A list of 650 note
 * records is 650 objects to build per request (by_tag's 10k bench tag),
 * garbage the young generation has to hold in a burst; the command line and
 * MCP still get the records.
 */
export const lazyReply = (make: () => unknown, options: ReplyOptions & { json: () => Buffer }): Reply => new Reply(undefined, options, make);

/** The normalised outcome of a call, whatever the handler returned. */
export interface ActionOutcome {
  status: number;
  body: unknown;
  etag?: string;
  headers: Record<string, string>;
  contentType?: string;
  /** See ReplyOptions.json. */
  json?: () => Buffer;
  /** See ReplyOptions.stream. */
  stream?: NodeJS.ReadableStream;
}

/**
 * A Reply's outcome. `body` is a getter on the class, not one defined on
 * each outcome: `Object.defineProperty(outcome, 'body', { get: () => ... })`
 * gave every response object a hidden class of its own, allocated in the
 * old generation, which then filled with them under load (docs/architecture.md, "What a request must not leave in the old generation").
 */
class ReplyOutcome implements ActionOutcome {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly etag?: string;
  readonly contentType?: string;
  readonly json?: () => Buffer;
  readonly stream?: NodeJS.ReadableStream;

  constructor(private readonly reply: Reply) {
    const { status, etag, headers, contentType, json, stream } = reply.options;
    // A reply with JSON bytes or a stream has a body, so its data need not be built to know that.
    this.status = status ?? (json !== undefined || stream !== undefined || reply.body !== undefined ? 200 : 204);
    this.headers = headers ?? {};
    if (etag !== undefined) this.etag = etag;
    if (contentType !== undefined) this.contentType = contentType;
    if (json !== undefined) this.json = json;
    if (stream !== undefined) this.stream = stream;
  }

  get body(): unknown {
    return this.reply.body;
  }
}

export function toOutcome(result: unknown): ActionOutcome {
  if (result instanceof Reply) return new ReplyOutcome(result);
  return { status: result === undefined ? 204 : 200, body: result, headers: {} };
}
