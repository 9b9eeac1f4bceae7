/**
 * Named operations on the block-reminder and notification tables: reminders,
 * inbox items and their mutation receipts, quiet hours, web push
 * subscriptions, pushes held during quiet hours, and the Instance's VAPID
 * keys. Files written before these tables existed load with them empty.
 */
import {
  notificationTables,
  type HeldPushRecord,
  type InboxItemRecord,
  type InboxReceiptRecord,
  type PushSubscriptionRecord,
  type QuietHoursRecord,
  type ReminderRecord,
  type UserRecord,
} from './schema.js';
import type { SidecarStore } from './sidecar.js';

const tables = (store: SidecarStore) => notificationTables(store.snapshot());

// Reminders -------------------------------------------------------------------------------------

export function insertReminder(store: SidecarStore, reminder: ReminderRecord): Promise<void> {
  return store.transact((data) => {
    notificationTables(data).reminders.push(reminder);
  });
}

/** The reminders `userId` set on note `noteId`, removed ones included. */
export const remindersOfNote = (store: SidecarStore, userId: string, noteId: string): ReminderRecord[] =>
  tables(store).reminders.filter((r) => r.user_id === userId && r.note_id === noteId);

/** Changes reminder `id` of `userId` on `noteId` in one transaction (`change` may throw); null if there is none. */
export function updateReminder(
  store: SidecarStore,
  key: { id: string; userId: string; noteId: string },
  change: (r: ReminderRecord) => void,
): Promise<ReminderRecord | null> {
  return store.transact((data) => {
    const r = notificationTables(data).reminders.find((x) => x.id === key.id && x.user_id === key.userId && x.note_id === key.noteId);
    if (!r) return null;
    change(r);
    return { ...r };
  });
}

/** The earliest instant something fires: a pending reminder or a snoozed inbox item; null if nothing waits. */
export function nextFiringAt(store: SidecarStore): number | null {
  const t = tables(store);
  let next: number | null = null;
  for (const r of t.reminders) {
    if (r.fired_ms === null && r.deleted_ms === null && (next === null || r.instant_ms < next)) next = r.instant_ms;
  }
  for (const i of t.inbox) {
    if (i.state === 'snoozed' && i.snoozed_until_ms !== null && (next === null || i.snoozed_until_ms < next)) next = i.snoozed_until_ms;
  }
  return next;
}

export interface Firing {
  /** Who a reminder or snoozed item reaches, given the users as the store has them now. */
  recipients: (userId: string, users: readonly UserRecord[]) => string[];
  /** The inbox item a fired reminder makes for one recipient. */
  itemFor: (r: ReminderRecord, userId: string) => InboxItemRecord;
}

/**
 * Fires everything due at `now` in one transaction: due reminders are marked
 * fired and become inbox items, snoozed items whose time came are pending
 * again. A crash can therefore never fire one twice. Returns the items that
 * reached someone, each with `again` true for a re-surfaced snoozed item.
 */
export function fireDue(store: SidecarStore, now: number, f: Firing): Promise<{ item: InboxItemRecord; again: boolean }[]> {
  return store.transact((data) => {
    const t = notificationTables(data);
    const fired: { item: InboxItemRecord; again: boolean }[] = [];
    for (const r of t.reminders) {
      if (r.fired_ms !== null || r.deleted_ms !== null || r.instant_ms > now) continue;
      r.fired_ms = now;
      for (const userId of f.recipients(r.user_id, data.users)) {
        const item = f.itemFor(r, userId);
        t.inbox.push(item);
        fired.push({ item: { ...item }, again: false });
      }
    }
    for (const i of t.inbox) {
      if (i.state !== 'snoozed' || i.snoozed_until_ms === null || i.snoozed_until_ms > now) continue;
      i.state = 'pending';
      i.read = false;
      i.snoozed_until_ms = null;
      if (f.recipients(i.user_id, data.users).length > 0) fired.push({ item: { ...i }, again: true });
    }
    return fired;
  });
}

// Inbox -----------------------------------------------------------------------------------------

export const inboxOf = (store: SidecarStore, userId: string): InboxItemRecord[] => tables(store).inbox.filter((i) => i.user_id === userId);

