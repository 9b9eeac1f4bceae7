/**
 * CalDAV accounts and calendar subscriptions in the sidecar store: the one module that touches
 * `calendar_accounts` and `calendar_subscriptions`. Records come back without their sealed secret
 * through accountView; the secret leaves this module only unsealed for a sync (accountSecret).
 */
import { errors } from '../core/errors.js';
import type { SidecarStore } from '../store/sidecar.js';
import type { CalendarAccountRecord, CalendarSubscriptionRecord, SidecarData } from '../store/schema.js';

const accountsOf = (d: SidecarData): CalendarAccountRecord[] => (d.calendar_accounts ??= []);
const subsOf = (d: SidecarData): CalendarSubscriptionRecord[] => (d.calendar_subscriptions ??= []);

const accountNotFound = (id: string) => errors.notFound(`No CalDAV account ${id}`, { field: 'path.id', id });
const subNotFound = (id: string) => errors.notFound(`No calendar subscription ${id}`, { field: 'path.id', id });

/** What the API shows of an account: everything but the secret. */
export function accountView(a: CalendarAccountRecord) {
  const { secret: _secret, user_id: _user, ...rest } = a;
  return { ...rest, calendars: a.calendars.map((c) => ({ ...c })) };
}

export function listAccounts(store: SidecarStore, userId: string): CalendarAccountRecord[] {
  return (store.snapshot().calendar_accounts ?? []).filter((a) => a.user_id === userId);
}

/** Every enabled account of every user (the schedule). */
export function enabledAccounts(store: SidecarStore): CalendarAccountRecord[] {
  return (store.snapshot().calendar_accounts ?? []).filter((a) => a.enabled);
}

export function getAccount(store: SidecarStore, userId: string, id: string): CalendarAccountRecord {
  const a = (store.snapshot().calendar_accounts ?? []).find((x) => x.id === id && x.user_id === userId);
  if (!a) throw accountNotFound(id);
  return a;
}

export function addAccount(store: SidecarStore, rec: CalendarAccountRecord): Promise<CalendarAccountRecord> {
  return store.transact((d) => {
    accountsOf(d).push(rec);
    return rec;
  });
}

export function patchAccount(store: SidecarStore, userId: string, id: string, patch: Partial<CalendarAccountRecord>): Promise<CalendarAccountRecord> {
  return store.transact((d) => {
    const a = accountsOf(d).find((x) => x.id === id && x.user_id === userId);
    if (!a) throw accountNotFound(id);
    return Object.assign(a, patch, { updated_ms: Date.now() });
  });
}

export function removeAccountRecord(store: SidecarStore, userId: string, id: string): Promise<CalendarAccountRecord> {
  return store.transact((d) => {
    const a = accountsOf(d).find((x) => x.id === id && x.user_id === userId);
    if (!a) throw accountNotFound(id);
    d.calendar_accounts = accountsOf(d).filter((x) => x !== a);
    return a;
  });
}

// ---------------------------------------------------------------- subscriptions

export function subscriptionView(s: CalendarSubscriptionRecord) {
  const { user_id: _user, etag: _etag, last_modified: _lm, ...rest } = s;
  return rest;
}

export function listSubscriptions(store: SidecarStore, userId: string): CalendarSubscriptionRecord[] {
  return (store.snapshot().calendar_subscriptions ?? []).filter((s) => s.user_id === userId);
}

export function allSubscriptions(store: SidecarStore): CalendarSubscriptionRecord[] {
  return [...(store.snapshot().calendar_subscriptions ?? [])];
}

export function getSubscription(store: SidecarStore, userId: string, id: string): CalendarSubscriptionRecord {
  const s = (store.snapshot().calendar_subscriptions ?? []).find((x) => x.id === id && x.user_id === userId);
  if (!s) throw subNotFound(id);
  return s;
}

export function addSubscription(store: SidecarStore, rec: CalendarSubscriptionRecord): Promise<CalendarSubscriptionRecord> {
  return store.transact((d) => {
    subsOf(d).push(rec);
    return rec;
  });
}

export function patchSubscription(store: SidecarStore, userId: string, id: string, patch: Partial<CalendarSubscriptionRecord>): Promise<CalendarSubscriptionRecord> {
  return store.transact((d) => {
    const s = subsOf(d).find((x) => x.id === id && x.user_id === userId);
    if (!s) throw subNotFound(id);
    return Object.assign(s, patch, { updated_ms: Date.now() });
  });
}

export function removeSubscriptionRecord(store: SidecarStore, userId: string, id: string): Promise<CalendarSubscriptionRecord> {
  return store.transact((d) => {
    const s = subsOf(d).find((x) => x.id === id && x.user_id === userId);
    if (!s) throw subNotFound(id);
    d.calendar_subscriptions = subsOf(d).filter((x) => x !== s);
    return s;
  });
}
