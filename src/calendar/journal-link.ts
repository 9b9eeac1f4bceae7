/**
 * Links between events and the journal: events made from a note or a log entry (the event
 * names its source in X- properties; the note or the entry gains an `Event:` line linking the
 * event file), past events logged in their day's Daily note, and copies of an item on a day.
 * Event files are written through ./events.ts, Daily notes through the journal's functions.
 * docs/calendar.md, "Journal links".
 */
import { randomUUID } from 'node:crypto';
import ICAL from 'ical.js';
import { AppError, errors } from '../core/errors.js';
import type { Scope } from '../notes/access.js';
import { findNote } from '../notes/notes.js';
import { addEntryLine, createEntries, entryRecord, getEntry, loadDay, type CreateSpec, type DayFile } from '../journal/journal.js';
import { escapeText } from '../journal/log-format.js';
import { checkDate, serverZone } from '../journal/dates.js';
import { editNote, findTask, inlineRecord, newTaskBlockId } from '../tasks/tasks.js';
import * as L from '../tasks/lines.js';
import { createEvent, deleteEvent, findEvent, openCalendars } from './events.js';
import { instantOf, type Occurrence } from './recurrence.js';
import { fileNameForUid } from './storage.js';
import { instantToWall, isIanaZone, registerZone, wallText } from './zones.js';

/** X- properties an event made from the journal carries, naming its source. */
export const X_NOTE_ID = 'x-quire-note-id';
export const X_LOG_ID = 'x-quire-log-id';

// ---------------------------------------------------------------- the Markdown link

/** `Event: [Title](<Calendars/Personal/uid.ics>)`: the line a note or log entry gains. */
export function eventLinkLine(title: string, path: string): string {
  const label = title.replace(/[[\]\r\n]+/g, ' ').replace(/\s+/g, ' ').trim() || 'Event';
  return `Event: [${label}](<${path}>)`;
}

/** Whether a Markdown line links the event file of `uid` (its folder may have changed since: the file name says the UID). */
export function linksEvent(line: string, uid: string): boolean {
  const m = /(?:^|\s)Event:\s*\[[^\]]*\]\(<?([^)>]+)>?\)/.exec(line);
  return m !== null && (m[1]!.split('/').pop() === fileNameForUid(uid));
}

// ---------------------------------------------------------------- input checks

export function checkInstant(s: string, field: string): number {
  const ms = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/i.test(s.trim()) ? Date.parse(s.trim()) : NaN;
  if (!Number.isFinite(ms)) throw errors.badRequest(`${field.split('.').pop()} must be an RFC 3339 instant with an offset, e.g. 2026-03-02T09:00:00+01:00 (got ${JSON.stringify(s)})`, { field });
  return ms;
}

function checkZone(zone: string, field: string): string {
  if (!registerZone(zone.trim())) throw errors.badRequest(`${field.split('.').pop()} must be an IANA time zone such as Europe/Berlin (got ${JSON.stringify(zone)})`, { field });
  return zone.trim();
}

function checkSpan(body: { start: string; end: string; timezone: string }) {
  const start = checkInstant(body.start, 'body.start');
  const end = checkInstant(body.end, 'body.end');
  if (end < start) throw errors.badRequest('end must not be before start', { field: 'body.end' });
  return { start, end, zone: checkZone(body.timezone, 'body.timezone') };
}

// ---------------------------------------------------------------- making events