export const findInboxItem = (store: SidecarStore, userId: string, id: string): InboxItemRecord | undefined =>
  tables(store).inbox.find((i) => i.id === id && i.user_id === userId);

/** Marks item `id` of `userId` read; null if there is none. */
export function markInboxItemRead(store: SidecarStore, userId: string, id: string): Promise<InboxItemRecord | null> {
  return store.transact((data) => {
    const i = notificationTables(data).inbox.find((x) => x.id === id && x.user_id === userId);
    if (!i) return null;
    i.read = true;
    return { ...i };
  });
}

/** Marks every item of `userId` created at or before `untilMs` (all when undefined) read. */
export function markInboxRead(store: SidecarStore, userId: string, untilMs: number | undefined): Promise<void> {
  return store.transact((data) => {
    for (const i of notificationTables(data).inbox) {
      if (i.user_id === userId && (untilMs === undefined || i.created_ms <= untilMs)) i.read = true;
    }
  });
}

export const findReceipt = (store: SidecarStore, userId: string, operationId: string): InboxReceiptRecord | undefined =>
  tables(store).inbox_receipts.find((r) => r.operation_id === operationId && r.user_id === userId);

/** What an inbox mutation does to its item: change the draft, or remove the item; and what it answers. */
export type InboxChange = (item: InboxItemRecord) => { result: Record<string, unknown>; remove?: boolean };

export interface InboxMutation {
  userId: string;
  itemId: string;
  /** The action, recorded on the receipt. */
  kind: string;
  /** With an operation id the mutation leaves a receipt holding the item as it was, for one undo. */
  operationId?: string;
  now: number;
  receiptTtlMs: number;
  /** Receipts are forgotten once expired this long. */
  receiptKeepMs: number;
}

/**
 * One inbox mutation in one transaction. The answer says what happened:
 * `done` with the result; `replayed` with the first result when the same
 * operation id was used for the same action on the same item; `reused` when
 * it was used for something else; `missing` when there is no such item.
 */
export function mutateInboxItem(
  store: SidecarStore,
  m: InboxMutation,
  change: InboxChange,
): Promise<
  { outcome: 'done' | 'replayed'; result: Record<string, unknown> } | { outcome: 'reused' } | { outcome: 'missing' }
> {
  return store.transact((data) => {
    const t = notificationTables(data);
    t.inbox_receipts = t.inbox_receipts.filter((r) => r.expires_ms + m.receiptKeepMs > m.now);
    if (m.operationId !== undefined) {
      const prior = t.inbox_receipts.find((r) => r.user_id === m.userId && r.operation_id === m.operationId);
      if (prior) {
        return prior.kind === m.kind && prior.result.id === m.itemId
          ? { outcome: 'replayed' as const, result: prior.result }
          : { outcome: 'reused' as const };
      }
    }
    const item = t.inbox.find((x) => x.id === m.itemId && x.user_id === m.userId);
    if (!item) return { outcome: 'missing' as const };
    const before = { ...item };
    const { result, remove } = change(item);
    if (remove) t.inbox = t.inbox.filter((x) => x !== item);
    if (m.operationId !== undefined) {
      t.inbox_receipts.push({
        operation_id: m.operationId,
        user_id: m.userId,
        kind: m.kind,
        result,
        created_ms: m.now,
        expires_ms: m.now + m.receiptTtlMs,
        undone_by: null,
        inverse: before,
      });
    }
    return { outcome: 'done' as const, result };
  });
}

/**
 * Undoes the mutation of receipt `operationId` with the fresh `undoId` in one
 * transaction: `check` sees the receipt (undefined if unknown) and whether
 * `undoId` is taken, and throws to refuse; then the item is put back as it
 * was, the receipt marked undone, and the undo's own receipt (answering
 * `result(item)`) kept. Returns the undone receipt.
 */
