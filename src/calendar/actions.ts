/**
 * Calendar area of the spec (document 3): Calendars, Events, views and preferences here;
 * feeds, journal links and CalDAV accounts in their own files. Handlers are one-liners over
 * the domain modules (events.ts, views.ts, preferences.ts); shapes in docs/calendar.md.
 */
import { Type, type TSchema } from '@sinclair/typebox';
import { specAction } from '../actions/spec.js';
import { reply } from '../actions/reply.js';
import { openScope } from '../notes/access.js';
import { readPreferences, writePreferences } from './preferences.js';
import { actions as feedActions } from './feed-actions.js';
import { actions as journalLinkActions } from './journal-link-actions.js';
import { actions as accountActions } from './account-actions.js';
import { calendarCode } from './lazy-load.js';

// The calendar's domain code, and ical.js (0.2 MB) under it, is loaded by the first calendar call, not by every start.
const ev = async () => (await calendarCode()).events;
const views = async () => (await calendarCode()).views;
const windowCache = async () => (await calendarCode()).windowCache;

const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
const Id = (description: string) =>
  Type.Object({ id: Type.String({ minLength: 1, description }) }, { additionalProperties: false });

const CalendarId = Id('ID of the Calendar');
const EventId = Id('Identity of the Event');

const DateFormat = Type.Union([
  Type.Literal('system'),
  Type.Literal('dmy_slash_padded_short'),
  Type.Literal('mdy_slash_short'),
  Type.Literal('dmy_slash_short'),
  Type.Literal('mdy_slash_long'),
  Type.Literal('dmy_slash_padded_long'),
  Type.Literal('dmy_dot'),
  Type.Literal('dmy_dash'),
  Type.Literal('ymd_slash'),
  Type.Literal('ymd_dot'),
  Type.Literal('iso'),
  Type.Null(),
]);
const FirstDayOfWeek = Type.Union([
  Type.Literal('system'),
  Type.Literal('sunday'),
  Type.Literal('monday'),
  Type.Literal('saturday'),
  Type.Null(),
]);
const TimeFormat = Type.Union([
  Type.Literal('system'),
  Type.Literal('24_hour'),
  Type.Literal('12_hour'),
  Type.Null(),
]);
const TimeStepMinutes = Type.Union(
  [Type.Literal(5), Type.Literal(10), Type.Literal(15), Type.Literal(30), Type.Null()],
  { description: 'Grid interval in minutes' },
);

