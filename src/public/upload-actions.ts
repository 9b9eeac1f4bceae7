/**
 * File drop through a public link with `upload`: the tus 1.0 protocol (spec document 3).
 */
import { Type, type TProperties, type TSchema } from '@sinclair/typebox';
import { defineAction } from '../actions/types.js';

const AREA = 'Public links';

const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

const Slug = Type.String({ minLength: 1, description: 'Slug that names the Public link' });
const SlugPath = Type.Object({ slug: Slug }, { additionalProperties: false });
const SlugIdPath = (description: string) =>
  Type.Object(
    { slug: Slug, id: Type.String({ minLength: 1, description }) },
    { additionalProperties: false },
  );
const UploadPath = SlugIdPath('ID of the upload');

/** The section rule: every public route accepts `X-Public-Password`; some take more headers. */
const PublicHeaders = <P extends TProperties>(props: P) =>
  Type.Object(
    {
      'x-public-password': Type.Optional(
        Type.String({ description: 'Password of the Public link, when it has one' }),
      ),
      ...props,
    },
    { additionalProperties: true },
  );
const PasswordOnly = PublicHeaders({});

/** Routes that locate a file take `item` and `path`. */
const LocateProps = {
  item: Type.Optional(Type.String({ description: 'Stable ID of the item' })),
  path: Type.Optional(Type.String({ description: 'Path of the item below the Public link' })),
};
const LocateQuery = Type.Object(LocateProps, { additionalProperties: false });

const TusResumable = Type.String({ description: 'Version of the resumable-upload protocol, 1.0.0' });
const UploadChecksum = Type.Optional(
  Nullable(Type.String({ description: 'Checksum of the bytes in this request: algorithm and base64 digest' })),
);
const Base64Bytes = (description: string) =>
  Type.String({ contentEncoding: 'base64', pattern: '^[A-Za-z0-9+/]*={0,2}$', description });

export const actions = [
  defineAction({
    name: 'public_upload_create',
    method: 'POST',
    route: '/api/v1/public/{slug}/uploads',
    tool: 'svc_api_public_upload_create',
    surfaces: ['cli', 'mcp', 'webmcp'],
    scopes: ['none'],
    effect: 'destructive',
    requestEncoding: 'base64',
    responseEncoding: 'json',
    recentConfirmation: false,
    area: AREA,
    summary:
      'Creates a resumable upload into a file drop Public link (tus protocol); the body may carry the first bytes, and large uploads continue in chunks with `public_upload_patch`.',
    input: {
      path: SlugPath,
      headers: PublicHeaders({
        'tus-resumable': TusResumable,
        'upload-length': Type.String({ pattern: '^[0-9]+$', description: 'Total size of the upload in bytes' }),
        'upload-metadata': Type.String({ description: 'Comma-separated key and base64 value pairs' }),
        'upload-checksum': UploadChecksum,
        'upload-conflict-policy': Type.Optional(
          Nullable(Type.String({ description: 'What to do when the target name already exists' })),
        ),
      }),
      body: Type.Optional(Base64Bytes('First bytes of the upload, base64; may be empty or absent')),
    },
  }),
  defineAction({
    name: 'public_upload_head',
    method: 'HEAD',
    route: '/api/v1/public/{slug}/uploads/{id}',
    tool: 'svc_api_public_upload_head',
    surfaces: ['cli', 'mcp', 'webmcp'],
    scopes: ['none'],
    effect: 'read',
    requestEncoding: 'none',
    responseEncoding: 'json',
    recentConfirmation: false,
    area: AREA,
    summary: 'Reads the offset of a resumable upload, to continue it after an interruption.',
    input: { path: UploadPath, headers: PublicHeaders({ 'tus-resumable': TusResumable }) },
  }),
  defineAction({
    name: 'public_upload_patch',
    method: 'PATCH',
    route: '/api/v1/public/{slug}/uploads/{id}',
    tool: 'svc_api_public_upload_patch',
    surfaces: ['cli', 'mcp', 'webmcp'],
    scopes: ['none'],
    effect: 'destructive',
    requestEncoding: 'base64',
    responseEncoding: 'json',
    recentConfirmation: false,
    area: AREA,
    summary: 'Appends a chunk of base64 bytes to a resumable upload at `Upload-Offset`.',
    input: {
      path: UploadPath,
      headers: PublicHeaders({
        'tus-resumable': TusResumable,
        'upload-offset': Type.String({ pattern: '^[0-9]+$', description: 'Byte offset this chunk starts at' }),
        'upload-checksum': UploadChecksum,
      }),
      body: Base64Bytes('The chunk, base64'),
    },
  }),
  defineAction({
    name: 'public_upload_terminate',
    method: 'DELETE',
    route: '/api/v1/public/{slug}/uploads/{id}',
    tool: 'svc_api_public_upload_terminate',
    surfaces: ['cli', 'mcp', 'webmcp'],
    scopes: ['none'],
    effect: 'destructive',
    requestEncoding: 'none',
    responseEncoding: 'json',
    recentConfirmation: false,
    area: AREA,
    summary: 'Cancels a resumable upload and discards its bytes.',
    input: { path: UploadPath, headers: PublicHeaders({ 'tus-resumable': TusResumable }) },
  }),
];
