/**
 * Calendar actions that link events with notes and the journal's log entries (spec document 3).
 * Handlers call ./journal-link.ts; docs/calendar.md, "Journal links".
 */
import { Type } from '@sinclair/typebox';
import { reply } from '../actions/reply.js';
import { Nullable, Obj, PathString, specAction } from '../actions/spec.js';
import { openScope } from '../notes/access.js';
import { calendarCode } from './lazy-load.js';

// Event writing (ical.js) is loaded by the first call, not by every start.
const jl = async () => (await calendarCode()).journalLink;

const EventId = Obj({ id: PathString('Identity of the Event') });
const Instant = (description: string) => Type.String({ description });
const LocalTime = (description: string) =>
  Type.String({ pattern: '^([01]\\d|2[0-3]):[0-5]\\d$', description: `${description} (local 24-hour HH:MM)` });

export const actions = [
  specAction('calendar_create_event_from_log', {
    summary: 'Creates an Event from a log entry, with RFC 3339 start and end instants and a time zone.',
    input: {
      body: Obj({
        calendar_id: Type.String(),
        end: Instant('RFC 3339 instant'),
        log_id: Type.String({ description: 'Block ID of the log entry' }),
        start: Instant('RFC 3339 instant'),
        timezone: Type.String(),
      }),
    },
    handler: async (ctx, { body }) => reply(await (await jl()).createEventFromLog(await openScope(ctx), body, ctx.now()), { status: 201 }),
  }),
  specAction('calendar_create_event_from_note', {
    summary:
      'Creates an Event from a Note, with RFC 3339 start and end and a time zone; without `calendar_id` it uses the synced Event default.',
    input: {
      body: Obj({
        calendar_id: Type.Optional(Nullable(Type.String({ description: 'Omitted: the synced Event default' }))),
        end: Instant('RFC 3339'),
        note_id: Type.String(),
        start: Instant('RFC 3339'),
        timezone: Type.String(),
      }),
    },
    handler: async (ctx, { body }) => reply(await (await jl()).createEventFromNote(await openScope(ctx), body, ctx.now()), { status: 201 }),
  }),
  specAction('calendar_duplicate_item', {
    summary: 'Duplicates a log entry, Event or Task shown in the Calendar on a given Calendar-local day.',
    input: {
      body: Obj({
        date: Type.String({ description: 'Calendar-local day that displays the source item' }),
        id: Type.String({ description: 'Stable Journal block ID, Event identity or Task identity' }),
        kind: Type.Union([Type.Literal('log'), Type.Literal('event'), Type.Literal('task')]),
      }),
    },
    handler: async (ctx, { body }) => reply(await (await jl()).duplicateItem(await openScope(ctx), body, ctx.now()), { status: 201 }),
  }),
  specAction('calendar_event_log_status', {
    summary: 'Gets the log entry written for an Event, if any.',
    input: { path: EventId },
    handler: async (ctx, { path }) => (await jl()).eventLogStatus(await openScope(ctx), path.id, ctx.now()),
  }),
  specAction('calendar_log_event', {
    summary: 'Logs a past Event as a log entry, optionally overriding its start and end with local HH:MM times.',
    input: {
      path: EventId,
      body: Obj({
        end: Type.Optional(Nullable(LocalTime('Override of the Event end'))),
        start: Type.Optional(Nullable(LocalTime('Override of the Event start'))),
      }),
    },
    handler: async (ctx, { path, body }) => {
      const r = await (await jl()).logEvent(await openScope(ctx), path.id, body, ctx.now());
      return reply(r, { status: r.created ? 201 : 200 });
    },
  }),
];
