/**
 * File drop through a public link with `upload`: the tus 1.0 protocol (spec document 3).
 * Over HTTP a tus client's requests (raw bytes) go straight to the tus server (tus-http.ts);
 * these handlers serve the spec's base64 encoding — a JSON string body of base64 bytes, as the
 * command line and MCP send it — by handing the decoded chunk to the same server.
 */
import { Type } from '@sinclair/typebox';
import type { ActionContext } from '../actions/context.js';
import { reply } from '../actions/reply.js';
import { Headers as HeaderObj, Nullable, Obj, PathString, specAction } from '../actions/spec.js';
import { AppError, type ErrorEnvelope } from '../core/errors.js';

/** The tus server, loaded at the first upload (tus-route.ts). */
const tusServer = () => import('./tus.js');

const Slug = Type.String({ minLength: 1, description: 'Slug that names the Public link' });
const SlugPath = Obj({ slug: Slug });
const UploadPath = Obj({ slug: Slug, id: PathString('ID of the upload (the last segment of its Location)') });

const password = { 'x-public-password': Type.Optional(Type.String({ description: 'Password of the Public link, when it has one' })) };
const tusResumable = { 'tus-resumable': Type.String({ description: 'Version of the resumable-upload protocol: 1.0.0' }) };
const checksum = {
  'upload-checksum': Type.Optional(Nullable(Type.String({ description: 'Checksum of the bytes in this request: "sha1 <base64 digest>" (also sha256, md5); a mismatch is 460' }))),
};
const Base64Bytes = (description: string) => Type.String({ contentEncoding: 'base64', pattern: '^[A-Za-z0-9+/]*={0,2}$', description });

/** The headers of a tus request an action passes on; anything else the caller sent is not. */
const PASSED = ['x-public-password', 'tus-resumable', 'upload-length', 'upload-metadata', 'upload-checksum', 'upload-conflict-policy', 'upload-offset'];

/** What the answer's headers say, as data for surfaces without headers. */
function uploadView(res: Response) {
  const location = res.headers.get('location');
  const offset = res.headers.get('upload-offset');
  const length = res.headers.get('upload-length');
  return {
    ...(location !== null ? { id: location.slice(location.lastIndexOf('/') + 1), location } : {}),
    ...(offset !== null ? { offset: Number(offset) } : {}),
    ...(length !== null ? { length: Number(length) } : {}),
    ...(res.headers.get('upload-metadata') !== null ? { metadata: res.headers.get('upload-metadata') } : {}),
    ...(res.headers.get('upload-expires') !== null ? { expires: res.headers.get('upload-expires') } : {}),
    ...(res.headers.get('quire-upload-path') !== null ? { path: res.headers.get('quire-upload-path') } : {}),
  };
}

async function tus(ctx: ActionContext, method: string, route: { slug: string; id?: string }, headers: Record<string, unknown>, body?: string) {
  const h = new Headers();
  for (const k of PASSED) if (typeof headers[k] === 'string') h.set(k, headers[k] as string);
  if (body !== undefined) h.set('content-type', 'application/offset+octet-stream');
  const url = `http://quire.invalid/api/v1/public/${encodeURIComponent(route.slug)}/uploads${route.id === undefined ? '' : `/${encodeURIComponent(route.id)}`}`;
  const res = await (await tusServer()).handleTus(ctx.services, new Request(url, { method, headers: h, body: body === undefined ? undefined : Buffer.from(body, 'base64') }));
  if (res.status >= 400) {
    const env = (await res.json()) as ErrorEnvelope;
    throw new AppError(env.error.code, env.error.message, { status: res.status, details: env.error.details });
  }
  const out: Record<string, string> = {};
  for (const k of ['location', 'upload-offset', 'upload-length', 'upload-expires', 'tus-resumable', 'quire-upload-path']) {
    const v = res.headers.get(k);
    if (v !== null) out[k] = v;
  }
  return reply(uploadView(res), { status: res.status === 204 ? 200 : res.status, headers: out });
}

export const actions = [
  specAction('public_upload_create', {
    summary:
      'Creates a resumable upload (tus) into the folder of a Public link with `upload`; the body may carry the first bytes (base64), the rest follows in chunks with `public_upload_patch`.',
    input: {
      path: SlugPath,
      headers: HeaderObj({
        ...password,
        ...tusResumable,
        'upload-length': Type.String({ pattern: '^[0-9]+$', description: 'Size of the whole file in bytes' }),
        'upload-metadata': Type.String({ description: 'Comma-separated "key base64value" pairs; `filename` names the file in the folder' }),
        ...checksum,
        'upload-conflict-policy': Type.Optional(
          Nullable(Type.String({ description: 'When the name is taken: rename (default, "name (2).ext"), replace, or reject (409)' })),
        ),
      }),
      body: Type.Optional(Base64Bytes('First bytes of the upload, base64; may be empty or absent')),
    },
    handler: (ctx, { path, headers, body }) => tus(ctx, 'POST', path, headers, body),
  }),
  specAction('public_upload_head', {
    summary: 'Reads the offset of a resumable upload, to continue it after an interruption.',
    input: { path: UploadPath, headers: HeaderObj({ ...password, ...tusResumable }) },
    handler: (ctx, { path, headers }) => tus(ctx, 'HEAD', path, headers),
  }),
  specAction('public_upload_patch', {
    summary: 'Appends a chunk (base64) to a resumable upload at `Upload-Offset`; the last chunk places the file in the folder.',
    input: {
      path: UploadPath,
      headers: HeaderObj({
        ...password,
        ...tusResumable,
        'upload-offset': Type.String({ pattern: '^[0-9]+$', description: 'Byte offset this chunk starts at (the offset HEAD answers)' }),
        ...checksum,
      }),
      body: Base64Bytes('The chunk, base64'),
    },
    handler: (ctx, { path, headers, body }) => tus(ctx, 'PATCH', path, headers, body),
  }),
  specAction('public_upload_terminate', {
    summary: 'Cancels a resumable upload and discards its bytes.',
    input: { path: UploadPath, headers: HeaderObj({ ...password, ...tusResumable }) },
    handler: (ctx, { path, headers }) => tus(ctx, 'DELETE', path, headers),
  }),
];
