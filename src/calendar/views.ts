/**
 * The calendar's read views: events in a window, the grid of a window
 * (`calendar_range`), the paged item list (events, timed log entries, due
 * tasks), a year's activity and the event tags. Windows are read in the
 * viewer's zone and bounded (docs/calendar.md, "Windows").
 */
import { errors } from '../core/errors.js';
import { compareKeys, decodeCursor, encodeCursor } from '../core/cursor.js';
import type { Scope } from '../notes/access.js';
import type { TaskRecord } from '../tasks/tasks.js';
import type { CalendarEntry, CalendarIndex, EventEntry } from './calendar-index.js';
import { dueTasks, logItems, type LogItem } from './day-items.js';
import { calendarRecord, defaultCalendarId, eventRecord, occurrenceJson, occurrenceRecord, openCalendars } from './events.js';
import type { ParsedIcs } from './ics.js';
import { instantOf, type Occurrence } from './recurrence.js';
import { openParts, type Answer, type Part } from './window-cache.js';
import { dateText, instantToWall, isIanaZone, rfc3339, wallToInstant } from './zones.js';

const DAY = 86_400_000;

/** Longest windows, in days (docs/calendar.md). */
export const WINDOW_MAX_DAYS = { events: 366, range: 62, items: 366 } as const;
export const ITEMS_PAGE_DEFAULT = 200;
/** Most items one unpaged answer (`calendar_events` with a window, `calendar_range`) carries. */
export const WINDOW_MAX_ITEMS = 20_000;

function checkCount(n: number): void {
  if (n > WINDOW_MAX_ITEMS) {
    throw errors.badRequest(`The window holds more than ${WINDOW_MAX_ITEMS} items: request smaller from/to windows`, { field: 'query.to', reason: 'too_many_items', max_items: String(WINDOW_MAX_ITEMS) });
  }
}
export const ITEMS_PAGE_MAX = 1000;

const plain = (d: unknown): Answer => ({ data: () => d, json: () => JSON.stringify(d) });
/** `{...head, key: [items]}` as JSON, the items already JSON text. */
const withList = (head: object, key: string, items: string[], after = ''): string =>
  `${JSON.stringify(head).slice(0, -1)}${Object.keys(head).length ? ',' : ''}"${key}":[${items.join(',')}]${after}}`;

export interface Window {
  from: number;
  to: number;
  tz: string;
  /** The local dates the window touches, in order. */
  dates: string[];
}

export function checkTz(tz: string | undefined, field = 'query.tz'): string {
  if (tz === undefined || tz === '') return 'UTC';
  if (!isIanaZone(tz) && tz !== 'UTC') throw errors.badRequest(`${field} must be an IANA time zone such as Europe/Berlin (got ${JSON.stringify(tz)})`, { field, reason: 'unknown_time_zone' });
  return tz;
}

const DATE_RE = /^(\d{4})-(\d{2})-(\d{2})$/;
const LOCAL_RE = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2}))?$/;
const INSTANT_RE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:\d{2})$/i;

/**
 * A window bound: a date (`2026-11-01`: midnight in `tz`; as `to`, the end of
 * that day), a local date-time without offset (in `tz`), or an RFC 3339 instant.
 */
function parseBound(s: string, tz: string, field: string, isEnd: boolean): number {
  let m = DATE_RE.exec(s);
  if (m) {
    const wall = Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!);
    if (dateText(wall) === s) return wallToInstant(tz, isEnd ? wall + DAY : wall);
  }
  m = LOCAL_RE.exec(s);
  if (m) {
    const wall = Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, +m[4]!, +m[5]!, +(m[6] ?? 0));
    if (dateText(wall) === s.slice(0, 10) && +m[4]! < 24 && +m[5]! < 60) return wallToInstant(tz, wall);
  }
  if (INSTANT_RE.test(s)) {
    const ms = Date.parse(s);
    if (!Number.isNaN(ms)) return ms;
  }
  throw errors.badRequest(`${field} must be a date (2026-11-01), a local date-time (2026-11-01T09:00) or an RFC 3339 instant (got ${JSON.stringify(s)})`, { field, reason: 'bad_time' });
}

