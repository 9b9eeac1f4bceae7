/**
 * Managing public links: actions beyond the spec's table (`extension: true`, scope data), which
 * shows only what a visitor calls. docs/public-links.md.
 */
import { Type, type TSchema } from '@sinclair/typebox';
import { callerOf } from '../actions/context.js';
import { reply } from '../actions/reply.js';
import { defineAction } from '../actions/types.js';
import { openScope } from '../notes/access.js';
import { createLink, getLink, listLinks, revokeLink, SLUG_PATTERN, updateLink } from './links.js';
import { PASSWORD_MAX } from './passwords.js';

const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

const base = {
  surfaces: ['cli', 'mcp', 'webmcp'] as ('cli' | 'mcp' | 'webmcp')[],
  scopes: ['data'] as 'data'[],
  recentConfirmation: false,
  area: 'Public links',
  extension: true,
};

const NoteId = Type.String({ minLength: 1, description: 'Stable ID of the Note' });
const HomePath = Type.String({ minLength: 1, description: 'Home-relative path' });
const Target = Type.Union(
  [
    Type.Object({ kind: Type.Literal('note'), note_id: NoteId }, { additionalProperties: false }),
    Type.Object({ kind: Type.Literal('canvas'), note_id: NoteId }, { additionalProperties: false }),
    Type.Object({ kind: Type.Literal('folder'), path: HomePath }, { additionalProperties: false }),
    Type.Object({ kind: Type.Literal('file'), path: HomePath }, { additionalProperties: false }),
  ],
  { description: 'What the link shares: a note or canvas by id, a folder or file by path' },
);
const Permissions = Type.Object(
  {
    view: Type.Optional(Type.Boolean({ description: 'See the note, the folder entries, previews and thumbnails (default true)' })),
    download: Type.Optional(Type.Boolean({ description: 'Download files (default false)' })),
    upload: Type.Optional(Type.Boolean({ description: 'Drop files into the folder (folder links; default false)' })),
    edit: Type.Optional(Type.Boolean({ description: 'Guests edit the note (note and canvas links; default false)' })),
  },
  { additionalProperties: false },
);
const Password = Nullable(Type.String({ minLength: 1, maxLength: PASSWORD_MAX, description: 'Password visitors must send; null for none' }));
const ExpiresAt = Nullable(Type.Integer({ minimum: 0, description: 'Unix ms after which the link answers 404; null for never' }));
const IdPath = Type.Object({ id: Type.String({ minLength: 1, description: 'ID of the public link' }) }, { additionalProperties: false });

export const actions = [
  defineAction({
    ...base,
    name: 'public_links_create',
    method: 'POST',
    route: '/api/v1/links',
    tool: 'svc_api_public_links_create',
    effect: 'destructive',
    requestEncoding: 'json',
    responseEncoding: 'json',
    summary: 'Creates a public link to a note, canvas, folder or file of the Home, with permissions, an optional password and expiry; answers the record with its `url`.',
    input: {
      body: Type.Object(
        {
          target: Target,
          permissions: Type.Optional(Permissions),
          password: Type.Optional(Password),
          expires_at: Type.Optional(ExpiresAt),
          slug: Type.Optional(Type.String({ pattern: SLUG_PATTERN, description: 'The link\'s name in its URL; default: 22 random characters' })),
        },
        { additionalProperties: false },
      ),
    },
    handler: async (ctx, { body }) => reply(await createLink(ctx.services, await openScope(ctx), callerOf(ctx).userId, body, ctx.now()), { status: 201 }),
  }),
  defineAction({
    ...base,
    name: 'public_links_list',
    method: 'GET',
    route: '/api/v1/links',
    tool: 'svc_api_public_links_list',
    effect: 'read',
    requestEncoding: 'none',
    responseEncoding: 'json',
    summary: 'Lists your public links, newest first, with their status (active, expired, revoked).',
    input: {},
    handler: (ctx) => listLinks(ctx.services, callerOf(ctx).userId, ctx.now()),
  }),
  defineAction({
    ...base,
    name: 'public_links_get',
    method: 'GET',
    route: '/api/v1/links/{id}',
    tool: 'svc_api_public_links_get',
    effect: 'read',
    requestEncoding: 'none',
    responseEncoding: 'json',
    summary: 'Reads one of your public links.',
    input: { path: IdPath },
    handler: (ctx, { path }) => getLink(ctx.services, callerOf(ctx).userId, path.id, ctx.now()),
  }),
  defineAction({
    ...base,
    name: 'public_links_update',
    method: 'PATCH',
    route: '/api/v1/links/{id}',
    tool: 'svc_api_public_links_update',
    effect: 'destructive',
    requestEncoding: 'json',
    responseEncoding: 'json',
    summary: 'Changes the permissions, password or expiry of one of your public links; the target and slug stay.',
    input: {
      path: IdPath,
      body: Type.Object(
        { permissions: Type.Optional(Permissions), password: Type.Optional(Password), expires_at: Type.Optional(ExpiresAt) },
        { additionalProperties: false },
      ),
    },
    handler: (ctx, { path, body }) => updateLink(ctx.services, callerOf(ctx).userId, path.id, body, ctx.now()),
  }),
  defineAction({
    ...base,
    name: 'public_links_revoke',
    method: 'DELETE',
    route: '/api/v1/links/{id}',
    tool: 'svc_api_public_links_revoke',
    effect: 'destructive',
    requestEncoding: 'none',
    responseEncoding: 'json',
    summary: 'Revokes one of your public links: from now on it answers 404 to visitors. The record stays, with status revoked.',
    input: { path: IdPath },
    handler: (ctx, { path }) => revokeLink(ctx.services, callerOf(ctx).userId, path.id, ctx.now()),
  }),
];
