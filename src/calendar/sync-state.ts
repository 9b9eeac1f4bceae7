/**
 * Per-account sync state of CalDAV mirrors, outside the Home and outside the sidecar store
 * (thousands of ETags would bloat it): `<data>/state/calendar-sync/<account id>.json`,
 * written atomically. For each mirrored calendar: its collection href, the last CTag and
 * sync token, and per remote object its href, remote ETag, Home path and the Home ETag the
 * file had after the last sync (docs/calendar-sync.md, "Sync state").
 */
import fs from 'node:fs';
import path from 'node:path';
import { paths, type Config } from '../core/config.js';
import { writeFileAtomic } from '../vault/atomic.js';

export interface SyncItem {
  /** Remote ETag at the last sync. */
  etag: string;
  /** Home path of the mirrored file. */
  path: string;
  /** Home ETag of that file after the last sync: a different one now means a local edit. */
  local: string;
}

export interface CalendarSyncState {
  href: string;
  ctag: string | null;
  syncToken: string | null;
  items: Record<string, SyncItem>;
}

export interface AccountSyncState {
  calendars: Record<string, CalendarSyncState>;
}

/** A calendar not synced yet: every remote object is new. */
export const newCalendarState = (href: string): CalendarSyncState => ({ href, ctag: null, syncToken: null, items: {} });

const fileOf = (config: Config, accountId: string) => path.join(paths.state(config), 'calendar-sync', `${accountId}.json`);

export async function readSyncState(config: Config, accountId: string): Promise<AccountSyncState> {
  try {
    const v = JSON.parse(await fs.promises.readFile(fileOf(config, accountId), 'utf8')) as AccountSyncState;
    return v && typeof v.calendars === 'object' ? v : { calendars: {} };
  } catch {
    return { calendars: {} };
  }
}

export async function writeSyncState(config: Config, accountId: string, state: AccountSyncState): Promise<void> {
  const file = fileOf(config, accountId);
  await fs.promises.mkdir(path.dirname(file), { recursive: true });
  await writeFileAtomic(file, JSON.stringify(state));
}

export async function removeSyncState(config: Config, accountId: string): Promise<void> {
  await fs.promises.rm(fileOf(config, accountId), { force: true });
}
