/**
 * One event's iCalendar text: parsed and checked with ical.js, its facts read
 * for records, and the update merge that keeps what a client did not mean to
 * change (unknown and X- properties). Pure functions; errors are AppErrors
 * naming the input field (docs/calendar.md, "Event files").
 */
import { randomUUID } from 'node:crypto';
import ICAL from 'ical.js';
import { AppError } from '../core/errors.js';
import { registerZone } from './zones.js';

export interface EventFacts {
  uid: string;
  title: string;
  description: string | null;
  location: string | null;
  status: string | null;
  /** CATEGORIES of the master (or the first component), in order, without duplicates. */
  tags: string[];
  allDay: boolean;
  /** TZID of DTSTART; null for UTC, floating times and all-day events. */
  timezone: string | null;
  floating: boolean;
  rrule: string | null;
  rdates: string[];
  exdates: string[];
  /** RECURRENCE-ID values of the overrides in the file. */
  overrides: string[];
  dtstart: ICAL.Time;
  dtend: ICAL.Time;
}

export interface ParsedIcs {
  root: ICAL.Component;
  /** The VEVENT without RECURRENCE-ID; null when the file holds overrides only. */
  master: ICAL.Component | null;
  overrides: ICAL.Component[];
  facts: EventFacts;
}

const bad = (field: string, message: string, reason: string, extra: Record<string, string> = {}) =>
  new AppError('bad_request', `${field}: ${message}`, { details: { field, reason, ...extra } });

/** Properties RFC 5545 and RFC 7986 define on a VEVENT; anything else is kept on update when the new text leaves it out. */
const KNOWN_EVENT_PROPS = new Set([
  'dtstamp', 'uid', 'dtstart', 'class', 'created', 'description', 'geo', 'last-modified', 'location',
  'organizer', 'priority', 'sequence', 'status', 'summary', 'transp', 'url', 'recurrence-id', 'rrule',
  'dtend', 'duration', 'attach', 'attendee', 'categories', 'comment', 'contact', 'exdate',
  'request-status', 'related-to', 'resources', 'rdate', 'color', 'image', 'conference',
]);
const KNOWN_CALENDAR_PROPS = new Set(['prodid', 'version', 'calscale', 'method', 'name', 'description', 'uid', 'last-modified', 'url', 'refresh-interval', 'source', 'color', 'image']);

function parseRoot(text: string, field: string): ICAL.Component {
  if (text.trim() === '') throw bad(field, 'the iCalendar text is empty', 'empty');
  let jcal: unknown;
  try {
    jcal = ICAL.parse(text);
  } catch (e) {
    throw bad(field, `malformed iCalendar: ${(e as Error).message}`, 'malformed_icalendar');
  }
  // ICAL.parse returns a list when the text holds several top-level components.
  if (Array.isArray(jcal) && Array.isArray(jcal[0])) throw bad(field, 'the text holds more than one VCALENDAR', 'several_calendars');
  const root = new ICAL.Component(jcal as unknown[]);
  if (root.name !== 'vcalendar') throw bad(field, `expected a VCALENDAR, got ${root.name.toUpperCase()}`, 'not_a_calendar');
  return root;
}

const text = (c: ICAL.Component, name: string): string | null => {
  const v = c.getFirstPropertyValue(name);
  return v === null || v === undefined ? null : String(v);
};

/** Every TZID a component's properties name must resolve: a VTIMEZONE in the file, or a zone name the tz database knows. */
function checkZones(root: ICAL.Component, events: ICAL.Component[], field: string): void {
  const defined = new Set(root.getAllSubcomponents('vtimezone').map((z) => String(z.getFirstPropertyValue('tzid'))));
  for (const ev of events) {
    for (const p of ev.getAllProperties()) {
      const tzid = p.getParameter('tzid');
      if (typeof tzid !== 'string' || defined.has(tzid)) continue;
      if (!registerZone(tzid)) {
        throw bad(field, `unknown TZID ${JSON.stringify(tzid)} on ${p.name.toUpperCase()}: name an IANA time zone (Europe/Berlin) or include its VTIMEZONE`, 'unknown_tzid', { tzid });
      }
    }
  }
}

/** Registers the zones a file names so ical.js can convert its times; unknown ones read as floating. */
function registerNamedZones(events: ICAL.Component[]): void {
  for (const ev of events) {
    for (const p of ev.getAllProperties()) {
      const tzid = p.getParameter('tzid');
      if (typeof tzid === 'string') registerZone(tzid);
    }
  }
}

function valuesOf(c: ICAL.Component, name: string): string[] {
  const out: string[] = [];
  for (const p of c.getAllProperties(name)) for (const v of p.getValues()) out.push(String(v));
  return out;
}

