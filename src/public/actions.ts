/**
 * Public links area of the spec (document 3) (15 actions, scope none: no bearer token).
 * Every route takes path `slug` and accepts the optional header `X-Public-Password`;
 * file drops use the resumable-upload (tus) protocol. Declarations only; handlers are
 * attached when the area is built.
 */
import { Type, type TProperties, type TSchema } from '@sinclair/typebox';
import { defineAction } from '../actions/types.js';
import { actions as uploadActions } from './upload-actions.js';

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
    name: 'edit_read',
    method: 'GET',
    route: '/api/v1/public/{slug}/edit',
    tool: 'svc_api_edit_read',
    surfaces: [],
    scopes: ['none'],
    effect: 'destructive',
    requestEncoding: 'none',
    responseEncoding: 'json',
    recentConfirmation: false,
    area: AREA,
    summary: 'Reads the document of an editable Public link, with its current ETag. Browser flow only.',
    input: { path: SlugPath, headers: PasswordOnly },
  }),
  defineAction({
    name: 'edit_session',
    method: 'POST',
    route: '/api/v1/public/{slug}/edit/session',
    tool: 'svc_api_edit_session',
    surfaces: [],
    scopes: ['none'],
    effect: 'destructive',
    requestEncoding: 'none',
    responseEncoding: 'json',
    recentConfirmation: false,
    area: AREA,
    summary: 'Starts a guest editing session on an editable Public link. Browser flow only.',
    input: { path: SlugPath, headers: PasswordOnly },
  }),
  defineAction({
    name: 'edit_write',
    method: 'PUT',
    route: '/api/v1/public/{slug}/edit',
    tool: 'svc_api_edit_write',
    surfaces: [],
    scopes: ['none'],
    effect: 'destructive',
    requestEncoding: 'none',
    responseEncoding: 'json',
    recentConfirmation: false,
    area: AREA,
    summary:
      'Writes the document of an editable Public link; needs header `If-Match` with the current ETag of the text file. Browser flow only.',
    input: {
      path: SlugPath,
      headers: PublicHeaders({
        'if-match': Type.String({ description: 'Current ETag of the text file' }),
      }),
    },
  }),
  defineAction({
    name: 'entries',
    method: 'GET',
    route: '/api/v1/public/{slug}/entries',
    tool: 'svc_public_list_folder_entries',
    surfaces: ['cli', 'mcp', 'webmcp'],
    scopes: ['none'],
    effect: 'read',
    requestEncoding: 'none',
    responseEncoding: 'json',
    recentConfirmation: false,
    area: AREA,
    summary:
      'Lists the visible files and folders below a Public link folder, with stable IDs and a page cursor.',
    input: { path: SlugPath, query: LocateQuery, headers: PasswordOnly },
  }),
  defineAction({
    name: 'info',
    method: 'GET',
    route: '/api/v1/public/{slug}',
    tool: 'svc_public_read_link_details',
    surfaces: ['cli', 'mcp', 'webmcp'],
    scopes: ['none'],
    effect: 'read',
    requestEncoding: 'none',
    responseEncoding: 'json',
    recentConfirmation: false,
    area: AREA,
    summary: 'Reads the public details of a Public link and the actions it allows.',
    input: { path: SlugPath, headers: PasswordOnly },
  }),
  defineAction({
    name: 'linked_note',
    method: 'GET',
    route: '/api/v1/public/{slug}/linked-notes/{id}',
    tool: 'svc_api_linked_note',
    surfaces: ['cli', 'mcp', 'webmcp'],
    scopes: ['none'],
    effect: 'read',
    requestEncoding: 'none',
    responseEncoding: 'text',
    recentConfirmation: false,
    area: AREA,
    summary: 'Reads one linked Note of a Public link, as text.',
    input: { path: SlugIdPath('ID of the linked Note'), headers: PasswordOnly },
  }),
  defineAction({
    name: 'public_canvas_view',
    method: 'GET',
    route: '/api/v1/public/{slug}/canvas',
    tool: 'svc_api_public_canvas_view',
    surfaces: ['cli', 'mcp', 'webmcp'],
    scopes: ['none'],
    effect: 'read',
    requestEncoding: 'none',
    responseEncoding: 'json',
    recentConfirmation: false,
    area: AREA,
    summary:
      'Reads the current view-only Canvas drawing of a Public link; unavailable linked items appear as placeholders.',
    input: { path: SlugPath, headers: PasswordOnly },
  }),
  defineAction({
    name: 'public_download',
    method: 'GET',
    route: '/api/v1/public/{slug}/download',
    tool: 'svc_api_public_download',
    surfaces: ['cli', 'mcp', 'webmcp'],
    scopes: ['none'],
    effect: 'read',
    requestEncoding: 'none',
    responseEncoding: 'base64',
    recentConfirmation: false,
    area: AREA,
    summary: 'Downloads the file of a Public link, or one file below its folder located by `item` or `path`.',
    input: { path: SlugPath, query: LocateQuery, headers: PasswordOnly },
  }),
  defineAction({
    name: 'public_linked_notes',
    method: 'GET',
    route: '/api/v1/public/{slug}/linked-notes',
    tool: 'svc_api_public_linked_notes',
    surfaces: ['cli', 'mcp', 'webmcp'],
    scopes: ['none'],
    effect: 'read',
    requestEncoding: 'none',
    responseEncoding: 'json',
    recentConfirmation: false,
    area: AREA,
    summary: 'Lists the linked Notes of a Public link.',
    input: { path: SlugPath, headers: PasswordOnly },
  }),
  defineAction({
    name: 'public_preview',
    method: 'GET',
    route: '/api/v1/public/{slug}/preview',
    tool: 'svc_api_public_preview',
    surfaces: ['cli', 'mcp', 'webmcp'],
    scopes: ['none'],
    effect: 'read',
    requestEncoding: 'none',
    responseEncoding: 'base64',
    recentConfirmation: false,
    area: AREA,
    summary:
      'Returns a preview of a file of a Public link, located by `item` or `path`. Use the `Range` header for continuation.',
    input: {
      path: SlugPath,
      query: LocateQuery,
      headers: PublicHeaders({
        'if-none-match': Type.Optional(Nullable(Type.String({ description: 'ETag the client already holds' }))),
        range: Type.Optional(Nullable(Type.String({ description: 'Byte range, for continuation' }))),
      }),
    },
  }),
  defineAction({
    name: 'public_thumb',
    method: 'GET',
    route: '/api/v1/public/{slug}/thumb',
    tool: 'svc_api_public_thumb',
    surfaces: ['cli', 'mcp', 'webmcp'],
    scopes: ['none'],
    effect: 'read',
    requestEncoding: 'none',
    responseEncoding: 'base64',
    recentConfirmation: false,
    area: AREA,
    summary: 'Returns a thumbnail of size `s` for a file of a Public link, located by `item` or `path`.',
    input: {
      path: SlugPath,
      query: Type.Object(
        {
          ...LocateProps,
          s: Type.Integer({ minimum: 0, maximum: 2147483647, description: 'Thumbnail size' }),
        },
        { additionalProperties: false },
      ),
      headers: PasswordOnly,
    },
  }),
  ...uploadActions,
];
