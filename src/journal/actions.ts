/**
 * Notes area of the spec (document 2), "Daily notes and log entries" (13 actions, scope data).
 * Log entries are blocks of a Daily note, identified by stable block IDs.
 * Handlers are small lambdas over ./journal.ts; the Markdown form is in ./log-format.ts
 * and docs/vault-format.md, the shapes in docs/journal.md.
 */
import { Type, type TSchema } from '@sinclair/typebox';
import { defineAction } from '../actions/types.js';
import { reply } from '../actions/reply.js';
import { openScope } from '../notes/access.js';
import * as j from './journal.js';
import { checkDate } from './dates.js';
import { errors } from '../core/errors.js';

const AREA = 'Daily notes and log entries';

const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

const BlockIdPath = Type.Object(
  { block_id: Type.String({ minLength: 1, description: 'Stable block ID of the log entry' }) },
  { additionalProperties: false },
);
const IfMatchHeaders = Type.Object(
  { 'if-match': Type.String({ description: 'Current ETag of the Daily note' }) },
  { additionalProperties: true },
);
const DailyQuery = Type.Object(
  { date: Type.Optional(Type.String({ description: 'Calendar date of the Daily note' })) },
  { additionalProperties: false },
);
const TimezoneHeaders = Type.Object(
  { 'x-svc-timezone': Type.Optional(Type.String({ description: "The caller's time zone" })) },
  { additionalProperties: true },
);
const Attachments = (description: string) =>
  Type.Array(Type.Object({}, { additionalProperties: true }), { description });

