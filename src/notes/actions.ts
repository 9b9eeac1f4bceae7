/**
 * Notes area of the spec (document 2), "Notes, links and canvas".
 * New Notes use the flat `Notes/` root; canvas Notes are created here and edited through
 * collaboration only. Extension actions beyond the spec's table are in extension-actions.ts.
 */
import { Type } from '@sinclair/typebox';
import { Headers, Nullable, Obj, OneOf, PathString, specAction } from '../actions/spec.js';
import { reply } from '../actions/reply.js';
import { openScope } from './access.js';
import { onFirstUse } from '../core/first-use.js';
import { extensionActions } from './extension-actions.js';
import * as n from './notes.js';
import { noteListReply } from './note-list.js';
import { exportCanvas } from '../collab/canvas.js';

/** The composer, templates and web clips (./lazy.ts), imported by the first handler that calls them, then kept (core/first-use.ts). */
export const notesCode = onFirstUse(() => import('./lazy.js'));
/** The change journal's event stream, imported by the first `notes_events`, then kept. */
export const changesCode = onFirstUse(() => import('../changes/handlers.js'));

const NoteId = Obj({ id: PathString('Stable ID of the Note') });
const NotesFolder = (description = 'Only the flat `Notes/` root is accepted') =>
  Type.Optional(Nullable(Type.String({ description })));
const LastEventIdHeaders = Headers({
  'last-event-id': Type.Optional(Type.String({ description: 'ID of the last event received; used only where the route replays events' })),
});

