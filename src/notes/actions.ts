/**
 * Notes area of the spec (document 2), "Notes, links and canvas" (17 actions, scope data).
 * New Notes use the flat `Notes/` root; canvas Notes are created here and edited through
 * collaboration only. Extension actions beyond the spec's table are in extension-actions.ts.
 */
import { Type, type TSchema } from '@sinclair/typebox';
import { defineAction } from '../actions/types.js';
import { reply } from '../actions/reply.js';
import { parseComposer } from '../composer/composer.js';
import { openScope } from './access.js';
import { extensionActions } from './extension-actions.js';
import { createFromTemplate, listTemplates, setDefaultTemplate } from '../templates/templates.js';
import * as n from './notes.js';
import { noteListReply } from './note-list.js';
import { exportCanvas } from '../collab/canvas.js';
import { createWebNote } from '../clips/clips.js';

const AREA = 'Notes, links and canvas';

const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

const NoteId = Type.Object(
  { id: Type.String({ minLength: 1, description: 'Stable ID of the Note' }) },
  { additionalProperties: false },
);
const NotesFolder = (description = 'Only the flat `Notes/` root is accepted') =>
  Type.Optional(Nullable(Type.String({ description })));
const LastEventIdHeaders = Type.Object(
  {
    'last-event-id': Type.Optional(
      Type.String({ description: 'ID of the last event received; used only where the route replays events' }),
    ),
  },
  { additionalProperties: true },
);