export function parseWindow(q: { from?: string; to?: string; tz?: string }, maxDays: number): Window {
  const tz = checkTz(q.tz);
  if (q.from === undefined || q.to === undefined) {
    const missing = q.from === undefined ? 'query.from' : 'query.to';
    throw errors.badRequest(`${missing} is required with ${missing === 'query.from' ? 'query.to' : 'query.from'}`, { field: missing });
  }
  const from = parseBound(q.from, tz, 'query.from', false);
  const to = parseBound(q.to, tz, 'query.to', true);
  if (to <= from) throw errors.badRequest('query.to must be after query.from', { field: 'query.to', reason: 'empty_window' });
  // A day more for DST changes inside the window.
  if (to - from > maxDays * DAY + 2 * 3_600_000) {
    throw errors.badRequest(`The window is longer than ${maxDays} days: request smaller from/to windows`, { field: 'query.to', reason: 'window_too_large', max_days: String(maxDays) });
  }
  const dates: string[] = [];
  for (let d = Math.floor(instantToWall(tz, from) / DAY) * DAY; d < instantToWall(tz, to); d += DAY) dates.push(dateText(d));
  return { from, to, tz, dates };
}

type Readable = EventEntry & { ics: ParsedIcs };
type Found = { e: Readable; o: Occurrence; start: number };
type Visit = (e: Readable, o: Occurrence, start: number) => void;

/** First index in ascending `a` whose value is ≥ `v`. */
function lowerBound(a: number[], v: number): number {
  let lo = 0;
  let hi = a.length;
  while (lo < hi) {
    const m = (lo + hi) >> 1;
    if (a[m]! < v) lo = m + 1;
    else hi = m;
  }
  return lo;
}

/** Visits the occurrences of the events of the calendars `shown` that overlap the window (no list built: a month holds thousands). */
function occurrencesIn(index: CalendarIndex, shown: Set<string>, w: Window, visit: Visit): void {
  const t = index.timeline();
  // Single events: binary search, instants first, then floating wall times placed in the viewer's zone.
  for (const [list, lo, hi] of [
    [t.zoned, w.from, w.to],
    [t.floating, instantToWall(w.tz, w.from) - FLOAT_MARGIN, instantToWall(w.tz, w.to) + FLOAT_MARGIN],
  ] as const) {
    const { starts, items } = list;
    for (let i = lowerBound(starts, lo - list.maxDuration); i < starts.length && starts[i]! < hi; i++) {
      const { e, o } = items[i]!;
      if (!shown.has(e.calendarId)) continue;
      const start = o.floating ? wallToInstant(w.tz, o.start) : o.start;
      const end = o.floating ? wallToInstant(w.tz, o.end) : o.end;
      if (start < w.to && (end > w.from || (end === start && start >= w.from))) visit(e, o, start);
    }
  }
  for (const e of t.series) {
    if (!shown.has(e.calendarId)) continue;
    for (const o of index.expansionOf(e).between(w.from, w.to, w.tz)) visit(e, o, instantOf(o.start, o.floating, w.tz));
  }
}

/** Margin around a window for floating times, whose instant depends on the viewer's zone. */
const FLOAT_MARGIN = 15 * 3_600_000;

const byStart = (a: Found, b: Found) => a.start - b.start || (a.e.ics.facts.uid < b.e.ics.facts.uid ? -1 : a.e.ics.facts.uid > b.e.ics.facts.uid ? 1 : 0);

// ---------------------------------------------------------------- calendar_events

