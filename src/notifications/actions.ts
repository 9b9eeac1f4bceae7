/**
 * Section 4.7 of the spec: the inbox, block reminder notices, quiet hours and web push (15 actions,
 * scopes data and account). Behaviour: docs/notifications.md.
 */
import { Type } from '@sinclair/typebox';
import { defineAction } from '../actions/types.js';
import * as inbox from './inbox.js';
import { getQuietHours, setQuietHours } from './quiet-hours.js';
import * as push from './push.js';
import { reply } from '../actions/reply.js';
import { previewReminder } from '../reminders/reminders.js';

const AREA = '4.7 Notifications';

const ItemId = Type.Object(
  { id: Type.String({ minLength: 1, description: 'ID of the inbox item' }) },
  { additionalProperties: false },
);
const ReceiptId = Type.Object(
  { id: Type.String({ minLength: 1, description: 'ID of the inbox mutation receipt' }) },
  { additionalProperties: false },
);
const OperationQuery = Type.Object(
  {
    operation_id: Type.Optional(
      Type.String({ description: 'Client-chosen operation ID; its mutation receipt can be read and undone' }),
    ),
  },
  { additionalProperties: false },
);
const LocalTime = (description: string) =>
  Type.String({ pattern: '^([01]\\d|2[0-3]):[0-5]\\d$', description: `${description} (local 24-hour HH:MM)` });

