/**
 * CalDAV accounts, subscriptions and refresh (spec document 3): the calendars mirrored from elsewhere.
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
    name: 'calendar_accounts',
    method: 'GET',
    route: '/api/v1/calendar/accounts',
    tool: 'svc_api_calendar_accounts',
    surfaces: ['cli', 'mcp', 'webmcp'],
    scopes: ['data'],
    effect: 'read',
    requestEncoding: 'none',
    responseEncoding: 'json',
    recentConfirmation: false,
    area: AREA,
    summary: "Lists the caller's CalDAV accounts.",
    input: {},
  }),
  defineAction({
    name: 'calendar_create_account',
    method: 'POST',
    route: '/api/v1/calendar/accounts',
    tool: 'svc_api_calendar_create_account',
    surfaces: ['cli', 'mcp', 'webmcp'],
    scopes: ['data'],
    effect: 'destructive',
    requestEncoding: 'json',
    responseEncoding: 'json',
    recentConfirmation: false,
    area: AREA,
    summary: 'Connects a CalDAV account with its endpoint, username and app password.',
    input: {
      body: Type.Object(
        {
          app_password: Type.String(),
          endpoint: Type.String({ description: 'CalDAV endpoint address' }),
          username: Type.String(),
        },
        { additionalProperties: false },
      ),
    },
  }),
  defineAction({
    name: 'calendar_create_subscription',
    method: 'POST',
    route: '/api/v1/calendar/subscriptions',
    tool: 'svc_api_calendar_create_subscription',
    surfaces: ['cli', 'mcp', 'webmcp'],
    scopes: ['data'],
    effect: 'destructive',
    requestEncoding: 'json',
    responseEncoding: 'json',
    recentConfirmation: false,
    area: AREA,
    summary: 'Subscribes to an external calendar by URL.',
    input: {
      body: Type.Object(
        {
          color: Type.Optional(Nullable(Type.String())),
          name: Type.String(),
          url: Type.String({ description: 'Address of the calendar to subscribe to' }),
        },
        { additionalProperties: false },
      ),
    },
  }),
  defineAction({
    name: 'calendar_list_subscriptions',
    method: 'GET',
    route: '/api/v1/calendar/subscriptions',
    tool: 'svc_api_calendar_list_subscriptions',
    surfaces: ['cli', 'mcp', 'webmcp'],
    scopes: ['data'],
    effect: 'read',
    requestEncoding: 'none',
    responseEncoding: 'json',
    recentConfirmation: false,
    area: AREA,
    summary: "Lists the caller's calendar subscriptions.",
    input: {},
  }),
  defineAction({
    name: 'calendar_refresh_calendar',
    method: 'POST',
    route: '/api/v1/calendar/calendars/{id}/refresh',
    tool: 'svc_api_calendar_refresh_calendar',
    surfaces: ['cli', 'mcp', 'webmcp'],
    scopes: ['data'],
    effect: 'destructive',
    requestEncoding: 'none',
    responseEncoding: 'json',
    recentConfirmation: false,
    area: AREA,
    summary: 'Refreshes one Calendar from its server.',
    input: { path: CalendarId },
  }),
  defineAction({
    name: 'calendar_refresh_now',
    method: 'POST',
    route: '/api/v1/calendar/refresh',
    tool: 'svc_api_calendar_refresh_now',
    surfaces: ['cli', 'mcp', 'webmcp'],
    scopes: ['data'],
    effect: 'destructive',
    requestEncoding: 'none',
    responseEncoding: 'json',
    recentConfirmation: false,
    area: AREA,
    summary: "Refreshes all of the caller's Calendars now.",
    input: {},
  }),
  defineAction({
    name: 'calendar_refresh_subscription',
    method: 'POST',
    route: '/api/v1/calendar/subscriptions/{id}/refresh',
    tool: 'svc_api_calendar_refresh_subscription',
    surfaces: ['cli', 'mcp', 'webmcp'],
    scopes: ['data'],
    effect: 'destructive',
    requestEncoding: 'none',
    responseEncoding: 'json',
    recentConfirmation: false,
    area: AREA,
    summary: 'Refreshes one calendar subscription from its URL.',
    input: { path: SubscriptionId },
  }),
  defineAction({
    name: 'calendar_remove_account',
    method: 'DELETE',
    route: '/api/v1/calendar/accounts/{id}',
    tool: 'svc_api_calendar_remove_account',
    surfaces: ['cli', 'mcp', 'webmcp'],
    scopes: ['data'],
    effect: 'destructive',
    requestEncoding: 'none',
    responseEncoding: 'json',
    recentConfirmation: false,
    area: AREA,
    summary: 'Disconnects a CalDAV account.',
    input: { path: AccountId },
  }),
  defineAction({
    name: 'calendar_remove_subscription',
    method: 'DELETE',
    route: '/api/v1/calendar/subscriptions/{id}',
    tool: 'svc_api_calendar_remove_subscription',
    surfaces: ['cli', 'mcp', 'webmcp'],
    scopes: ['data'],
    effect: 'destructive',
    requestEncoding: 'none',
    responseEncoding: 'json',
    recentConfirmation: false,
    area: AREA,
    summary: 'Removes a calendar subscription.',
    input: { path: SubscriptionId },
  }),
  defineAction({
    name: 'calendar_update_account',
    method: 'PATCH',
    route: '/api/v1/calendar/accounts/{id}',
    tool: 'svc_api_calendar_update_account',
    surfaces: ['cli', 'mcp', 'webmcp'],
    scopes: ['data'],
    effect: 'destructive',
    requestEncoding: 'json',
    responseEncoding: 'json',
    recentConfirmation: false,
    area: AREA,
    summary: 'Enables or disables a CalDAV account.',
    input: {
      path: AccountId,
      body: Type.Object({ enabled: Type.Boolean() }, { additionalProperties: false }),
    },
  }),
  defineAction({
    name: 'calendar_update_subscription',
    method: 'PUT',
    route: '/api/v1/calendar/subscriptions/{id}',
    tool: 'svc_api_calendar_update_subscription',
    surfaces: ['cli', 'mcp', 'webmcp'],
    scopes: ['data'],
    effect: 'destructive',
    requestEncoding: 'json',
    responseEncoding: 'json',
    recentConfirmation: false,
    area: AREA,
    summary: 'Changes the color, name or visibility of a calendar subscription.',
    input: {
      path: SubscriptionId,
      body: Type.Object(
        {
          color: Type.Optional(Nullable(Type.String())),
          name: Type.Optional(Nullable(Type.String())),
          visible: Type.Optional(Nullable(Type.Boolean())),
        },
        { additionalProperties: false },
      ),
    },
  }),
];