/** The iCalendar text of a new event from `start` to `end`, its times written in `zone`. */
export function newEventText(p: { uid: string; title: string; description: string | null; start: number; end: number; zone: string; links: Record<string, string>; now: number }): string {
  registerZone(p.zone);
  const tz = ICAL.TimezoneService.get(p.zone)!;
  const at = (ms: number) => {
    const w = new Date(instantToWall(p.zone, ms));
    return ICAL.Time.fromData(
      { year: w.getUTCFullYear(), month: w.getUTCMonth() + 1, day: w.getUTCDate(), hour: w.getUTCHours(), minute: w.getUTCMinutes(), second: w.getUTCSeconds() },
      tz,
    );
  };
  const cal = new ICAL.Component('vcalendar');
  cal.addPropertyWithValue('version', '2.0');
  cal.addPropertyWithValue('prodid', '-//Quire//Calendar//EN');
  const ev = new ICAL.Component('vevent');
  ev.addPropertyWithValue('uid', p.uid);
  ev.addPropertyWithValue('dtstamp', ICAL.Time.fromJSDate(new Date(p.now), true));
  ev.addPropertyWithValue('dtstart', at(p.start)).setParameter('tzid', p.zone);
  ev.addPropertyWithValue('dtend', at(p.end)).setParameter('tzid', p.zone);
  ev.addPropertyWithValue('summary', p.title);
  if (p.description) ev.addPropertyWithValue('description', p.description);
  for (const [k, v] of Object.entries(p.links)) ev.addPropertyWithValue(k, v);
  cal.addSubcomponent(ev);
  return cal.toString() + '\r\n';
}

/** Runs `link` after the event was written; when it fails, the event goes again (nothing half-made stays). */
async function withRollback<T>(scope: Scope, uid: string, link: () => Promise<T>): Promise<T> {
  try {
    return await link();
  } catch (e) {
    await deleteEvent(scope, uid).catch(() => undefined);
    throw e;
  }
}

export async function createEventFromNote(scope: Scope, body: { note_id: string; calendar_id?: string | null; start: string; end: string; timezone: string }, now: number) {
  const span = checkSpan(body);
  let note;
  try {
    note = findNote(scope, body.note_id);
  } catch (e) {
    throw errors.notFound(`No note with id ${body.note_id}`, { field: 'body.note_id', id: body.note_id });
  }
  const uid = randomUUID();
  const text = newEventText({ uid, title: note.title, description: null, ...span, links: { [X_NOTE_ID]: note.id }, now });
  const event = await createEvent(scope, body.calendar_id, text, 'body');
  const line = eventLinkLine(event.title, event.path);
  await withRollback(scope, uid, () =>
    editNote(scope, note.path, undefined, (src) => ({ text: src.split(/\r?\n/).some((l) => l.trim() === line) ? src : L.appendLine(src, line), result: null })),
  );
  return { event, note_id: note.id, link: line };
}

export async function createEventFromLog(scope: Scope, body: { log_id: string; calendar_id: string; start: string; end: string; timezone: string }, now: number) {
  const span = checkSpan(body);
  let entry;
  try {
    entry = (await getEntry(scope, body.log_id)).record;
  } catch (e) {
    if (e instanceof AppError && e.status === 404) throw errors.notFound(`No log entry with block id ${body.log_id}`, { field: 'body.log_id', id: body.log_id });
    throw e;
  }
  const uid = randomUUID();
  const title = entry.title ?? (entry.text || 'Log entry');
  const text = newEventText({ uid, title, description: entry.title ? entry.text || null : null, ...span, links: { [X_LOG_ID]: entry.block_id }, now });
  const event = await createEvent(scope, body.calendar_id, text, 'body');
  const line = eventLinkLine(event.title, event.path);
  const linked = await withRollback(scope, uid, () => addEntryLine(scope, entry.block_id, line));
  return { event, entry: linked.record, link: line };
}

// ---------------------------------------------------------------- logging past events

type Readable = Awaited<ReturnType<typeof findEvent>>;

/** The zone a logged event's times are written in: its own TZID, else the server's. */
const zoneOf = (e: Readable): string => (e.ics.facts.timezone && isIanaZone(e.ics.facts.timezone) ? e.ics.facts.timezone : serverZone());

/** The occurrence "log this" means: the last one that has started by `now`; null when none has. */
async function lastStarted(scope: Scope, e: Readable, zone: string, now: number): Promise<Occurrence | null> {
  const { index } = await openCalendars(scope);
  const occ = index.expansionOf(e).between(0, now + 1, zone);
  let best: Occurrence | null = null;
  for (const o of occ) {
    const s = instantOf(o.start, o.floating || o.allDay, zone);
    if (s <= now && (best === null || s >= instantOf(best.start, best.floating || best.allDay, zone))) best = o;
  }
  return best;
}

