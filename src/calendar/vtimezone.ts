/**
 * VTIMEZONE components for IANA zones that an event names in a TZID without carrying the
 * VTIMEZONE (RFC 5545 3.6.5 asks for one per TZID). Added only to what the server sends
 * (feeds, CalDAV GET and REPORT); the stored file is never changed. The transitions come
 * from the runtime's tz database (zones.ts), written as yearly RRULEs over the runs of years
 * that follow one rule (docs/calendar.md, "VTIMEZONE on output").
 */
import type ICAL from 'ical.js';
import { isIanaZone, offsetAt, transitionsIn, type Transition } from './zones.js';

/** Years of tz data before this are not described (a client reads earlier times with the first observance). */
const FIRST_YEAR = 1970;
const LAST_YEAR = 2200;
/** How far past this year an open-ended series' zone is described (the last rule stays open-ended anyway). */
const HORIZON_YEARS = 5;

export type YearRange = [from: number, to: number];

const pad = (n: number, w = 2) => String(n).padStart(w, '0');
const DAYS = ['SU', 'MO', 'TU', 'WE', 'TH', 'FR', 'SA'];

function localText(wall: number): string {
  const d = new Date(wall);
  return `${pad(d.getUTCFullYear(), 4)}${pad(d.getUTCMonth() + 1)}${pad(d.getUTCDate())}T${pad(d.getUTCHours())}${pad(d.getUTCMinutes())}${pad(d.getUTCSeconds())}`;
}

function offsetText(ms: number): string {
  const s = Math.round(Math.abs(ms) / 1000);
  const sec = s % 60;
  return `${ms < 0 ? '-' : '+'}${pad(Math.floor(s / 3600))}${pad(Math.floor(s / 60) % 60)}${sec ? pad(sec) : ''}`;
}

/** Month, weekday-in-month rule and local time of a change: equal for every year one RRULE describes. */
function ruleOf(t: Transition): { byMonth: number; byDay: string; key: string } {
  const local = new Date(t.at + t.from);
  const day = local.getUTCDate();
  const daysInMonth = new Date(Date.UTC(local.getUTCFullYear(), local.getUTCMonth() + 1, 0)).getUTCDate();
  // In the month's last 7 days it is the last such weekday; else the nth (both exact by construction).
  const nth = day > daysInMonth - 7 ? -1 : Math.ceil(day / 7);
  const byDay = `${nth}${DAYS[local.getUTCDay()]}`;
  const byMonth = local.getUTCMonth() + 1;
  return { byMonth, byDay, key: `${t.from}>${t.to}@${byMonth}/${byDay}/${local.getUTCHours()}:${local.getUTCMinutes()}:${local.getUTCSeconds()}` };
}

function observance(daylight: boolean, start: number, from: number, to: number, rrule: string | null): string[] {
  const kind = daylight ? 'DAYLIGHT' : 'STANDARD';
  return [`BEGIN:${kind}`, `DTSTART:${localText(start)}`, ...(rrule ? [`RRULE:${rrule}`] : []), `TZOFFSETFROM:${offsetText(from)}`, `TZOFFSETTO:${offsetText(to)}`, `END:${kind}`];
}

function build(zone: string, from: number, to: number): string {
  const lines = ['BEGIN:VTIMEZONE', `TZID:${zone}`];
  // The offset in force when the described years begin.
  const jan = Date.UTC(from, 0, 1);
  const first = offsetAt(zone, jan);
  lines.push(...observance(first > offsetAt(zone, Date.UTC(from, 6, 1)), jan, first, first, null));
  const years: Array<{ year: number; changes: Transition[]; key: string }> = [];
  for (let y = from; y <= to; y++) {
    const changes = transitionsIn(zone, y);
    years.push({ year: y, changes, key: changes.map((c) => ruleOf(c).key).join('|') });
  }
  for (let i = 0; i < years.length; ) {
    let j = i;
    while (j + 1 < years.length && years[j + 1]!.key === years[i]!.key) j++;
    const run = years.slice(i, j + 1);
    const open = j === years.length - 1;
    // One observance per change of the year: a yearly rule over the run (open-ended when the run reaches the last year described).
    run[0]!.changes.forEach((c, k) => {
      const { byMonth, byDay } = ruleOf(c);
      const last = run[run.length - 1]!.changes[k]!;
      const until = open ? '' : `;UNTIL=${localText(last.at)}Z`;
      const rrule = run.length > 1 || open ? `FREQ=YEARLY;BYMONTH=${byMonth};BYDAY=${byDay}${until}` : null;
      lines.push(...observance(c.to > c.from, c.at + c.from, c.from, c.to, rrule));
    });
    i = j + 1;
  }
  lines.push('END:VTIMEZONE');
  return lines.join('\r\n');
}

