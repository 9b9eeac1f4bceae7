/**
 * The notification inbox: per-user items in the sidecar store, created when a
 * block reminder fires. Mutations made with an `operation_id` leave a receipt
 * whose inverse (the item as it was) can be consumed once by an undo.
 */
import { callerOf, type ActionContext } from '../actions/context.js';
import { AppError, errors } from '../core/errors.js';
import type { InboxItemRecord, InboxReceiptRecord } from '../store/schema.js';
import {
  findInboxItem,
  findReceipt,
  inboxOf,
  markInboxItemRead,
  markInboxRead,
  mutateInboxItem,
  undoInboxMutation,
  type InboxChange,
} from '../store/notifications.js';

/** How long a mutation receipt can be undone. */
export const RECEIPT_TTL_MS = 15 * 60_000;
/** Receipts are forgotten this long after they expire. */
const RECEIPT_KEEP_MS = 24 * 3600_000;
const PAGE_DEFAULT = 50;
const PAGE_MAX = 200;

const nowOf = (ctx: ActionContext) => ctx.services.reminders?.now() ?? Date.now();

export function itemRecord(i: InboxItemRecord) {
  return {
    id: i.id,
    created_ms: i.created_ms,
    read: i.read,
    kind: i.kind,
    note_id: i.note_id,
    block_id: i.block_id,
    title: i.title,
    excerpt: i.excerpt,
    reminder_id: i.reminder_id,
    state: i.state,
    snoozed_until_ms: i.snoozed_until_ms,
  };
}

export function receiptRecord(r: InboxReceiptRecord) {
  return { operation_id: r.operation_id, kind: r.kind, result: r.result, expires_ms: r.expires_ms, undone_by: r.undone_by };
}

const byNewest = (a: InboxItemRecord, b: InboxItemRecord) =>
  b.created_ms - a.created_ms || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0);

function encodeCursor(i: InboxItemRecord): string {
  return Buffer.from(JSON.stringify([i.created_ms, i.id])).toString('base64url');
}

function decodeCursor(cursor: string): [number, string] {
  try {
    const v = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown;
    if (Array.isArray(v) && typeof v[0] === 'number' && typeof v[1] === 'string') return [v[0], v[1]];
  } catch {
    /* fall through */
  }
  throw errors.badRequest('cursor is not a next_cursor this server returned', { field: 'query.cursor' });
}

export function listInbox(ctx: ActionContext, q: { cursor?: string; limit?: number }) {
  const userId = callerOf(ctx).userId;
  const limit = q.limit === undefined || q.limit === 0 ? PAGE_DEFAULT : Math.min(q.limit, PAGE_MAX);
  let items = inboxOf(ctx.services.store, userId).sort(byNewest);
  if (q.cursor !== undefined) {
    const [ms, id] = decodeCursor(q.cursor);
    items = items.filter((i) => i.created_ms < ms || (i.created_ms === ms && i.id < id));
  }
  const page = items.slice(0, limit);
  return {
    items: page.map(itemRecord),
    next_cursor: items.length > limit ? encodeCursor(page[page.length - 1]!) : null,
  };
}

const noSuchItem = (id: string) => errors.notFound(`No such inbox item: ${id}`, { id });

export function getItem(ctx: ActionContext, id: string) {
  const i = findInboxItem(ctx.services.store, callerOf(ctx).userId, id);
  if (!i) throw noSuchItem(id);
  return itemRecord(i);
}

export async function markRead(ctx: ActionContext, id: string) {
  const i = await markInboxItemRead(ctx.services.store, callerOf(ctx).userId, id);
  if (!i) throw noSuchItem(id);
  return itemRecord(i);
}

export async function markAllRead(ctx: ActionContext, untilMs: number | undefined): Promise<undefined> {
  await markInboxRead(ctx.services.store, callerOf(ctx).userId, untilMs);
  return undefined;
}

