/**
 * The error vocabulary of the API. Every failure that reaches a surface is an
 * AppError; the HTTP surface turns it into the spec's envelope
 * `{ error: { code, message, details } }` and the CLI and MCP print the same.
 * The table of codes and statuses lives in docs/errors.md; keep them in step.
 */
export const ERROR_CODES = [
  'bad_request',
  'unauthorized',
  'forbidden',
  'not_found',
  'conflict',
  'name_conflict_case',
  'name_too_long',
  'push_endpoint_rejected',
  'too_many_requests',
  'internal',
  'service_unavailable',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

/** The status each code answers with unless the thrower names a more precise one. */
export const DEFAULT_STATUS: Record<ErrorCode, number> = {
  bad_request: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  name_conflict_case: 409,
  name_too_long: 400,
  push_endpoint_rejected: 400,
  too_many_requests: 429,
  internal: 500,
  service_unavailable: 503,
};

export type ErrorDetails = Record<string, string>;

export interface ErrorEnvelope {
  error: { code: ErrorCode; message: string; details?: ErrorDetails };
}

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly details: ErrorDetails | undefined;
  /** Extra response headers, e.g. `Retry-After` on 429. */
  readonly headers: Record<string, string> | undefined;

  constructor(
    code: ErrorCode,
    message: string,
    opts: { status?: number; details?: ErrorDetails; headers?: Record<string, string> } = {},
  ) {
    super(message);
    this.name = 'AppError';
    this.code = code;
    this.status = opts.status ?? DEFAULT_STATUS[code];
    this.details = opts.details;
    this.headers = opts.headers;
  }

  toEnvelope(): ErrorEnvelope {
    return {
      error: {
        code: this.code,
        message: this.message,
        ...(this.details && Object.keys(this.details).length > 0 ? { details: this.details } : {}),
      },
    };
  }
}

/** Shorthands for the errors handlers throw most; each says what a caller can do about it. */
export const errors = {
  badRequest: (message: string, details?: ErrorDetails) => new AppError('bad_request', message, { details }),
  notFound: (message: string, details?: ErrorDetails) => new AppError('not_found', message, { details }),
  forbidden: (message: string, details?: ErrorDetails) => new AppError('forbidden', message, { details }),
  unauthorized: (message: string, details?: ErrorDetails) => new AppError('unauthorized', message, { details }),
  conflict: (message: string, details?: ErrorDetails) => new AppError('conflict', message, { details }),
  /** `If-Match` named a version that is no longer the bytes on disk. */
  staleEtag: (current: string | null) =>
    new AppError('conflict', 'The resource changed since you read it (If-Match does not match the current ETag)', {
      status: 412,
      details: current ? { reason: 'etag_mismatch', current_etag: current } : { reason: 'etag_mismatch' },
    }),
  /** A conditional header the action requires was not sent. */
  preconditionRequired: (header: string) =>
    new AppError('bad_request', `Header ${header} is required for this action`, {
      status: 428,
      details: { header, reason: 'precondition_required' },
    }),
  notImplemented: (action: string) =>
    new AppError('internal', `Action ${action} is not implemented yet`, {
      status: 501,
      details: { reason: 'not_implemented', action },
    }),
};

export function isAppError(e: unknown): e is AppError {
  return e instanceof AppError;
}

/**
 * A module the process loads at first use is gone: its install was replaced
 * while it ran (an upgrade or a rebuild names the bundle's chunks anew).
 */
function isCodeGone(e: unknown): boolean {
  const code = (e as { code?: unknown } | null)?.code;
  return code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND';
}

/** Turns anything thrown into an AppError; unknown errors become a bare 500 with no stack or path. */
export function toAppError(e: unknown): AppError {
  if (isAppError(e)) return e;
  if (isCodeGone(e)) {
    return new AppError('service_unavailable', 'Quire was upgraded while this server ran (code it loads at first use is gone); restart it', {
      details: { reason: 'upgraded' },
    });
  }
  return new AppError('internal', 'Internal error');
}