export async function listEvents(scope: Scope, q: { from?: string; to?: string; tz?: string }): Promise<Answer> {
  const { index, calendars } = await openCalendars(scope);
  if (q.from === undefined && q.to === undefined) {
    const tz = q.tz === undefined ? null : checkTz(q.tz);
    const events = calendars.flatMap((c) => [...c.events].map((p) => index.eventByPath(p)).filter((e): e is Readable => !!e?.ics && index.eventByUid(e.ics.facts.uid) === e));
    events.sort((a, b) => (a.ics.facts.uid < b.ics.facts.uid ? -1 : 1));
    return plain({ from: null, to: null, tz, events: events.map(eventRecord) });
  }
  const w = parseWindow(q, WINDOW_MAX_DAYS.events);
  const occ: Found[] = [];
  occurrencesIn(index, new Set(calendars.map((c) => c.id)), w, (e, o, start) => occ.push({ e, o, start }));
  checkCount(occ.length);
  occ.sort(byStart);
  const head = { from: rfc3339(w.from, w.tz), to: rfc3339(w.to, w.tz), tz: w.tz };
  return {
    data: () => ({ ...head, events: occ.map(({ e, o }) => occurrenceRecord(e, o, w.tz)) }),
    json: () => withList(head, 'events', occ.map(({ e, o }) => occurrenceJson(e, o, w.tz))),
  };
}

// ---------------------------------------------------------------- items (events, logs, tasks)

const KIND_ORDER = { event: 0, log: 1, task: 2 } as const;

/** An item found in the window, its record made only when it is on the page. */
interface Pending {
  /** KIND_ORDER of its kind. */
  k: number;
  start: number;
  end: number;
  id: string;
  /** Distinguishes occurrences of one series. */
  n: number;
  /** Events: the rank of the UID (same order as `id`), compared instead of the strings. */
  rank: number;
  e: Readable | null;
  o: Occurrence | null;
  log: LogItem | null;
  task: TaskRecord | null;
}

const eventPending = (e: Readable, o: Occurrence, start: number, rank: Map<Readable, number>): Pending =>
  ({ k: KIND_ORDER.event, start, end: 0, id: e.ics.facts.uid, n: o.recurrenceId ?? 0, rank: rank.get(e)!, e, o, log: null, task: null });
const logPending = (l: LogItem, start: number, end: number): Pending =>
  ({ k: KIND_ORDER.log, start, end, id: l.entry.blockId, n: 0, rank: 0, e: null, o: null, log: l, task: null });
const taskPending = (t: TaskRecord, start: number): Pending =>
  ({ k: KIND_ORDER.task, start, end: start, id: t.task_id ?? `${t.path}#L${t.line}`, n: 0, rank: 0, e: null, o: null, log: null, task: t });

const jsonOf = (p: Pending, w: Window): string => (p.e ? occurrenceJson(p.e, p.o!, w.tz) : JSON.stringify(recordOf(p, w)));

function recordOf(p: Pending, w: Window): Record<string, unknown> {
  if (p.e) return occurrenceRecord(p.e, p.o!, w.tz);
  if (p.task) return taskRecordOf(p.task);
  const l = p.log!;
  return {
    kind: 'log',
    id: l.entry.blockId,
    title: l.entry.parts.title ?? l.entry.parts.text,
    start: rfc3339(p.start, w.tz),
    end: rfc3339(p.end, w.tz),
    all_day: false,
    recurrence_id: null,
    date: l.date,
    timezone: l.zone ?? w.tz,
    tags: l.entry.tags,
    path: l.path,
  };
}

function logRecord(l: LogItem, w: Window) {
  const zone = l.zone ?? w.tz;
  const at = (clock: string) => wallToInstant(zone, Date.parse(`${l.date}T${clock.length === 5 ? clock + ':00' : clock}Z`));
  const start = at(l.entry.parts.start!);
  let end = l.entry.parts.end ? at(l.entry.parts.end) : start;
  if (end < start) end += DAY; // 23:00-01:00 runs past midnight
  return { start, end };
}

function taskRecordOf(t: TaskRecord) {
  const next = dateText(Date.parse(`${t.due}T00:00:00Z`) + DAY);
  return {
    kind: 'task' as const,
    id: t.task_id ?? `${t.path}#L${t.line}`,
    title: t.text,
    start: t.due!,
    end: next,
    all_day: true,
    recurrence_id: null,
    path: t.path,
    status: t.status,
    checked: t.checked,
    note_id: t.note_id,
    etag: t.etag,
  };
}