/**
 * Where an event ends. With DURATION, RFC 5545 (3.3.6, 3.8.5.3) counts weeks and days in
 * wall-clock time but hours, minutes and seconds as exact time; ical.js adds all of it to the
 * wall clock, so `PT1H` from 01:30 on a fall-back night would end two real hours later.
 */
export function eventEnd(ev: ICAL.Event): ICAL.Time {
  const start = ev.startDate;
  const d = ev.component.hasProperty('dtend') ? null : (ev.component.getFirstPropertyValue('duration') as ICAL.Duration | null);
  const zone = start.zone;
  if (!d || start.isDate || !zone || zone === ICAL.Timezone.localTimezone || zone === ICAL.Timezone.utcTimezone) return ev.endDate;
  const sign = d.isNegative ? -1 : 1;
  const end = start.clone();
  end.addDuration(new ICAL.Duration({ weeks: d.weeks, days: d.days, isNegative: d.isNegative }));
  const exact = sign * (d.hours * 3600 + d.minutes * 60 + d.seconds);
  if (exact === 0) return end;
  // In UTC: the end may be the second of two equal wall times (01:30 EST after 01:30 EDT).
  return ICAL.Time.fromJSDate(new Date((end.toUnixTime() + exact) * 1000), true);
}

/**
 * Parses one event file. `strict` (text from a client) refuses what the server
 * would not write: no VEVENT, several UIDs, other component kinds, a missing
 * DTSTART, unknown TZIDs. Files other programs wrote are read leniently (an
 * unknown TZID reads as floating time) but still need one UID and a DTSTART.
 */
export function parseEvent(textIn: string, opts: { field: string; strict: boolean }): ParsedIcs {
  const { field, strict } = opts;
  const root = parseRoot(textIn, field);
  const events = root.getAllSubcomponents('vevent');
  if (events.length === 0) throw bad(field, 'no VEVENT in the text', 'no_event');
  if (strict) {
    for (const c of root.getAllSubcomponents()) {
      if (c.name !== 'vevent' && c.name !== 'vtimezone' && !c.name.startsWith('x-')) {
        throw bad(field, `an event file holds VEVENTs and VTIMEZONEs only, not ${c.name.toUpperCase()}`, 'unsupported_component', { component: c.name.toUpperCase() });
      }
    }
  }
  const uids = new Set(events.map((e) => text(e, 'uid')));
  if (uids.size > 1) throw bad(field, 'all VEVENTs of one event share one UID (a series and its overrides)', 'several_uids');
  const uid = [...uids][0];
  if (!uid) throw bad(field, 'the VEVENT has no UID', 'missing_uid');
  if (strict) checkZones(root, events, field);
  else registerNamedZones(events);
  const masters = events.filter((e) => !e.hasProperty('recurrence-id'));
  if (masters.length > 1) throw bad(field, 'more than one VEVENT without RECURRENCE-ID', 'several_masters');
  const master = masters[0] ?? null;
  const overrides = events.filter((e) => e.hasProperty('recurrence-id'));
  const main = master ?? overrides[0]!;
  for (const e of events) {
    if (!e.hasProperty('dtstart')) throw bad(field, 'a VEVENT has no DTSTART', 'missing_dtstart');
  }
  let ev: ICAL.Event;
  let dtstart: ICAL.Time;
  let dtend: ICAL.Time;
  try {
    ev = new ICAL.Event(main);
    dtstart = ev.startDate;
    dtend = eventEnd(ev);
    if (master && master.hasProperty('rrule')) ev.iterator().next();
  } catch (e) {
    throw bad(field, `the VEVENT cannot be read: ${(e as Error).message}`, 'malformed_icalendar');
  }
  if (!dtstart || Number.isNaN(dtstart.year)) throw bad(field, 'DTSTART is not a date or date-time', 'malformed_icalendar');
  if (dtend.compare(dtstart) < 0) throw bad(field, 'the event ends before it starts', 'end_before_start');
  const tzid = dtstart.isDate ? null : (main.getFirstProperty('dtstart')!.getParameter('tzid') as string | undefined) ?? null;
  const zoned = !dtstart.isDate && (dtstart.zone === ICAL.Timezone.utcTimezone || (tzid !== null && dtstart.zone !== ICAL.Timezone.localTimezone));
  const rruleProp = master?.getFirstProperty('rrule');
  const tags: string[] = [];
  for (const t of valuesOf(main, 'categories')) {
    const tag = t.trim();
    if (tag && !tags.includes(tag)) tags.push(tag);
  }
  return {
    root,
    master,
    overrides,
    facts: {
      uid,
      title: text(main, 'summary') ?? '',
      description: text(main, 'description'),
      location: text(main, 'location'),
      status: text(main, 'status'),
      tags,
      allDay: dtstart.isDate,
      timezone: zoned && tzid !== null ? tzid : null,
      floating: !zoned,
      rrule: rruleProp ? String(rruleProp.getFirstValue()) : null,
      rdates: master ? valuesOf(master, 'rdate') : [],
      exdates: master ? valuesOf(master, 'exdate') : [],
      overrides: overrides.map((o) => String(o.getFirstPropertyValue('recurrence-id'))),
      dtstart,
      dtend,
    },
  };
}

