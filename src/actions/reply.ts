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
}

export function toOutcome(result: unknown): ActionOutcome {
  if (result instanceof Reply) {
    const { status, etag, headers, contentType, json } = result.options;
    const outcome: ActionOutcome = {
      // A reply with JSON bytes has a body, so its data need not be built to know that.
      status: status ?? (json !== undefined || result.body !== undefined ? 200 : 204),
      body: undefined,
      headers: headers ?? {},
      ...(etag !== undefined ? { etag } : {}),
      ...(contentType !== undefined ? { contentType } : {}),
      ...(json !== undefined ? { json } : {}),
    };
    return Object.defineProperty(outcome, 'body', { get: () => result.body, enumerable: true });
  }
  return { status: result === undefined ? 204 : 200, body: result, headers: {} };
}
