/**
 * Calendars and events as the API sees them: records, and the writes that
 * create, replace, delete and move event files and change a calendar's
 * metadata. Each write reads the file under the vault's ETag and replaces only
 * that version (docs/calendar.md, "Events").
 */
import ICAL from 'ical.js';
import { AppError, errors } from '../core/errors.js';
import { checkWritable, visible, type Scope } from '../notes/access.js';
import { calendarIndexOf, type CalendarEntry, type CalendarIndex, type EventEntry } from './calendar-index.js';
import { mergeUpdate, parseEvent, withUid, type ParsedIcs } from './ics.js';
import { instantOf, type Occurrence } from './recurrence.js';
import {
  checkCalendarId, checkColor, DEFAULT_CALENDAR_ID, fileNameForUid, folderOf, metaPathOf, metaText, parseMeta, readOrNull, writeFile,
  type CalendarMeta,
} from './storage.js';
import { dateText, rfc3339, wallText } from './zones.js';
import { readPreferences } from './preferences.js';

type Readable = EventEntry & { ics: ParsedIcs };

/** The caller's calendar index, with calendars outside an App Password's Home prefix left out. */
export async function openCalendars(scope: Scope): Promise<{ index: CalendarIndex; calendars: CalendarEntry[]; seen: (calendarId: string) => boolean }> {
  const index = await calendarIndexOf(scope.vault);
  const cache = new Map<string, boolean>();
  const seen = (id: string) => {
    let v = cache.get(id);
    if (v === undefined) cache.set(id, (v = visible(scope, folderOf(id) + '/')));
    return v;
  };
  return { index, calendars: index.calendars().filter((c) => seen(c.id)), seen };
}

// ---------------------------------------------------------------- records

/** How many unreadable files a calendar record names (`unreadable_total` counts them all). */
export const UNREADABLE_SHOWN = 5;

/** Why a file is skipped: its parse error without the path it starts with (the record names the path). */
const reasonOf = (path: string, error: string) => (error.startsWith(`${path}: `) ? error.slice(path.length + 2) : error);

export function calendarRecord(c: CalendarEntry, defaultId: string | null) {
  const unreadable = [...c.unreadable].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return {
    id: c.id,
    name: c.meta.name,
    color: c.meta.color,
    visible: c.meta.visible,
    read_only: c.meta.readOnly,
    path: folderOf(c.id),
    // Files that cannot be read are not events: counted and named apart, so the user learns why one is missing.
    events: c.events.size - c.unreadable.size,
    unreadable: unreadable.slice(0, UNREADABLE_SHOWN).map(([path, error]) => ({ path, reason: reasonOf(path, error) })),
    unreadable_total: unreadable.length,
    default: c.id === defaultId,
    etag: c.metaEtag,
  };
}

/** Text of a time value for records: dates for all-day, RFC 3339 with the zone's offset for zoned times, local time for floating ones. */
function timeText(t: ICAL.Time, tzid: string | null): string {
  if (t.isDate) return dateText(Date.UTC(t.year, t.month - 1, t.day));
  const wall = Date.UTC(t.year, t.month - 1, t.day, t.hour, t.minute, t.second);
  if (t.zone === ICAL.Timezone.localTimezone || !t.zone) return wallText(wall);
  // A UTC end (DTEND in Z, or a DURATION's exact end) is shown in the event's zone, like its start.
  return rfc3339(t.toUnixTime() * 1000, tzid && !tzid.includes(' ') ? tzid : 'UTC');
}

export function eventRecord(e: Readable) {
  const f = e.ics.facts;
  return {
    id: f.uid,
    calendar_id: e.calendarId,
    title: f.title,
    start: timeText(f.dtstart, f.timezone),
    end: timeText(f.dtend, f.timezone),
    all_day: f.allDay,
    timezone: f.timezone,
    floating: f.floating && !f.allDay,
    rrule: f.rrule,
    rdates: f.rdates,
    exdates: f.exdates,
    overrides: f.overrides,
    tags: f.tags,
    location: f.location,
    description: f.description,
    status: f.status,
    etag: e.etag,
    path: e.path,
  };
}
export type EventRecord = ReturnType<typeof eventRecord>;

