/** Connected Accounts in the sidecar store: the one module that touches `integration_accounts` and `integration_migration`. */
import { errors } from '../core/errors.js';
import { newId } from '../core/ids.js';
import type { SidecarStore } from '../store/sidecar.js';
import type { CalendarAccountRecord, IntegrationAccountRecord, SidecarData } from '../store/schema.js';

const of = (d: SidecarData): IntegrationAccountRecord[] => (d.integration_accounts ??= []);
const notFound = (id: string) => errors.notFound(`No Connected Account ${id}`, { field: 'path.id', id });

/** What the API shows: everything but the sealed secret. */
export function integrationView(r: IntegrationAccountRecord) {
  const { secret: _secret, user_id: _user, ...rest } = r;
  return rest;
}

export function listIntegrations(store: SidecarStore, userId: string): IntegrationAccountRecord[] {
  return (store.snapshot().integration_accounts ?? []).filter((r) => r.user_id === userId);
}

export function getIntegration(store: SidecarStore, userId: string, id: string): IntegrationAccountRecord {
  const r = (store.snapshot().integration_accounts ?? []).find((x) => x.id === id && x.user_id === userId);
  if (!r) throw notFound(id);
  return r;
}

export function addIntegration(store: SidecarStore, rec: IntegrationAccountRecord): Promise<IntegrationAccountRecord> {
  return store.transact((d) => {
    of(d).push(rec);
    return rec;
  });
}

export function patchIntegration(store: SidecarStore, userId: string, id: string, patch: Partial<IntegrationAccountRecord>): Promise<IntegrationAccountRecord> {
  return store.transact((d) => {
    const r = of(d).find((x) => x.id === id && x.user_id === userId);
    if (!r) throw notFound(id);
    return Object.assign(r, patch, { updated_ms: Date.now() });
  });
}

export function removeIntegrationRecord(store: SidecarStore, userId: string, id: string): Promise<void> {
  return store.transact((d) => {
    if (!of(d).some((x) => x.id === id && x.user_id === userId)) throw notFound(id);
    d.integration_accounts = of(d).filter((x) => !(x.id === id && x.user_id === userId));
  });
}

/** Written before Connected Accounts: the key is absent (accounts made since carry null or an id). */
const isLegacy = (a: CalendarAccountRecord) => (a as Partial<CalendarAccountRecord>).integration_id === undefined;

/**
 * The start-up migration: each calendar account written before Connected Accounts existed
 * (its record has no `integration_id` key at all) becomes the CalDAV side of a new Connected
 * Account of provider `other`, in one transaction. Idempotent: a migrated account carries its
 * Connected Account's id, and a second run finds nothing to do.
 */
export function migrateLegacyCalendarAccounts(store: SidecarStore, now = Date.now()): Promise<{ migrated: number }> {
  return store.transact((d) => {
    let migrated = 0;
    for (const a of d.calendar_accounts ?? []) {
      if (!isLegacy(a)) continue;
      const id = newId();
      of(d).push({
        id, user_id: a.user_id, provider: 'other', email: a.username, username: a.username, secret: a.secret,
        imap_host: null, smtp_host: null, caldav_endpoint: a.endpoint, carddav_endpoint: null,
        calendar_enabled: a.enabled, mail_enabled: false, calendar_account_id: a.id, migrated_from: a.id, created_ms: now, updated_ms: now,
      });
      a.integration_id = id;
      migrated++;
    }
    const before = d.integration_migration?.migrated ?? 0;
    d.integration_migration = { completed_ms: now, migrated: before + migrated };
    return { migrated };
  });
}

export function migrationStatus(store: SidecarStore, userId: string) {
  const d = store.snapshot();
  const pending = (d.calendar_accounts ?? []).filter((a) => a.user_id === userId && isLegacy(a)).length;
  const mine = (d.integration_accounts ?? []).filter((r) => r.user_id === userId && r.migrated_from);
  return {
    state: d.integration_migration ? (pending > 0 ? 'pending' : 'completed') : 'not_run',
    completed_ms: d.integration_migration?.completed_ms ?? null,
    pending,
    migrated: mine.map((r) => ({ id: r.id, calendar_account_id: r.calendar_account_id })),
  };
}
