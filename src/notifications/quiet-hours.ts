/**
 * Quiet hours: a daily local-time range during which web push is held (inbox
 * items are still created at once). Times are the server's local time zone:
 * the spec's record has only `quiet_start` and `quiet_end`.
 */
import type { ActionContext } from '../actions/context.js';
import { callerOf } from '../accounts/handlers.js';
import { notificationTables } from '../store/schema.js';

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

export function getQuietHours(ctx: ActionContext) {
  const userId = callerOf(ctx).userId;
  const q = (ctx.services.store.snapshot().quiet_hours ?? []).find((x) => x.user_id === userId);
  return { quiet_start: q?.quiet_start ?? null, quiet_end: q?.quiet_end ?? null };
}

export async function setQuietHours(ctx: ActionContext, body: { quiet_start: string; quiet_end: string }) {
  const userId = callerOf(ctx).userId;
  const now = ctx.services.reminders?.now() ?? Date.now();
  await ctx.services.store.transact((data) => {
    const t = notificationTables(data);
    t.quiet_hours = t.quiet_hours.filter((x) => x.user_id !== userId);
    t.quiet_hours.push({ user_id: userId, quiet_start: body.quiet_start, quiet_end: body.quiet_end });
    // Pushes held under the old setting go out when the new quiet hours end (at once if not quiet now).
    const due = inQuietHours(new Date(now), body.quiet_start, body.quiet_end) ? quietEndsAt(new Date(now), body.quiet_end) : now;
    for (const h of t.held_pushes) if (h.user_id === userId) h.due_ms = due;
  });
  ctx.services.reminders?.push.rearm();
  return { quiet_start: body.quiet_start, quiet_end: body.quiet_end };
}
