/**
 * A calendar's events for feeds, from the calendar area's index (src/calendar/calendar-index.ts):
 * the parsed event files, never a second reading of them.
 */
import type ICAL from 'ical.js';
import { defaultCalendarId, findCalendar, openCalendars } from './events.js';
import type { CalendarSource } from './feed.js';

export const calendarFeedSource: CalendarSource = {
  async resolve(scope, sourceId) {
    return sourceId === null ? defaultCalendarId(scope) : (await findCalendar(scope, sourceId, 'body.source_id')).id;
  },
  async version(scope) {
    return String((await openCalendars(scope)).index.generation);
  },
  /** A calendar removed since the feed was made publishes nothing (the feed stays, empty). */
  async components(scope, calendarId) {
    const { index, seen } = await openCalendars(scope);
    const cal = index.calendarById(calendarId);
    if (!cal || !seen(calendarId)) return [];
    const out: ICAL.Component[] = [];
    for (const path of [...cal.events].sort()) {
      const e = index.eventByPath(path);
      if (e?.ics) out.push(e.ics.root);
    }
    return out;
  },
};
