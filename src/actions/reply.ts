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
  constructor(
    readonly body: unknown,
    readonly options: ReplyOptions = {},
  ) {}
}

export const reply = (body: unknown, options: ReplyOptions = {}): Reply => new Reply(body, options);

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
    return {
      status: status ?? (result.body === undefined ? 204 : 200),
      body: result.body,
      headers: headers ?? {},
      ...(etag !== undefined ? { etag } : {}),
      ...(contentType !== undefined ? { contentType } : {}),
      ...(json !== undefined ? { json } : {}),
    };
  }
  return { status: result === undefined ? 204 : 200, body: result, headers: {} };
}