export const actions = [
  defineAction({
    name: 'backlinks',
    method: 'GET',
    route: '/api/v1/notes/backlinks',
    tool: 'svc_notes_list_backlinks',
    surfaces: ['cli', 'mcp', 'webmcp'],
    scopes: ['data'],
    effect: 'read',
    requestEncoding: 'none',
    responseEncoding: 'json',
    recentConfirmation: false,
    area: AREA,
    summary: 'Lists the backlinks of the file at a Home-relative `path`.',
    input: {
      query: Type.Object(
        { path: Type.String({ description: 'Home-relative path' }) },
        { additionalProperties: false },
      ),
    },
    handler: async (ctx, { query }) => n.backlinksOf(await openScope(ctx), query.path),
  }),
  defineAction({
    name: 'by_tag',
    method: 'GET',
    route: '/api/v1/notes/tags/{tag}',
    tool: 'svc_api_by_tag',
    surfaces: ['cli', 'mcp', 'webmcp'],
    scopes: ['data'],
    effect: 'read',
    requestEncoding: 'none',
    responseEncoding: 'json',
    recentConfirmation: false,
    area: AREA,
    summary: 'Lists the Notes that carry one tag.',
    input: {
      path: Type.Object({ tag: Type.String({ minLength: 1 }) }, { additionalProperties: false }),
    },
    handler: async (ctx, { path }) => noteListReply(n.notesByTag(await openScope(ctx), path.tag)),
  }),
  defineAction({
    name: 'create',
    method: 'POST',
    route: '/api/v1/notes',
    tool: 'svc_api_create',
    surfaces: ['cli', 'mcp', 'webmcp'],
    scopes: ['data'],
    effect: 'destructive',
    requestEncoding: 'json',
    responseEncoding: 'json',
    recentConfirmation: false,
    area: AREA,
    summary:
      'Creates a Note (or, with `canvas`, a canvas drawing) with a title and optional body and tags, under the flat `Notes/` root, the only accepted folder.',
    input: {
      body: Type.Object(
        {
          body: Type.Optional(Nullable(Type.String({ description: 'Markdown body' }))),
          canvas: Type.Optional(Type.Boolean({ description: 'Creates a canvas Note; later edits use collaboration' })),
          folder: NotesFolder('Only the flat `Notes/` root is accepted'),
          tags: Type.Optional(Nullable(Type.Array(Type.String()))),
          title: Type.String(),
        },
        { additionalProperties: false },
      ),
    },
    handler: async (ctx, { body }) => reply(await n.createNote(await openScope(ctx), body), { status: 201 }),
  }),
  defineAction({
    name: 'create_linked',
    method: 'POST',
    route: '/api/v1/notes/linked-notes',
    tool: 'svc_api_create_linked',
    surfaces: ['cli', 'mcp', 'webmcp'],
    scopes: ['data'],
    effect: 'destructive',
    requestEncoding: 'json',
    responseEncoding: 'json',
    recentConfirmation: false,
    area: AREA,
    summary: 'Creates a Note linked to the file at a Home-relative `path`.',
    input: {
      body: Type.Object(
        { path: Type.String({ description: 'Home-relative path of the file the Note is linked to' }) },
        { additionalProperties: false },
      ),
    },
    handler: async (ctx, { body }) => reply(await n.createLinked(await openScope(ctx), body.path), { status: 201 }),
  }),
  defineAction({
    name: 'export_canvas',
    method: 'GET',
    route: '/api/v1/notes/{id}/export',
    tool: 'svc_api_export_canvas',
    surfaces: ['cli', 'mcp', 'webmcp'],
    scopes: ['data'],
    effect: 'read',
    requestEncoding: 'none',
    responseEncoding: 'base64',
    recentConfirmation: false,
    area: AREA,
    summary:
      'Exports a canvas Note as PNG or SVG in byte chunks (`offset`, `limit` 1 to 524288). Check that the ETag of each response matches before joining chunks.',
    input: {
      path: NoteId,
      query: Type.Object(
        {
          format: Type.Union([Type.Literal('png'), Type.Literal('svg')]),
          limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 524288, description: 'Chunk size in bytes' })),
          offset: Type.Optional(Type.Integer({ minimum: 0, description: 'Byte offset of the chunk' })),
        },
        { additionalProperties: false },
      ),
    },
    handler: async (ctx, { path, query }) => exportCanvas(await openScope(ctx), path.id, query),
  }),
  defineAction({
    name: 'get_note',
    method: 'GET',
    route: '/api/v1/notes/{id}',
    tool: 'svc_api_get_note',
    surfaces: ['cli', 'mcp', 'webmcp'],
    scopes: ['data'],
    effect: 'read',
    requestEncoding: 'none',
    responseEncoding: 'json',
    recentConfirmation: false,
    area: AREA,
    summary: 'Reads a Note by its stable ID, with the ETag used for conditional writes.',
    input: { path: NoteId },
    handler: async (ctx, { path }) => {
      const { record, etag } = await n.getNote(await openScope(ctx), path.id);
      return reply(record, { etag });
    },
  }),
  defineAction({
    name: 'linked_notes',
    method: 'GET',
    route: '/api/v1/notes/linked-notes',
    tool: 'svc_api_linked_notes',
    surfaces: ['cli', 'mcp', 'webmcp'],
    scopes: ['data'],
    effect: 'read',
    requestEncoding: 'none',
    responseEncoding: 'json',
    recentConfirmation: false,
    area: AREA,
    summary: 'Lists the Notes linked to the file at a Home-relative `path`.',
    input: {
      query: Type.Object(
        { path: Type.String({ description: 'Home-relative path of the file' }) },
        { additionalProperties: false },
      ),
    },
    handler: async (ctx, { query }) => n.linkedNotes(await openScope(ctx), query.path),
  }),
  defineAction({
    name: 'move_note',
    method: 'POST',
    route: '/api/v1/notes/{id}/move',
    tool: 'svc_api_move_note',
    surfaces: ['cli', 'mcp', 'webmcp'],
    scopes: ['data'],
    effect: 'destructive',
    requestEncoding: 'json',
    responseEncoding: 'json',
    recentConfirmation: false,
    area: AREA,
    summary: "Moves a Note to another folder; needs header `If-Match` with the Note's current ETag.",
    input: {
      path: NoteId,
      headers: Type.Object(
        { 'if-match': Type.String({ description: 'Current ETag of the Note' }) },
        { additionalProperties: true },
      ),
      body: Type.Object(
        { folder: Type.String({ description: 'Target folder' }) },
        { additionalProperties: false },
      ),
    },
    handler: async (ctx, { path, headers, body }) => n.moveNote(await openScope(ctx), path.id, headers['if-match'], body.folder),
  }),
  defineAction({
    name: 'note_backlinks',
    method: 'GET',
    route: '/api/v1/notes/{id}/backlinks',
    tool: 'svc_api_note_backlinks',
    surfaces: ['cli', 'mcp', 'webmcp'],
    scopes: ['data'],
    effect: 'read',
    requestEncoding: 'none',
    responseEncoding: 'json',
    recentConfirmation: false,
    area: AREA,
    summary: 'Lists the Notes that link to a Note.',
    input: { path: NoteId },
    handler: async (ctx, { path }) => n.noteBacklinks(await openScope(ctx), path.id),
  }),
  defineAction({
    name: 'note_links',
    method: 'GET',
    route: '/api/v1/notes/{id}/links',
    tool: 'svc_api_note_links',
    surfaces: ['cli', 'mcp', 'webmcp'],
    scopes: ['data'],
    effect: 'read',
    requestEncoding: 'none',
    responseEncoding: 'json',
    recentConfirmation: false,
    area: AREA,
    summary: 'Lists the outgoing links of a Note.',
    input: { path: NoteId },
    handler: async (ctx, { path }) => n.noteLinks(await openScope(ctx), path.id),
  }),
  defineAction({
    name: 'notes_bookmarks_create',
    method: 'POST',
    route: '/api/v1/notes/bookmarks',
    tool: 'svc_api_notes_bookmarks_create',
    surfaces: ['cli', 'mcp', 'webmcp'],
    scopes: ['data'],
    effect: 'destructive',
    requestEncoding: 'json',
    responseEncoding: 'json',
    recentConfirmation: false,
    area: AREA,
    summary:
      'Creates a Note from a web page: `bookmark` links the absolute HTTP(S) `url`, `clip` fetches the page and extracts it. Highlights become blockquotes and tags go into the frontmatter.',
    input: {
      body: Type.Object(
        {
          description: Type.Optional(Nullable(Type.String({ description: 'Page description from the capturing client' }))),
          favicon: Type.Optional(Nullable(Type.String())),
          highlights: Type.Optional(Type.Array(Type.String(), { description: 'Added as blockquotes' })),
          kind: Type.Optional(
            Type.Union([Type.Literal('bookmark'), Type.Literal('clip')], {
              description: 'Link as a bookmark, or fetch and extract as a clip',
            }),
          ),
          selected_text: Type.Optional(Nullable(Type.String())),
          tags: Type.Optional(Type.Array(Type.String(), { description: 'Added to the Note frontmatter' })),
          title: Type.Optional(
            Nullable(Type.String({ description: 'When omitted the server uses the extracted title or the site' })),
          ),
          url: Type.String({
            format: 'uri',
            pattern: '^[hH][tT][tT][pP][sS]?://',
            description: 'Absolute HTTP or HTTPS address',
          }),
        },
        { additionalProperties: false },
      ),
    },
    handler: async (ctx, { body }) =>
      reply(
        await createWebNote(await openScope(ctx), body, { allowPrivate: ctx.services.config.allowPrivateFetch }, new Date(ctx.now())),
        { status: 201 },
      ),
  }),
  defineAction({
    name: 'notes_composer_parse',
    method: 'POST',
    route: '/api/v1/notes/composer/parse',
    tool: 'svc_api_notes_composer_parse',
    surfaces: ['cli', 'mcp', 'webmcp'],
    scopes: ['data'],
    effect: 'read',
    requestEncoding: 'json',
    responseEncoding: 'json',
    recentConfirmation: false,
    area: AREA,
    summary:
      "Parses line 1 of the composer text as an `event` (log entry or Event), `task` or `note`; relative dates are read from the date of the client's local wall time `now`. Changes nothing.",
    input: {
      body: Type.Object(
        {
          mode: Type.Union([Type.Literal('event'), Type.Literal('task'), Type.Literal('note')], {
            description:
              '`event` for a log entry or an Event, `task` or `note`; selects the run grammar and tag namespace',
          }),
          now: Type.String({
            pattern: '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}(:\\d{2})?$',
            description:
              'Client local wall time YYYY-MM-DDTHH:MM[:SS]; its date is the reference for relative dates; the zone is ignored',
          }),
          text: Type.String({
            pattern: '^[^\\r\\n]*$',
            description: 'Line 1 of the composer text, no line breaks',
          }),
        },
        { additionalProperties: false },
      ),
    },
    handler: (_ctx, { body }) => parseComposer(body),
  }),
  defineAction({
    name: 'notes_events',
    method: 'GET',
    route: '/api/v1/notes/events',
    tool: 'svc_api_notes_events',
    surfaces: ['cli', 'mcp', 'webmcp'],
    scopes: ['data'],
    effect: 'read',
    requestEncoding: 'none',
    responseEncoding: 'sse',
    recentConfirmation: false,
    area: AREA,
    summary:
      'Streams Note changes (server-sent events). Reduce `poll_ms` after an overflow and read current data after a reconnect; `Last-Event-ID` is used only where the route replays events.',
    input: { headers: LastEventIdHeaders },
    // Built with the change journal (src/changes/handlers.ts, docs/changes.md); replays after Last-Event-ID.
    handler: async (ctx, { headers }) => (await import('../changes/handlers.js')).notesEvents(ctx, headers),
  }),
  defineAction({
    name: 'notes_list',
    method: 'GET',
    route: '/api/v1/notes',
    tool: 'svc_api_notes_list',
    surfaces: ['cli', 'mcp', 'webmcp'],
    scopes: ['data'],
    effect: 'read',
    requestEncoding: 'none',
    responseEncoding: 'json',
    recentConfirmation: false,
    area: AREA,
    summary:
      'Lists Notes one page at a time, with optional `path`, `recent` and `sort`. Pass `next_cursor` unchanged; reduce `limit` after an overflow.',
    input: {
      query: Type.Object(
        {
          cursor: Type.Optional(Type.String({ description: 'The `next_cursor` of the previous page, unchanged' })),
          limit: Type.Optional(Type.Integer({ description: 'Page size; reduce it after an overflow' })),
          path: Type.Optional(Type.String({ description: 'Home-relative path to list below' })),
          recent: Type.Optional(Type.Boolean()),
          sort: Type.Optional(Type.String({ description: 'Sort order' })),
        },
        { additionalProperties: false },
      ),
    },
    handler: async (ctx, { query }) => noteListReply(n.listNotes(await openScope(ctx), query)),
  }),
  defineAction({
    name: 'notes_template_create',
    method: 'POST',
    route: '/api/v1/notes/from-template',
    tool: 'svc_api_notes_template_create',
    surfaces: ['cli', 'mcp', 'webmcp'],
    scopes: ['data'],
    effect: 'destructive',
    requestEncoding: 'json',
    responseEncoding: 'json',
    recentConfirmation: false,
    area: AREA,
    summary:
      'Creates a Note with a title from a template under the flat `Notes/` root, the only accepted folder.',
    input: {
      body: Type.Object(
        {
          folder: NotesFolder('Only `Notes/` is accepted'),
          template_id: Type.Optional(Nullable(Type.String())),
          title: Type.String(),
        },
        { additionalProperties: false },
      ),
    },
    handler: async (ctx, { body }) => {
      const note = await createFromTemplate(await openScope(ctx), body);
      return reply(note, { status: 201, etag: note.etag });
    },
  }),
  defineAction({
    name: 'notes_templates_default_set',
    method: 'PUT',
    route: '/api/v1/notes/templates/default',
    tool: 'svc_api_notes_templates_default_set',
    surfaces: ['cli', 'mcp', 'webmcp'],
    scopes: ['data'],
    effect: 'destructive',
    requestEncoding: 'json',
    responseEncoding: 'json',
    recentConfirmation: false,
    area: AREA,
    summary: 'Sets the default template and folder for new Notes; the only accepted folder is `Notes/`.',
    input: {
      body: Type.Object(
        {
          folder: NotesFolder('Only `Notes/` is accepted'),
          template_id: Type.Optional(Nullable(Type.String())),
        },
        { additionalProperties: false },
      ),
    },
    handler: async (ctx, { body }) => setDefaultTemplate(await openScope(ctx), body),
  }),
  defineAction({
    name: 'notes_templates_list',
    method: 'GET',
    route: '/api/v1/notes/templates',
    tool: 'svc_api_notes_templates_list',
    surfaces: ['cli', 'mcp', 'webmcp'],
    scopes: ['data'],
    effect: 'read',
    requestEncoding: null,
    responseEncoding: null,
    recentConfirmation: false,
    area: AREA,
    summary: 'Lists the Note templates.',
    input: {},
    handler: async (ctx) => listTemplates(await openScope(ctx)),
  }),
  ...extensionActions,
];
