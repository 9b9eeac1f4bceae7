/**
 * Notes area of the spec (document 2), "Daily notes and log entries" (13 actions, scope data).
 * Log entries are blocks of a Daily note, identified by stable block IDs.
 * Declarations only; handlers are attached when the area is built.
 */
import { Type, type TSchema } from '@sinclair/typebox';
import { defineAction } from '../actions/types.js';

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
    summary: "Gets or creates the caller's Daily note for a date, in the time zone of header `X-Svc-Timezone`.",
    input: { query: DailyQuery, headers: TimezoneHeaders },
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
  }),
];
