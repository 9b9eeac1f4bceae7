/**
 * A calendar's events for feeds, from the calendar area's index (src/calendar/calendar-index.ts):
 * the parsed event files, never a second reading of them.
 */
import type { CalendarSource } from './feed.js';
import type { EventFile } from './feed-ical.js';
import { calendarCode } from './lazy-load.js';

// The calendar's events (and ical.js under them) are loaded by the first feed built, not by every start.
const events = async () => (await calendarCode()).events;

export const calendarFeedSource: CalendarSource = {
  async resolve(scope, sourceId) {
    const { defaultCalendarId, findCalendar } = await events();
    return sourceId === null ? defaultCalendarId(scope) : (await findCalendar(scope, sourceId, 'body.source_id')).id;
  },
  async version(scope) {
    return String((await (await events()).openCalendars(scope)).index.generation);
  },
  /** A calendar removed since the feed was made publishes nothing (the feed stays, empty). */
  async files(scope, calendarId) {
    const { index, seen } = await (await events()).openCalendars(scope);
    const cal = index.calendarById(calendarId);
    if (!cal || !seen(calendarId)) return [];
    const out: EventFile[] = [];
    for (const path of [...cal.events].sort()) {
      const e = index.eventByPath(path);
      // Two files claiming one UID: the one the calendar index answers for it (a feed's UIDs are unique).
      if (e?.ics && index.eventByUid(e.ics.facts.uid) === e) out.push({ root: e.ics.root, text: e.text });
    }
    return out;
  },
};
