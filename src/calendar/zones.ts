/**
 * Time zones for the calendar: IANA names answered from the runtime's own tz
 * database (Intl, which Node updates with ICU), handed to ical.js as zones it
 * can use for TZIDs a file names without a VTIMEZONE, and the conversions the
 * views need between wall-clock times and instants (docs/calendar.md, "Time zones").
 */
import ICAL from 'ical.js';

const HOUR = 3_600_000;

const formatters = new Map<string, Intl.DateTimeFormat>();
const validity = new Map<string, boolean>();

/** Whether `tzid` is a zone name the runtime's tz database knows (IANA names and their aliases). */
export function isIanaZone(tzid: string): boolean {
  if (!tzid || tzid.length > 64) return false;
  let ok = validity.get(tzid);
  if (ok === undefined) {
    try {
      new Intl.DateTimeFormat('en-US', { timeZone: tzid });
      // Offsets such as "+05:00" are accepted by Intl but are not zone names.
      ok = /^[A-Za-z]/.test(tzid);
    } catch {
      ok = false;
    }
    if (validity.size < 5000) validity.set(tzid, ok);
  }
  return ok;
}

function formatter(zone: string): Intl.DateTimeFormat {
  let f = formatters.get(zone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
      era: 'short',
    });
    formatters.set(zone, f);
  }
  return f;
}

function offsetUncached(zone: string, ms: number): number {
  const parts = formatter(zone).formatToParts(new Date(ms));
  let y = 0, mo = 0, d = 0, h = 0, mi = 0, s = 0, bc = false;
  for (const p of parts) {
    switch (p.type) {
      case 'year': y = Number(p.value); break;
      case 'month': mo = Number(p.value); break;
      case 'day': d = Number(p.value); break;
      case 'hour': h = Number(p.value); break;
      case 'minute': mi = Number(p.value); break;
      case 'second': s = Number(p.value); break;
      case 'era': bc = p.value === 'BC' || p.value === 'B'; break;
    }
  }
  const wall = Date.UTC(bc ? 1 - y : y, mo - 1, d, h, mi, s);
  const whole = ms - (ms % 1000 + 1000) % 1000;
  return Math.round((wall - whole) / 1000) * 1000;
}

/** Sampling step when looking for a zone's changes (no zone changes its offset twice within 3 days). */
const STEP = 3 * 24 * HOUR;

interface Segments {
  /** Instants where an offset starts (ascending), and the offsets. */
  starts: number[];
  offsets: number[];
}

/** Each zone's offsets, by UTC year: found once by sampling and bisecting to the second. */
const segmentCache = new Map<string, Map<number, Segments>>();

function segmentsOf(zone: string, year: number): Segments {
  let byYear = segmentCache.get(zone);
  if (!byYear) segmentCache.set(zone, (byYear = new Map()));
  let seg = byYear.get(year);
  if (seg) return seg;
  const t0 = Date.UTC(year, 0, 1);
  const t1 = Date.UTC(year + 1, 0, 1);
  seg = { starts: [t0], offsets: [offsetUncached(zone, t0)] };
  let prevT = t0;
  let prev = seg.offsets[0]!;
  for (let t = Math.min(t0 + STEP, t1); ; t = Math.min(t + STEP, t1)) {
    const o = offsetUncached(zone, t);
    if (o !== prev) {
      // The first second of the new offset lies in (prevT, t].
      let lo = prevT;
      let hi = t;
      while (hi - lo > 1000) {
        const mid = lo + Math.floor((hi - lo) / 2000) * 1000;
        if (offsetUncached(zone, mid) === prev) lo = mid;
        else hi = mid;
      }
      seg.starts.push(hi);
      seg.offsets.push(o);
      prev = o;
    }
    prevT = t;
    if (t >= t1) break;
  }
  byYear.set(year, seg);
  return seg;
}

const yearOf = (ms: number) => new Date(ms).getUTCFullYear();

