/**
 * Collaboration area of the spec (document 3): live editing sessions, canvas element events,
 * document history and per-author undo, the shared canvas export; and, as extensions, sharing
 * Notes between users (docs/collaboration.md). Handlers call the area's domain functions.
 */
import { Type, type TSchema } from '@sinclair/typebox';
import { defineAction } from '../actions/types.js';
import { specAction } from '../actions/spec.js';
import { openScope } from '../notes/access.js';
import { applyElements, exportCanvas } from './canvas.js';
import { guestCollabSession } from './guest.js';
import { historyPoints, previewPoint, restorePoint, undoAuthor } from './points.js';
import { noteSession, sharedNoteSession } from './sessions.js';
import { listShares, sharedNote, sharedWithMe, shareNote, unshareNote } from './sharing.js';

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

const ExportQuery = Type.Object(
  {
    format: Type.Union([Type.Literal('png'), Type.Literal('svg')]),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 524288, description: 'Chunk size in bytes' })),
    offset: Type.Optional(Type.Integer({ minimum: 0, description: 'Byte offset of the chunk' })),
  },
  { additionalProperties: false },
);

const Username = Type.String({ minLength: 1, maxLength: 64, description: 'Username of the other user' });

/** Sharing between users: extensions the spec's `shared` routes presuppose. */
const ext = {
  surfaces: ['cli', 'mcp', 'webmcp'] as ('cli' | 'mcp' | 'webmcp')[],
  scopes: ['data'] as 'data'[],
  recentConfirmation: false,
  area: AREA,
  extension: true,
};

export const actions = [
  specAction('canvas_elements_event', {
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
  specAction('collab_history_points', {
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
    handler: (ctx, { path, query }) => historyPoints(ctx, path.item_id, query),
  }),
  specAction('collab_history_preview', {
    summary: 'Returns a preview of an item as it was at one history point.',
    input: { path: PointPath },
    handler: (ctx, { path }) => previewPoint(ctx, path.item_id, path.point),
  }),
  specAction('collab_history_restore', {
    summary: 'Restores an item to its state at one history point.',
    input: { path: PointPath },
    handler: (ctx, { path }) => restorePoint(ctx, path.item_id, path.point),
  }),
  specAction('collab_history_undo', {
    summary:
      "Reverses one author's updates over an inclusive range of history points (`from` to `to`). Review it first with `collab_history_undo_preflight`.",
    input: { path: ItemPath, body: UndoBody },
    handler: (ctx, { path, body }) => undoAuthor(ctx, path.item_id, body, true),
  }),
  specAction('collab_history_undo_preflight', {
    summary:
      'Reviews the changes `collab_history_undo` would make, with the same path and body, without changing anything.',
    input: { path: ItemPath, body: UndoBody },
    handler: (ctx, { path, body }) => undoAuthor(ctx, path.item_id, body, false),
  }),
  specAction('collab_note_session', {
    summary: "Opens a collaboration session on one of the caller's Notes. Browser flow only.",
    input: { path: NoteIdPath },
    handler: (ctx, { path }) => noteSession(ctx, path.id),
  }),
  specAction('collab_public_edit_session', {
    summary: 'Opens a collaboration session on the Note of an editable Public link. Browser flow only.',
    input: {
      path: Type.Object(
        { slug: Type.String({ minLength: 1, description: 'Slug that names the Public link' }) },
        { additionalProperties: false },
      ),
    },
    // The guest session (from edit_session) comes in X-Guest-Session, a header the spec's row does not list.
    handler: (ctx, input) => guestCollabSession(ctx, input.path.slug, (input as { headers?: Record<string, unknown> }).headers ?? {}),
  }),
  specAction('collab_shared_note_session', {
    summary: 'Opens a collaboration session on a Note another User shares with the caller. Browser flow only.',
    input: { path: SharedNotePath },
    handler: (ctx, { path }) => sharedNoteSession(ctx, path.owner, path.id),
  }),
  specAction('shared_canvas_export', {
    summary:
      'Exports a shared canvas Note as PNG or SVG in byte chunks (`offset`, `limit` 1 to 524288). Check that the ETags match before joining chunks.',
    input: { path: SharedNotePath, query: ExportQuery },
    handler: async (ctx, { path, query }) => {
      const { scope, note } = await sharedNote(ctx, path.owner, path.id);
      return exportCanvas(scope, note.id, query);
    },
  }),
  defineAction({
    ...ext,
    name: 'notes_share',
    method: 'POST',
    route: '/api/v1/notes/{id}/shares',
    tool: 'svc_api_notes_share',
    effect: 'destructive',
    requestEncoding: 'json',
    responseEncoding: 'json',
    summary: "Shares one of the caller's Notes with another user, to view or to edit; sharing again changes the access.",
    input: {
      path: NoteIdPath,
      body: Type.Object(
        { username: Username, access: Type.Union([Type.Literal('view'), Type.Literal('edit')], { description: 'view or edit' }) },
        { additionalProperties: false },
      ),
    },
    handler: (ctx, { path, body }) => shareNote(ctx, path.id, body.username, body.access),
  }),
  defineAction({
    ...ext,
    name: 'notes_shares_list',
    method: 'GET',
    route: '/api/v1/notes/{id}/shares',
    tool: 'svc_api_notes_shares_list',
    effect: 'read',
    requestEncoding: 'none',
    responseEncoding: 'json',
    summary: 'Lists the users one of the caller\'s Notes is shared with, and their access.',
    input: { path: NoteIdPath },
    handler: (ctx, { path }) => listShares(ctx, path.id),
  }),
  defineAction({
    ...ext,
    name: 'notes_unshare',
    method: 'DELETE',
    route: '/api/v1/notes/{id}/shares/{username}',
    tool: 'svc_api_notes_unshare',
    effect: 'destructive',
    requestEncoding: 'none',
    responseEncoding: 'json',
    summary: 'Stops sharing a Note with a user; their open collaboration connections end at once.',
    input: {
      path: Type.Object(
        { id: Type.String({ minLength: 1, description: 'Stable ID of the Note' }), username: Username },
        { additionalProperties: false },
      ),
    },
    handler: (ctx, { path }) => unshareNote(ctx, path.id, path.username),
  }),
  defineAction({
    ...ext,
    name: 'notes_shared_with_me',
    method: 'GET',
    route: '/api/v1/notes/shared',
    tool: 'svc_api_notes_shared_with_me',
    effect: 'read',
    requestEncoding: 'none',
    responseEncoding: 'json',
    summary: 'Lists the Notes other users share with the caller: owner, id, title and access.',
    input: {},
    handler: (ctx) => sharedWithMe(ctx),
  }),
];
