/**
 * Collaboration area of the spec (document 3): live editing sessions, canvas element events and
 * document history (10 actions). canvas_elements_event is built (canvas.ts); the rest answer 501 for now.
 */
import { Type, type TSchema } from '@sinclair/typebox';
import { defineAction } from '../actions/types.js';
import { openScope } from '../notes/access.js';
import { applyElements } from './canvas.js';

const AREA = 'Collaboration';

const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

const NoteIdPath = Type.Object(
  { id: Type.String({ minLength: 1, description: 'Stable ID of the Note' }) },
  { additionalProperties: false },
);
const SharedNotePath = Type.Object(
  {
    owner: Type.String({ minLength: 1, description: 'Owner of the shared Note, from the collaboration link' }),
    id: Type.String({ minLength: 1, description: 'Stable ID of the Note, from the collaboration link' }),
  },
  { additionalProperties: false },
);
const ItemPath = Type.Object(
  { item_id: Type.String({ minLength: 1, description: 'ID of the item whose history is read' }) },
  { additionalProperties: false },
);
const PointPath = Type.Object(
  {
    item_id: Type.String({ minLength: 1, description: 'ID of the item whose history is read' }),
    point: Type.String({ minLength: 1, description: 'History point' }),
  },
  { additionalProperties: false },
);

/** The body of `collab_history_undo`, which `collab_history_undo_preflight` takes as well. */
const UndoBody = Type.Object(
  {
    author: Type.Object(
      {},
      {
        additionalProperties: true,
        description: 'One of three object forms: the author whose update range the owner reverses',
      },
    ),
    from: Type.Integer({ minimum: 0, description: 'First point of the inclusive range' }),
    to: Type.Integer({ minimum: 0, description: 'Last point of the inclusive range' }),
  },
  { additionalProperties: false },
);