/** Date and `HH:MM` times of an occurrence as the clock in `zone` shows them (no times for all-day). */
function localSpan(o: Occurrence, zone: string): { date: string; start: string | null; end: string | null } {
  const wall = (v: number) => wallText(o.floating || o.allDay ? v : instantToWall(zone, v));
  const s = wall(o.start);
  if (o.allDay) return { date: s.slice(0, 10), start: null, end: null };
  const e = wall(o.end);
  return { date: s.slice(0, 10), start: s.slice(11, 16), end: o.end > o.start ? e.slice(11, 16) : null };
}

function loggedEntry(scope: Scope, df: DayFile, uid: string) {
  for (const e of df.day.entries) {
    for (let i = e.line + 1; i < e.end; i++) if (linksEvent(df.day.lines[i]!.text, uid)) return entryRecord(scope, df, e);
  }
  return null;
}

async function logTarget(scope: Scope, id: string, now: number) {
  const e = await findEvent(scope, id);
  const zone = zoneOf(e);
  const o = await lastStarted(scope, e, zone, now);
  return { e, zone, o };
}

/** Whether the event's last started occurrence is logged, and the entry if so. */
export async function eventLogStatus(scope: Scope, id: string, now: number) {
  const { e, zone, o } = await logTarget(scope, id, now);
  if (!o) return { id: e.ics.facts.uid, logged: false, date: null, start: null, end: null, entry: null };
  const span = localSpan(o, zone);
  const entry = loggedEntry(scope, await loadDay(scope, span.date), e.ics.facts.uid);
  return { id: e.ics.facts.uid, logged: entry !== null, date: span.date, start: span.start, end: span.end, entry };
}

/**
 * Logs the event's last started occurrence in that day's Daily note: `HH:MM–HH:MM **Title**`
 * with an `Event:` child line linking the event file. Logging it again returns the entry
 * already written.
 */
export async function logEvent(scope: Scope, id: string, over: { start?: string | null; end?: string | null }, now: number) {
  const { e, zone, o } = await logTarget(scope, id, now);
  if (!o) throw new AppError('conflict', 'This event has not started yet: only a past event can be logged', { details: { reason: 'not_started', field: 'path.id' } });
  const span = localSpan(o, zone);
  const uid = e.ics.facts.uid;
  const existing = loggedEntry(scope, await loadDay(scope, span.date), uid);
  if (existing) return { created: false, entry: existing };
  const start = over.start ?? span.start;
  const end = over.end ?? (over.start ? null : span.end);
  if (end !== null && start === null) throw errors.badRequest('end needs a start: give start as well for an all-day event', { field: 'body.end' });
  const title = String(o.component.getFirstPropertyValue('summary') ?? e.ics.facts.title) || 'Event';
  const spec: CreateSpec = {
    field: 'body',
    date: span.date,
    start,
    end,
    text: `**${title.replace(/\*\*/g, '').replace(/[\r\n]+/g, ' ').trim()}**`,
    zone,
    attachments: [],
    position: null,
    // Two "log this" at once write one entry: the journal replays the second by this identity.
    clientId: `calendar-event:${uid}:${span.date}`,
  };
  const [made] = await createEntries(scope, [spec]);
  const linked = await addEntryLine(scope, made!.record.block_id, eventLinkLine(title, e.path));
  return { created: !made!.replayed, entry: linked.record };
}

// ---------------------------------------------------------------- duplicating

/** A log entry copied into `date`'s Daily note (same times, zone, text and attachments). */
async function duplicateLog(scope: Scope, id: string, date: string) {
  const { record: r } = await getEntry(scope, id);
  const spec: CreateSpec = {
    field: 'body',
    date,
    start: r.start,
    end: r.end,
    text: escapeText([r.title ? `**${r.title}**` : '', r.text].filter(Boolean).join(' ')),
    zone: r.tz ?? serverZone(),
    attachments: r.attachments.filter((a) => a.path !== null).map((a) => ({ path: a.path!, embed: a.embed })),
    position: null,
    clientId: null,
  };
  const [made] = await createEntries(scope, [spec]);
  return { kind: 'log' as const, id: made!.record.block_id, item: made!.record };
}

/**
 * An event copied as a single event (new UID, no recurrence) onto `date`, keeping its local
 * times: the occurrence shown that day when the series has one, else the event's first.
 */
