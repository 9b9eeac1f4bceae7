/**
 * A published feed as an iCalendar document, serialised with ical.js. Pure: items and event
 * components in, text out. Busy-only feeds keep of each event only what says when it is busy.
 */
import ICAL from 'ical.js';
import { mergeRanges, missingZones, vtimezoneText, type YearRange } from './vtimezone.js';
import { wallToInstant } from './zones.js';

/** A local date and `HH:MM` in an IANA zone, or floating (zone null: "wherever you are"). */
export interface WallTime {
  date: string;
  time: string;
  zone: string | null;
}

/** One journal, note or task item of a feed (calendar events come as their own components). */
export interface FeedItem {
  uid: string;
  kind: 'log' | 'note' | 'task';
  summary: string;
  description: string | null;
  categories: string[];
  /** All-day on `date`, else from `start` to `end` (null: an instant). */
  date: string | null;
  start: WallTime | null;
  end: WallTime | null;
  /** Notes and tasks mark a day but take no time: they are left out of busy-only feeds. */
  busy: boolean;
}

export interface FeedHeader {
  name: string;
  color: string | null;
  detail: 'full' | 'busy_only';
  /** DTSTAMP of the generated items (Unix ms). */
  stampMs: number;
}

const pad = (n: number) => String(n).padStart(2, '0');

function icalTime(w: WallTime): ICAL.Time {
  if (w.zone === null) return ICAL.Time.fromDateTimeString(`${w.date}T${w.time}:00`);
  const [y, mo, d] = w.date.split('-').map(Number) as [number, number, number];
  const [h, mi] = w.time.split(':').map(Number) as [number, number];
  return ICAL.Time.fromJSDate(new Date(wallToInstant(w.zone, Date.UTC(y, mo - 1, d, h, mi))), true);
}

/** The calendar day after `date`. */
export function nextDay(date: string): string {
  const [y, m, d] = date.split('-').map(Number) as [number, number, number];
  const n = new Date(Date.UTC(y, m - 1, d + 1));
  return `${n.getUTCFullYear()}-${pad(n.getUTCMonth() + 1)}-${pad(n.getUTCDate())}`;
}

/** `b` on the day after its date when it does not come after `a` (`23:00–01:00`). */
function endAfterStart(a: WallTime, b: WallTime): WallTime {
  return b.date !== a.date || b.time > a.time ? b : { ...b, date: nextDay(a.date) };
}

function itemEvent(item: FeedItem, header: FeedHeader): ICAL.Component {
  const ev = new ICAL.Component('vevent');
  ev.addPropertyWithValue('uid', item.uid);
  ev.addPropertyWithValue('dtstamp', ICAL.Time.fromJSDate(new Date(header.stampMs), true));
  if (item.date !== null) {
    ev.addPropertyWithValue('dtstart', ICAL.Time.fromDateString(item.date));
    ev.addPropertyWithValue('dtend', ICAL.Time.fromDateString(nextDay(item.date)));
  } else if (item.start) {
    ev.addPropertyWithValue('dtstart', icalTime(item.start));
    if (item.end) ev.addPropertyWithValue('dtend', icalTime(endAfterStart(item.start, item.end)));
  }
  if (header.detail === 'busy_only') {
    ev.addPropertyWithValue('summary', 'Busy');
    return ev;
  }
  ev.addPropertyWithValue('summary', item.summary);
  if (item.description) ev.addPropertyWithValue('description', item.description);
  if (item.categories.length) {
    const p = new ICAL.Property('categories');
    p.setValues(item.categories);
    ev.addProperty(p);
  }
  if (!item.busy) ev.addPropertyWithValue('transp', 'TRANSPARENT');
  ev.addPropertyWithValue('x-quire-kind', item.kind);
  return ev;
}

/** Properties a busy-only feed keeps: when, how often, and whether the time counts as busy. */
const BUSY_KEEP = new Set(['uid', 'dtstamp', 'dtstart', 'dtend', 'duration', 'rrule', 'rdate', 'exdate', 'recurrence-id', 'transp', 'status', 'sequence']);

/** An event as a busy-only feed shows it, or null when it blocks no time (transparent or cancelled). */
export function busyOnly(vevent: ICAL.Component): ICAL.Component | null {
  const transp = String(vevent.getFirstPropertyValue('transp') ?? '').toUpperCase();
  const status = String(vevent.getFirstPropertyValue('status') ?? '').toUpperCase();
  if (transp === 'TRANSPARENT' || status === 'CANCELLED') return null;
  // The kept properties' jCal as they are (never the alarms or other subcomponents), then the neutral title.
  const out = new ICAL.Component(['vevent', (vevent.jCal[1] as unknown[][]).filter((p) => BUSY_KEEP.has(p[0] as string)), []]);
  out.addPropertyWithValue('summary', 'Busy');
  return out;
}

/** An event file: its parsed VCALENDAR (from the calendar index) and its text as on disk. */
export interface EventFile {
  root: ICAL.Component;
  text: string;
}

interface FileBlocks {
  zones: Array<[tzid: string, text: string]>;
  events: string[];
  /** IANA zones the file names without a VTIMEZONE, with the years its times span. */
  missing: Map<string, YearRange>;
}

