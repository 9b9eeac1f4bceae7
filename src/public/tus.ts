/**
 * The file drop's tus 1.0 server (@tus/server): one per instance, bytes in
 * `<data>/state/uploads/` (never in a Home), each upload bound to the link it was created
 * through. The HTTP routes of `public_upload_*` reach it with the request's own stream (a 1 GB
 * upload passes through, never held whole); the command line and MCP reach the same server
 * with a Request built from the action's base64 body. Failures leave as the spec's envelope.
 * docs/public-links.md, "Uploads".
 */
import fs, { promises as fsp } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import nodePath from 'node:path';
import { PassThrough, Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { FileStore } from '@tus/file-store';
import { ERRORS, Server, StreamLimiter, Upload } from '@tus/server';
import { NodeRequest, sendNodeResponse } from 'srvx/node';
import { paths } from '../core/config.js';
import { AppError, toAppError } from '../core/errors.js';
import type { Services } from '../core/services.js';
import { openLink, requirePermission, type OpenLink } from './access.js';
import { tusRoute } from './tus-route.js';
import { checkNameFree, checkRoom, commitUpload, hashFor, parseChecksum, parseConflictPolicy, uploadFileName, UPLOAD_MAX_BYTES, type Checksum } from './upload.js';

export const TUS_VERSION = '1.0.0';
/** Metadata keys the server adds to an upload's record (the visitor's own keys cannot start with `quire_`). */
const LINK_KEY = 'quire_link';
const POLICY_KEY = 'quire_policy';
const DONE_KEY = 'quire_committed';
const DAY = 24 * 60 * 60 * 1000;
const UPLOAD_ID = /^[0-9a-f]{32}$/;
const WRITE_BUFFER = 1024 * 1024;

type StoredUpload = Upload & { metadata?: Record<string, string | null> };

/**
 * FileStore plus the checksum extension (a chunk whose digest differs is cut off again and
 * answered 460) and committed uploads: once moved into the Home, an upload's bytes are gone but
 * its record stays until it expires, answering HEAD with the full offset so a client whose last
 * answer was lost does not send the file again.
 */
class DropStore extends FileStore {
  private readonly expected = new Map<string, Checksum>();

  constructor(directory: string, expiryMs: number) {
    super({ directory, expirationPeriodInMilliseconds: expiryMs });
    // No deferred length: the spec makes Upload-Length required.
    this.extensions = ['creation', 'creation-with-upload', 'termination', 'expiration', 'checksum'];
  }

  /** The checksum the next write of `id` must match (null: none); the tus server holds a lock per upload around writes. */
  expect(id: string, c: Checksum | null): void {
    if (c) this.expected.set(id, c);
    else this.expected.delete(id);
  }

  record(id: string): Promise<StoredUpload | undefined> {
    return this.configstore.get(id) as Promise<StoredUpload | undefined>;
  }

  async markCommitted(id: string, path: string): Promise<void> {
    const rec = await this.record(id);
    if (!rec) return;
    await this.configstore.set(id, new Upload({ ...rec, metadata: { ...rec.metadata, [DONE_KEY]: path } }));
  }

  /** Ids are ours (UPLOAD_ID), so a path segment from a URL never names another file. */
  dataPath(id: string): string {
    if (!UPLOAD_ID.test(id)) throw ERRORS.FILE_NOT_FOUND;
    return nodePath.join(this.directory, id);
  }

  override async getUpload(id: string): Promise<Upload> {
    const rec = await this.record(id);
    if (rec?.metadata?.[DONE_KEY]) return new Upload({ id, size: rec.size, offset: rec.size ?? 0, metadata: rec.metadata, creation_date: rec.creation_date });
    return super.getUpload(id);
  }

  override async write(readable: Readable, id: string, offset: number): Promise<number> {
    const c = this.expected.get(id);
    this.expected.delete(id);
    const rec = await this.record(id);
    if (rec?.metadata?.[DONE_KEY]) {
      readable.resume();
      return rec.size ?? offset;
    }
    const hash = c ? hashFor(c) : null;
    let received = 0;
    const tap = new Transform({
      transform(chunk: Buffer, _enc, cb) {
        received += chunk.length;
        hash?.update(chunk);
        cb(null, chunk);
      },
    });
    // FileStore's own write uses a 16 KiB write buffer; 1 MiB lets the disk take larger writes.
    const out = fs.createWriteStream(this.dataPath(id), { flags: 'r+', start: offset, highWaterMark: WRITE_BUFFER });
    try {
      await pipeline(readable, tap, out);
    } catch {
      // What arrived before the client went away stays: the upload continues from there.
      throw ERRORS.FILE_WRITE_ERROR;
    }
    const end = offset + received;
    if (hash && c && hash.digest('base64') !== c.digest) {
      // The tus checksum extension: a chunk that fails its checksum is not appended.
      await fsp.truncate(this.dataPath(id), offset);
      throw { status_code: 460, body: `Checksum mismatch: the ${c.algorithm} of the bytes received differs from Upload-Checksum; the chunk was discarded, send it again from offset ${offset}\n` };
    }
    return end;
  }

  override async remove(id: string): Promise<void> {
    if (!(await this.record(id))) throw ERRORS.FILE_NOT_FOUND;
    await fsp.unlink(this.dataPath(id)).catch(() => undefined);
    await this.configstore.delete(id);
  }
}

interface Drop {
  server: Server;
  store: DropStore;
}

const drops = new WeakMap<Services, Drop>();
/** The link each request opened (its password checked once, however many hooks ask). */
const opened = new WeakMap<Request, Promise<OpenLink>>();
/** The password an HTTP request carries in the page's cookie (the Node adapter reads only the raw headers). */
const cookiePasswords = new WeakMap<Request, string>();

function openFor(services: Services, req: Request): Promise<OpenLink> {
  let p = opened.get(req);
  if (!p) {
    p = (async () => {
      const route = tusRoute(new URL(req.url).pathname);
      if (!route) throw ERRORS.FILE_NOT_FOUND;
      const open = await openLink(services, route.slug, req.headers.get('x-public-password') ?? cookiePasswords.get(req));
      requirePermission(open, 'upload');
      return open;
    })();
    opened.set(req, p);
  }
  return p;
}

/** An upload of this link; anything else (another link's upload, an unknown id) is 404. */
async function recordFor(drop: Drop, open: OpenLink, id: string): Promise<StoredUpload> {
  const rec = await drop.store.record(id);
  if (!rec || rec.metadata?.[LINK_KEY] !== open.link.id) throw ERRORS.FILE_NOT_FOUND;
  return rec;
}

/** Moves a complete upload into the Home once; later calls answer the path it got. */
async function finish(drop: Drop, open: OpenLink, upload: Upload): Promise<string> {
  const rec = await recordFor(drop, open, upload.id);
  const done = rec.metadata?.[DONE_KEY];
  if (done) return done;
  const name = uploadFileName(rec.metadata?.filename);
  try {
    const { path } = await commitUpload(open, drop.store.dataPath(upload.id), upload.size ?? 0, name, parseConflictPolicy(rec.metadata?.[POLICY_KEY]));
    await drop.store.markCommitted(upload.id, path);
    return path;
  } catch (e) {
    // The bytes went with the refused move: the upload is over.
    await drop.store.remove(upload.id).catch(() => undefined);
    throw e;
  }
}

function expiryMs(): number {
  const v = Number(process.env.QUIRE_UPLOAD_EXPIRY_MS);
  return Number.isFinite(v) && v > 0 ? v : DAY;
}

function dropFor(services: Services): Drop {
  let drop = drops.get(services);
  if (drop) return drop;
  const expiry = expiryMs();
  const store = new DropStore(nodePath.join(paths.state(services.config), 'uploads'), expiry);
  const server: Server = new Server({
    path: '/api/v1/public',
    datastore: store,
    maxSize: UPLOAD_MAX_BYTES,
    // Same origin only: no CORS headers for other sites.
    allowedOrigins: () => false,
    namingFunction: async (req) => {
      await openFor(services, req);
      return crypto.randomUUID().replaceAll('-', '');
    },
    generateUrl: (req, { id }) => `/api/v1/public/${encodeURIComponent(tusRoute(new URL(req.url).pathname)!.slug)}/uploads/${id}`,
    getFileIdFromRequest: (req) => {
      const id = tusRoute(new URL(req.url).pathname)?.id;
      return id && UPLOAD_ID.test(id) ? id : undefined;
    },
    onIncomingRequest: async (req, id) => {
      const open = await openFor(services, req);
      if (req.method === 'POST' || req.method === 'PATCH') store.expect(id, parseChecksum(req.headers.get('upload-checksum')));
      if (req.method === 'POST') return;
      await recordFor(drop!, open, id);
      // The server stopped between the last byte and the move: the next HEAD completes it.
      if (req.method === 'HEAD') {
        const upload = await store.getUpload(id);
        if (upload.size !== undefined && upload.offset === upload.size) await finish(drop!, open, upload);
      }
    },
    onUploadCreate: async (req, upload) => {
      const open = await openFor(services, req);
      const meta = upload.metadata ?? {};
      if (Object.keys(meta).some((k) => k.startsWith('quire_'))) {
        throw new AppError('bad_request', 'Upload-Metadata keys starting with quire_ are reserved', { details: { field: 'headers.upload-metadata' } });
      }
      const name = uploadFileName(meta.filename);
      const policy = parseConflictPolicy(req.headers.get('upload-conflict-policy'));
      await checkRoom(open, upload.size ?? 0);
      if (policy === 'reject') await checkNameFree(open, name);
      return { metadata: { ...meta, [LINK_KEY]: open.link.id, [POLICY_KEY]: policy } };
    },
    onUploadFinish: async (req, upload) => {
      const open = await openFor(services, req);
      const path = await finish(drop!, open, upload);
      // The visitor sees paths inside the shared folder only, as in `entries`: not where it sits in the Home.
      return { headers: { 'Quire-Upload-Path': open.targetPath === '' ? path : path.slice(open.targetPath.length + 1) } };
    },
    onResponseError: (_req, err) => {
      if (err instanceof AppError) return { status_code: err.status, body: JSON.stringify(err.toEnvelope()) };
      if (err instanceof Error) {
        console.error('[quire] file drop:', err);
        return { status_code: 500, body: JSON.stringify(toAppError(err).toEnvelope()) };
      }
      return undefined;
    },
  });
  streamNodeBodies(server, store);
  drop = { server, store };
  drops.set(services, drop);
  const sweep = () => void store.deleteExpired().catch((e) => console.error('[quire] file drop: removing expired uploads failed:', e));
  setInterval(sweep, Math.min(expiry, 60 * 60 * 1000)).unref();
  return drop;
}

/** Marks a request body as the socket's own Node stream (see streamNodeBodies). */
const NODE_BODY = Symbol('quire.nodeBody');
type NodeBody = { [NODE_BODY]: IncomingMessage };

type WriteToStore = (body: unknown, upload: Upload, maxSize: number, context: { signal: AbortSignal }) => Promise<number>;

/**
 * @tus/server reads a body as a web stream, and its Node adapter makes that web stream from the
 * socket's Node stream, which the handler turns back into a Node stream: two conversions of
 * every 64 KiB chunk, most of the server's CPU per uploaded byte besides the kernel's copy.
 * For HTTP requests the body is marked with the Node stream itself, and the PATCH and POST
 * handlers' writeToStore (a method of theirs, not part of the options) reads it directly, with
 * the same size limit and the same ending when another request takes the upload's lock.
 */
function streamNodeBodies(server: Server, store: DropStore): void {
  const handlers = (server as unknown as { handlers: Record<string, { writeToStore: WriteToStore }> }).handlers;
  for (const method of ['PATCH', 'POST']) {
    const handler = handlers[method]!;
    const viaWeb = handler.writeToStore.bind(handler);
    handler.writeToStore = async (body, upload, maxSize, context): Promise<number> => {
      const node = (body as Partial<NodeBody> | null)?.[NODE_BODY];
      if (!node) return viaWeb(body, upload, maxSize, context);
      if (context.signal.aborted) throw ERRORS.ABORTED;
      const proxy = new PassThrough({ highWaterMark: WRITE_BUFFER });
      let sourceFailed = false;
      const onSourceError = (e: Error) => {
        sourceFailed = true;
        node.unpipe(proxy);
        if (!context.signal.aborted) proxy.destroy(e);
      };
      node.on('error', onSourceError);
      // Another request wants the lock: stop reading and keep what arrived.
      const onAbort = () => {
        node.unpipe(proxy);
        if (!proxy.destroyed) proxy.end();
      };
      context.signal.addEventListener('abort', onAbort, { once: true });
      const limiter = new StreamLimiter(maxSize);
      let limitError: unknown = null;
      limiter.on('error', (e) => (limitError = e));
      proxy.on('error', (e) => limiter.destroy(e));
      node.pipe(proxy).pipe(limiter);
      try {
        return await store.write(limiter, upload.id, upload.offset);
      } catch (e) {
        node.unpipe(proxy);
        // The client went away: tus's own answer for it. Over the length: the limiter's 413.
        throw sourceFailed ? ERRORS.ABORTED : (limitError ?? e);
      } finally {
        node.off('error', onSourceError);
        context.signal.removeEventListener('abort', onAbort);
      }
    };
  }
}

/** The tus error a status stands for, as the envelope's code and a reason. */
function envelopeFor(status: number, text: string): AppError {
  const reasonOf = Object.entries(ERRORS).find(([, e]) => e.body.trim() === text.trim())?.[0]?.toLowerCase();
  const code = status === 401 ? 'unauthorized' : status === 403 ? 'forbidden' : status === 404 || status === 410 ? 'not_found' : status === 409 ? 'conflict' : status >= 500 ? 'internal' : 'bad_request';
  const message = text.trim() || `Upload failed with status ${status}`;
  return new AppError(code, message, { status, details: { reason: status === 460 ? 'checksum_mismatch' : status === 410 ? 'upload_expired' : status === 413 ? 'too_large' : (reasonOf ?? 'tus') } });
}

const refuse = (err: AppError, extra: Record<string, string> = {}) =>
  new Response(JSON.stringify(err.toEnvelope()), {
    status: err.status,
    headers: { 'content-type': 'application/json; charset=utf-8', 'tus-resumable': TUS_VERSION, ...(err.headers ?? {}), ...extra },
  });

/** HEAD echoes Upload-Metadata: the server's own `quire_` keys (link id, policy, Home path) stay private. */
function withoutReservedMetadata(res: Response): Response {
  const meta = res.headers.get('upload-metadata');
  if (meta === null) return res;
  const kept = meta
    .split(',')
    .filter((pair) => !pair.trim().startsWith('quire_'))
    .join(',');
  const headers = new Headers(res.headers);
  if (kept === '') headers.delete('upload-metadata');
  else headers.set('upload-metadata', kept);
  return new Response(res.body, { status: res.status, statusText: res.statusText, headers });
}

/**
 * One tus request, whatever surface sent it: the checks tus answers differently from the spec
 * (a wrong version is 412 with Tus-Version; a PATCH body that is not
 * application/offset+octet-stream is 415; Upload-Length is required), then @tus/server, then
 * every error body turned into the envelope.
 */
export async function handleTus(services: Services, req: Request): Promise<Response> {
  const version = req.headers.get('tus-resumable');
  if (req.method !== 'OPTIONS' && version !== null && version !== TUS_VERSION) {
    return refuse(new AppError('bad_request', `Tus-Resumable ${version} is not supported; this server speaks ${TUS_VERSION}`, { status: 412, details: { field: 'headers.tus-resumable', reason: 'tus_version' } }), { 'tus-version': TUS_VERSION });
  }
  if (req.method === 'PATCH' && version !== null) {
    const type = req.headers.get('content-type');
    if (type?.split(';')[0]!.trim().toLowerCase() !== 'application/offset+octet-stream') {
      return refuse(new AppError('bad_request', 'A PATCH body must be sent with Content-Type: application/offset+octet-stream', { status: 415, details: { field: 'headers.content-type' } }));
    }
  }
  if (req.method === 'POST' && version !== null && req.headers.get('upload-length') === null) {
    return refuse(new AppError('bad_request', 'Upload-Length is required (the size of the whole file in bytes)', { details: { field: 'headers.upload-length', reason: 'upload_length_required' } }));
  }
  let res: Response;
  try {
    res = await dropFor(services).server.handleWeb(req);
  } catch (e) {
    return refuse(toAppError(e));
  }
  if (res.status < 400) return withoutReservedMetadata(res);
  const text = await res.text();
  let err: AppError;
  try {
    const env = JSON.parse(text) as ReturnType<AppError['toEnvelope']>;
    err = new AppError(env.error.code, env.error.message, { status: res.status, details: env.error.details });
  } catch {
    err = envelopeFor(res.status, text);
  }
  const headers = Object.fromEntries(res.headers.entries());
  delete headers['content-length'];
  delete headers['content-type'];
  return refuse(err, headers);
}

/** Serves one HTTP request of a tus route from Node's own request stream. */
export async function serveTus(services: Services, req: IncomingMessage, res: ServerResponse, password: string | undefined): Promise<number> {
  const request = new NodeRequest({ req, res }) as unknown as Request;
  if (password !== undefined) cookiePasswords.set(request, password);
  if (req.method === 'PATCH' || req.method === 'POST') Object.defineProperty(request, 'body', { value: { [NODE_BODY]: req } satisfies NodeBody });
  const response = await handleTus(services, request);
  await sendNodeResponse(res, response);
  return response.status;
}

/** For tests: the bytes directory. */
export const uploadsDir = (services: Services) => nodePath.join(paths.state(services.config), 'uploads');
