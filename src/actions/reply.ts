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
}

export function toOutcome(result: unknown): ActionOutcome {
  if (result instanceof Reply) {
    const { status, etag, headers, contentType } = result.options;
    return {
      status: status ?? (result.body === undefined ? 204 : 200),
      body: result.body,
      headers: headers ?? {},
      ...(etag !== undefined ? { etag } : {}),
      ...(contentType !== undefined ? { contentType } : {}),
    };
  }
  return { status: result === undefined ? 204 : 200, body: result, headers: {} };
}