/**
 * Runs one inbox mutation on item `id`, leaving a receipt when `operationId`
 * is given. Replaying the same `operation_id` for the same action and item
 * returns the first result without acting again; reusing it otherwise is 409.
 */
async function mutate(
  ctx: ActionContext,
  id: string,
  kind: string,
  operationId: string | undefined,
  change: InboxChange,
): Promise<Record<string, unknown>> {
  const userId = callerOf(ctx).userId;
  const out = await mutateInboxItem(
    ctx.services.store,
    { userId, itemId: id, kind, operationId, now: nowOf(ctx), receiptTtlMs: RECEIPT_TTL_MS, receiptKeepMs: RECEIPT_KEEP_MS },
    change,
  );
  if (out.outcome === 'missing') throw noSuchItem(id);
  if (out.outcome === 'reused') {
    throw errors.conflict('operation_id was already used for another action', {
      reason: 'operation_id_reused',
      operation_id: operationId!,
    });
  }
  ctx.services.reminders?.rearm();
  return out.result;
}

export function deleteItem(ctx: ActionContext, id: string, operationId?: string) {
  return mutate(ctx, id, 'inbox_delete', operationId, () => ({ result: { id, deleted: true }, remove: true }));
}

export function doneReminder(ctx: ActionContext, id: string, operationId?: string) {
  return mutate(ctx, id, 'reminder_done', operationId, (item) => {
    item.state = 'done';
    item.read = true;
    item.snoozed_until_ms = null;
    return { result: itemRecord(item) };
  });
}

export function snoozeReminder(ctx: ActionContext, id: string, minutes: number, operationId?: string) {
  const now = nowOf(ctx);
  return mutate(ctx, id, 'reminder_snooze', operationId, (item) => {
    item.state = 'snoozed';
    item.read = true;
    item.snoozed_until_ms = now + minutes * 60_000;
    return { result: itemRecord(item) };
  });
}

export function getReceipt(ctx: ActionContext, operationId: string) {
  const userId = callerOf(ctx).userId;
  const r = findReceipt(ctx.services.store, userId, operationId);
  if (!r) throw errors.notFound(`No such inbox mutation receipt: ${operationId}`, { operation_id: operationId });
  return receiptRecord(r);
}

/**
 * Undoes the mutation of receipt `operationId` with the fresh `undoId`: the
 * inverse is read and consumed in one store transaction. A receipt already
 * undone answers 409 `already_undone` with `undone_by` in the details; an
 * expired one answers 410 `receipt_expired`.
 */
export async function undo(ctx: ActionContext, operationId: string, undoId: string) {
  const userId = callerOf(ctx).userId;
  const now = nowOf(ctx);
  const undone = await undoInboxMutation(
    ctx.services.store,
    { userId, operationId, undoId, now, receiptTtlMs: RECEIPT_TTL_MS },
    (r, undoIdTaken) => {
      if (!r) throw errors.notFound(`No such inbox mutation receipt: ${operationId}`, { operation_id: operationId });
      if (r.undone_by !== null) {
        throw errors.conflict('This mutation was already undone', {
          reason: 'already_undone',
          operation_id: operationId,
          undone_by: r.undone_by,
        });
      }
      if (r.inverse === null) {
        throw errors.conflict('This operation cannot be undone', { reason: 'not_undoable', operation_id: operationId });
      }
      if (now > r.expires_ms) {
        throw new AppError('conflict', 'The undo deadline of this mutation has passed', {
          status: 410,
          details: { reason: 'receipt_expired', operation_id: operationId, expires_ms: String(r.expires_ms) },
        });
      }
      if (undoIdTaken) {
        throw errors.conflict('operation_id was already used; send a fresh one', {
          reason: 'operation_id_reused',
          operation_id: undoId,
        });
      }
    },
    (item) => ({ undid: operationId, item: itemRecord(item) }),
  );
  const out = receiptRecord(undone);
  ctx.services.reminders?.rearm();
  return out;
}
