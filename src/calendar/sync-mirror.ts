/**
 * Mirrored calendars: Home calendar folders whose events come from elsewhere (a CalDAV
 * account's calendar, a subscription's ICS feed). `calendar.json` says where from
 * (`"source": {"kind": "caldav" | "subscription", "id": ...}`), and a subscription's says
 * `"read_only": true`. Writes go through the calendar storage functions, under the Home's
 * writer lock with the ETag read, so a file another program changed meanwhile is never
 * overwritten blindly (docs/calendar-sync.md, "Mirrored calendars").
 */
import { createHash } from 'node:crypto';
import ICAL from 'ical.js';
import { AppError, errors } from '../core/errors.js';
import { checkWritable, type Scope } from '../notes/access.js';
import { calendarIndexOf } from './calendar-index.js';
import { fileNameForUid, folderOf, metaPathOf, metaText, parseMeta, readOrNull, writeFile } from './storage.js';

export interface MirrorSource {
  kind: 'caldav' | 'subscription';
  id: string;
}

/** A calendar id (folder name) from a display name: path-unsafe characters dropped, at most 80 characters. */
export function calendarIdFromName(name: string): string {
  const base = name.normalize('NFC').replace(/[\u0000-\u001f\u007f/\\:*?"<>|]/g, ' ').replace(/\s+/g, ' ').trim().replace(/^\.+/, '').slice(0, 80).trim();
  return base || 'Calendar';
}

/** A folder name for a new mirror that no existing calendar uses: `Name`, `Name 2`, ... */
export async function freeCalendarId(scope: Scope, name: string): Promise<string> {
  const index = await calendarIndexOf(scope.vault);
  const base = calendarIdFromName(name);
  for (let n = 1; ; n++) {
    const id = n === 1 ? base : `${base} ${n}`;
    if (!index.calendarById(id) && !(await readOrNull(scope, metaPathOf(id)))) return id;
  }
}

/** Creates the mirror's folder with its calendar.json (never over an existing one: 409). */
export async function createMirrorCalendar(scope: Scope, id: string, meta: { name: string; color: string | null; visible?: boolean }, source: MirrorSource): Promise<void> {
  const text = JSON.stringify({ name: meta.name, color: meta.color, visible: meta.visible ?? true, ...(source.kind === 'subscription' ? { read_only: true } : {}), source }, null, 2) + '\n';
  try {
    await writeFile(scope, metaPathOf(id), text, { ifNoneMatch: '*' });
  } catch (e) {
    if (e instanceof AppError && e.status === 412) throw errors.conflict(`Calendar folder ${folderOf(id)} exists already`, { reason: 'calendar_exists', calendar_id: id });
    throw e;
  }
}

/** Changes name, colour or visibility in calendar.json (null/undefined keep the stored value), keeping every other key. */
export async function patchMirrorMeta(scope: Scope, id: string, patch: { name?: string | null; color?: string | null; visible?: boolean | null }): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    const stored = await readOrNull(scope, metaPathOf(id));
    if (!stored) return;
    const meta = parseMeta(id, stored.bytes);
    if (patch.name) meta.name = patch.name;
    if (patch.color !== undefined) meta.color = patch.color;
    if (patch.visible !== undefined && patch.visible !== null) meta.visible = patch.visible;
    try {
      await writeFile(scope, metaPathOf(id), metaText(stored.bytes, meta), { ifMatch: stored.etag });
      return;
    } catch (e) {
      if (!(e instanceof AppError && e.status === 412) || attempt >= 3) throw e;
    }
  }
}

/** The event files of a mirror as they are now: path → { etag, text }. */
export async function mirrorFiles(scope: Scope, id: string): Promise<Map<string, { etag: string; text: string }>> {
  const index = await calendarIndexOf(scope.vault);
  const out = new Map<string, { etag: string; text: string }>();
  for (const path of index.calendarById(id)?.events ?? []) {
    const e = index.eventByPath(path);
    if (e) out.set(path, { etag: e.etag, text: e.text });
  }
  return out;
}

export const eventPathIn = (calendarId: string, uid: string) => `${folderOf(calendarId)}/${fileNameForUid(uid)}`;

