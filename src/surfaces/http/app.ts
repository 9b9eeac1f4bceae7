/**
 * The Fastify app, generated from the action registry: one route per action,
 * each doing only transport work (read the request, call dispatch, write the
 * outcome). Every error leaves as the spec's envelope.
 */
import type { Server } from 'node:http';
import type { Duplex } from 'node:stream';
import Fastify, { type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { dispatch } from '../../actions/dispatch.js';
import { bodyLimitOf, jsonTextDepthExceeds, LIMITS } from '../../actions/limits.js';
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

const sizeText = (bytes: number) => (bytes % (1024 * 1024) === 0 ? `${bytes / (1024 * 1024)} MiB` : `${bytes} bytes`);

/** Maps Fastify's own failures (URLs, body parsing, sizes, media types) to the envelope. */
function fromFastifyError(err: FastifyError, req: FastifyRequest): AppError {
  switch (err.code) {
    case 'FST_ERR_BAD_URL':
      return new AppError('bad_request', 'The URL is not valid: a path segment has a malformed percent-encoding', {
        details: { field: 'path', reason: 'bad_url' },
      });
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return new AppError('name_too_long', `A path parameter is longer than ${LIMITS.path} characters`, {
        status: 414,
        details: { field: 'path', limit: String(LIMITS.path) },
      });
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new AppError('bad_request', 'Unsupported Content-Type; send JSON with Content-Type: application/json', {
        status: 415,
        details: { field: 'headers.content-type' },
      });
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new AppError('bad_request', 'Content-Type is application/json but the body is empty', {
        details: { field: 'body' },
      });
    case 'FST_ERR_CTP_BODY_TOO_LARGE': {
      const limit = req.routeOptions.bodyLimit ?? LIMITS.body;
      return new AppError('bad_request', `Request body is larger than the ${sizeText(limit)} this route accepts`, {
        status: 413,
        details: { field: 'body', limit: String(limit) },
      });
    }
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new AppError('bad_request', 'Request body is not valid JSON', { details: { field: 'body' } });
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
  if (out.stream !== undefined && out.status !== 204) return res.type(out.contentType ?? 'application/octet-stream').send(out.stream);
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

/** A whole HTTP response in the envelope, for the moments before Fastify has a request to reply to. */
function rawErrorResponse(err: AppError, extraHeaders: Record<string, string> = {}, withBody = true): string {
  const body = JSON.stringify(err.toEnvelope());
  const headers = { 'content-type': 'application/json; charset=utf-8', 'content-length': String(Buffer.byteLength(body)), connection: 'close', ...extraHeaders };
  const lines = Object.entries(headers).map(([k, v]) => `${k}: ${v}`);
  return `HTTP/1.1 ${err.status} ${STATUS_TEXT[err.status] ?? 'Error'}\r\n${lines.join('\r\n')}\r\n\r\n${withBody ? body : ''}`;
}

const STATUS_TEXT: Record<number, string> = {
  400: 'Bad Request',
  408: 'Request Timeout',
  429: 'Too Many Requests',
  431: 'Request Header Fields Too Large',
};

/**
 * Failures of Node's HTTP parser and its timeouts, which no route sees: headers over 16 KiB
 * (431, a long URL counts), a request not received in time (408) and bytes that are not HTTP.
 */
export function clientError(err: NodeJS.ErrnoException, socket: Duplex): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const appErr =
    err.code === 'HPE_HEADER_OVERFLOW'
      ? new AppError('bad_request', 'Request line and headers are larger than 16 KiB', { status: 431, details: { field: 'headers', limit: '16384' } })
      : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? new AppError('bad_request', 'The request was not received in time', { status: 408, details: { reason: 'request_timeout' } })
        : new AppError('bad_request', 'Malformed HTTP request', { details: { reason: 'malformed_http' } });
  // A response already under way cannot get another one in front of it.
  const started = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent === true;
  // A body after the answer to a HEAD is read by the client as a broken next response. The
  // parser names no method when it fails, but the chunk it failed in usually starts the request.
  const raw = (err as NodeJS.ErrnoException & { rawPacket?: unknown }).rawPacket;
  const head = Buffer.isBuffer(raw) && raw.subarray(0, 5).toString('latin1') === 'HEAD ';
  if (socket.writable && !started) socket.end(rawErrorResponse(appErr, {}, !head), () => socket.destroy());
  else socket.destroy();
}

/**
 * At most `perIp` open connections from one address: one more is answered 429 and closed
 * before its request is read, so a flood of half-sent requests cannot crowd out other clients.
 */
export function limitConnectionsPerIp(server: Server, perIp: number): void {
  if (perIp <= 0) return;
  const open = new Map<string, number>();
  const refusal = rawErrorResponse(
    new AppError('too_many_requests', `Too many open connections from this address (limit ${perIp})`, {
      details: { reason: 'too_many_connections', limit: String(perIp) },
    }),
    { 'retry-after': '1' },
  );
  server.prependListener('connection', (socket) => {
    const ip = socket.remoteAddress ?? '';
    const n = (open.get(ip) ?? 0) + 1;
    if (n > perIp) {
      socket.end(refusal, () => socket.destroy());
      return;
    }
    open.set(ip, n);
    socket.once('close', () => {
      const left = open.get(ip)! - 1;
      if (left === 0) open.delete(ip);
      else open.set(ip, left);
    });
  });
}

/**
 * Large bodies (the content routes accept up to 32 MiB) are read into memory, several times over
 * while parsed; at most `budget` bytes of them are read at once, the rest answered 503 with
 * `Retry-After`, so concurrent uploads cannot take the server's memory with them.
 */
function installLargeBodyBudget(app: FastifyInstance, budget: number): void {
  let inFlight = 0;
  app.addHook('onRequest', (req: FastifyRequest, res: FastifyReply, done: () => void) => {
    const limit = req.routeOptions.bodyLimit ?? LIMITS.body;
    if (limit <= LIMITS.body) return done();
    const declared = req.headers['content-length'] === undefined ? limit : Number(req.headers['content-length']);
    // Over the route's limit: Fastify answers 413 without reading it.
    if (!(declared > LIMITS.body && declared <= limit)) return done();
    if (inFlight > 0 && inFlight + declared > budget) {
      return void sendError(
        res,
        new AppError('service_unavailable', 'The server is receiving too many large bodies at once; retry in a moment', {
          details: { reason: 'busy', field: 'body' },
          headers: { 'retry-after': '1' },
        }),
      );
    }
    inFlight += declared;
    res.raw.once('close', () => (inFlight -= declared));
    done();
  });
}

/**
 * No route carries a Fastify schema: dispatch validates every input (src/actions/validate.ts) and
 * replies are plain JSON. Given these, Fastify does not load its own compilers
 * (@fastify/ajv-compiler, fast-json-stringify: about 50 modules) at every start; a route given a
 * schema fails loudly here instead of being checked twice.
 */
const noRouteSchemas = (): never => {
  throw new Error('Routes take no Fastify schema: inputs are validated by dispatch (src/actions/validate.ts)');
};

export function buildApp(opts: AppOptions): FastifyInstance {
  const logError = opts.logError ?? ((err, where) => console.error(`[quire] internal error in ${where}:`, err));
  const config = opts.services.config;
  const app = Fastify({
    logger: false,
    bodyLimit: LIMITS.body,
    exposeHeadRoutes: true,
    routerOptions: { maxParamLength: LIMITS.path },
    // A hop count is documented and supported; the type declarations lack it.
    trustProxy: config.trustProxy as boolean | string,
    requestTimeout: config.requestTimeoutMs,
    // Node checks the two timeouts every 30 s unless told otherwise; a second keeps them close to their figures.
    http: { headersTimeout: config.headersTimeoutMs, connectionsCheckingInterval: 1000 },
    clientErrorHandler: clientError,
    frameworkErrors: (err, req, res) => sendError(res, fromFastifyError(err as FastifyError, req)),
    schemaController: { compilersFactory: { buildValidator: noRouteSchemas, buildSerializer: noRouteSchemas } },
  });
  limitConnectionsPerIp(app.server, config.maxConnectionsPerIp);
  installSse(app);
  installLargeBodyBudget(app, config.largeBodyBudgetBytes);

  // Nesting is counted on the text, in one pass, before the parser or any schema walks it.
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (req, body, done) => {
    if (jsonTextDepthExceeds(body as string, LIMITS.bodyDepth)) {
      return done(
        new AppError('bad_request', `request body nests deeper than ${LIMITS.bodyDepth} levels`, {
          details: { field: 'body', limit: String(LIMITS.bodyDepth) },
        }) as unknown as FastifyError,
        undefined,
      );
    }
    parseJson(req, body as string, done);
  });

  app.setNotFoundHandler((req, res) => {
    const path = req.url.split('?')[0]!;
    // A URL may be 16 KiB long: the message shows enough of it to recognise.
    return sendError(res, new AppError('not_found', `No route ${req.method} ${path.length > 200 ? `${path.slice(0, 200)}…` : path}`));
  });
  app.setErrorHandler((err: FastifyError, req, res) => {
    const appErr = err instanceof AppError ? err : fromFastifyError(err, req);
    if (appErr.status >= 500 && !(err instanceof AppError)) logError(err, `${req.method} ${req.url.split('?')[0]}`);
    return sendError(res, appErr);
  });

  opts.extend?.(app);
  for (const action of opts.actions) {
    const { url, wildcard } = toFastifyRoute(action.route);
    app.route({
      method: action.method,
      url,
      bodyLimit: bodyLimitOf(action),
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