const cache = new Map<string, string>();

/** The VTIMEZONE text (CRLF lines, no final newline) of IANA `zone` over the years `from`..`to`, cached per zone and range. */
export function vtimezoneText(zone: string, [fromIn, toIn]: YearRange): string {
  const from = Math.min(Math.max(fromIn, FIRST_YEAR), LAST_YEAR);
  const to = Math.min(Math.max(toIn, from), LAST_YEAR);
  const key = `${zone}\u0000${from}\u0000${to}`;
  let text = cache.get(key);
  if (text === undefined) {
    text = build(zone, from, to);
    if (cache.size >= 1000) cache.clear();
    cache.set(key, text);
  }
  return text;
}

type JCalProp = [name: string, params: Record<string, unknown>, type: string, ...values: unknown[]];
type JCalComp = [name: string, props: JCalProp[], comps: JCalComp[]];

const yearOfValue = (v: unknown): number | null => {
  if (Array.isArray(v)) return yearOfValue(v[0]); // a PERIOD: its start
  const y = typeof v === 'string' ? Number(v.slice(0, 4)) : NaN;
  return Number.isInteger(y) ? y : null;
};

/**
 * The IANA zones the object's components name in a TZID without a VTIMEZONE of the object's
 * own, each with the years its times fall in: from the earliest to the latest time written
 * (UNTIL included), and for a series without UNTIL up to this year plus a horizon.
 * `components` limits the look to those (what a busy-only feed keeps of the file).
 */
export function missingZones(root: ICAL.Component, opts: { components?: readonly ICAL.Component[]; nowYear?: number } = {}): Map<string, YearRange> {
  const nowYear = opts.nowYear ?? new Date().getUTCFullYear();
  const jcal = root.jCal as unknown as JCalComp;
  const own = new Set<string>();
  for (const c of jcal[2]) if (c[0] === 'vtimezone') for (const p of c[1]) if (p[0] === 'tzid') own.add(String(p[3]));
  const out = new Map<string, YearRange>();
  const walk = (c: JCalComp) => {
    if (c[0] === 'vtimezone') return;
    const zones: string[] = [];
    let lo = Infinity;
    let hi = -Infinity;
    let openEnded = false;
    for (const p of c[1]) {
      if (p[0] === 'rrule') {
        const until = (p[3] as { until?: string } | undefined)?.until;
        const y = until ? yearOfValue(until) : null;
        if (y === null) openEnded = true;
        else hi = Math.max(hi, y);
        continue;
      }
      const tzid = p[1].tzid;
      if (typeof tzid !== 'string') continue;
      if (!own.has(tzid) && isIanaZone(tzid) && !zones.includes(tzid)) zones.push(tzid);
      for (const v of p.slice(3)) {
        const y = yearOfValue(v);
        if (y !== null) (lo = Math.min(lo, y)), (hi = Math.max(hi, y));
      }
    }
    if (openEnded) hi = Math.max(hi, nowYear + HORIZON_YEARS);
    for (const z of zones) {
      if (!Number.isFinite(lo)) continue;
      const r = out.get(z);
      out.set(z, r ? [Math.min(r[0], lo), Math.max(r[1], hi)] : [lo, hi]);
    }
    for (const sub of c[2]) walk(sub);
  };
  for (const c of opts.components ? opts.components.map((x) => x.jCal as unknown as JCalComp) : jcal[2]) walk(c);
  return out;
}

/** Adds `b`'s ranges into `a` (widening a zone both name). */
export function mergeRanges(a: Map<string, YearRange>, b: ReadonlyMap<string, YearRange>): void {
  for (const [z, r] of b) {
    const x = a.get(z);
    a.set(z, x ? [Math.min(x[0], r[0]), Math.max(x[1], r[1])] : r);
  }
}

const served = new WeakMap<ICAL.Component, string>();

/**
 * An object's text as the server sends it: the stored text, with a VTIMEZONE for each IANA
 * zone it names without one, put before its first component (in the text's own line ends).
 * Kept per parsed file version.
 */
export function withZones(text: string, root: ICAL.Component): string {
  let out = served.get(root);
  if (out === undefined) {
    out = text;
    const missing = missingZones(root);
    const at = text.search(/^BEGIN:(?!VCALENDAR)/im);
    if (missing.size > 0 && at > 0) {
      const eol = text.includes('\r\n') ? '\r\n' : '\n';
      const blocks = [...missing].map(([z, r]) => vtimezoneText(z, r).replace(/\r\n/g, eol) + eol).join('');
      out = text.slice(0, at) + blocks + text.slice(at);
    }
    served.set(root, out);
  }
  return out;
}
