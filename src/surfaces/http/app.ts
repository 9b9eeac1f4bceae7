/**
 * The Fastify app, generated from the action registry: one route per action,
 * each doing only transport work (read the request, call dispatch, write the
 * outcome). Every error leaves as the spec's envelope.
 */
import Fastify, { type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { dispatch } from '../../actions/dispatch.js';
import type { ActionOutcome } from '../../actions/reply.js';
import type { ActionDef } from '../../actions/types.js';
import { bearerToken } from '../../accounts/credentials.js';
import { AppError, toAppError } from '../../core/errors.js';
import type { Services } from '../../core/services.js';
import { toFastifyRoute } from './routes.js';
import { installSse, pipeSse, SseStream } from './sse.js';

export interface AppOptions {
  services: Services;
  actions: ReadonlyArray<ActionDef<any>>;
  /** Where unexpected errors are reported (the server log); never the response. */
  logError?: (err: unknown, context: string) => void;
  /** Adds non-API routes and hooks (browser pages, rate limits) before the action routes. */
  extend?: (app: FastifyInstance) => void;
}

function sendError(res: FastifyReply, err: AppError): FastifyReply {
  if (err.headers) res.headers(err.headers);
  return res.code(err.status).type('application/json; charset=utf-8').send(err.toEnvelope());
}

/** Maps Fastify's own failures (body parsing, sizes, media types) to the envelope. */
function fromFastifyError(err: FastifyError): AppError {
  switch (err.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new AppError('bad_request', 'Unsupported Content-Type; send JSON with Content-Type: application/json', {
        status: 415,
        details: { field: 'headers.content-type' },
      });
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new AppError('bad_request', 'Content-Type is application/json but the body is empty', {
        details: { field: 'body' },
      });
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new AppError('bad_request', 'Request body is too large', { status: 413, details: { field: 'body' } });
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new AppError('bad_request', 'Content-Length does not match the body', { details: { field: 'body' } });
  }
  if (err.statusCode === 400 && err instanceof SyntaxError) {
    return new AppError('bad_request', 'Request body is not valid JSON', { details: { field: 'body' } });
  }
  if (err.statusCode && err.statusCode >= 400 && err.statusCode < 500) {
    return new AppError('bad_request', 'Malformed request', { status: err.statusCode });
  }
  return toAppError(err);
}

function sendOutcome(res: FastifyReply, out: ActionOutcome): FastifyReply {
  // JSON bytes first: reading `body` would build a lazy reply's data for nothing.
  if (out.json === undefined && out.body instanceof SseStream) return pipeSse(res, out.body, out.status);
  res.code(out.status);
  res.headers(out.headers);
  if (out.etag !== undefined) res.header('etag', `"${out.etag}"`);
  if (out.json !== undefined && out.status !== 204) return res.type('application/json; charset=utf-8').send(out.json());
  if (out.status === 204 || out.body === undefined) return res.send();
  if (Buffer.isBuffer(out.body) || typeof out.body === 'string') {
    return res.type(out.contentType ?? 'application/octet-stream').send(out.body);
  }
  return res.type('application/json; charset=utf-8').send(JSON.stringify(out.body));
}

/**
 * Route params with Fastify's `*` under the action's name for it. Built key
 * by key: a spread copy that then gains a key costs the old generation
 * memory on every request (docs/architecture.md, "What a request must not leave in the old generation").
 */
export function namedWildcard(params: Record<string, string>, name: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const key of Object.keys(params)) if (key !== '*') out[key] = params[key]!;
  out[name] = params['*'] ?? '';
  return out;
}

export function buildApp(opts: AppOptions): FastifyInstance {
  const logError = opts.logError ?? ((err, where) => console.error(`[quire] internal error in ${where}:`, err));
  const app = Fastify({ logger: false, bodyLimit: 32 * 1024 * 1024, exposeHeadRoutes: true });
  installSse(app);

  app.setNotFoundHandler((req, res) =>
    sendError(res, new AppError('not_found', `No route ${req.method} ${req.url.split('?')[0]}`)),
  );
  app.setErrorHandler((err: FastifyError, req, res) => {
    const appErr = err instanceof AppError ? err : fromFastifyError(err);
    if (appErr.code === 'internal' && !(err instanceof AppError)) logError(err, `${req.method} ${req.url.split('?')[0]}`);
    return sendError(res, appErr);
  });

  opts.extend?.(app);
  for (const action of opts.actions) {
    const { url, wildcard } = toFastifyRoute(action.route);
    app.route({
      method: action.method,
      url,
      handler: async (req: FastifyRequest, res: FastifyReply) => {
        const params = wildcard ? namedWildcard(req.params as Record<string, string>, wildcard) : (req.params as Record<string, string>);
        try {
          const token = bearerToken(req.headers.authorization);
          const out = await dispatch(
            action,
            { path: params, query: req.query as Record<string, unknown>, headers: req.headers, body: req.body },
            { services: opts.services, surface: 'http', token, onInternalError: (e) => logError(e, action.name) },
          );
          return sendOutcome(res, out);
        } catch (e) {
          return sendError(res, toAppError(e));
        }
      },
    });
  }
  return app;
}