/**
 * What an occurrence record shows that depends only on its file and component
 * (all but the times), with its JSON text: made once per parsed component,
 * as a window of thousands of occurrences repeats the same few hundred.
 */
interface Shown {
  head: { id: string; calendar_id: string; title: string };
  tail: { timezone: string | null; location: string | null; tags: string[]; etag: string; path: string };
  headJson: string;
  tailJson: string;
}
const shownOf = new WeakMap<ICAL.Component, Shown>();

function shown(e: Readable, c: ICAL.Component): Shown {
  let s = shownOf.get(c);
  if (!s) {
    const series = e.ics.facts;
    const title = c.getFirstPropertyValue('summary');
    const loc = c.getFirstPropertyValue('location');
    const head = { id: series.uid, calendar_id: e.calendarId, title: title === null ? series.title : String(title) };
    const tail = { timezone: series.timezone, location: loc === null ? series.location : String(loc), tags: series.tags, etag: e.etag, path: e.path };
    const hj = JSON.stringify(head);
    const tj = JSON.stringify(tail);
    s = { head, tail, headJson: hj.slice(1, -1), tailJson: tj.slice(1, -1) };
    shownOf.set(c, s);
  }
  return s;
}

/** The times of an occurrence as the viewer in `zone` sees them. */
function occurrenceTimes(e: Readable, o: Occurrence, zone: string) {
  const series = e.ics.facts;
  return {
    start: o.allDay ? dateText(o.start) : rfc3339(instantOf(o.start, o.floating, zone), zone),
    end: o.allDay ? dateText(o.end) : rfc3339(instantOf(o.end, o.floating, zone), zone),
    all_day: o.allDay,
    recurrence_id: o.recurrenceId === null ? null : series.allDay ? dateText(o.recurrenceId) : rfc3339(instantOf(o.recurrenceId, series.floating, zone), zone),
  };
}

/** One occurrence in a window, its times as the viewer in `zone` sees them. */
export function occurrenceRecord(e: Readable, o: Occurrence, zone: string) {
  const s = shown(e, o.component);
  return { kind: 'event' as const, ...s.head, ...occurrenceTimes(e, o, zone), ...s.tail };
}

/** `JSON.stringify(occurrenceRecord(e, o, zone))`, from the cached parts. */
export function occurrenceJson(e: Readable, o: Occurrence, zone: string): string {
  const s = shown(e, o.component);
  const t = occurrenceTimes(e, o, zone);
  // The times are RFC 3339 or date text (nothing to escape).
  const rid = t.recurrence_id === null ? 'null' : `"${t.recurrence_id}"`;
  return `{"kind":"event",${s.headJson},"start":"${t.start}","end":"${t.end}","all_day":${t.all_day},"recurrence_id":${rid},${s.tailJson}}`;
}
export type OccurrenceRecord = ReturnType<typeof occurrenceRecord>;

// ---------------------------------------------------------------- lookups

const eventNotFound = (id: string, field = 'path.id') => errors.notFound(`No event with id ${JSON.stringify(id)}`, { field, id });

export async function findEvent(scope: Scope, id: string): Promise<Readable> {
  const { index, seen } = await openCalendars(scope);
  const e = index.eventByUid(id);
  if (!e || !e.ics || !seen(e.calendarId)) throw eventNotFound(id);
  return e as Readable;
}

export async function eventDetail(scope: Scope, id: string) {
  const e = await findEvent(scope, id);
  return { ...eventRecord(e), icalendar: e.text };
}

export async function findCalendar(scope: Scope, id: string, field: string): Promise<CalendarEntry> {
  checkCalendarId(id, field);
  const { index, seen } = await openCalendars(scope);
  const c = index.calendarById(id);
  if (!c || !seen(id)) throw errors.notFound(`No calendar with id ${JSON.stringify(id)}`, { field, id });
  return c;
}