async function duplicateEvent(scope: Scope, id: string, date: string, now: number) {
  const e = await findEvent(scope, id);
  const zone = zoneOf(e);
  const [y, m, d] = date.split('-').map(Number) as [number, number, number];
  const dayStart = Date.UTC(y, m - 1, d);
  const { index } = await openCalendars(scope);
  const shown = index
    .expansionOf(e)
    .between(instantOf(dayStart, true, zone), instantOf(dayStart + 86_400_000, true, zone), zone)
    .find((o) => wallText(o.floating || o.allDay ? o.start : instantToWall(zone, o.start)).slice(0, 10) === date);
  const source = shown?.component ?? e.ics.master ?? e.ics.overrides[0]!;
  const copy = new ICAL.Component(structuredClone(source.jCal));
  for (const p of ['rrule', 'rdate', 'exdate', 'recurrence-id', 'uid', 'dtstamp']) copy.removeAllProperties(p);
  const uid = randomUUID();
  copy.addPropertyWithValue('uid', uid);
  copy.addPropertyWithValue('dtstamp', ICAL.Time.fromJSDate(new Date(now), true));
  // Moves start and end by whole days, so local times (and an all-day span) stay as they were.
  const start = copy.getFirstPropertyValue('dtstart') as ICAL.Time;
  const shift = Math.round((dayStart - Date.UTC(start.year, start.month - 1, start.day)) / 86_400_000);
  for (const name of ['dtstart', 'dtend']) {
    const prop = copy.getFirstProperty(name);
    if (!prop) continue;
    const t = (prop.getFirstValue() as ICAL.Time).clone();
    t.adjust(shift, 0, 0, 0);
    prop.setValue(t);
  }
  const root = new ICAL.Component(structuredClone(e.ics.root.jCal));
  for (const v of root.getAllSubcomponents('vevent')) root.removeSubcomponent(v);
  root.addSubcomponent(copy);
  const event = await createEvent(scope, e.calendarId, root.toString() + '\r\n', 'body');
  return { kind: 'event' as const, id: event.id, item: event };
}

/** A task line copied right below the original, due on `date`, open, with a new block id. */
async function duplicateTask(scope: Scope, id: string, date: string) {
  const t = findTask(scope, id);
  if (t.kind !== 'inline' || t.task_id === null) throw errors.badRequest('Only a task written as a list item can be duplicated (a File Task is a whole note)', { field: 'body.id' });
  const newId = await editNote(scope, t.path, undefined, (src, facts) => {
    const task = facts.tasks.find((x) => x.blockId === id);
    if (!task) throw errors.notFound(`No task with id ${id}`, { field: 'body.id' });
    const line = L.splitLines(src)[task.line - 1]!.text;
    const nid = newTaskBlockId(scope, src);
    // The copy gets a block id of its own: the original's stays the original's.
    const copy = L.withBlockId(L.withDue(L.withStatus(line.replace(/\s+\^[A-Za-z0-9-]+\s*$/, ''), ' ', date), date), nid);
    // After the task and the tasks nested in it (they belong to the original). Lines are 1-based.
    let after = task.line;
    for (const x of facts.tasks) if (x.line === after + 1 && x.depth > task.depth) after = x.line;
    return { text: L.insertLineAfter(src, after, copy), result: nid };
  });
  // The note's facts are current right after the write; the block-id lookup may lag behind.
  const note = scope.index.noteByPath(t.path)!;
  return { kind: 'task' as const, id: newId, item: inlineRecord(note.facts.tasks.find((x) => x.blockId === newId)!, note) };
}

export async function duplicateItem(scope: Scope, body: { kind: 'log' | 'event' | 'task'; id: string; date: string }, now: number) {
  checkDate(body.date, 'body.date');
  try {
    if (body.kind === 'log') return await duplicateLog(scope, body.id, body.date);
    if (body.kind === 'event') return await duplicateEvent(scope, body.id, body.date, now);
    return await duplicateTask(scope, body.id, body.date);
  } catch (e) {
    // The item named by `id` is missing: say which field named it.
    if (e instanceof AppError && e.status === 404) throw errors.notFound(e.message, { field: 'body.id', id: body.id });
    throw e;
  }
}