/**
 * The top-level VTIMEZONE and VEVENT blocks of a file's text, lines as written (CRLF), or null
 * when they do not line up with what ical.js parsed. Only BEGIN/END lines are looked at: the
 * blocks are the file's own bytes, so a full feed republishes each event exactly as stored.
 */
function textBlocks(f: EventFile): FileBlocks | null {
  const zones = f.root.getAllSubcomponents('vtimezone');
  const events = f.root.getAllSubcomponents('vevent');
  const out: FileBlocks = { zones: [], events: [], missing: new Map() };
  const text = f.text;
  // BEGIN/END lines only (one native scan); content lines and folded continuations never match.
  const re = /^(BEGIN|END):([A-Za-z-]+)[ \t]*\r?$/gim;
  let open: { name: string; from: number } | null = null;
  let depth = 0;
  for (let m = re.exec(text); m !== null; m = re.exec(text)) {
    const name = m[2]!.toUpperCase();
    if (m[1]!.toUpperCase() === 'BEGIN') {
      if (++depth === 2 && (name === 'VEVENT' || name === 'VTIMEZONE')) open = { name, from: m.index };
      continue;
    }
    if (depth === 2 && open && open.name === name) {
      const raw = text.slice(open.from, m.index + m[0].length).replace(/\r$/, '');
      const block = raw.includes('\r\n') && !/[^\r]\n|\r(?!\n)/.test(raw) ? raw : raw.split(/\r\n|\n|\r/).join('\r\n');
      if (name === 'VEVENT') out.events.push(block);
      else out.zones.push([String(zones[out.zones.length]?.getFirstPropertyValue('tzid') ?? ''), block]);
      open = null;
    }
    depth--;
  }
  return out.events.length === events.length && out.zones.length === zones.length ? out : null;
}

/** Serialised blocks of one event file per detail level: files change rarely, feeds are rebuilt often. */
const blocksOf = { full: new WeakMap<ICAL.Component, FileBlocks>(), busy_only: new WeakMap<ICAL.Component, FileBlocks>() };

function fileBlocks(f: EventFile, detail: 'full' | 'busy_only'): FileBlocks {
  let b = blocksOf[detail].get(f.root);
  if (!b) {
    const zones = (): FileBlocks['zones'] =>
      f.root.getAllSubcomponents('vtimezone').map((tz) => [String(tz.getFirstPropertyValue('tzid') ?? ''), tz.toString()]);
    if (detail === 'full') {
      b = textBlocks(f) ?? { zones: zones(), events: f.root.getAllSubcomponents('vevent').map((ev) => ev.toString()), missing: new Map() };
      b.missing = missingZones(f.root);
    } else {
      b = { zones: zones(), events: [], missing: new Map() };
      const kept: ICAL.Component[] = [];
      for (const ev of f.root.getAllSubcomponents('vevent')) {
        const out = busyOnly(ev);
        if (out) kept.push(out);
      }
      b.events = kept.map((ev) => ev.toString());
      // Only the zones of the busy blocks: a dropped (free or cancelled) event's zone says nothing here.
      b.missing = missingZones(f.root, { components: kept });
    }
    blocksOf[detail].set(f.root, b);
  }
  return b;
}

/**
 * The feed document. Event files' VTIMEZONEs go in once per TZID (an IANA zone no file
 * describes gets one from the tz database, over the years all files need), their VEVENTs (with
 * overrides) as stored, or reduced to busy blocks by ical.js; items are made and serialised by
 * ical.js. Blocks are kept per file version, so a rebuild after one change serialises one file.
 */
export function feedDocument(header: FeedHeader, items: readonly FeedItem[], files: readonly EventFile[]): string {
  const cal = new ICAL.Component('vcalendar');
  cal.addPropertyWithValue('version', '2.0');
  cal.addPropertyWithValue('prodid', '-//Quire//Calendar feed//EN');
  cal.addPropertyWithValue('calscale', 'GREGORIAN');
  cal.addPropertyWithValue('x-wr-calname', header.name);
  cal.addPropertyWithValue('name', header.name);
  if (header.color) {
    cal.addPropertyWithValue('color', header.color);
    cal.addPropertyWithValue('x-apple-calendar-color', header.color);
  }
  const busy = header.detail === 'busy_only';
  const zones = new Map<string, string>();
  const missing = new Map<string, YearRange>();
  const blocks: string[] = [];
  for (const f of files) {
    const b = fileBlocks(f, header.detail);
    for (const [id, text] of b.zones) if (!zones.has(id)) zones.set(id, text);
    for (const e of b.events) blocks.push(e);
    mergeRanges(missing, b.missing);
  }
  for (const [id, range] of missing) if (!zones.has(id)) zones.set(id, vtimezoneText(id, range));
  for (const item of items) if (!busy || item.busy) blocks.push(itemEvent(item, header).toString());
  const head = cal.toString();
  const end = head.lastIndexOf('END:VCALENDAR');
  return [head.slice(0, end).replace(/\r\n$/, ''), ...zones.values(), ...blocks, 'END:VCALENDAR', ''].join('\r\n');
}