export const actions = [
  specAction('calendar_calendars', {
    summary: "Lists the caller's Calendars.",
    input: {},
    handler: async (ctx) => (await ev()).listCalendars(await openScope(ctx)),
  }),
  specAction('calendar_create_event', {
    summary:
      "Creates an Event from iCalendar text in a Calendar; without `calendar_id` it uses the User's saved default Calendar, else the first visible one, else a new `Personal` Calendar.",
    input: {
      body: Type.Object(
        {
          calendar_id: Type.Optional(Nullable(Type.String({ description: "Omitted: the User's saved default, else the first visible Calendar" }))),
          icalendar: Type.String({ description: 'The Event as iCalendar text' }),
        },
        { additionalProperties: false },
      ),
    },
    handler: async (ctx, { body }) => reply(await (await ev()).createEvent(await openScope(ctx), body.calendar_id, body.icalendar), { status: 201 }),
  }),
  specAction('calendar_delete_event', {
    summary: 'Deletes an Event (its file).',
    input: { path: EventId },
    handler: async (ctx, { path }) => (await ev()).deleteEvent(await openScope(ctx), path.id),
  }),
  specAction('calendar_event_detail', {
    summary: 'Reads one Event in detail, with its iCalendar text.',
    input: { path: EventId },
    handler: async (ctx, { path }) => (await ev()).eventDetail(await openScope(ctx), path.id),
  }),
  specAction('calendar_events', {
    summary:
      'Lists Events, or with a `from`/`to` window their occurrences in time zone `tz`. Request smaller from/to windows when the range is too large.',
    input: {
      query: Type.Object(
        {
          fresh: Type.Optional(Type.Boolean({ description: 'Accepted for compatibility: event files are always read as they are on disk' })),
          from: Type.Optional(Type.String({ description: 'Start of the window' })),
          to: Type.Optional(Type.String({ description: 'End of the window' })),
          tz: Type.Optional(Type.String({ description: 'Time zone of the window' })),
        },
        { additionalProperties: false },
      ),
    },
    handler: async (ctx, { query }) => {
      const scope = await openScope(ctx);
      return (await windowCache()).cachedAnswer(scope, `events ${query.from} ${query.to} ${query.tz}`, async () => (await views()).listEvents(scope, query));
    },
  }),
  specAction('calendar_items', {
    summary:
      'Lists the Calendar items (Events, timed log entries and Tasks with a due date) between `from` and `to` in time zone `tz`, one page at a time. Pass `next_cursor` unchanged or reduce the window and `limit`.',
    input: {
      query: Type.Object(
        {
          cursor: Type.Optional(Type.String({ description: 'The `next_cursor` of the previous page, unchanged' })),
          from: Type.String({ description: 'Start of the window' }),
          limit: Type.Optional(Type.Integer({ minimum: 0, maximum: 2147483647, description: 'Page size' })),
          to: Type.String({ description: 'End of the window' }),
          tz: Type.String({ description: 'Time zone of the window' }),
        },
        { additionalProperties: false },
      ),
    },
    handler: async (ctx, { query }) => {
      const scope = await openScope(ctx);
      return (await windowCache()).cachedAnswer(scope, `items ${query.from} ${query.to} ${query.tz} ${query.limit} ${query.cursor}`, async () => (await views()).listItems(scope, query));
    },
  }),
  specAction('calendar_move_event', {
    summary: 'Moves an Event to another Calendar (its file moves to that folder).',
    input: {
      path: EventId,
      body: Type.Object({ calendar_id: Type.String({ description: 'Target Calendar' }) }, { additionalProperties: false }),
    },
    handler: async (ctx, { path, body }) => (await ev()).moveEvent(await openScope(ctx), path.id, body.calendar_id),
  }),
  specAction('calendar_preferences_get', {
    summary: "Reads the caller's calendar preferences (every key, null where unset).",
    input: {},
    handler: async (ctx) => readPreferences(await openScope(ctx)),
  }),
  specAction('calendar_preferences_put', {
    summary:
      "Saves the caller's calendar preferences: date and time formats, first day of week, hour height, snapping, grid step (5, 10, 15 or 30 minutes) and default Event Calendar. Every member is optional; null clears it.",
    input: {
      body: Type.Object(
        {
          date_format: Type.Optional(DateFormat),
          default_event_calendar_id: Type.Optional(Nullable(Type.String({ description: 'Null clears the saved choice; omission keeps it' }))),
          first_day_of_week: Type.Optional(FirstDayOfWeek),
          hour_height: Type.Optional(Nullable(Type.Integer({ minimum: 0, maximum: 2147483647 }))),
          snap_to_items: Type.Optional(Nullable(Type.Boolean({ description: 'Align pointer edits with nearby item edges' }))),
          snap_to_now: Type.Optional(Nullable(Type.Boolean({ description: 'Align pointer edits with the current-time line' }))),
          time_format: Type.Optional(TimeFormat),
          time_step_minutes: Type.Optional(TimeStepMinutes),
        },
        { additionalProperties: false },
      ),
    },
    handler: async (ctx, { body }) => {
      const scope = await openScope(ctx);
      return writePreferences(scope, body, async (id) => (await ev()).findCalendar(scope, id, 'body.default_event_calendar_id'));
    },
  }),
  specAction('calendar_range', {
    summary:
      'Reads what a calendar grid shows between `from` and `to` in time zone `tz`: the visible Calendars, their Event occurrences, timed log entries and due Tasks. Request smaller from/to windows when the range is too large.',
    input: {
      query: Type.Object(
        {
          from: Type.String({ description: 'Start of the window' }),
          to: Type.String({ description: 'End of the window' }),
          tz: Type.Optional(Type.String({ description: 'Time zone of the window' })),
        },
        { additionalProperties: false },
      ),
    },
    handler: async (ctx, { query }) => {
      const scope = await openScope(ctx);
      return (await windowCache()).cachedAnswer(scope, `range ${query.from} ${query.to} ${query.tz}`, async () => (await views()).range(scope, query));
    },
  }),
  specAction('calendar_tags', {
    summary: 'Lists the Event Tags (CATEGORIES) with the number of Events carrying each.',
    input: {},
    handler: async (ctx) => (await views()).tags(await openScope(ctx)),
  }),
  specAction('calendar_update_calendar', {
    summary: 'Changes the color or visibility of a Calendar; null resets a key to its default.',
    input: {
      path: CalendarId,
      body: Type.Object(
        {
          color: Type.Optional(Nullable(Type.String())),
          visible: Type.Optional(Nullable(Type.Boolean())),
        },
        { additionalProperties: false },
      ),
    },
    handler: async (ctx, { path, body }) => (await ev()).updateCalendar(await openScope(ctx), path.id, body),
  }),
  specAction('calendar_update_event', {
    summary: 'Replaces an Event with new iCalendar text; unknown and X- properties the text leaves out are kept.',
    input: {
      path: EventId,
      body: Type.Object({ icalendar: Type.String({ description: 'The Event as iCalendar text' }) }, { additionalProperties: false }),
    },
    handler: async (ctx, { path, body }) => (await ev()).updateEvent(await openScope(ctx), path.id, body.icalendar),
  }),
  specAction('calendar_year', {
    summary: 'Shows the Calendar activity of one year (per-day counts of Events, log entries and Tasks), optionally in time zone `tz`.',
    input: {
      query: Type.Object(
        {
          tz: Type.Optional(Type.String({ description: 'Time zone' })),
          year: Type.Integer({ minimum: -2147483648, maximum: 2147483647 }),
        },
        { additionalProperties: false },
      ),
    },
    handler: async (ctx, { query }) => {
      const scope = await openScope(ctx);
      return (await windowCache()).cachedAnswer(scope, `year ${query.year} ${query.tz}`, async () => (await views()).year(scope, query));
    },
  }),
  ...feedActions,
  ...journalLinkActions,
  ...accountActions,
];
