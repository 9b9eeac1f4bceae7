/**
 * Quiet hours: a daily local-time range during which web push is held (inbox
 * items are still created at once). Times are the server's local time zone:
 * the spec's record has only `quiet_start` and `quiet_end`.
 */
import { callerOf, type ActionContext } from '../actions/context.js';
import { quietHoursOf, setQuietHours as keepQuietHours } from '../store/notifications.js';
import { inQuietHours, quietEndsAt } from './quiet-time.js';

export function getQuietHours(ctx: ActionContext) {
  const userId = callerOf(ctx).userId;
  const q = quietHoursOf(ctx.services.store, userId);
  return { quiet_start: q?.quiet_start ?? null, quiet_end: q?.quiet_end ?? null };
}

export async function setQuietHours(ctx: ActionContext, body: { quiet_start: string; quiet_end: string }) {
  const userId = callerOf(ctx).userId;
  const now = ctx.services.reminders?.now() ?? Date.now();
  // Pushes held under the old setting go out when the new quiet hours end (at once if not quiet now).
  const due = inQuietHours(new Date(now), body.quiet_start, body.quiet_end) ? quietEndsAt(new Date(now), body.quiet_end) : now;
  await keepQuietHours(ctx.services.store, { user_id: userId, quiet_start: body.quiet_start, quiet_end: body.quiet_end }, due);
  ctx.services.reminders?.push.rearm();
  return { quiet_start: body.quiet_start, quiet_end: body.quiet_end };
}