export const actions = [
  defineAction({
    name: 'daily',
    method: 'GET',
    route: '/api/v1/notes/daily',
    tool: 'svc_notes_get_or_create_daily',
    surfaces: ['cli', 'mcp', 'webmcp'],
    scopes: ['data'],
    effect: 'read',
    requestEncoding: 'none',
    responseEncoding: 'json',
    recentConfirmation: false,
    area: AREA,
    summary:
      "Reads the caller's Daily note and its log for a date (default today in the zone of header `X-Svc-Timezone`); an absent day reads as empty and is not created (ensure_daily creates it).",
    input: { query: DailyQuery, headers: TimezoneHeaders },
    handler: async (ctx, { query, headers }) => {
      const { date } = j.dayFor(ctx.now(), query, headers);
      const r = await j.getDay(await openScope(ctx), date);
      return reply(r.record, r.etag ? { etag: r.etag } : {});
    },
  }),
  defineAction({
    name: 'ensure_daily',
    method: 'POST',
    route: '/api/v1/notes/daily',
    tool: 'svc_api_ensure_daily',
    surfaces: ['cli', 'mcp', 'webmcp'],
    scopes: ['data'],
    effect: 'destructive',
    requestEncoding: 'none',
    responseEncoding: 'json',
    recentConfirmation: false,
    area: AREA,
    summary:
      'Ensures the Daily note for a date exists, under the shared writer lock; the explicit write behind Home creation and adjacent-day navigation.',
    input: { query: DailyQuery, headers: TimezoneHeaders },
    handler: async (ctx, { query, headers }) => {
      const { date, zone } = j.dayFor(ctx.now(), query, headers);
      const r = await j.ensureDay(await openScope(ctx), date, zone);
      return reply(r.record, { status: r.created ? 201 : 200, ...(r.etag ? { etag: r.etag } : {}) });
    },
  }),
  defineAction({
    name: 'notes_journal_create_log',
    method: 'POST',
    route: '/api/v1/notes/journal/log',
    tool: 'svc_api_notes_journal_create_log',
    surfaces: ['cli', 'mcp', 'webmcp'],
    scopes: ['data'],
    effect: 'destructive',
    requestEncoding: 'json',
    responseEncoding: 'json',
    recentConfirmation: false,
    area: AREA,
    summary:
      "Adds a log entry to the caller's Daily note, with attachments (files already in the Home) linked below it in the same write. A `client_id` makes retries create no second entry.",
    input: {
      body: Type.Object(
        {
          attachments: Type.Optional(
            Attachments(
              'Files already in the Home, linked below the new entry in order as an embed line or a plain link line',
            ),
          ),
          client_id: Type.Optional(
            Nullable(
              Type.String({
                description: 'Stable create identity from the Installation; the first outcome is retained so retries create no second entry',
              }),
            ),
          ),
          now: Type.String({ description: "Client's current local time" }),
          position: Type.Optional(Nullable(Type.Object({}, { additionalProperties: true }))),
          text: Type.String({ description: 'Text of the log entry' }),
          timezone: Type.String({ description: "The caller's time zone" }),
        },
        { additionalProperties: false },
      ),
    },
    handler: async (ctx, { body }) => {
      const scope = await openScope(ctx);
      const [r] = await j.createEntries(scope, [await j.prepareCreate(scope, body as Record<string, unknown>)]);
      return reply({ ...r!.record, replayed: r!.replayed }, { status: r!.replayed ? 200 : 201, etag: r!.record.etag! });
    },
  }),
  defineAction({
    name: 'notes_journal_create_log_batch',
    method: 'POST',
    route: '/api/v1/notes/journal/log/batch',
    tool: 'svc_api_notes_journal_create_log_batch',
    surfaces: ['cli', 'mcp', 'webmcp'],
    scopes: ['data'],
    effect: 'destructive',
    requestEncoding: 'json',
    responseEncoding: 'json',
    recentConfirmation: false,
    area: AREA,
    summary: 'Adds several log entries in one request.',
    input: {
      body: Type.Object(
        {
          entries: Type.Array(Type.Object({}, { additionalProperties: true }), {
            description: 'The log entries to create',
          }),
        },
        { additionalProperties: false },
      ),
    },
    handler: async (ctx, { body }) => {
      const scope = await openScope(ctx);
      if (body.entries.length === 0) throw errors.badRequest('entries must not be empty', { field: 'body.entries' });
      if (body.entries.length > 500) throw errors.badRequest('entries holds at most 500 entries', { field: 'body.entries' });
      const specs = [];
      for (let i = 0; i < body.entries.length; i++) specs.push(await j.prepareCreate(scope, body.entries[i]!, `body.entries[${i}]`));
      const out = await j.createEntries(scope, specs);
      return reply({ items: out.map((r) => ({ ...r.record, replayed: r.replayed })), next_cursor: null }, { status: 201 });
    },
  }),
  defineAction({
    name: 'notes_journal_day',
    method: 'GET',
    route: '/api/v1/notes/journal/{date}',
    tool: 'svc_api_notes_journal_day',
    surfaces: ['cli', 'mcp', 'webmcp'],
    scopes: ['data'],
    effect: 'read',
    requestEncoding: 'none',
    responseEncoding: 'json',
    recentConfirmation: false,
    area: AREA,
    summary: 'Reads the Daily note of a date and its log entries.',
    input: {
      path: Type.Object(
        { date: Type.String({ minLength: 1, description: 'Calendar date of the Daily note' }) },
        { additionalProperties: false },
      ),
    },
    handler: async (ctx, { path }) => {
      const r = await j.getDay(await openScope(ctx), checkDate(path.date, 'path.date'));
      return reply(r.record, r.etag ? { etag: r.etag } : {});
    },
  }),
  defineAction({
    name: 'notes_journal_delete_entry',
    method: 'DELETE',
    route: '/api/v1/notes/journal/entries/{block_id}',
    tool: 'svc_api_notes_journal_delete_entry',
    surfaces: ['cli', 'mcp', 'webmcp'],
    scopes: ['data'],
    effect: 'destructive',
    requestEncoding: 'none',
    responseEncoding: 'json',
    recentConfirmation: false,
    area: AREA,
    summary: "Deletes a log entry; needs header `If-Match` with the Daily note's current ETag.",
    input: { path: BlockIdPath, headers: IfMatchHeaders },
    handler: async (ctx, { path, headers }) => {
      const r = await j.deleteEntry(await openScope(ctx), path.block_id, headers['if-match']);
      return reply(r, { etag: r.etag });
    },
  }),
  defineAction({
    name: 'notes_journal_entry_attachments',
    method: 'POST',
    route: '/api/v1/notes/journal/entries/{block_id}/attachments',
    tool: 'svc_api_notes_journal_entry_attachments',
    surfaces: ['cli', 'mcp', 'webmcp'],
    scopes: ['data'],
    effect: 'destructive',
    requestEncoding: 'json',
    responseEncoding: 'json',
    recentConfirmation: false,
    area: AREA,
    summary: 'Links files already in the Home below a log entry.',
    input: {
      path: BlockIdPath,
      body: Type.Object(
        { attachments: Attachments('Files to link below the entry, in order') },
        { additionalProperties: false },
      ),
    },
    handler: async (ctx, { path, body }) => {
      const r = await j.addAttachments(await openScope(ctx), path.block_id, body.attachments);
      return reply(r.record, { etag: r.etag });
    },
  }),
  defineAction({
    name: 'notes_journal_entry_note',
    method: 'POST',
    route: '/api/v1/notes/journal/entries/{block_id}/note',
    tool: 'svc_api_notes_journal_entry_note',
    surfaces: ['cli', 'mcp', 'webmcp'],
    scopes: ['data'],
    effect: 'destructive',
    requestEncoding: 'json',
    responseEncoding: 'json',
    recentConfirmation: false,
    area: AREA,
    summary:
      "Writes the linked note body of a log entry; a `client_id` identifies the composer's operation so a retry does not write twice.",
    input: {
      path: BlockIdPath,
      body: Type.Object(
        {
          body: Type.String({ description: 'Markdown body of the linked note' }),
          client_id: Type.Optional(
            Nullable(Type.String({ description: "The composer's stable linked-body operation identity" })),
          ),
        },
        { additionalProperties: false },
      ),
    },
    handler: async (ctx, { path, body }) => {
      const r = await j.entryNote(await openScope(ctx), path.block_id, body.body, body.client_id ?? null);
      return reply(r.record, { status: r.created ? 201 : 200, etag: r.etag });
    },
  }),
  defineAction({
    name: 'notes_journal_fix_line',
    method: 'POST',
    route: '/api/v1/notes/journal/{date}/lines/{hash}/fix',
    tool: 'svc_api_notes_journal_fix_line',
    surfaces: ['cli', 'mcp', 'webmcp'],
    scopes: ['data'],
    effect: 'destructive',
    requestEncoding: 'none',
    responseEncoding: 'json',
    recentConfirmation: false,
    area: AREA,
    summary:
      "Fixes an unparsed line of a Daily note's log, identified by its hash; needs header `If-Match` with the Daily note's current ETag.",
    input: {
      path: Type.Object(
        {
          date: Type.String({ minLength: 1, description: 'Calendar date of the Daily note' }),
          hash: Type.String({ minLength: 1, description: 'Hash of the unparsed line' }),
        },
        { additionalProperties: false },
      ),
      headers: IfMatchHeaders,
    },
    handler: async (ctx, { path, headers }) => {
      const r = await j.fixLine(await openScope(ctx), path.date, path.hash, headers['if-match']);
      return reply(r.record, { etag: r.etag });
    },
  }),
  defineAction({
    name: 'notes_journal_get_entry',
    method: 'GET',
    route: '/api/v1/notes/journal/entries/{block_id}',
    tool: 'svc_api_notes_journal_get_entry',
    surfaces: ['cli', 'mcp', 'webmcp'],
    scopes: ['data'],
    effect: 'read',
    requestEncoding: 'none',
    responseEncoding: 'json',
    recentConfirmation: false,
    area: AREA,
    summary: 'Reads one log entry by its stable block ID.',
    input: { path: BlockIdPath },
    handler: async (ctx, { path }) => {
      const r = await j.getEntry(await openScope(ctx), path.block_id);
      return reply(r.record, { etag: r.etag });
    },
  }),
  defineAction({
    name: 'notes_journal_patch_entry',
    method: 'PATCH',
    route: '/api/v1/notes/journal/entries/{block_id}',
    tool: 'svc_api_notes_journal_patch_entry',
    surfaces: ['cli', 'mcp', 'webmcp'],
    scopes: ['data'],
    effect: 'destructive',
    requestEncoding: 'json',
    responseEncoding: 'json',
    recentConfirmation: false,
    area: AREA,
    summary:
      "Changes the date, start, end, time zone, title or tags of a log entry; omitted members stay as they are. Needs header `If-Match` with the Daily note's current ETag.",
    input: {
      path: BlockIdPath,
      headers: IfMatchHeaders,
      body: Type.Object(
        {
          date: Type.Optional(Nullable(Type.String())),
          end: Type.Optional(Nullable(Type.String())),
          start: Type.Optional(Nullable(Type.String())),
          title: Type.Optional(Nullable(Type.String())),
          tz: Type.Optional(Nullable(Type.String())),
          tags: Type.Optional(Nullable(Type.Array(Type.String()))),
        },
        { additionalProperties: false },
      ),
    },
    handler: async (ctx, { path, headers, body }) => {
      const r = await j.patchEntry(await openScope(ctx), path.block_id, headers['if-match'], body);
      return reply(r.record, { etag: r.etag });
    },
  }),
  defineAction({
    name: 'notes_journal_remove_attachment',
    method: 'POST',
    route: '/api/v1/notes/journal/entries/{block_id}/attachments/remove',
    tool: 'svc_api_notes_journal_remove_attachment',
    surfaces: ['cli', 'mcp', 'webmcp'],
    scopes: ['data'],
    effect: 'destructive',
    requestEncoding: 'json',
    responseEncoding: 'json',
    recentConfirmation: false,
    area: AREA,
    summary: 'Removes one attachment link from below a log entry.',
    input: {
      path: BlockIdPath,
      body: Type.Object(
        { target: Type.String({ description: 'Link target of the attachment to remove' }) },
        { additionalProperties: false },
      ),
    },
    handler: async (ctx, { path, body }) => {
      const r = await j.removeAttachment(await openScope(ctx), path.block_id, body.target);
      return reply(r.record, { etag: r.etag });
    },
  }),
  defineAction({
    name: 'notes_journal_restore_attachments',
    method: 'POST',
    route: '/api/v1/notes/journal/entries/{block_id}/attachments/restore',
    tool: 'svc_api_notes_journal_restore_attachments',
    surfaces: ['cli', 'mcp', 'webmcp'],
    scopes: ['data'],
    effect: 'destructive',
    requestEncoding: 'json',
    responseEncoding: 'json',
    recentConfirmation: false,
    area: AREA,
    summary:
      'Restores the attachment links of a log entry from an undo, including links to files that stay Missing.',
    input: {
      path: BlockIdPath,
      body: Type.Object(
        { attachments: Attachments('Attachment links to restore, as returned for the undo') },
        { additionalProperties: false },
      ),
    },
    handler: async (ctx, { path, body }) => {
      const r = await j.restoreAttachments(await openScope(ctx), path.block_id, body.attachments);
      return reply(r.record, { etag: r.etag });
    },
  }),
];