async function collect(scope: Scope, w: Window): Promise<{ pending: Pending[]; calendars: CalendarEntry[] }> {
  const { index, calendars } = await openCalendars(scope);
  const shown = calendars.filter((c) => c.meta.visible);
  const pending: Pending[] = [];
  const { rank } = index.timeline();
  occurrencesIn(index, new Set(shown.map((c) => c.id)), w, (e, o, start) => {
    pending.push(eventPending(e, o, start, rank));
  });
  for (const l of await logItems(scope, w.dates)) {
    const { start, end } = logRecord(l, w);
    if (!(start < w.to && (end > w.from || (end === start && start >= w.from)))) continue;
    pending.push(logPending(l, start, end));
  }
  if (w.dates.length > 0) {
    for (const t of dueTasks(scope, w.dates[0]!, w.dates[w.dates.length - 1]!)) {
      const start = wallToInstant(w.tz, Date.parse(`${t.due}T00:00:00Z`));
      pending.push(taskPending(t, start));
    }
  }
  pending.sort(comparePending);
  return { pending, calendars: shown };
}

const keyOf = (p: Pending): unknown[] => [p.start, p.k, p.id, p.n];
const comparePending = (a: Pending, b: Pending) =>
  a.start - b.start || a.k - b.k || (a.k === 0 ? a.rank - b.rank : a.id < b.id ? -1 : a.id > b.id ? 1 : 0) || a.n - b.n;

export async function listItems(scope: Scope, q: { from: string; to: string; tz: string; cursor?: string; limit?: number }): Promise<Answer> {
  const w = parseWindow(q, WINDOW_MAX_DAYS.items);
  if (q.limit !== undefined && (q.limit < 1 || q.limit > ITEMS_PAGE_MAX)) {
    throw errors.badRequest(`query.limit must be between 1 and ${ITEMS_PAGE_MAX}`, { field: 'query.limit' });
  }
  const limit = q.limit ?? ITEMS_PAGE_DEFAULT;
  const after = decodeCursor(q.cursor);
  const { pending } = await collect(scope, w);
  let i = 0;
  if (after) {
    let lo = 0;
    let hi = pending.length;
    while (lo < hi) {
      const m = (lo + hi) >> 1;
      if (compareKeys(keyOf(pending[m]!), after) <= 0) lo = m + 1;
      else hi = m;
    }
    i = lo;
  }
  const page = pending.slice(i, i + limit);
  const more = i + limit < pending.length;
  const head = { from: rfc3339(w.from, w.tz), to: rfc3339(w.to, w.tz), tz: w.tz };
  const next_cursor = more ? encodeCursor(keyOf(page[page.length - 1]!)) : null;
  return {
    data: () => ({ ...head, items: page.map((p) => recordOf(p, w)), next_cursor }),
    json: () => withList(head, 'items', page.map((p) => jsonOf(p, w)), `,"next_cursor":${JSON.stringify(next_cursor)}`),
  };
}

// ---------------------------------------------------------------- calendar_range

export async function range(scope: Scope, q: { from: string; to: string; tz?: string }): Promise<Answer> {
  const w = parseWindow(q, WINDOW_MAX_DAYS.range);
  return (DATE_RE.test(q.from) && DATE_RE.test(q.to) && (await rangeByDays(scope, w))) || rangeWhole(scope, w);
}

/** calendar_range built in one piece: windows that do not run from midnight to midnight, or whose days cannot be told apart (see `rangeByDays`). */
export async function rangeWhole(scope: Scope, w: Window): Promise<Answer> {
  const { pending, calendars } = await collect(scope, w);
  checkCount(pending.length);
  const def = await defaultCalendarId(scope);
  const head = { from: rfc3339(w.from, w.tz), to: rfc3339(w.to, w.tz), tz: w.tz, dates: w.dates, calendars: calendars.map((c) => calendarRecord(c, def)) };
  return {
    data: () => ({ ...head, items: pending.map((p) => recordOf(p, w)) }),
    json: () => withList(head, 'items', pending.map((p) => jsonOf(p, w))),
  };
}

