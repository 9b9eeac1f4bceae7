/**
 * Section 4.7 of the spec: the inbox, block reminder notices, quiet hours and web push.
 * Behaviour: docs/notifications.md.
 */
import { Type } from '@sinclair/typebox';
import { Nullable, Obj, OneOf, specAction } from '../actions/spec.js';
import * as inbox from './inbox.js';
import { getQuietHours, setQuietHours } from './quiet-hours.js';
import * as push from './push.js';
import { reply } from '../actions/reply.js';
import { previewReminder } from '../reminders/reminders.js';

const ItemId = Obj({ id: Type.String({ minLength: 1, description: 'ID of the inbox item' }) });
const ReceiptId = Obj({ id: Type.String({ minLength: 1, description: 'ID of the inbox mutation receipt' }) });
const OperationQuery = Obj({
  operation_id: Type.Optional(Type.String({ description: 'Client-chosen operation ID; its mutation receipt can be read and undone' })),
});
const LocalTime = (description: string) =>
  Type.String({ pattern: '^([01]\\d|2[0-3]):[0-5]\\d$', description: `${description} (local 24-hour HH:MM)` });

export const actions = [
  specAction('notifications_done_block_reminder', {
    summary: 'Marks the block reminder notice of an inbox item as done.',
    input: { path: ItemId, query: OperationQuery },
    handler: (ctx, { path, query }) => inbox.doneReminder(ctx, path.id, query.operation_id),
  }),
  specAction('notifications_get_quiet_hours', {
    summary: "Reads the caller's quiet hours (local 24-hour HH:MM start and end).",
    handler: (ctx) => getQuietHours(ctx),
  }),
  specAction('notifications_inbox_delete', {
    summary: 'Deletes an inbox item; with an `operation_id` its mutation receipt can be read and undone afterwards.',
    input: { path: ItemId, query: OperationQuery },
    handler: (ctx, { path, query }) => inbox.deleteItem(ctx, path.id, query.operation_id),
  }),
  specAction('notifications_inbox_get', {
    summary: 'Reads one inbox item.',
    input: { path: ItemId },
    handler: (ctx, { path }) => inbox.getItem(ctx, path.id),
  }),
  specAction('notifications_inbox_list', {
    summary: "Lists the caller's inbox items one page at a time. Pass `next_cursor` unchanged; reduce `limit` after an overflow.",
    input: {
      query: Obj({
        cursor: Type.Optional(Type.String({ description: 'The `next_cursor` of the previous page, unchanged' })),
        limit: Type.Optional(Type.Integer({ minimum: 0, maximum: 2147483647, description: 'Page size; reduce it after an overflow' })),
      }),
    },
    handler: (ctx, { query }) => inbox.listInbox(ctx, query),
  }),
  specAction('notifications_inbox_mark_all_read', {
    summary:
      'Marks inbox items read: with `until_ms` only those created at or before that Unix millisecond time, otherwise every current item. Returns no body; do not replay automatically after an uncertain result.',
    input: {
      query: Obj({
        until_ms: Type.Optional(Type.Integer({ description: 'Marks only items created at or before this Unix millisecond time' })),
      }),
    },
    handler: (ctx, { query }) => inbox.markAllRead(ctx, query.until_ms),
  }),
  specAction('notifications_inbox_mark_read', {
    summary: 'Marks one inbox item read.',
    input: { path: ItemId },
    handler: (ctx, { path }) => inbox.markRead(ctx, path.id),
  }),
  specAction('notifications_inbox_mutation_receipt', {
    summary: "Reads the receipt of an inbox action, to reconcile its outcome under the authenticated User's receipt scope.",
    input: { path: ReceiptId },
    handler: (ctx, { path }) => inbox.getReceipt(ctx, path.id),
  }),
  specAction('notifications_preview_block_reminder', {
    summary: 'Previews a block reminder on a Note the caller owns: who it would reach (`everyone` or `only_me`) at an absolute RFC 3339 instant. Changes nothing.',
    input: {
      body: Obj({
        audience: OneOf(['everyone', 'only_me'], { description: '`everyone` who can see the Note at fire time, or `only_me`' }),
        instant: Type.String({ format: 'date-time', description: 'Absolute, bounded RFC 3339 instant' }),
        note_id: Type.String({ description: 'A Note owned by the caller' }),
      }),
    },
    handler: (ctx, { body }) => previewReminder(ctx, body),
  }),
  specAction('notifications_set_quiet_hours', {
    summary: "Sets the caller's quiet hours, start and end each in local 24-hour HH:MM.",
    input: { body: Obj({ quiet_end: LocalTime('End of quiet hours'), quiet_start: LocalTime('Start of quiet hours') }) },
    handler: (ctx, { body }) => setQuietHours(ctx, body),
  }),
  specAction('notifications_snooze_block_reminder', {
    summary: 'Snoozes the block reminder notice of an inbox item: it fires again after `minutes` (1 minute to 7 days).',
    input: {
      path: ItemId,
      query: OperationQuery,
      body: Obj({ minutes: Type.Integer({ minimum: 1, maximum: 10080, description: 'From 1 minute to 7 days' }) }),
    },
    handler: (ctx, { path, query, body }) => inbox.snoozeReminder(ctx, path.id, body.minutes, query.operation_id),
  }),
  specAction('notifications_subscribe', {
    summary: 'Registers the web push subscription of one browser or app Installation.',
    input: {
      body: Obj({
        installation_id: Type.String({ minLength: 1, description: 'Stable random ID of one browser or app Installation' }),
        // Open: the fields of the browser's PushSubscription.toJSON(), which may grow.
        subscription: Type.Object(
          {
            endpoint: Type.String({ minLength: 1, description: 'HTTPS address of the push service' }),
            expirationTime: Type.Optional(Nullable(Type.Number())),
            keys: Type.Object(
              { p256dh: Type.String({ minLength: 1 }), auth: Type.String({ minLength: 1 }) },
              { additionalProperties: true },
            ),
          },
          { additionalProperties: true, description: 'Browser push subscription fields' },
        ),
      }),
    },
    handler: async (ctx, { body }) => reply(await push.subscribe(ctx, body), { status: 201 }),
  }),
  specAction('notifications_undo_inbox_mutation', {
    summary:
      'Undoes an inbox action through its receipt, before `expires_ms` and only once, with a fresh `operation_id`. Do not replay automatically after an uncertain result.',
    input: { path: ReceiptId, body: Obj({ operation_id: Type.String({ description: 'Fresh ID for this undo attempt' }) }) },
    handler: (ctx, { path, body }) => inbox.undo(ctx, path.id, body.operation_id),
  }),
  specAction('notifications_unsubscribe', {
    summary: 'Removes the web push subscription of one Installation.',
    input: { path: Obj({ installation_id: Type.String({ minLength: 1, description: 'Stable random ID of the Installation' }) }) },
    handler: (ctx, { path }) => push.unsubscribe(ctx, path.installation_id),
  }),
  specAction('notifications_vapid_public_key', {
    summary: 'Returns the VAPID public key that browsers need to create a web push subscription.',
    handler: (ctx) => push.vapidPublicKey(ctx),
  }),
];