/**
 * The calendar a new event goes to without `calendar_id`: the saved default
 * (preferences) when it still exists, else the first visible calendar, else
 * `Personal`, created with this first event.
 */
export async function defaultCalendarId(scope: Scope): Promise<string> {
  const { calendars } = await openCalendars(scope);
  const saved = (await readPreferences(scope)).default_event_calendar_id as string | null;
  if (saved && calendars.some((c) => c.id === saved)) return saved;
  return (calendars.find((c) => c.meta.visible) ?? calendars[0])?.id ?? DEFAULT_CALENDAR_ID;
}

export async function listCalendars(scope: Scope) {
  const { calendars } = await openCalendars(scope);
  const def = await defaultCalendarId(scope);
  const records = calendars.map((c) => calendarRecord(c, def));
  // A Home without calendars shows the default one its first event will create.
  if (records.length === 0) records.push({ ...calendarRecord({ id: def, meta: parseMeta(def, null), metaEtag: null, events: new Set(), unreadable: new Map() }, def) });
  return { calendars: records };
}

// ---------------------------------------------------------------- writes

/** Creates the calendar's folder and `calendar.json` when neither exists (the default calendar, on first use). */
async function ensureCalendar(scope: Scope, id: string): Promise<void> {
  const { index } = await openCalendars(scope);
  if (index.calendarById(id)) return;
  try {
    await writeFile(scope, metaPathOf(id), metaText(null, parseMeta(id, null)), { ifNoneMatch: '*' });
  } catch (e) {
    if (!(e instanceof AppError && e.status === 412)) throw e; // created meanwhile: fine
  }
}

/**
 * Makes the default calendar when the caller sees none, as the first event would; true when it
 * made one. For CalDAV: a phone set up with the profile must find a calendar to add events to.
 * A Home prefix that leaves no room for it (writes refused there) is left as it is.
 */
export async function ensureDefaultCalendar(scope: Scope): Promise<boolean> {
  const { calendars } = await openCalendars(scope);
  if (calendars.length > 0) return false;
  try {
    await ensureCalendar(scope, await defaultCalendarId(scope));
  } catch (e) {
    if (e instanceof AppError && e.code === 'forbidden') return false;
    throw e;
  }
  return true;
}

/** Creates an event from iCalendar text in `calendarId` (default: see defaultCalendarId). */
export async function createEvent(scope: Scope, calendarIdIn: string | null | undefined, icalendar: string, field = 'body.icalendar') {
  const { text, uid } = withUid(icalendar, field);
  const parsed = parseEvent(text, { field, strict: true });
  let calendarId: string;
  if (calendarIdIn === undefined || calendarIdIn === null) {
    calendarId = await defaultCalendarId(scope);
    await ensureCalendar(scope, calendarId);
  } else {
    calendarId = (await findCalendar(scope, calendarIdIn, 'body.calendar_id')).id;
  }
  await checkNotReadOnly(scope, calendarId, 'body.calendar_id');
  const { index } = await openCalendars(scope);
  const existing = index.eventByUid(uid);
  if (existing) {
    throw errors.conflict(`An event with UID ${JSON.stringify(uid)} exists already (${existing.path}); update it instead`, { field, reason: 'uid_exists', id: uid, path: existing.path });
  }
  const path = `${folderOf(calendarId)}/${fileNameForUid(parsed.facts.uid)}`;
  await writeFile(scope, path, text, { ifNoneMatch: '*' });
  return eventRecord(await findEvent(scope, uid));
}

const isStale = (e: unknown) => e instanceof AppError && e.status === 412;