export function undoInboxMutation(
  store: SidecarStore,
  u: { userId: string; operationId: string; undoId: string; now: number; receiptTtlMs: number },
  check: (receipt: InboxReceiptRecord | undefined, undoIdTaken: boolean) => void,
  result: (item: InboxItemRecord) => Record<string, unknown>,
): Promise<InboxReceiptRecord> {
  return store.transact((data) => {
    const t = notificationTables(data);
    const r = t.inbox_receipts.find((x) => x.operation_id === u.operationId && x.user_id === u.userId);
    check(r, t.inbox_receipts.some((x) => x.user_id === u.userId && x.operation_id === u.undoId));
    const inverse = r!.inverse!;
    const idx = t.inbox.findIndex((x) => x.id === inverse.id && x.user_id === u.userId);
    if (idx >= 0) t.inbox[idx] = { ...inverse };
    else t.inbox.push({ ...inverse });
    r!.undone_by = u.undoId;
    t.inbox_receipts.push({
      operation_id: u.undoId,
      user_id: u.userId,
      kind: 'undo',
      result: result(inverse),
      created_ms: u.now,
      expires_ms: u.now + u.receiptTtlMs,
      undone_by: null,
      inverse: null,
    });
    return { ...r! };
  });
}

// Quiet hours and web push ----------------------------------------------------------------------

export const quietHoursOf = (store: SidecarStore, userId: string): QuietHoursRecord | undefined =>
  tables(store).quiet_hours.find((q) => q.user_id === userId);

/** Sets a user's quiet hours, and moves the pushes held for them to `heldDueMs`, in one transaction. */
export function setQuietHours(store: SidecarStore, q: QuietHoursRecord, heldDueMs: number): Promise<void> {
  return store.transact((data) => {
    const t = notificationTables(data);
    t.quiet_hours = [...t.quiet_hours.filter((x) => x.user_id !== q.user_id), q];
    for (const h of t.held_pushes) if (h.user_id === q.user_id) h.due_ms = heldDueMs;
  });
}

export const pushSubscriptionsOf = (store: SidecarStore, userId: string): PushSubscriptionRecord[] =>
  tables(store).push_subscriptions.filter((s) => s.user_id === userId);

/** Keeps `sub` as its Installation's one subscription; an endpoint belongs to whoever registered it last. */
export function savePushSubscription(store: SidecarStore, sub: PushSubscriptionRecord): Promise<void> {
  return store.transact((data) => {
    const t = notificationTables(data);
    t.push_subscriptions = [
      ...t.push_subscriptions.filter((s) => !(s.user_id === sub.user_id && s.installation_id === sub.installation_id) && s.endpoint !== sub.endpoint),
      sub,
    ];
  });
}

/** Removes the subscriptions of `userId`'s Installation `installationId` (only the one with `endpoint`, when given); returns how many. */
export function deletePushSubscriptions(store: SidecarStore, userId: string, installationId: string, endpoint?: string): Promise<number> {
  return store.transact((data) => {
    const t = notificationTables(data);
    const before = t.push_subscriptions.length;
    t.push_subscriptions = t.push_subscriptions.filter(
      (s) => !(s.user_id === userId && s.installation_id === installationId && (endpoint === undefined || s.endpoint === endpoint)),
    );
    return before - t.push_subscriptions.length;
  });
}

export function holdPushes(store: SidecarStore, held: HeldPushRecord[]): Promise<void> {
  return store.transact((data) => {
    notificationTables(data).held_pushes.push(...held);
  });
}

/** When the first held push falls due; null if none is held. */
export function nextHeldPushAt(store: SidecarStore): number | null {
  let next: number | null = null;
  for (const h of tables(store).held_pushes) if (next === null || h.due_ms < next) next = h.due_ms;
  return next;
}

/** Removes the held pushes due at `now` and returns their inbox items not yet done (each is released once). */
export function releaseHeldPushes(store: SidecarStore, now: number): Promise<InboxItemRecord[]> {
  return store.transact((data) => {
    const t = notificationTables(data);
    const due = t.held_pushes.filter((h) => h.due_ms <= now);
    t.held_pushes = t.held_pushes.filter((h) => h.due_ms > now);
    return due
      .map((h) => t.inbox.find((i) => i.id === h.item_id && i.user_id === h.user_id))
      .filter((i): i is InboxItemRecord => i !== undefined && i.state !== 'done');
  });
}

type VapidKeys = { public_key: string; private_key: string; created_ms: number };

/** The Instance's VAPID keys, made by `make` the first time (in a transaction, so two callers agree). */
export async function vapidKeys(store: SidecarStore, make: () => VapidKeys): Promise<VapidKeys> {
  const have = store.snapshot().vapid;
  if (have) return have;
  return store.transact((data) => (data.vapid ??= make()));
}