export const actions = [
  defineAction({
    name: 'notifications_done_block_reminder',
    method: 'POST',
    route: '/api/v1/notifications/inbox/{id}/reminder/done',
    tool: 'svc_api_notifications_done_block_reminder',
    surfaces: ['cli', 'mcp', 'webmcp'],
    scopes: ['data', 'account'],
    effect: 'destructive',
    requestEncoding: 'none',
    responseEncoding: 'json',
    recentConfirmation: false,
    area: AREA,
    summary: 'Marks the block reminder notice of an inbox item as done.',
    input: { path: ItemId, query: OperationQuery },
    handler: (ctx, { path, query }) => inbox.doneReminder(ctx, path.id, query.operation_id),
  }),
  defineAction({
    name: 'notifications_get_quiet_hours',
    method: 'GET',
    route: '/api/v1/notifications/settings/quiet-hours',
    tool: 'svc_api_notifications_get_quiet_hours',
    surfaces: ['cli', 'mcp', 'webmcp'],
    scopes: ['data', 'account'],
    effect: 'read',
    requestEncoding: 'none',
    responseEncoding: 'json',
    recentConfirmation: false,
    area: AREA,
    summary: "Reads the caller's quiet hours (local 24-hour HH:MM start and end).",
    input: {},
    handler: (ctx) => getQuietHours(ctx),
  }),
  defineAction({
    name: 'notifications_inbox_delete',
    method: 'DELETE',
    route: '/api/v1/notifications/inbox/{id}',
    tool: 'svc_api_notifications_inbox_delete',
    surfaces: ['cli', 'mcp', 'webmcp'],
    scopes: ['data', 'account'],
    effect: 'destructive',
    requestEncoding: 'none',
    responseEncoding: 'json',
    recentConfirmation: false,
    area: AREA,
    summary:
      'Deletes an inbox item; with an `operation_id` its mutation receipt can be read and undone afterwards.',
    input: { path: ItemId, query: OperationQuery },
    handler: (ctx, { path, query }) => inbox.deleteItem(ctx, path.id, query.operation_id),
  }),
  defineAction({
    name: 'notifications_inbox_get',
    method: 'GET',
    route: '/api/v1/notifications/inbox/{id}',
    tool: 'svc_api_notifications_inbox_get',
    surfaces: ['cli', 'mcp', 'webmcp'],
    scopes: ['data', 'account'],
    effect: 'read',
    requestEncoding: 'none',
    responseEncoding: 'json',
    recentConfirmation: false,
    area: AREA,
    summary: 'Reads one inbox item.',
    input: { path: ItemId },
    handler: (ctx, { path }) => inbox.getItem(ctx, path.id),
  }),
  defineAction({
    name: 'notifications_inbox_list',
    method: 'GET',
    route: '/api/v1/notifications/inbox',
    tool: 'svc_api_notifications_inbox_list',
    surfaces: ['cli', 'mcp', 'webmcp'],
    scopes: ['data', 'account'],
    effect: 'read',
    requestEncoding: 'none',
    responseEncoding: 'json',
    recentConfirmation: false,
    area: AREA,
    summary:
      "Lists the caller's inbox items one page at a time. Pass `next_cursor` unchanged; reduce `limit` after an overflow.",
    input: {
      query: Type.Object(
        {
          cursor: Type.Optional(Type.String({ description: 'The `next_cursor` of the previous page, unchanged' })),
          limit: Type.Optional(
            Type.Integer({ minimum: 0, maximum: 2147483647, description: 'Page size; reduce it after an overflow' }),
          ),
        },
        { additionalProperties: false },
      ),
    },
    handler: (ctx, { query }) => inbox.listInbox(ctx, query),
  }),
  defineAction({
    name: 'notifications_inbox_mark_all_read',
    method: 'PUT',
    route: '/api/v1/notifications/inbox/read',
    tool: 'svc_api_notifications_inbox_mark_all_read',
    surfaces: ['cli', 'mcp', 'webmcp'],
    scopes: ['data', 'account'],
    effect: 'destructive',
    requestEncoding: 'none',
    responseEncoding: 'json',
    recentConfirmation: false,
    area: AREA,
    summary:
      'Marks inbox items read: with `until_ms` only those created at or before that Unix millisecond time, otherwise every current item. Returns no body; do not replay automatically after an uncertain result.',
    input: {
      query: Type.Object(
        {
          until_ms: Type.Optional(
            Type.Integer({ description: 'Marks only items created at or before this Unix millisecond time' }),
          ),
        },
        { additionalProperties: false },
      ),
    },
    handler: (ctx, { query }) => inbox.markAllRead(ctx, query.until_ms),
  }),
  defineAction({
    name: 'notifications_inbox_mark_read',
    method: 'PUT',
    route: '/api/v1/notifications/inbox/{id}/read',
    tool: 'svc_api_notifications_inbox_mark_read',
    surfaces: ['cli', 'mcp', 'webmcp'],
    scopes: ['data', 'account'],
    effect: 'destructive',
    requestEncoding: 'none',
    responseEncoding: 'json',
    recentConfirmation: false,
    area: AREA,
    summary: 'Marks one inbox item read.',
    input: { path: ItemId },
    handler: (ctx, { path }) => inbox.markRead(ctx, path.id),
  }),
  defineAction({
    name: 'notifications_inbox_mutation_receipt',
    method: 'GET',
    route: '/api/v1/notifications/inbox/mutations/{id}',
    tool: 'svc_api_notifications_inbox_mutation_receipt',
    surfaces: ['cli', 'mcp', 'webmcp'],
    scopes: ['data', 'account'],
    effect: 'read',
    requestEncoding: 'none',
    responseEncoding: 'json',
    recentConfirmation: false,
    area: AREA,
    summary:
      "Reads the receipt of an inbox action, to reconcile its outcome under the authenticated User's receipt scope.",
    input: { path: ReceiptId },
    handler: (ctx, { path }) => inbox.getReceipt(ctx, path.id),
  }),
  defineAction({
    name: 'notifications_preview_block_reminder',
    method: 'POST',
    route: '/api/v1/notifications/reminders/preview',
    tool: 'svc_api_notifications_preview_block_reminder',
    surfaces: ['cli', 'mcp', 'webmcp'],
    scopes: ['data', 'account'],
    effect: 'read',
    requestEncoding: 'json',
    responseEncoding: 'json',
    recentConfirmation: false,
    area: AREA,
    summary:
      'Previews a block reminder on a Note the caller owns: who it would reach (`everyone` or `only_me`) at an absolute RFC 3339 instant. Changes nothing.',
    input: {
      body: Type.Object(
        {
          audience: Type.Union([Type.Literal('everyone'), Type.Literal('only_me')], {
            description: '`everyone` who can see the Note at fire time, or `only_me`',
          }),
          instant: Type.String({ format: 'date-time', description: 'Absolute, bounded RFC 3339 instant' }),
          note_id: Type.String({ description: 'A Note owned by the caller' }),
        },
        { additionalProperties: false },
      ),
    },
    handler: (ctx, { body }) => previewReminder(ctx, body),
  }),
  defineAction({
    name: 'notifications_set_quiet_hours',
    method: 'PUT',
    route: '/api/v1/notifications/settings/quiet-hours',
    tool: 'svc_api_notifications_set_quiet_hours',
    surfaces: ['cli', 'mcp', 'webmcp'],
    scopes: ['data', 'account'],
    effect: 'destructive',
    requestEncoding: 'json',
    responseEncoding: 'json',
    recentConfirmation: false,
    area: AREA,
    summary: "Sets the caller's quiet hours, start and end each in local 24-hour HH:MM.",
    input: {
      body: Type.Object(
        { quiet_end: LocalTime('End of quiet hours'), quiet_start: LocalTime('Start of quiet hours') },
        { additionalProperties: false },
      ),
    },
    handler: (ctx, { body }) => setQuietHours(ctx, body),
  }),
  defineAction({
    name: 'notifications_snooze_block_reminder',
    method: 'POST',
    route: '/api/v1/notifications/inbox/{id}/reminder/snooze',
    tool: 'svc_api_notifications_snooze_block_reminder',
    surfaces: ['cli', 'mcp', 'webmcp'],
    scopes: ['data', 'account'],
    effect: 'destructive',
    requestEncoding: 'json',
    responseEncoding: 'json',
    recentConfirmation: false,
    area: AREA,
    summary: 'Snoozes the block reminder notice of an inbox item: it fires again after `minutes` (1 minute to 7 days).',
    input: {
      path: ItemId,
      query: OperationQuery,
      body: Type.Object(
        {
          minutes: Type.Integer({ minimum: 1, maximum: 10080, description: 'From 1 minute to 7 days' }),
        },
        { additionalProperties: false },
      ),
    },
    handler: (ctx, { path, query, body }) => inbox.snoozeReminder(ctx, path.id, body.minutes, query.operation_id),
  }),
  defineAction({
    name: 'notifications_subscribe',
    method: 'POST',
    route: '/api/v1/notifications/subscriptions',
    tool: 'svc_api_notifications_subscribe',
    surfaces: ['cli', 'mcp', 'webmcp'],
    scopes: ['data', 'account'],
    effect: 'destructive',
    requestEncoding: 'json',
    responseEncoding: 'json',
    recentConfirmation: false,
    area: AREA,
    summary: 'Registers the web push subscription of one browser or app Installation.',
    input: {
      body: Type.Object(
        {
          installation_id: Type.String({ description: 'Stable random ID of one browser or app Installation' }),
          subscription: Type.Object({}, { additionalProperties: true, description: 'Browser push subscription fields' }),
        },
        { additionalProperties: false },
      ),
    },
    handler: async (ctx, { body }) => reply(await push.subscribe(ctx, body), { status: 201 }),
  }),
  defineAction({
    name: 'notifications_undo_inbox_mutation',
    method: 'POST',
    route: '/api/v1/notifications/inbox/mutations/{id}/undo',
    tool: 'svc_api_notifications_undo_inbox_mutation',
    surfaces: ['cli', 'mcp', 'webmcp'],
    scopes: ['data', 'account'],
    effect: 'destructive',
    requestEncoding: 'json',
    responseEncoding: 'json',
    recentConfirmation: false,
    area: AREA,
    summary:
      'Undoes an inbox action through its receipt, before `expires_ms` and only once, with a fresh `operation_id`. Do not replay automatically after an uncertain result.',
    input: {
      path: ReceiptId,
      body: Type.Object(
        { operation_id: Type.String({ description: 'Fresh ID for this undo attempt' }) },
        { additionalProperties: false },
      ),
    },
    handler: (ctx, { path, body }) => inbox.undo(ctx, path.id, body.operation_id),
  }),
  defineAction({
    name: 'notifications_unsubscribe',
    method: 'DELETE',
    route: '/api/v1/notifications/subscriptions/{installation_id}',
    tool: 'svc_api_notifications_unsubscribe',
    surfaces: ['cli', 'mcp', 'webmcp'],
    scopes: ['data', 'account'],
    effect: 'destructive',
    requestEncoding: 'none',
    responseEncoding: 'json',
    recentConfirmation: false,
    area: AREA,
    summary: 'Removes the web push subscription of one Installation.',
    input: {
      path: Type.Object(
        { installation_id: Type.String({ minLength: 1, description: 'Stable random ID of the Installation' }) },
        { additionalProperties: false },
      ),
    },
    handler: (ctx, { path }) => push.unsubscribe(ctx, path.installation_id),
  }),
  defineAction({
    name: 'notifications_vapid_public_key',
    method: 'GET',
    route: '/api/v1/notifications/vapid/public-key',
    tool: 'svc_api_notifications_vapid_public_key',
    surfaces: ['cli', 'mcp', 'webmcp'],
    scopes: ['data', 'account'],
    effect: 'read',
    requestEncoding: 'none',
    responseEncoding: 'json',
    recentConfirmation: false,
    area: AREA,
    summary: 'Returns the VAPID public key that browsers need to create a web push subscription.',
    input: {},
    handler: (ctx) => push.vapidPublicKey(ctx),
  }),
];
