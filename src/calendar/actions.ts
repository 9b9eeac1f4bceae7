/**
 * Calendar area of the spec (document 3): CalDAV accounts, Calendars, Events, subscriptions,
 * feeds and preferences (36 actions, scope data unless noted). Declarations only; handlers
 * are attached when the area is built.
 */
import { Type, type TSchema } from '@sinclair/typebox';
import { defineAction } from '../actions/types.js';
import { actions as feedActions } from './feed-actions.js';
import { actions as journalLinkActions } from './journal-link-actions.js';
import { actions as accountActions } from './account-actions.js';

const AREA = 'Calendar';

const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
const Id = (description: string) =>
  Type.Object({ id: Type.String({ minLength: 1, description }) }, { additionalProperties: false });

const AccountId = Id('ID of the CalDAV account');
const CalendarId = Id('ID of the Calendar');
const EventId = Id('Identity of the Event');
const FeedId = Id('ID of the feed');
const SubscriptionId = Id('ID of the subscription');

const Instant = (description: string) => Type.String({ format: 'date-time', description });
const LocalTime = (description: string) =>
  Type.String({ pattern: '^([01]\\d|2[0-3]):[0-5]\\d$', description: `${description} (local 24-hour HH:MM)` });

/** The body of `calendar_create_feed`, which `calendar_update_feed` takes as well. */
const FeedBody = Type.Object(
  {
    color: Type.Optional(Nullable(Type.String())),
    detail: Type.Union([Type.Literal('full'), Type.Literal('busy_only')], {
      description: 'Busy-only feeds reveal only availability',
    }),
    include_notes: Type.Optional(Type.Boolean()),
    include_tasks: Type.Optional(Type.Boolean()),
    name: Type.String(),
    source: Type.Union([Type.Literal('journal'), Type.Literal('area'), Type.Literal('calendar')], {
      description: 'Selects one owner-scoped collection',
    }),
    source_id: Type.Optional(Nullable(Type.String({ description: 'ID of the source collection' }))),
  },
  { additionalProperties: false },
);

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
  defineAction({
    name: 'calendar_calendars',
    method: 'GET',
    route: '/api/v1/calendar/calendars',
    tool: 'svc_api_calendar_calendars',
    surfaces: ['cli', 'mcp', 'webmcp'],
    scopes: ['data'],
    effect: 'read',
    requestEncoding: 'none',
    responseEncoding: 'json',
    recentConfirmation: false,
    area: AREA,
    summary: "Lists the caller's Calendars.",
    input: {},
  }),
  defineAction({
    name: 'calendar_create_event',
    method: 'POST',
    route: '/api/v1/calendar/events',
    tool: 'svc_api_calendar_create_event',
    surfaces: ['cli', 'mcp', 'webmcp'],
    scopes: ['data'],
    effect: 'destructive',
    requestEncoding: 'json',
    responseEncoding: 'json',
    recentConfirmation: false,
    area: AREA,
    summary:
      "Creates an Event from iCalendar text in a Calendar; without `calendar_id` it uses the User's synced default Calendar (for legacy Users without one, the first visible Calendar on an enabled account).",
    input: {
      body: Type.Object(
        {
          calendar_id: Type.Optional(
            Nullable(
              Type.String({
                description:
                  "Omitted: the User's synced default, or for legacy Users without a saved default the first visible Calendar on an enabled account",
              }),
            ),
          ),
          icalendar: Type.String({ description: 'The Event as iCalendar text' }),
        },
        { additionalProperties: false },
      ),
    },
  }),
  defineAction({
    name: 'calendar_delete_event',
    method: 'DELETE',
    route: '/api/v1/calendar/events/{id}',
    tool: 'svc_api_calendar_delete_event',
    surfaces: ['cli', 'mcp', 'webmcp'],
    scopes: ['data'],
    effect: 'destructive',
    requestEncoding: 'none',
    responseEncoding: 'json',
    recentConfirmation: false,
    area: AREA,
    summary: 'Deletes an Event.',
    input: { path: EventId },
  }),
  defineAction({
    name: 'calendar_event_detail',
    method: 'GET',
    route: '/api/v1/calendar/events/{id}',
    tool: 'svc_api_calendar_event_detail',
    surfaces: ['cli', 'mcp', 'webmcp'],
    scopes: ['data'],
    effect: 'read',
    requestEncoding: 'none',
    responseEncoding: 'json',
    recentConfirmation: false,
    area: AREA,
    summary: 'Reads one Event in detail.',
    input: { path: EventId },
  }),
  defineAction({
    name: 'calendar_events',
    method: 'GET',
    route: '/api/v1/calendar/events',
    tool: 'svc_api_calendar_events',
    surfaces: ['cli', 'mcp', 'webmcp'],
    scopes: ['data'],
    effect: 'read',
    requestEncoding: 'none',
    responseEncoding: 'json',
    recentConfirmation: false,
    area: AREA,
    summary:
      'Lists Events, optionally within a `from`/`to` window in time zone `tz`; `fresh` asks for freshly synced data. Request smaller from/to windows when the range is too large.',
    input: {
      query: Type.Object(
        {
          fresh: Type.Optional(Type.Boolean()),
          from: Type.Optional(Type.String({ description: 'Start of the window' })),
          to: Type.Optional(Type.String({ description: 'End of the window' })),
          tz: Type.Optional(Type.String({ description: 'Time zone of the window' })),
        },
        { additionalProperties: false },
      ),
    },
  }),
  defineAction({
    name: 'calendar_items',
    method: 'GET',
    route: '/api/v1/calendar/items',
    tool: 'svc_api_calendar_items',
    surfaces: ['cli', 'mcp', 'webmcp'],
    scopes: ['data'],
    effect: 'read',
    requestEncoding: 'none',
    responseEncoding: 'json',
    recentConfirmation: false,
    area: AREA,
    summary:
      'Lists the Calendar items (log entries, Events and Tasks) between `from` and `to` in time zone `tz`, one page at a time. Pass `next_cursor` unchanged or reduce the window and `limit`.',
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
  }),
  defineAction({
    name: 'calendar_move_event',
    method: 'POST',
    route: '/api/v1/calendar/events/{id}/move',
    tool: 'svc_api_calendar_move_event',
    surfaces: ['cli', 'mcp', 'webmcp'],
    scopes: ['data'],
    effect: 'destructive',
    requestEncoding: 'json',
    responseEncoding: 'json',
    recentConfirmation: false,
    area: AREA,
    summary: 'Moves an Event to another Calendar.',
    input: {
      path: EventId,
      body: Type.Object(
        { calendar_id: Type.String({ description: 'Target Calendar' }) },
        { additionalProperties: false },
      ),
    },
  }),
  defineAction({
    name: 'calendar_preferences_get',
    method: 'GET',
    route: '/api/v1/calendar/preferences',
    tool: 'svc_api_calendar_preferences_get',
    surfaces: ['cli', 'mcp', 'webmcp'],
    scopes: ['data'],
    effect: 'read',
    requestEncoding: 'none',
    responseEncoding: 'json',
    recentConfirmation: false,
    area: AREA,
    summary: "Reads the caller's calendar preferences.",
    input: {},
  }),
  defineAction({
    name: 'calendar_preferences_put',
    method: 'PUT',
    route: '/api/v1/calendar/preferences',
    tool: 'svc_api_calendar_preferences_put',
    surfaces: ['cli', 'mcp', 'webmcp'],
    scopes: ['data'],
    effect: 'destructive',
    requestEncoding: 'json',
    responseEncoding: 'json',
    recentConfirmation: false,
    area: AREA,
    summary:
      "Saves the caller's calendar preferences: date and time formats, first day of week, hour height, snapping, grid step (5, 10, 15 or 30 minutes) and default Event Calendar. Every member is optional.",
    input: {
      body: Type.Object(
        {
          date_format: Type.Optional(DateFormat),
          default_event_calendar_id: Type.Optional(
            Nullable(Type.String({ description: 'Null clears the saved choice; omission keeps it' })),
          ),
          first_day_of_week: Type.Optional(FirstDayOfWeek),
          hour_height: Type.Optional(Nullable(Type.Integer({ minimum: 0, maximum: 2147483647 }))),
          snap_to_items: Type.Optional(
            Nullable(Type.Boolean({ description: 'Align pointer edits with nearby item edges' })),
          ),
          snap_to_now: Type.Optional(
            Nullable(Type.Boolean({ description: 'Align pointer edits with the current-time line' })),
          ),
          time_format: Type.Optional(TimeFormat),
          time_step_minutes: Type.Optional(TimeStepMinutes),
        },
        { additionalProperties: false },
      ),
    },
  }),
  defineAction({
    name: 'calendar_range',
    method: 'GET',
    route: '/api/v1/calendar/range',
    tool: 'svc_api_calendar_range',
    surfaces: ['cli', 'mcp', 'webmcp'],
    scopes: ['data'],
    effect: 'read',
    requestEncoding: 'none',
    responseEncoding: 'json',
    recentConfirmation: false,
    area: AREA,
    summary:
      'Reads the Calendar between `from` and `to`, optionally in time zone `tz`. Request smaller from/to windows when the range is too large.',
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
  }),
  defineAction({
    name: 'calendar_tags',
    method: 'GET',
    route: '/api/v1/calendar/tags',
    tool: 'svc_api_calendar_tags',
    surfaces: ['cli', 'mcp', 'webmcp'],
    scopes: ['data'],
    effect: 'read',
    requestEncoding: 'none',
    responseEncoding: 'json',
    recentConfirmation: false,
    area: AREA,
    summary: 'Lists the Event Tags.',
    input: {},
  }),
  defineAction({
    name: 'calendar_update_calendar',
    method: 'PATCH',
    route: '/api/v1/calendar/calendars/{id}',
    tool: 'svc_api_calendar_update_calendar',
    surfaces: ['cli', 'mcp', 'webmcp'],
    scopes: ['data'],
    effect: 'destructive',
    requestEncoding: 'json',
    responseEncoding: 'json',
    recentConfirmation: false,
    area: AREA,
    summary: 'Changes the color or visibility of a Calendar.',
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
  }),
  defineAction({
    name: 'calendar_update_event',
    method: 'PUT',
    route: '/api/v1/calendar/events/{id}',
    tool: 'svc_api_calendar_update_event',
    surfaces: ['cli', 'mcp', 'webmcp'],
    scopes: ['data'],
    effect: 'destructive',
    requestEncoding: 'json',
    responseEncoding: 'json',
    recentConfirmation: false,
    area: AREA,
    summary: 'Replaces an Event with new iCalendar text.',
    input: {
      path: EventId,
      body: Type.Object(
        { icalendar: Type.String({ description: 'The Event as iCalendar text' }) },
        { additionalProperties: false },
      ),
    },
  }),
  defineAction({
    name: 'calendar_year',
    method: 'GET',
    route: '/api/v1/calendar/year',
    tool: 'svc_api_calendar_year',
    surfaces: ['cli', 'mcp', 'webmcp'],
    scopes: ['data'],
    effect: 'read',
    requestEncoding: 'none',
    responseEncoding: 'json',
    recentConfirmation: false,
    area: AREA,
    summary: 'Shows the Calendar activity of one year, optionally in time zone `tz`.',
    input: {
      query: Type.Object(
        {
          tz: Type.Optional(Type.String({ description: 'Time zone' })),
          year: Type.Integer({ minimum: -2147483648, maximum: 2147483647 }),
        },
        { additionalProperties: false },
      ),
    },
  }),
  ...feedActions,
  ...journalLinkActions,
  ...accountActions,
];
