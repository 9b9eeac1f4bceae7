/**
 * Calendar actions that link events with notes and the journal's log entries (spec document 3).
 */
import { Type, type TSchema } from '@sinclair/typebox';
import { defineAction } from '../actions/types.js';

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
    name: 'calendar_create_event_from_log',
    method: 'POST',
    route: '/api/v1/calendar/events/from-log',
    tool: 'svc_api_calendar_create_event_from_log',
    surfaces: ['cli', 'mcp', 'webmcp'],
    scopes: ['data'],
    effect: 'destructive',
    requestEncoding: 'json',
    responseEncoding: 'json',
    recentConfirmation: false,
    area: AREA,
    summary: 'Creates an Event from a log entry, with RFC 3339 start and end instants and a time zone.',
    input: {
      body: Type.Object(
        {
          calendar_id: Type.String(),
          end: Instant('RFC 3339 instant'),
          log_id: Type.String({ description: 'Block ID of the log entry' }),
          start: Instant('RFC 3339 instant'),
          timezone: Type.String(),
        },
        { additionalProperties: false },
      ),
    },
  }),
  defineAction({
    name: 'calendar_create_event_from_note',
    method: 'POST',
    route: '/api/v1/calendar/events/from-note',
    tool: 'svc_api_calendar_create_event_from_note',
    surfaces: ['cli', 'mcp', 'webmcp'],
    scopes: ['data'],
    effect: 'destructive',
    requestEncoding: 'json',
    responseEncoding: 'json',
    recentConfirmation: false,
    area: AREA,
    summary:
      'Creates an Event from a Note, with RFC 3339 start and end and a time zone; without `calendar_id` it uses the synced Event default.',
    input: {
      body: Type.Object(
        {
          calendar_id: Type.Optional(Nullable(Type.String({ description: 'Omitted: the synced Event default' }))),
          end: Instant('RFC 3339'),
          note_id: Type.String(),
          start: Instant('RFC 3339'),
          timezone: Type.String(),
        },
        { additionalProperties: false },
      ),
    },
  }),
  defineAction({
    name: 'calendar_duplicate_item',
    method: 'POST',
    route: '/api/v1/calendar/items/duplicate',
    tool: 'svc_api_calendar_duplicate_item',
    surfaces: ['cli', 'mcp', 'webmcp'],
    scopes: ['data'],
    effect: 'destructive',
    requestEncoding: 'json',
    responseEncoding: 'json',
    recentConfirmation: false,
    area: AREA,
    summary: 'Duplicates a log entry, Event or Task shown in the Calendar on a given Calendar-local day.',
    input: {
      body: Type.Object(
        {
          date: Type.String({ description: 'Calendar-local day that displays the source item' }),
          id: Type.String({ description: 'Stable Journal block ID, Event identity or Task identity' }),
          kind: Type.Union([Type.Literal('log'), Type.Literal('event'), Type.Literal('task')]),
        },
        { additionalProperties: false },
      ),
    },
  }),
  defineAction({
    name: 'calendar_event_log_status',
    method: 'GET',
    route: '/api/v1/calendar/events/{id}/log-this',
    tool: 'svc_api_calendar_event_log_status',
    surfaces: ['cli', 'mcp', 'webmcp'],
    scopes: ['data'],
    effect: 'read',
    requestEncoding: 'none',
    responseEncoding: 'json',
    recentConfirmation: false,
    area: AREA,
    summary: 'Gets the log entry written for an Event, if any.',
    input: { path: EventId },
  }),
  defineAction({
    name: 'calendar_log_event',
    method: 'POST',
    route: '/api/v1/calendar/events/{id}/log-this',
    tool: 'svc_api_calendar_log_event',
    surfaces: ['cli', 'mcp', 'webmcp'],
    scopes: ['data'],
    effect: 'destructive',
    requestEncoding: 'json',
    responseEncoding: 'json',
    recentConfirmation: false,
    area: AREA,
    summary: 'Logs a past Event as a log entry, optionally overriding its start and end with local HH:MM times.',
    input: {
      path: EventId,
      body: Type.Object(
        {
          end: Type.Optional(Nullable(LocalTime('Override of the Event end'))),
          start: Type.Optional(Nullable(LocalTime('Override of the Event start'))),
        },
        { additionalProperties: false },
      ),
    },
  }),
];
