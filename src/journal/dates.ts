/**
 * Calendar dates, wall times and IANA time zones for the journal. Pure
 * functions: no clock is read here (callers pass Unix ms).
 */
import { errors } from '../core/errors.js';

const DATE_RE = /^(\d{4})-(\d{2})-(\d{2})$/;

export function isValidDate(s: string): boolean {
  const m = DATE_RE.exec(s);
  if (!m) return false;
  const y = Number(m[1]);
  const mo = Number(m[2]);
  const d = Number(m[3]);
  if (mo < 1 || mo > 12 || d < 1) return false;
  const days = new Date(Date.UTC(y, mo, 0)).getUTCDate();
  return d <= days;
}

/** Throws 400 naming `field` unless `s` is a real `YYYY-MM-DD` date. */
export function checkDate(s: string, field: string): string {
  if (!isValidDate(s)) throw errors.badRequest(`${field.split('.').pop()} must be a calendar date YYYY-MM-DD (got ${JSON.stringify(s)})`, { field });
  return s;
}

const zoneCache = new Map<string, boolean>();

export function isValidZone(zone: string): boolean {
  if (!zone || zone.length > 64) return false;
  let ok = zoneCache.get(zone);
  if (ok === undefined) {
    try {
      new Intl.DateTimeFormat('en-US', { timeZone: zone });
      ok = true;
    } catch {
      ok = false;
    }
    if (zoneCache.size < 1000) zoneCache.set(zone, ok);
  }
  return ok;
}

/** Throws 400 naming `field` unless `zone` is an IANA time zone name. */
export function checkZone(zone: string, field: string): string {
  if (!isValidZone(zone)) {
    throw errors.badRequest(`${field} must be an IANA time zone such as Europe/Berlin (got ${JSON.stringify(zone)})`, { field });
  }
  return zone;
}

export function serverZone(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
}

/** The calendar date `YYYY-MM-DD` of instant `ms` in `zone`. */
export function dateInZone(ms: number, zone: string): string {
  const parts = new Intl.DateTimeFormat('en-US', { timeZone: zone, year: 'numeric', month: '2-digit', day: '2-digit' }).formatToParts(
    new Date(ms),
  );
  const get = (t: string) => parts.find((p) => p.type === t)!.value;
  return `${get('year')}-${get('month')}-${get('day')}`;
}

/** The wall-clock time `HH:mm:ss` of instant `ms` in `zone`. */
export function clockInZone(ms: number, zone: string): string {
  return new Intl.DateTimeFormat('en-GB', { timeZone: zone, hour: '2-digit', minute: '2-digit', second: '2-digit', hourCycle: 'h23' }).format(new Date(ms));
}

const WALL_RE = /^(\d{4}-\d{2}-\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?$/;

/** A client's local wall time `YYYY-MM-DDTHH:MM[:SS]` → its date and `HH:MM`; 400 naming `field` otherwise. */
export function parseWallTime(s: string, field: string): { date: string; time: string } {
  const m = WALL_RE.exec(s.trim());
  if (!m || !isValidDate(m[1]!) || Number(m[2]) > 23 || Number(m[3]) > 59 || (m[4] !== undefined && Number(m[4]) > 59)) {
    throw errors.badRequest(`${field.split('.').pop()} must be a local wall time YYYY-MM-DDTHH:MM[:SS] (got ${JSON.stringify(s)})`, { field });
  }
  return { date: m[1]!, time: `${m[2]}:${m[3]}` };
}

/** `HH:MM` 24-hour, or 400 naming `field`. */
export function checkClock(s: string, field: string): string {
  const m = /^(\d{1,2}):(\d{2})$/.exec(s.trim());
  if (!m || Number(m[1]) > 23 || Number(m[2]) > 59) {
    throw errors.badRequest(`${field.split('.').pop()} must be a time HH:MM (got ${JSON.stringify(s)})`, { field });
  }
  return `${m[1]!.padStart(2, '0')}:${m[2]}`;
}
