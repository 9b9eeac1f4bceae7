/**
 * How the command line and the MCP server reach an action: over HTTP to a
 * server, or (later, with `--vault`) in process. Both return the same
 * outcome shape and throw AppError with the server's envelope on failure.
 */
import type { ActionOutcome } from '../../actions/reply.js';
import type { ActionDef } from '../../actions/types.js';
import type { RawInput } from '../../actions/validate.js';
import { AppError, type ErrorEnvelope } from '../../core/errors.js';
import { fillRoute } from '../http/routes.js';

export interface Transport {
  call(action: ActionDef<any>, input: RawInput): Promise<ActionOutcome>;
}

function buildUrl(server: string, action: ActionDef<any>, input: RawInput): URL {
  let route: string;
  try {
    route = fillRoute(action.route, input.path ?? {});
  } catch (e) {
    throw new AppError('bad_request', (e as Error).message, { details: { field: 'path' } });
  }
  const url = new URL(route, server.endsWith('/') ? server : server + '/');
  for (const [k, v] of Object.entries(input.query ?? {})) {
    if (v === undefined || v === null) continue;
    for (const item of Array.isArray(v) ? v : [v]) url.searchParams.append(k, String(item));
  }
  return url;
}

export class HttpTransport implements Transport {
  constructor(
    private readonly server: string,
    private readonly token: string | null,
  ) {}

  async call(action: ActionDef<any>, input: RawInput): Promise<ActionOutcome> {
    const url = buildUrl(this.server, action, input);
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(input.headers ?? {})) {
      if (v !== undefined && v !== null) headers[k.toLowerCase()] = String(v);
    }
    if (this.token) headers.authorization = `Bearer ${this.token}`;
    let body: string | undefined;
    if (input.body !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(input.body);
    }
    let res: Response;
    try {
      res = await fetch(url, { method: action.method, headers, body });
    } catch (e) {
      throw new AppError('service_unavailable', `Cannot reach ${this.server}: ${(e as Error).message}`, {
        details: { reason: 'unreachable', server: this.server },
      });
    }
    const type = res.headers.get('content-type') ?? '';
    const etag = res.headers.get('etag')?.replace(/^W\//, '').replace(/^"|"$/g, '');
    const outHeaders: Record<string, string> = {};
    res.headers.forEach((v, k) => (outHeaders[k] = v));
    if (!res.ok) {
      const text = await res.text();
      let env: ErrorEnvelope | null = null;
      try {
        env = JSON.parse(text) as ErrorEnvelope;
      } catch {
        env = null;
      }
      if (env?.error?.code) {
        throw new AppError(env.error.code, env.error.message, { status: res.status, details: env.error.details });
      }
      throw new AppError('internal', `Server answered HTTP ${res.status} without an error envelope`, { status: res.status });
    }
    let out: unknown;
    if (res.status === 204) out = undefined;
    else if (type.includes('application/json')) out = await res.json();
    else if (type.startsWith('text/')) out = await res.text();
    else out = Buffer.from(await res.arrayBuffer());
    return {
      status: res.status,
      body: out,
      headers: outHeaders,
      ...(etag ? { etag } : {}),
      ...(type ? { contentType: type } : {}),
    };
  }
}

/** How an outcome prints on the action surfaces: JSON as is, bytes as base64. */
export function outcomeAsJson(out: ActionOutcome): unknown {
  if (Buffer.isBuffer(out.body)) {
    return {
      content_base64: out.body.toString('base64'),
      content_type: out.contentType ?? 'application/octet-stream',
      ...(out.etag ? { etag: out.etag } : {}),
      ...(out.headers['content-range'] ? { content_range: out.headers['content-range'] } : {}),
      ...(out.headers['x-next-offset'] ? { next_offset: Number(out.headers['x-next-offset']) } : {}),
    };
  }
  return out.body ?? null;
}
