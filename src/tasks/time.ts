/** Wall-clock helpers: dates of tasks are calendar dates, read in a time zone (the server's unless one is given). */
import { errors } from '../core/errors.js';

/** Refuses an unknown IANA time zone name (400 naming the field). */
export function checkTimeZone(tz: string | undefined | null, field: string): string | undefined {
  if (tz === undefined || tz === null || tz === '') return undefined;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return tz;
  } catch {
    throw errors.badRequest(`${field} is not a known time zone (use an IANA name such as Europe/Paris)`, { field });
  }
}

/** The wall-clock time of an instant in a zone (server local when omitted), as UTC ms of the same fields. */
export function wallClock(ms: number, tz?: string): number {
  if (!tz) {
    const d = new Date(ms);
    return Date.UTC(d.getFullYear(), d.getMonth(), d.getDate(), d.getHours(), d.getMinutes(), d.getSeconds(), d.getMilliseconds());
  }
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone: tz,
    hourCycle: 'h23',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
  }).formatToParts(new Date(ms));
  const get = (t: string) => Number(parts.find((p) => p.type === t)?.value ?? 0);
  return Date.UTC(get('year'), get('month') - 1, get('day'), get('hour') % 24, get('minute'), get('second'), ms % 1000);
}

/** `YYYY-MM-DD` of a floating wall-clock ms. */
export function dayOf(wallMs: number): string {
  return new Date(wallMs).toISOString().slice(0, 10);
}

/** Today's date in the zone (server local when omitted). */
export function todayIn(tz?: string, now = Date.now()): string {
  return dayOf(wallClock(now, tz));
}

/** Minutes since midnight of a floating wall-clock ms. */
export function minutesOf(wallMs: number): number {
  const d = new Date(wallMs);
  return d.getUTCHours() * 60 + d.getUTCMinutes();
}

const DAY_RE = /^\d{4}-\d{2}-\d{2}$/;

/** Validates a `YYYY-MM-DD` date and returns its UTC-midnight ms. */
export function parseDay(s: string, field: string): number {
  if (!DAY_RE.test(s)) throw errors.badRequest(`${field} must be a date YYYY-MM-DD`, { field });
  const ms = Date.parse(`${s}T00:00:00Z`);
  if (Number.isNaN(ms) || dayOf(ms) !== s) throw errors.badRequest(`${field} is not a valid date`, { field });
  return ms;
}