const COMMA = Buffer.from(',');

/** A part holding `list` (sorted) as JSON items. */
const partOf = (list: Pending[], w: Window, usable: boolean): Part => ({ json: Buffer.from(list.map((p) => jsonOf(p, w)).join(',')), count: list.length, usable });

/**
 * calendar_range of a window of whole days, assembled from per-day parts kept
 * in the window cache: the JSON of the items starting on that local day in
 * that zone (events, the day's timed log entries, tasks due that day), so the
 * weeks a grid is paged through share their days and a week costs a copy of
 * seven parts. Sorting by start puts each day's items after the previous
 * day's; the events that started before the window and still run at its
 * start are a part of their own (per zone and first day). A day whose Daily note has an entry starting on another
 * local day (an entry in another zone) is not usable: the answer is then
 * built whole, which reads the log entries of the window's notes only.
 * Null when the parts cannot be used.
 */
async function rangeByDays(scope: Scope, w: Window): Promise<Answer | null> {
  const n = w.dates.length;
  const starts = w.dates.map((d) => wallToInstant(w.tz, Date.parse(`${d}T00:00:00Z`)));
  const ends = [...starts.slice(1), wallToInstant(w.tz, Date.parse(`${w.dates[n - 1]}T00:00:00Z`) + DAY)];
  if (n === 0 || starts[0] !== w.from || ends[n - 1] !== w.to) return null;
  const parts = await openParts(scope);
  let opened: { index: CalendarIndex; shown: CalendarEntry[]; ids: Set<string> } | undefined;
  const calendarsNow = async () => {
    if (!opened) {
      const { index, calendars } = await openCalendars(scope);
      const shown = calendars.filter((c) => c.meta.visible);
      opened = { index, shown, ids: new Set(shown.map((c) => c.id)) };
    }
    return opened;
  };
  const key = (i: number) => `day ${w.tz} ${w.dates[i]}`;
  const got: Array<Part | undefined> = w.dates.map((_, i) => parts.get(key(i)));
  const missing = got.flatMap((p, i) => (p ? [] : [i]));
  if (missing.length > 0) {
    const { index, ids } = await calendarsNow();
    const built = await buildDays(scope, w, index, ids, starts, ends, missing);
    for (const [i, part] of built) got[i] = part;
    await parts.put(built.map(([i, part]) => [key(i), part]));
  }
  if (got.some((p) => !p!.usable)) return null;
  // Events that started before the window's first day and still run at its start, kept per zone and day like the days.
  const leadKey = `lead ${w.tz} ${w.dates[0]}`;
  let lead = parts.get(leadKey);
  if (!lead) {
    const { index, ids } = await calendarsNow();
    const { rank } = index.timeline();
    const list: Pending[] = [];
    occurrencesIn(index, ids, { from: w.from, to: w.from + 1, tz: w.tz, dates: [] }, (e, o, start) => {
      if (start < w.from) list.push(eventPending(e, o, start, rank));
    });
    list.sort(comparePending);
    lead = partOf(list, w, true);
    await parts.put([[leadKey, lead]]);
  }
  checkCount(got.reduce((sum, p) => sum + p!.count, lead.count));
  let cal = parts.get('calendars');
  if (!cal) {
    const { shown } = await calendarsNow();
    const def = await defaultCalendarId(scope);
    cal = { json: Buffer.from(JSON.stringify(shown.map((c) => calendarRecord(c, def)))), count: 0, usable: true };
    await parts.put([['calendars', cal]]);
  }
  const head = JSON.stringify({ from: rfc3339(w.from, w.tz), to: rfc3339(w.to, w.tz), tz: w.tz, dates: w.dates });
  const pieces: Buffer[] = [Buffer.from(`${head.slice(0, -1)},"calendars":`), cal.json, Buffer.from(',"items":[')];
  let first = true;
  const add = (b: Buffer) => {
    if (!first) pieces.push(COMMA);
    pieces.push(b);
    first = false;
  };
  for (const p of [lead, ...got]) if (p!.count > 0) add(p!.json);
  pieces.push(Buffer.from(']}'));
  const json = Buffer.concat(pieces);
  return { data: () => JSON.parse(json.toString('utf8')), json: () => json, whole: false };
}