export const actions = [
  specAction('backlinks', {
    summary: 'Lists the backlinks of the file at a Home-relative `path`.',
    input: { query: Obj({ path: Type.String({ description: 'Home-relative path' }) }) },
    handler: async (ctx, { query }) => n.backlinksOf(await openScope(ctx), query.path),
  }),
  specAction('by_tag', {
    summary: 'Lists the Notes that carry one tag.',
    input: { path: Obj({ tag: PathString() }) },
    handler: async (ctx, { path }) => noteListReply(n.notesByTag(await openScope(ctx), path.tag)),
  }),
  specAction('create', {
    summary: 'Creates a Note (or, with `canvas`, a canvas drawing) with a title and optional body and tags, under the flat `Notes/` root, the only accepted folder.',
    input: {
      body: Obj({
        body: Type.Optional(Nullable(Type.String({ description: 'Markdown body' }))),
        canvas: Type.Optional(Type.Boolean({ description: 'Creates a canvas Note; later edits use collaboration' })),
        folder: NotesFolder('Only the flat `Notes/` root is accepted'),
        tags: Type.Optional(Nullable(Type.Array(Type.String()))),
        title: Type.String(),
      }),
    },
    handler: async (ctx, { body }) => reply(await n.createNote(await openScope(ctx), body), { status: 201 }),
  }),
  specAction('create_linked', {
    summary: 'Creates a Note linked to the file at a Home-relative `path`.',
    input: { body: Obj({ path: Type.String({ description: 'Home-relative path of the file the Note is linked to' }) }) },
    handler: async (ctx, { body }) => reply(await n.createLinked(await openScope(ctx), body.path), { status: 201 }),
  }),
  specAction('export_canvas', {
    summary: 'Exports a canvas Note as PNG or SVG in byte chunks (`offset`, `limit` 1 to 524288). Check that the ETag of each response matches before joining chunks.',
    input: {
      path: NoteId,
      query: Obj({
        format: OneOf(['png', 'svg']),
        limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 524288, description: 'Chunk size in bytes' })),
        offset: Type.Optional(Type.Integer({ minimum: 0, description: 'Byte offset of the chunk' })),
      }),
    },
    handler: async (ctx, { path, query }) => exportCanvas(await openScope(ctx), path.id, query),
  }),
  specAction('get_note', {
    summary: 'Reads a Note by its stable ID, with the ETag used for conditional writes.',
    input: { path: NoteId },
    handler: async (ctx, { path }) => {
      const { record, etag } = await n.getNote(await openScope(ctx), path.id);
      return reply(record, { etag });
    },
  }),
  specAction('linked_notes', {
    summary: 'Lists the Notes linked to the file at a Home-relative `path`.',
    input: { query: Obj({ path: Type.String({ description: 'Home-relative path of the file' }) }) },
    handler: async (ctx, { query }) => n.linkedNotes(await openScope(ctx), query.path),
  }),
  specAction('move_note', {
    summary: "Moves a Note to another folder; needs header `If-Match` with the Note's current ETag.",
    input: {
      path: NoteId,
      headers: Headers({ 'if-match': Type.String({ description: 'Current ETag of the Note' }) }),
      body: Obj({ folder: Type.String({ description: 'Target folder' }) }),
    },
    handler: async (ctx, { path, headers, body }) => n.moveNote(await openScope(ctx), path.id, headers['if-match'], body.folder),
  }),
  specAction('note_backlinks', {
    summary: 'Lists the Notes that link to a Note.',
    input: { path: NoteId },
    handler: async (ctx, { path }) => n.noteBacklinks(await openScope(ctx), path.id),
  }),
  specAction('note_links', {
    summary: 'Lists the outgoing links of a Note.',
    input: { path: NoteId },
    handler: async (ctx, { path }) => n.noteLinks(await openScope(ctx), path.id),
  }),
  specAction('notes_bookmarks_create', {
    summary:
      'Creates a Note from a web page: `bookmark` links the absolute HTTP(S) `url`, `clip` fetches the page and extracts it. Highlights become blockquotes and tags go into the frontmatter.',
    input: {
      body: Obj({
        description: Type.Optional(Nullable(Type.String({ description: 'Page description from the capturing client' }))),
        favicon: Type.Optional(Nullable(Type.String())),
        highlights: Type.Optional(Type.Array(Type.String(), { description: 'Added as blockquotes' })),
        kind: Type.Optional(OneOf(['bookmark', 'clip'], { description: 'Link as a bookmark, or fetch and extract as a clip' })),
        selected_text: Type.Optional(Nullable(Type.String())),
        tags: Type.Optional(Type.Array(Type.String(), { description: 'Added to the Note frontmatter' })),
        title: Type.Optional(Nullable(Type.String({ description: 'When omitted the server uses the extracted title or the site' }))),
        url: Type.String({
          format: 'uri',
          pattern: '^[hH][tT][tT][pP][sS]?://',
          description: 'Absolute HTTP or HTTPS address',
        }),
      }),
    },
    handler: async (ctx, { body }) =>
      reply(
        await (await notesCode()).clips.createWebNote(await openScope(ctx), body, { allowPrivate: ctx.services.config.allowPrivateFetch }, new Date(ctx.now())),
        { status: 201 },
      ),
  }),
  specAction('notes_composer_parse', {
    summary:
      "Parses line 1 of the composer text as an `event` (log entry or Event), `task` or `note`; relative dates are read from the date of the client's local wall time `now`. Changes nothing.",
    input: {
      body: Obj({
        mode: OneOf(['event', 'task', 'note'], {
          description:
            '`event` for a log entry or an Event, `task` or `note`; selects the run grammar and tag namespace',
        }),
        now: Type.String({
          pattern: '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}(:\\d{2})?$',
          description:
            'Client local wall time YYYY-MM-DDTHH:MM[:SS]; its date is the reference for relative dates; the zone is ignored',
        }),
        text: Type.String({ pattern: '^[^\\r\\n]*$', description: 'Line 1 of the composer text, no line breaks' }),
      }),
    },
    handler: async (_ctx, { body }) => (await notesCode()).composer.parseComposer(body),
  }),
  specAction('notes_events', {
    summary:
      'Streams Note changes (server-sent events). Reduce `poll_ms` after an overflow and read current data after a reconnect; `Last-Event-ID` is used only where the route replays events.',
    input: { headers: LastEventIdHeaders },
    // Built with the change journal (src/changes/handlers.ts, docs/changes.md); replays after Last-Event-ID.
    handler: async (ctx, { headers }) => (await changesCode()).notesEvents(ctx, headers),
  }),
  specAction('notes_list', {
    summary: 'Lists Notes one page at a time, with optional `path`, `recent` and `sort`. Pass `next_cursor` unchanged; reduce `limit` after an overflow.',
    input: {
      query: Obj({
        cursor: Type.Optional(Type.String({ description: 'The `next_cursor` of the previous page, unchanged' })),
        limit: Type.Optional(Type.Integer({ description: 'Page size; reduce it after an overflow' })),
        path: Type.Optional(Type.String({ description: 'Home-relative path to list below' })),
        recent: Type.Optional(Type.Boolean()),
        sort: Type.Optional(Type.String({ description: 'Sort order' })),
      }),
    },
    handler: async (ctx, { query }) => noteListReply(n.listNotes(await openScope(ctx), query)),
  }),
  specAction('notes_template_create', {
    summary: 'Creates a Note with a title from a template under the flat `Notes/` root, the only accepted folder.',
    input: {
      body: Obj({
        folder: NotesFolder('Only `Notes/` is accepted'),
        template_id: Type.Optional(Nullable(Type.String())),
        title: Type.String(),
      }),
    },
    handler: async (ctx, { body }) => {
      const note = await (await notesCode()).templates.createFromTemplate(await openScope(ctx), body);
      return reply(note, { status: 201, etag: note.etag });
    },
  }),
  specAction('notes_templates_default_set', {
    summary: 'Sets the default template and folder for new Notes; the only accepted folder is `Notes/`.',
    input: { body: Obj({ folder: NotesFolder('Only `Notes/` is accepted'), template_id: Type.Optional(Nullable(Type.String())) }) },
    handler: async (ctx, { body }) => (await notesCode()).templates.setDefaultTemplate(await openScope(ctx), body),
  }),
  specAction('notes_templates_list', { summary: 'Lists the Note templates.', handler: async (ctx) => (await notesCode()).templates.listTemplates(await openScope(ctx)) }),
  ...extensionActions,
];