export const actions = [
  defineAction({
    name: 'canvas_elements_event',
    method: 'POST',
    route: '/api/v1/collab/notes/{id}/events',
    tool: 'svc_api_canvas_elements_event',
    surfaces: ['cli', 'mcp', 'webmcp'],
    scopes: ['data'],
    effect: 'destructive',
    requestEncoding: 'json',
    responseEncoding: 'json',
    recentConfirmation: false,
    area: AREA,
    summary:
      'Sends complete Canvas elements to a canvas Note. The higher element version wins, equal versions keep the lower `versionNonce`, and removed elements stay as tombstones.',
    input: {
      path: NoteIdPath,
      body: Type.Object(
        {
          elements: Type.Array(Type.Unknown(), { description: 'Complete Canvas elements' }),
          font: Type.Optional(
            Nullable(
              Type.String({ description: 'Shared text style; omitted during ordinary drawing edits' }),
            ),
          ),
        },
        { additionalProperties: false },
      ),
    },
    handler: async (ctx, { path, body }) => applyElements(await openScope(ctx), path.id, body.elements, body.font),
  }),
  defineAction({
    name: 'collab_history_points',
    method: 'GET',
    route: '/api/v1/collab/history/{item_id}',
    tool: 'svc_api_history_points',
    surfaces: ['cli', 'mcp', 'webmcp'],
    scopes: ['data'],
    effect: 'read',
    requestEncoding: 'none',
    responseEncoding: 'json',
    recentConfirmation: false,
    area: AREA,
    summary:
      'Lists the history points of an item, optionally after or before a point. Request a smaller `limit` after an overflow.',
    input: {
      path: ItemPath,
      query: Type.Object(
        {
          after: Type.Optional(Type.Integer({ minimum: 0, description: 'Only points after this one' })),
          before: Type.Optional(Type.Integer({ minimum: 0, description: 'Only points before this one' })),
          limit: Type.Optional(
            Type.Integer({ minimum: 0, maximum: 2147483647, description: 'Page size; reduce it after an overflow' }),
          ),
        },
        { additionalProperties: false },
      ),
    },
  }),
  defineAction({
    name: 'collab_history_preview',
    method: 'GET',
    route: '/api/v1/collab/history/{item_id}/points/{point}/preview',
    tool: 'svc_api_history_preview',
    surfaces: ['cli', 'mcp', 'webmcp'],
    scopes: ['data'],
    effect: 'read',
    requestEncoding: 'none',
    responseEncoding: 'base64',
    recentConfirmation: false,
    area: AREA,
    summary: 'Returns a preview of an item as it was at one history point.',
    input: { path: PointPath },
  }),
  defineAction({
    name: 'collab_history_restore',
    method: 'POST',
    route: '/api/v1/collab/history/{item_id}/points/{point}/restore',
    tool: 'svc_api_history_restore',
    surfaces: ['cli', 'mcp', 'webmcp'],
    scopes: ['data'],
    effect: 'destructive',
    requestEncoding: 'none',
    responseEncoding: 'json',
    recentConfirmation: false,
    area: AREA,
    summary: 'Restores an item to its state at one history point.',
    input: { path: PointPath },
  }),
  defineAction({
    name: 'collab_history_undo',
    method: 'POST',
    route: '/api/v1/collab/history/{item_id}/undo',
    tool: 'svc_api_history_undo',
    surfaces: ['cli', 'mcp', 'webmcp'],
    scopes: ['data'],
    effect: 'destructive',
    requestEncoding: 'json',
    responseEncoding: 'json',
    recentConfirmation: false,
    area: AREA,
    summary:
      "Reverses one author's updates over an inclusive range of history points (`from` to `to`). Review it first with `collab_history_undo_preflight`.",
    input: { path: ItemPath, body: UndoBody },
  }),
  defineAction({
    name: 'collab_history_undo_preflight',
    method: 'POST',
    route: '/api/v1/collab/history/{item_id}/undo/preflight',
    tool: 'svc_api_history_undo_preflight',
    surfaces: ['cli', 'mcp', 'webmcp'],
    scopes: ['data'],
    effect: 'read',
    requestEncoding: 'json',
    responseEncoding: 'json',
    recentConfirmation: false,
    area: AREA,
    summary:
      'Reviews the changes `collab_history_undo` would make, with the same path and body, without changing anything.',
    input: { path: ItemPath, body: UndoBody },
  }),
  defineAction({
    name: 'collab_note_session',
    method: 'GET',
    route: '/api/v1/collab/notes/{id}',
    tool: 'svc_api_collab_note_session',
    surfaces: [],
    scopes: ['data'],
    effect: 'destructive',
    requestEncoding: 'none',
    responseEncoding: 'json',
    recentConfirmation: false,
    area: AREA,
    summary: 'Opens a collaboration session on one of the caller\'s Notes. Browser flow only.',
    input: { path: NoteIdPath },
  }),
  defineAction({
    name: 'collab_public_edit_session',
    method: 'GET',
    route: '/api/v1/collab/public/{slug}',
    tool: 'svc_api_collab_public_edit_session',
    surfaces: [],
    scopes: ['none'],
    effect: 'destructive',
    requestEncoding: 'none',
    responseEncoding: 'json',
    recentConfirmation: false,
    area: AREA,
    summary: 'Opens a collaboration session on the Note of an editable Public link. Browser flow only.',
    input: {
      path: Type.Object(
        { slug: Type.String({ minLength: 1, description: 'Slug that names the Public link' }) },
        { additionalProperties: false },
      ),
    },
  }),
  defineAction({
    name: 'collab_shared_note_session',
    method: 'GET',
    route: '/api/v1/collab/shared/{owner}/notes/{id}',
    tool: 'svc_api_collab_shared_note_session',
    surfaces: [],
    scopes: ['data'],
    effect: 'destructive',
    requestEncoding: 'none',
    responseEncoding: 'json',
    recentConfirmation: false,
    area: AREA,
    summary: 'Opens a collaboration session on a Note another User shares with the caller. Browser flow only.',
    input: { path: SharedNotePath },
  }),
  defineAction({
    name: 'shared_canvas_export',
    method: 'GET',
    route: '/api/v1/collab/shared/{owner}/notes/{id}/export',
    tool: 'svc_api_shared_canvas_export',
    surfaces: ['cli', 'mcp', 'webmcp'],
    scopes: ['data'],
    effect: 'read',
    requestEncoding: 'none',
    responseEncoding: 'base64',
    recentConfirmation: false,
    area: AREA,
    summary:
      'Exports a shared canvas Note as PNG or SVG in byte chunks (`offset`, `limit` 1 to 524288). Check that the ETags match before joining chunks.',
    input: {
      path: SharedNotePath,
      query: Type.Object(
        {
          format: Type.Union([Type.Literal('png'), Type.Literal('svg')]),
          limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 524288, description: 'Chunk size in bytes' })),
          offset: Type.Optional(Type.Integer({ minimum: 0, description: 'Byte offset of the chunk' })),
        },
        { additionalProperties: false },
      ),
    },
  }),
];
