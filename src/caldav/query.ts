/**
 * calendar-query filters (RFC 4791 §9.7): comp-filter (with is-not-defined and
 * time-range on VEVENT), prop-filter (is-not-defined, text-match). A time
 * range is answered with the calendar index's expansion of each series, in
 * UTC for floating times (no calendar-timezone is offered). Anything else is
 * refused with CALDAV:supported-filter rather than answered wrongly.
 */
import type ICAL from 'ical.js';
import type { CalendarIndex, ReadableEvent } from '../calendar/calendar-index.js';
import { DavError } from './errors.js';
import { child, children, NS, type XmlNode } from './xml.js';

export interface TimeRange {
  from: number;
  to: number;
}

export interface TextMatch {
  text: string;
  negate: boolean;
  collation: 'i;octet' | 'i;ascii-casemap' | 'i;unicode-casemap';
  matchType: 'contains' | 'equals' | 'starts-with' | 'ends-with';
}

export interface PropFilter {
  name: string;
  notDefined: boolean;
  textMatch: TextMatch | null;
}

export interface CompFilter {
  name: string;
  notDefined: boolean;
  timeRange: TimeRange | null;
  props: PropFilter[];
  comps: CompFilter[];
}

/** null: no filter (every member matches). */
export type QueryFilter = CompFilter | null;

/** Open ends of a time range: far enough for any calendar, near enough for expansions to stop. */
const EARLIEST = Date.UTC(1900, 0, 1);
const LATEST = Date.UTC(2200, 0, 1);

const unsupported = (what: string) => new DavError(403, `This filter is not supported: ${what}`, { ns: NS.caldav, name: 'supported-filter' });
const invalid = (what: string) => new DavError(403, `Invalid filter: ${what}`, { ns: NS.caldav, name: 'valid-filter' });

/** `20260301T000000Z` → ms. */
export function parseUtc(value: string): number | null {
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(value.trim());
  if (!m) return null;
  const ms = Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, +m[4]!, +m[5]!, +m[6]!);
  return Number.isNaN(ms) ? null : ms;
}

function parseTimeRange(n: XmlNode): TimeRange {
  const { start, end } = n.attrs;
  if (start === undefined && end === undefined) throw invalid('time-range needs start or end');
  const from = start === undefined ? EARLIEST : parseUtc(start);
  const to = end === undefined ? LATEST : parseUtc(end);
  if (from === null || to === null) throw invalid('time-range start and end are UTC date-times such as 20260301T000000Z');
  if (to <= from) throw invalid('time-range end must be after its start');
  return { from, to };
}

const COLLATIONS = new Set(['i;octet', 'i;ascii-casemap', 'i;unicode-casemap']);
const MATCH_TYPES = new Set(['contains', 'equals', 'starts-with', 'ends-with']);

function parsePropFilter(n: XmlNode): PropFilter {
  const name = n.attrs.name;
  if (!name) throw invalid('prop-filter needs a name');
  if (child(n, NS.caldav, 'param-filter')) throw unsupported('param-filter');
  if (child(n, NS.caldav, 'time-range')) throw unsupported('time-range inside prop-filter');
  const tm = child(n, NS.caldav, 'text-match');
  let textMatch: TextMatch | null = null;
  if (tm) {
    const collation = tm.attrs.collation ?? 'i;ascii-casemap';
    const matchType = tm.attrs['match-type'] ?? 'contains';
    if (!COLLATIONS.has(collation)) throw new DavError(403, `Unsupported collation ${collation}`, { ns: NS.caldav, name: 'supported-collation' });
    if (!MATCH_TYPES.has(matchType)) throw unsupported(`match-type ${matchType}`);
    textMatch = { text: tm.text, negate: tm.attrs['negate-condition'] === 'yes', collation: collation as TextMatch['collation'], matchType: matchType as TextMatch['matchType'] };
  }
  return { name: name.toUpperCase(), notDefined: !!child(n, NS.caldav, 'is-not-defined'), textMatch };
}

function parseCompFilter(n: XmlNode, depth: number): CompFilter {
  const name = n.attrs.name;
  if (!name) throw invalid('comp-filter needs a name');
  const tr = child(n, NS.caldav, 'time-range');
  const comps = children(n, NS.caldav, 'comp-filter');
  // VCALENDAR › VEVENT is as deep as Quire's event files go (VALARM filters are not answered).
  if (depth >= 1 && comps.length > 0) throw unsupported(`comp-filter inside ${name}`);
  if (tr && depth === 0) throw invalid('time-range on VCALENDAR');
  return {
    name: name.toUpperCase(),
    notDefined: !!child(n, NS.caldav, 'is-not-defined'),
    timeRange: tr ? parseTimeRange(tr) : null,
    props: children(n, NS.caldav, 'prop-filter').map(parsePropFilter),
    comps: comps.map((c) => parseCompFilter(c, depth + 1)),
  };
}

export function parseFilter(filter: XmlNode | undefined): QueryFilter {
  if (!filter) return null;
  const top = children(filter, NS.caldav, 'comp-filter');
  if (top.length !== 1 || top[0]!.attrs.name?.toUpperCase() !== 'VCALENDAR') throw invalid('the filter holds one comp-filter named VCALENDAR');
  return parseCompFilter(top[0]!, 0);
}

const fold = (s: string, c: TextMatch['collation']) => (c === 'i;octet' ? s : c === 'i;ascii-casemap' ? s.replace(/[A-Z]/g, (x) => x.toLowerCase()) : s.toLowerCase());

export function textMatches(value: string, m: TextMatch): boolean {
  const v = fold(value, m.collation);
  const t = fold(m.text, m.collation);
  const hit = m.matchType === 'equals' ? v === t : m.matchType === 'starts-with' ? v.startsWith(t) : m.matchType === 'ends-with' ? v.endsWith(t) : v.includes(t);
  return hit !== m.negate;
}

function propMatches(c: ICAL.Component, f: PropFilter): boolean {
  const props = c.getAllProperties(f.name.toLowerCase());
  if (f.notDefined) return props.length === 0;
  if (props.length === 0) return false;
  if (!f.textMatch) return true;
  return props.some((p) => textMatches(p.getValues().map(String).join(','), f.textMatch!));
}

function compMatches(index: CalendarIndex, e: ReadableEvent, f: CompFilter): boolean {
  const comps = e.ics.root.getAllSubcomponents(f.name.toLowerCase());
  if (f.notDefined) return comps.length === 0;
  if (comps.length === 0) return false;
  if (f.timeRange) {
    if (f.name !== 'VEVENT') throw unsupported(`time-range on ${f.name}`);
    if (index.expansionOf(e).between(f.timeRange.from, f.timeRange.to, 'UTC').length === 0) return false;
  }
  return comps.some((c) => f.props.every((p) => propMatches(c, p)));
}

/** The members the filter selects, in the order given. */
export function calendarQuery<T extends { entry: ReadableEvent }>(index: CalendarIndex, members: T[], filter: QueryFilter): T[] {
  if (!filter) return members;
  return members.filter(({ entry }) => {
    if (filter.notDefined) return false;
    if (!filter.props.every((p) => propMatches(entry.ics.root, p))) return false;
    return filter.comps.every((c) => compMatches(index, entry, c));
  });
}