/**
 * Text for a new event: the client's bytes as sent, with a UID added to each
 * VEVENT when the text has none (one UID for all of them) and CRLF line ends.
 */
export function withUid(textIn: string, field: string): { text: string; uid: string } {
  const root = parseRoot(textIn, field);
  const events = root.getAllSubcomponents('vevent');
  if (events.length > 0 && events.every((e) => !e.hasProperty('uid'))) {
    const uid = randomUUID();
    return { text: textIn.replace(/^(BEGIN:VEVENT)(\r?\n)/gim, `$1$2UID:${uid}$2`), uid };
  }
  return { text: textIn, uid: String(events[0]?.getFirstPropertyValue('uid') ?? '') };
}

const keyOf = (c: ICAL.Component): string =>
  c.name === 'vevent' ? `vevent:${c.getFirstPropertyValue('recurrence-id')?.toString() ?? ''}` : c.name === 'vtimezone' ? `vtimezone:${c.getFirstPropertyValue('tzid')}` : `${c.name}:`;

const propText = (p: ICAL.Property) => p.toICALString();

/**
 * Merges the properties of `from` (the client's new version) into `into` (the
 * stored one), in the stored order: properties the new text has replace the
 * stored ones of that name; known properties it lacks are removed; unknown and
 * X- properties it lacks stay as stored; new ones go last. Subcomponents
 * (VALARM) are the new text's.
 */
function mergeProperties(into: ICAL.Component, from: ICAL.Component, known: Set<string>): void {
  const queues = new Map<string, ICAL.Property[]>();
  for (const p of from.getAllProperties()) {
    const q = queues.get(p.name) ?? [];
    q.push(new ICAL.Property(structuredClone(p.toJSON())));
    queues.set(p.name, q);
  }
  const result: ICAL.Property[] = [];
  for (const p of [...into.getAllProperties()]) {
    const q = queues.get(p.name);
    if (q) {
      const next = q.shift();
      if (next) result.push(next);
    } else if (!known.has(p.name)) {
      result.push(p);
    }
  }
  for (const q of queues.values()) result.push(...q);
  into.removeAllProperties();
  for (const p of result) into.addProperty(p);
}

function mergeComponent(into: ICAL.Component, from: ICAL.Component, known: Set<string>): void {
  mergeProperties(into, from, known);
  into.removeAllSubcomponents();
  for (const c of from.getAllSubcomponents()) into.addSubcomponent(new ICAL.Component(structuredClone(c.toJSON())));
}

/**
 * The stored file updated to `next`: unchanged components keep their stored
 * form, changed ones take the new properties (see mergeComponent), components
 * the new text drops go, except VTIMEZONEs and X- components. Returns the
 * stored text itself when nothing changed.
 */
export function mergeUpdate(storedText: string, stored: ParsedIcs, next: ParsedIcs): string {
  const root = stored.root;
  const out = new ICAL.Component(structuredClone(root.toJSON()));
  const oldByKey = new Map(out.getAllSubcomponents().map((c) => [keyOf(c), c] as const));
  const seen = new Set<string>();
  let changed = false;
  for (const c of next.root.getAllSubcomponents()) {
    const key = keyOf(c);
    seen.add(key);
    const old = oldByKey.get(key);
    if (!old) {
      out.addSubcomponent(new ICAL.Component(structuredClone(c.toJSON())));
      changed = true;
    } else if (old.toString() !== c.toString()) {
      mergeComponent(old, c, c.name === 'vevent' ? KNOWN_EVENT_PROPS : new Set());
      changed = true;
    }
  }
  for (const [key, c] of [...oldByKey]) {
    if (seen.has(key) || c.name === 'vtimezone' || c.name.startsWith('x-')) continue;
    out.removeSubcomponent(c);
    changed = true;
  }
  // Calendar-level properties (PRODID, METHOD, X-WR-...): the same rule as an event's.
  const calProps = (c: ICAL.Component) => c.getAllProperties().map(propText).join('\n');
  if (calProps(root) !== calProps(next.root)) {
    mergeProperties(out, next.root, KNOWN_CALENDAR_PROPS);
    changed = true;
  }
  if (!changed) return storedText;
  return out.toString().replace(/\r?\n/g, '\r\n') + '\r\n';
}
