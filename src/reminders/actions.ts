/**
 * Notes area of the spec (document 2), "Block reminders". A reminder sits on a stable block
 * anchor (`^id`) of a Note and fires at one absolute instant. Reminders live in the sidecar store
 * and fire from src/reminders/scheduler.ts (docs/notifications.md).
 */
import { Type } from '@sinclair/typebox';
import { Headers, Obj, OneOf, PathString, specAction } from '../actions/spec.js';
import { reply } from '../actions/reply.js';
import * as r from './reminders.js';

const NoteId = PathString('Stable ID of the Note');
const ReminderPath = Obj({ id: NoteId, reminder_id: PathString('ID of the block reminder') });
const IfMatch = Headers({ 'if-match': Type.String({ description: 'Current ETag of the Note' }) });

export const actions = [
  specAction('notes_create_block_reminder', {
    summary: "Sets a reminder on an existing block anchor of a Note, firing at one absolute RFC 3339 instant for `everyone` who can see the Note or `only_me`. Needs header `If-Match` with the Note's current ETag.",
    input: {
      path: Obj({ id: NoteId }),
      headers: IfMatch,
      body: Obj({
        audience: Type.Optional(OneOf(['everyone', 'only_me'], { description: 'Users who can see the Note at fire time, or only the setter' })),
        block_id: Type.String({ description: 'Existing stable Markdown block anchor (`^id`)' }),
        instant: Type.String({ format: 'date-time', description: 'One absolute RFC 3339 instant' }),
      }),
    },
    handler: async (ctx, { path, headers, body }) => reply(await r.createReminder(ctx, path.id, headers['if-match'], body), { status: 201 }),
  }),
  specAction('notes_delete_block_reminder', {
    summary: "Removes a block reminder and returns the revision `notes_restore_block_reminder` needs. Needs header `If-Match` with the Note's current ETag.",
    input: { path: ReminderPath, headers: IfMatch },
    handler: (ctx, { path, headers }) => r.deleteReminder(ctx, path.id, path.reminder_id, headers['if-match']),
  }),
  specAction('notes_list_block_reminders', {
    summary: 'Lists the block reminders of a Note.',
    input: { path: Obj({ id: NoteId }) },
    handler: (ctx, { path }) => r.listReminders(ctx, path.id),
  }),
  specAction('notes_restore_block_reminder', {
    summary: "Restores a removed block reminder only if the Note and reminder revisions still match `expected_revision`. Needs header `If-Match` with the Note's current ETag.",
    input: {
      path: ReminderPath,
      headers: IfMatch,
      body: Obj({ expected_revision: Type.Integer({ minimum: 0, description: 'Revision returned by the matching remove action' }) }),
    },
    handler: (ctx, { path, headers, body }) => r.restoreReminder(ctx, path.id, path.reminder_id, headers['if-match'], body.expected_revision),
  }),
];