/** The parts of the days `missing` (indexes into `w.dates`), found in one pass over their span. */
async function buildDays(scope: Scope, w: Window, index: CalendarIndex, shown: Set<string>, starts: number[], ends: number[], missing: number[]): Promise<Array<[number, Part]>> {
  const lo = starts[missing[0]!]!;
  const hi = ends[missing[missing.length - 1]!]!;
  const buckets = new Map<number, Pending[]>(missing.map((i) => [i, []]));
  const usable = new Map<number, boolean>(missing.map((i) => [i, true]));
  const dayOf = (t: number) => lowerBound(starts, t + 1) - 1;
  const { rank } = index.timeline();
  occurrencesIn(index, shown, { from: lo, to: hi, tz: w.tz, dates: [] }, (e, o, start) => {
    if (start >= lo) buckets.get(dayOf(start))?.push(eventPending(e, o, start, rank));
  });
  const dayIndex = new Map(w.dates.map((d, i) => [d, i]));
  for (const l of await logItems(scope, missing.map((i) => w.dates[i]!))) {
    const i = dayIndex.get(l.date)!;
    const { start, end } = logRecord(l, w);
    if (start < starts[i]! || start >= ends[i]!) usable.set(i, false);
    else buckets.get(i)!.push(logPending(l, start, end));
  }
  for (const t of dueTasks(scope, w.dates[missing[0]!]!, w.dates[missing[missing.length - 1]!]!)) {
    const i = dayIndex.get(t.due!)!;
    buckets.get(i)?.push(taskPending(t, starts[i]!));
  }
  return missing.map((i) => {
    const list = buckets.get(i)!.sort(comparePending);
    return [i, partOf(list, w, usable.get(i)!)];
  });
}

// ---------------------------------------------------------------- calendar_year

export async function year(scope: Scope, q: { year: number; tz?: string }): Promise<Answer> {
  if (q.year < 1 || q.year > 9998) throw errors.badRequest('query.year must be between 1 and 9998', { field: 'query.year' });
  const tz = checkTz(q.tz);
  const y = String(q.year).padStart(4, '0');
  const w = parseWindow({ from: `${y}-01-01`, to: `${y}-12-31`, tz }, 367);
  const { pending } = await collect(scope, w);
  const days = new Map<string, { date: string; events: number; logs: number; tasks: number }>();
  for (const p of pending) {
    const date = p.task ? p.task.due! : dateText(instantToWall(tz, Math.max(p.start, w.from)));
    let d = days.get(date);
    if (!d) days.set(date, (d = { date, events: 0, logs: 0, tasks: 0 }));
    if (p.e) d.events++;
    else if (p.log) d.logs++;
    else d.tasks++;
  }
  const list = [...days.values()].sort((a, b) => (a.date < b.date ? -1 : 1));
  return plain({
    year: q.year,
    tz,
    totals: { events: list.reduce((n, d) => n + d.events, 0), logs: list.reduce((n, d) => n + d.logs, 0), tasks: list.reduce((n, d) => n + d.tasks, 0) },
    days: list,
  });
}

// ---------------------------------------------------------------- calendar_tags

export async function tags(scope: Scope) {
  const { index, calendars } = await openCalendars(scope);
  const counts = new Map<string, number>();
  for (const c of calendars) {
    for (const p of c.events) {
      const e = index.eventByPath(p);
      if (!e?.ics || index.eventByUid(e.ics.facts.uid) !== e) continue;
      for (const t of e.ics.facts.tags) counts.set(t, (counts.get(t) ?? 0) + 1);
    }
  }
  return { tags: [...counts].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)).map(([tag, count]) => ({ tag, count })) };
}