/** Events of a read-only calendar (a subscription's mirror) change only when it is refreshed. */
async function checkNotReadOnly(scope: Scope, calendarId: string, field: string): Promise<void> {
  const { index } = await openCalendars(scope);
  if (index.calendarById(calendarId)?.meta.readOnly) {
    throw errors.forbidden(`Calendar ${JSON.stringify(calendarId)} is a read-only subscription; its events change only when it is refreshed`, { field, reason: 'read_only_calendar', calendar_id: calendarId });
  }
}

/**
 * Replaces an event with new iCalendar text, merged into the stored file so
 * what the text leaves out of unknown and X- properties stays. The UID is the
 * event's identity and cannot change.
 */
export async function updateEvent(scope: Scope, id: string, icalendar: string, field = 'body.icalendar') {
  let text = icalendar;
  const root = withUid(icalendar, field);
  if (root.uid !== id) {
    if (/^UID[:;]/im.test(icalendar)) throw errors.badRequest(`${field}: the UID (${JSON.stringify(root.uid)}) must stay ${JSON.stringify(id)}; create a new event for a new UID`, { field, reason: 'uid_changed' });
    text = icalendar.replace(/^(BEGIN:VEVENT)(\r?\n)/gim, `$1$2UID:${id}$2`);
  }
  const next = parseEvent(text, { field, strict: true });
  // An outside edit between the read and the write answers 412 from the vault: merge again into the new version.
  await checkNotReadOnly(scope, (await findEvent(scope, id)).calendarId, 'path.id');
  for (let attempt = 1; ; attempt++) {
    const e = await findEvent(scope, id);
    const merged = mergeUpdate(e.text, e.ics, next);
    if (merged === e.text) return eventRecord(e);
    try {
      await writeFile(scope, e.path, merged, { ifMatch: e.etag });
      return eventRecord(await findEvent(scope, id));
    } catch (err) {
      if (!isStale(err) || attempt >= 3) throw err;
    }
  }
}

export async function deleteEvent(scope: Scope, id: string) {
  const e = await findEvent(scope, id);
  await checkNotReadOnly(scope, e.calendarId, 'path.id');
  checkWritable(scope, e.path);
  await scope.vault.home.delete(e.path, { ifMatch: e.etag });
  return { id, deleted: true, path: e.path };
}

/** Moves an event's file to another calendar's folder (the bytes move as they are). */
export async function moveEvent(scope: Scope, id: string, calendarId: string) {
  const e = await findEvent(scope, id);
  const target = await findCalendar(scope, calendarId, 'body.calendar_id');
  if (target.id === e.calendarId) return eventRecord(e);
  await checkNotReadOnly(scope, e.calendarId, 'path.id');
  await checkNotReadOnly(scope, target.id, 'body.calendar_id');
  const to = `${folderOf(target.id)}/${e.path.slice(e.path.lastIndexOf('/') + 1)}`;
  checkWritable(scope, e.path);
  checkWritable(scope, to);
  await scope.vault.home.move(e.path, to, { ifMatch: e.etag });
  return eventRecord(await findEvent(scope, id));
}

/** Changes a calendar's colour or visibility: null resets a key to its default, an omitted key stays. */
export async function updateCalendar(scope: Scope, id: string, patch: { color?: string | null; visible?: boolean | null }) {
  const color = patch.color === undefined || patch.color === null ? patch.color : checkColor(patch.color, 'body.color');
  await findCalendar(scope, id, 'path.id');
  for (let attempt = 1; ; attempt++) {
    const stored = await readOrNull(scope, metaPathOf(id));
    const meta: CalendarMeta = parseMeta(id, stored?.bytes ?? null);
    if (color !== undefined) meta.color = color;
    if (patch.visible !== undefined) meta.visible = patch.visible ?? true;
    try {
      await writeFile(scope, metaPathOf(id), metaText(stored?.bytes ?? null, meta), stored ? { ifMatch: stored.etag } : { ifNoneMatch: '*' });
      break;
    } catch (err) {
      if (!isStale(err) || attempt >= 3) throw err;
    }
  }
  const c = await findCalendar(scope, id, 'path.id');
  return calendarRecord(c, await defaultCalendarId(scope));
}
