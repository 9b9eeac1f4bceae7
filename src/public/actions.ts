/**
 * Public links area of the spec (document 3) (15 actions, scope none: no bearer token).
 * Every route takes path `slug` and accepts the optional header `X-Public-Password`.
 * What a visitor gets is built here (visitor.ts); the management actions the spec does not
 * show are in link-actions.ts, the file drop (tus) in upload-actions.ts. Guest editing
 * (edit_*) is collaboration's (src/collab/guest.ts, docs/collaboration.md). docs/public-links.md.
 */
import { Type, type TProperties, type TSchema } from '@sinclair/typebox';
import { specAction } from '../actions/spec.js';
import type { ActionContext } from '../actions/context.js';
import { guestRead, guestWrite, startGuestSession } from '../collab/guest.js';
import { openLink } from './access.js';
import { actions as linkActions } from './link-actions.js';
import { actions as uploadActions } from './upload-actions.js';
import * as v from './visitor.js';

const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

const Slug = Type.String({ minLength: 1, description: 'Slug that names the Public link' });
const SlugPath = Type.Object({ slug: Slug }, { additionalProperties: false });
const SlugIdPath = (description: string) =>
  Type.Object(
    { slug: Slug, id: Type.String({ minLength: 1, description }) },
    { additionalProperties: false },
  );

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

/** The link a visitor names, its password checked. */
const open = (ctx: ActionContext, slug: string, headers: { 'x-public-password'?: string }) =>
  openLink(ctx.services, slug, headers['x-public-password'], ctx.now());

export const actions = [
  specAction('edit_read', {
    summary: 'Reads the document of an editable Public link, with its current ETag. Browser flow only.',
    input: { path: SlugPath, headers: PasswordOnly },
    handler: (ctx, { path, headers }) => guestRead(ctx, path.slug, headers['x-public-password']),
  }),
  specAction('edit_session', {
    summary: 'Starts a guest editing session on an editable Public link. Browser flow only.',
    input: { path: SlugPath, headers: PasswordOnly },
    handler: (ctx, { path, headers }) => startGuestSession(ctx, path.slug, headers['x-public-password']),
  }),
  specAction('edit_write', {
    summary:
      'Writes the document of an editable Public link; needs header `If-Match` with the current ETag of the text file. Browser flow only.',
    input: {
      path: SlugPath,
      headers: PublicHeaders({
        'if-match': Type.String({ description: 'Current ETag of the text file' }),
      }),
    },
    handler: (ctx, { path, headers }) => guestWrite(ctx, path.slug, headers['x-public-password'], headers['if-match']),
  }),
  specAction('entries', {
    summary:
      'Lists the visible files and folders below a Public link folder, with stable IDs and a page cursor.',
    input: { path: SlugPath, query: LocateQuery, headers: PasswordOnly },
    handler: async (ctx, { path, query, headers }) => v.entries(await open(ctx, path.slug, headers), query),
  }),
  specAction('info', {
    summary: 'Reads the public details of a Public link and the actions it allows.',
    input: { path: SlugPath, headers: PasswordOnly },
    handler: async (ctx, { path, headers }) => v.info(await open(ctx, path.slug, headers)),
  }),
  specAction('linked_note', {
    summary: 'Reads one linked Note of a Public link, as text.',
    input: { path: SlugIdPath('ID of the linked Note'), headers: PasswordOnly },
    handler: async (ctx, { path, headers }) => v.readLinkedNote(await open(ctx, path.slug, headers), path.id),
  }),
  specAction('public_canvas_view', {
    summary:
      'Reads the current view-only Canvas drawing of a Public link; unavailable linked items appear as placeholders.',
    input: { path: SlugPath, headers: PasswordOnly },
    handler: async (ctx, { path, headers }) => v.canvasView(await open(ctx, path.slug, headers)),
  }),
  specAction('public_download', {
    summary: 'Downloads the file of a Public link, or one file below its folder located by `item` or `path`.',
    input: { path: SlugPath, query: LocateQuery, headers: PasswordOnly },
    handler: async (ctx, { path, query, headers }) => v.download(await open(ctx, path.slug, headers), query, ctx.surface === 'http'),
  }),
  specAction('public_linked_notes', {
    summary: 'Lists the linked Notes of a Public link.',
    input: { path: SlugPath, headers: PasswordOnly },
    handler: async (ctx, { path, headers }) => v.listLinkedNotes(await open(ctx, path.slug, headers)),
  }),
  specAction('public_preview', {
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
    handler: async (ctx, { path, query, headers }) => v.preview(await open(ctx, path.slug, headers), query, headers, ctx.surface === 'http'),
  }),
  specAction('public_thumb', {
    summary: 'Returns a thumbnail of size `s` for a file of a Public link, located by `item` or `path`.',
    input: {
      path: SlugPath,
      query: Type.Object(
        {
          ...LocateProps,
          s: Type.Integer({ minimum: 0, maximum: 2147483647, description: 'Thumbnail size: longest side in pixels, 1 to 2048 (0: 256)' }),
        },
        { additionalProperties: false },
      ),
      headers: PasswordOnly,
    },
    handler: async (ctx, { path, query, headers }) => v.thumb(ctx.services, await open(ctx, path.slug, headers), query),
  }),
  ...linkActions,
  ...uploadActions,
];
