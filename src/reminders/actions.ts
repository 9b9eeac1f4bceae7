/**
 * Notes area of the spec (document 2), "Block reminders" (4 actions, scope data).
 * A reminder sits on a stable block anchor (`^id`) of a Note and fires at one absolute instant.
 * Reminders live in the sidecar store and fire from src/reminders/scheduler.ts (docs/notifications.md).
 */
import { Type } from '@sinclair/typebox';
import { defineAction } from '../actions/types.js';
import { reply } from '../actions/reply.js';
import * as r from './reminders.js';

const AREA = 'Block reminders';

const NoteIdPath = Type.Object(
  { id: Type.String({ minLength: 1, description: 'Stable ID of the Note' }) },
  { additionalProperties: false },
);
const ReminderPath = Type.Object(
  {
    id: Type.String({ minLength: 1, description: 'Stable ID of the Note' }),
    reminder_id: Type.String({ minLength: 1, description: 'ID of the block reminder' }),
  },
  { additionalProperties: false },
);
const IfMatchHeaders = Type.Object(
  { 'if-match': Type.String({ description: 'Current ETag of the Note' }) },
  { additionalProperties: true },
);

export const actions = [
  defineAction({
    name: 'notes_create_block_reminder',
    method: 'POST',
    route: '/api/v1/notes/{id}/reminders',
    tool: 'svc_api_notes_create_block_reminder',
    surfaces: ['cli', 'mcp', 'webmcp'],
    scopes: ['data'],
    effect: 'destructive',
    requestEncoding: 'json',
    responseEncoding: 'json',
    recentConfirmation: false,
    area: AREA,
    summary:
      "Sets a reminder on an existing block anchor of a Note, firing at one absolute RFC 3339 instant for `everyone` who can see the Note or `only_me`. Needs header `If-Match` with the Note's current ETag.",
    input: {
      path: NoteIdPath,
      headers: IfMatchHeaders,
      body: Type.Object(
        {
          audience: Type.Optional(
            Type.Union([Type.Literal('everyone'), Type.Literal('only_me')], {
              description: 'Users who can see the Note at fire time, or only the setter',
            }),
          ),
          block_id: Type.String({ description: 'Existing stable Markdown block anchor (`^id`)' }),
          instant: Type.String({ format: 'date-time', description: 'One absolute RFC 3339 instant' }),
        },
        { additionalProperties: false },
      ),
    },
    handler: async (ctx, { path, headers, body }) =>
      reply(await r.createReminder(ctx, path.id, headers['if-match'], body), { status: 201 }),
  }),
  defineAction({
    name: 'notes_delete_block_reminder',
    method: 'DELETE',
    route: '/api/v1/notes/{id}/reminders/{reminder_id}',
    tool: 'svc_api_notes_delete_block_reminder',
    surfaces: ['cli', 'mcp', 'webmcp'],
    scopes: ['data'],
    effect: 'destructive',
    requestEncoding: 'none',
    responseEncoding: 'json',
    recentConfirmation: false,
    area: AREA,
    summary:
      "Removes a block reminder and returns the revision `notes_restore_block_reminder` needs. Needs header `If-Match` with the Note's current ETag.",
    input: { path: ReminderPath, headers: IfMatchHeaders },
    handler: (ctx, { path, headers }) => r.deleteReminder(ctx, path.id, path.reminder_id, headers['if-match']),
  }),
  defineAction({
    name: 'notes_list_block_reminders',
    method: 'GET',
    route: '/api/v1/notes/{id}/reminders',
    tool: 'svc_api_notes_list_block_reminders',
    surfaces: ['cli', 'mcp', 'webmcp'],
    scopes: ['data'],
    effect: 'read',
    requestEncoding: 'none',
    responseEncoding: 'json',
    recentConfirmation: false,
    area: AREA,
    summary: 'Lists the block reminders of a Note.',
    input: { path: NoteIdPath },
    handler: (ctx, { path }) => r.listReminders(ctx, path.id),
  }),
  defineAction({
    name: 'notes_restore_block_reminder',
    method: 'POST',
    route: '/api/v1/notes/{id}/reminders/{reminder_id}/restore',
    tool: 'svc_api_notes_restore_block_reminder',
    surfaces: ['cli', 'mcp', 'webmcp'],
    scopes: ['data'],
    effect: 'destructive',
    requestEncoding: 'json',
    responseEncoding: 'json',
    recentConfirmation: false,
    area: AREA,
    summary:
      "Restores a removed block reminder only if the Note and reminder revisions still match `expected_revision`. Needs header `If-Match` with the Note's current ETag.",
    input: {
      path: ReminderPath,
      headers: IfMatchHeaders,
      body: Type.Object(
        {
          expected_revision: Type.Integer({
            minimum: 0,
            description: 'Revision returned by the matching remove action',
          }),
        },
        { additionalProperties: false },
      ),
    },
    handler: (ctx, { path, headers, body }) =>
      r.restoreReminder(ctx, path.id, path.reminder_id, headers['if-match'], body.expected_revision),
  }),
];
