/**
 * Calendar feeds (spec document 3): published iCalendar feeds of the journal, an area or a calendar.
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
    name: 'calendar_create_feed',
    method: 'POST',
    route: '/api/v1/calendar/feeds',
    tool: 'svc_api_calendar_create_feed',
    surfaces: ['cli', 'mcp', 'webmcp'],
    scopes: ['data', 'account'],
    effect: 'destructive',
    requestEncoding: 'json',
    responseEncoding: 'json',
    recentConfirmation: false,
    area: AREA,
    summary:
      'Creates a calendar feed link for one owner-scoped collection (`journal`, `area` or `calendar`), with `full` detail or `busy_only` (reveals only availability).',
    input: { body: FeedBody },
  }),
  defineAction({
    name: 'calendar_delete_feed',
    method: 'DELETE',
    route: '/api/v1/calendar/feeds/{id}',
    tool: 'svc_api_calendar_delete_feed',
    surfaces: ['cli', 'mcp', 'webmcp'],
    scopes: ['data', 'account'],
    effect: 'destructive',
    requestEncoding: 'none',
    responseEncoding: 'json',
    recentConfirmation: false,
    area: AREA,
    summary: 'Deletes a calendar feed and its link.',
    input: { path: FeedId },
  }),
  defineAction({
    name: 'calendar_list_feeds',
    method: 'GET',
    route: '/api/v1/calendar/feeds',
    tool: 'svc_api_calendar_list_feeds',
    surfaces: ['cli', 'mcp', 'webmcp'],
    scopes: ['data', 'account'],
    effect: 'read',
    requestEncoding: 'none',
    responseEncoding: 'json',
    recentConfirmation: false,
    area: AREA,
    summary: "Lists the caller's calendar feeds.",
    input: {},
  }),
  defineAction({
    name: 'calendar_revoke_feed_link',
    method: 'DELETE',
    route: '/api/v1/calendar/feeds/{id}/link',
    tool: 'svc_api_calendar_revoke_feed_link',
    surfaces: ['cli', 'mcp', 'webmcp'],
    scopes: ['data', 'account'],
    effect: 'destructive',
    requestEncoding: 'none',
    responseEncoding: 'json',
    recentConfirmation: false,
    area: AREA,
    summary: 'Revokes the current link of a calendar feed.',
    input: { path: FeedId },
  }),
  defineAction({
    name: 'calendar_rotate_feed_link',
    method: 'POST',
    route: '/api/v1/calendar/feeds/{id}/link',
    tool: 'svc_api_calendar_rotate_feed_link',
    surfaces: ['cli', 'mcp', 'webmcp'],
    scopes: ['data', 'account'],
    effect: 'destructive',
    requestEncoding: 'none',
    responseEncoding: 'json',
    recentConfirmation: false,
    area: AREA,
    summary: 'Replaces the link of a calendar feed with a new one; the old link stops working.',
    input: { path: FeedId },
  }),
  defineAction({
    name: 'calendar_update_feed',
    method: 'PUT',
    route: '/api/v1/calendar/feeds/{id}',
    tool: 'svc_api_calendar_update_feed',
    surfaces: ['cli', 'mcp', 'webmcp'],
    scopes: ['data', 'account'],
    effect: 'destructive',
    requestEncoding: 'json',
    responseEncoding: 'json',
    recentConfirmation: false,
    area: AREA,
    summary: 'Replaces the settings of a calendar feed; takes the same body as `calendar_create_feed`.',
    input: { path: FeedId, body: FeedBody },
  }),
];