/** The zone's offset from UTC (ms) at instant `ms`. */
export function offsetAt(zone: string, ms: number): number {
  if (zone === 'UTC' || zone === 'Etc/UTC') return 0;
  const y = yearOf(ms);
  // Far outside the range people plan in, ask Intl directly rather than cache years nobody revisits.
  if (y < 1800 || y > 2200 || Number.isNaN(y)) return offsetUncached(zone, ms);
  const { starts, offsets } = segmentsOf(zone, y);
  let lo = 0;
  let hi = starts.length - 1;
  while (lo < hi) {
    const m = (lo + hi + 1) >> 1;
    if (starts[m]! <= ms) lo = m;
    else hi = m - 1;
  }
  return offsets[lo]!;
}

/**
 * The instant of wall-clock time `wall` (its fields read as UTC) in `zone`, as RFC 5545
 * resolves the edge cases: a time skipped by a spring-forward change takes the offset
 * before the change (02:30 becomes 03:30), a time that happens twice takes the first.
 */
export function wallToInstant(zone: string, wall: number): number {
  const before = offsetAt(zone, wall - 14 * HOUR);
  const after = offsetAt(zone, wall + 14 * HOUR);
  if (before === after) {
    // No change near: one candidate (verified, for zones whose offset changed by a day).
    const o = offsetAt(zone, wall - before);
    return wall - o;
  }
  const okBefore = offsetAt(zone, wall - before) === before;
  const okAfter = offsetAt(zone, wall - after) === after;
  if (okBefore && okAfter) return wall - Math.max(before, after);
  if (okBefore) return wall - before;
  if (okAfter) return wall - after;
  return wall - before;
}

/** The wall-clock time (fields as UTC) of instant `ms` in `zone`. */
export const instantToWall = (zone: string, ms: number): number => ms + offsetAt(zone, ms);

const pad = (n: number, w = 2) => String(n).padStart(w, '0');

function offsetText(offsetMs: number): string {
  if (offsetMs === 0) return 'Z';
  const sign = offsetMs < 0 ? '-' : '+';
  const m = Math.round(Math.abs(offsetMs) / 60_000);
  return `${sign}${pad(Math.floor(m / 60))}:${pad(m % 60)}`;
}

/** `YYYY-MM-DDTHH:MM:SS` of a wall time (fields as UTC). */
export function wallText(wall: number): string {
  const d = new Date(wall);
  const y = d.getUTCFullYear();
  return `${y < 0 || y > 9999 ? String(y) : pad(y, 4)}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}T${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`;
}

/** `YYYY-MM-DD` of a wall time (fields as UTC). */
export const dateText = (wall: number): string => wallText(wall).slice(0, 10);

/** RFC 3339 text of instant `ms` as the clock in `zone` shows it, with that zone's offset. */
export function rfc3339(ms: number, zone: string): string {
  const off = offsetAt(zone, ms);
  return wallText(ms + off) + offsetText(off);
}

/**
 * An ical.js zone whose offsets come from the runtime's tz database, for every
 * year (a VTIMEZONE built from transitions would end where its list ends).
 */
class IntlZone extends ICAL.Timezone {
  constructor(tzid: string) {
    super({ tzid });
  }

  override utcOffset(tt: ICAL.Time): number {
    const wall = Date.UTC(tt.year, tt.month - 1, tt.day, tt.hour, tt.minute, tt.second);
    return (wall - wallToInstant(this.tzid, wall)) / 1000;
  }
}

/**
 * Makes sure ical.js resolves `tzid` when a file names it without a VTIMEZONE:
 * registers an IANA zone on first use. False for a name the tz database does
 * not know.
 */
export function registerZone(tzid: string): boolean {
  if (ICAL.TimezoneService.has(tzid)) return true;
  if (!isIanaZone(tzid)) return false;
  ICAL.TimezoneService.register(new IntlZone(tzid), tzid);
  return true;
}

/** A change of a zone's offset: at instant `at` (ms), from offset `from` to `to` (ms). */
export interface Transition {
  at: number;
  from: number;
  to: number;
}

/** The zone's offset changes during UTC year `year`, in order (none for a zone without DST). */
export function transitionsIn(zone: string, year: number): Transition[] {
  const { starts, offsets } = segmentsOf(zone, year);
  const out: Transition[] = [];
  for (let i = 1; i < starts.length; i++) out.push({ at: starts[i]!, from: offsets[i - 1]!, to: offsets[i]! });
  return out;
}
