/**
 * Quiet hours as a rule of local time: whether a moment is quiet and when the
 * quiet ends. Times are the server's local time zone (the spec's record has
 * only `quiet_start` and `quiet_end`).
 */
const minutesOf = (hhmm: string): number => {
  const [h, m] = hhmm.split(':').map(Number);
  return h! * 60 + m!;
};

/**
 * Whether local time `now` falls in [start, end). A range whose end is before
 * its start crosses midnight (22:00–07:00); start equal to end is no quiet hours.
 */
export function inQuietHours(now: Date, start: string, end: string): boolean {
  const s = minutesOf(start);
  const e = minutesOf(end);
  if (s === e) return false;
  const t = now.getHours() * 60 + now.getMinutes();
  return s < e ? t >= s && t < e : t >= s || t < e;
}

/** The first instant after `now` at which local time is `end` (when held pushes go out). */
export function quietEndsAt(now: Date, end: string): number {
  const e = minutesOf(end);
  const d = new Date(now.getTime());
  d.setHours(Math.floor(e / 60), e % 60, 0, 0);
  if (d.getTime() <= now.getTime()) d.setDate(d.getDate() + 1);
  return d.getTime();
}