/** Writes one mirrored event: over `etag` when the file is known, else only where no file is. Returns the new ETag. */
export async function writeMirrorEvent(scope: Scope, path: string, text: string, etag: string | null): Promise<string> {
  const r = await writeFile(scope, path, text, etag ? { ifMatch: etag } : { ifNoneMatch: '*' });
  return r.etag;
}

export async function deleteMirrorEvent(scope: Scope, path: string, etag: string): Promise<void> {
  checkWritable(scope, path);
  await scope.vault.home.delete(path, { ifMatch: etag });
}

/**
 * Removes a mirror: each event file as it was last read (one another program changed
 * meanwhile stays, 412 skipped), calendar.json, and the folder when nothing else is left in it.
 */
export async function removeMirrorCalendar(scope: Scope, id: string): Promise<{ removed: number; kept: number }> {
  let removed = 0;
  let kept = 0;
  for (const [path, f] of await mirrorFiles(scope, id)) {
    try {
      await deleteMirrorEvent(scope, path, f.etag);
      removed++;
    } catch (e) {
      if (!(e instanceof AppError && (e.status === 412 || e.status === 404))) throw e;
      kept++;
    }
  }
  const meta = await readOrNull(scope, metaPathOf(id));
  if (meta) await scope.vault.home.delete(metaPathOf(id), { ifMatch: meta.etag }).catch(() => undefined);
  // A folder still holding files someone else put there stays (409 from the Home).
  // Deleted files sit aside briefly (the Home keeps bytes another program wrote at the last moment): let them settle first.
  await scope.vault.home.settleDisplaced();
  await scope.vault.home.delete(folderOf(id)).catch(() => undefined);
  return { removed, kept };
}

// ---------------------------------------------------------------- ICS feeds

const CRLF = '\r\n';

/**
 * Splits an iCalendar feed into one VCALENDAR text per UID (the master VEVENT, its
 * overrides, and the VTIMEZONEs they name), as the Home stores events. An event
 * without a UID gets a stable one from a hash of its text. Throws 400 naming
 * `field` when the text is not iCalendar.
 */
export function splitFeed(text: string, field: string): Map<string, string> {
  let root: ICAL.Component;
  try {
    const jcal = ICAL.parse(text);
    root = new ICAL.Component((Array.isArray(jcal[0]) ? jcal[0] : jcal) as never);
  } catch (e) {
    throw errors.badRequest(`${field} is not an iCalendar feed: ${(e as Error).message}`, { field, reason: 'invalid_calendar' });
  }
  if (root.name !== 'vcalendar') throw errors.badRequest(`${field} is not an iCalendar feed (it holds ${root.name.toUpperCase()}, not VCALENDAR)`, { field, reason: 'invalid_calendar' });
  const zones = new Map<string, string>();
  for (const tz of root.getAllSubcomponents('vtimezone')) {
    const tzid = tz.getFirstPropertyValue('tzid');
    if (tzid) zones.set(String(tzid), tz.toString());
  }
  const groups = new Map<string, string[]>();
  for (const ev of root.getAllSubcomponents('vevent')) {
    let uid = ev.getFirstPropertyValue('uid');
    const body = ev.toString();
    if (!uid) {
      uid = `${createHash('sha256').update(body).digest('hex').slice(0, 32)}@subscription.quire`;
      ev.addPropertyWithValue('uid', uid);
    }
    const list = groups.get(String(uid)) ?? [];
    list.push(ev.toString());
    groups.set(String(uid), list);
  }
  const out = new Map<string, string>();
  for (const [uid, events] of groups) {
    const joined = events.join(CRLF);
    const used = [...zones].filter(([tzid]) => joined.includes(`TZID=${tzid}`) || joined.includes(`TZID="${tzid}"`)).map(([, z]) => z);
    out.set(uid, ['BEGIN:VCALENDAR', 'VERSION:2.0', 'PRODID:-//Quire//Subscription//EN', ...used, ...events, 'END:VCALENDAR', ''].join(CRLF));
  }
  return out;
}

/** The UID of one stored event text (the first VEVENT's), or null. */
export function uidOf(text: string): string | null {
  const m = /^UID(?:;[^:\r\n]*)?:(.*)$/im.exec(text.replace(/\r?\n[ \t]/g, ''));
  return m ? m[1]!.trim() : null;
}
