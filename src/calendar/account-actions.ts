/**
 * CalDAV accounts, subscriptions and refresh (spec document 3): the calendars mirrored from
 * elsewhere. Handlers call account.ts and subscription.ts (docs/calendar-sync.md).
 */
import { Type } from '@sinclair/typebox';
import { callerOf, type ActionContext } from '../actions/context.js';
import { reply } from '../actions/reply.js';
import { Nullable, Obj, PathString, specAction } from '../actions/spec.js';
import { openScope } from '../notes/access.js';
import type { SubscriptionDeps } from './subscription.js';
import { calendarCode } from './lazy-load.js';

// Sync (tsdav, ical.js) is loaded by the first call, not by every start.
const acc = async () => (await calendarCode()).account;
const sub = async () => (await calendarCode()).subscription;

const AccountId = Obj({ id: PathString('ID of the CalDAV account') });
const CalendarId = Obj({ id: PathString('ID of the Calendar') });
const SubscriptionId = Obj({ id: PathString('ID of the subscription') });

const deps = (ctx: ActionContext): SubscriptionDeps => ({ store: ctx.services.store, config: ctx.services.config, userId: callerOf(ctx).userId });

export const actions = [
  specAction('calendar_accounts', {
    summary: "Lists the caller's CalDAV accounts (never their app passwords).",
    handler: async (ctx) => (await acc()).listAccountViews(ctx),
  }),
  specAction('calendar_create_account', {
    summary: 'Connects a CalDAV account with its endpoint, username and app password: discovers its calendars, mirrors each into a Home calendar folder and starts the first sync as a job.',
    input: {
      body: Obj({
        app_password: Type.String({ description: 'App password for the CalDAV server' }),
        endpoint: Type.String({ description: 'CalDAV endpoint address (the server, or its principal or calendar home)' }),
        username: Type.String(),
      }),
    },
    handler: async (ctx, { body }) => (await acc()).createAccountAction(ctx, body),
  }),
  specAction('calendar_create_subscription', {
    summary: 'Subscribes to an external calendar by its ICS address; its events are mirrored read-only into a new Home calendar folder.',
    input: {
      body: Obj({
        color: Type.Optional(Nullable(Type.String({ description: 'Hex colour such as #3b82f6' }))),
        name: Type.String(),
        url: Type.String({ description: 'Address of the calendar to subscribe to (http or https)' }),
      }),
    },
    handler: async (ctx, { body }) => reply(await (await sub()).createSubscription(deps(ctx), await openScope(ctx), body), { status: 201 }),
  }),
  specAction('calendar_list_subscriptions', {
    summary: "Lists the caller's calendar subscriptions.",
    handler: async (ctx) => (await sub()).listSubscriptionViews(deps(ctx)),
  }),
  specAction('calendar_refresh_calendar', {
    summary: 'Refreshes one mirrored Calendar from its CalDAV account or subscription, as a job.',
    input: { path: CalendarId },
    handler: async (ctx, { path }) => (await acc()).refreshCalendarAction(ctx, path.id),
  }),
  specAction('calendar_refresh_now', {
    summary: "Refreshes all of the caller's CalDAV accounts and subscriptions now, as a job.",
    handler: async (ctx) => (await acc()).refreshNowAction(ctx),
  }),
  specAction('calendar_refresh_subscription', {
    summary: 'Refreshes one calendar subscription from its address now (a conditional GET).',
    input: { path: SubscriptionId },
    handler: async (ctx, { path }) => (await sub()).refreshSubscription(deps(ctx), await openScope(ctx), path.id),
  }),
  specAction('calendar_remove_account', {
    summary: 'Disconnects a CalDAV account and removes its mirrored calendar folders.',
    input: { path: AccountId },
    handler: async (ctx, { path }) => (await acc()).removeAccount(ctx.services.config, ctx.services.store, await openScope(ctx), callerOf(ctx).userId, path.id),
  }),
  specAction('calendar_remove_subscription', {
    summary: 'Removes a calendar subscription and its mirrored calendar folder.',
    input: { path: SubscriptionId },
    handler: async (ctx, { path }) => (await sub()).removeSubscription(deps(ctx), await openScope(ctx), path.id),
  }),
  specAction('calendar_update_account', {
    summary: 'Enables or disables a CalDAV account; a disabled account is not synced and its calendars are hidden.',
    input: { path: AccountId, body: Obj({ enabled: Type.Boolean() }) },
    handler: async (ctx, { path, body }) => (await acc()).setAccountEnabled(ctx.services.store, await openScope(ctx), callerOf(ctx).userId, path.id, body.enabled),
  }),
  specAction('calendar_update_subscription', {
    summary: 'Changes the color, name or visibility of a calendar subscription.',
    input: {
      path: SubscriptionId,
      body: Obj({
        color: Type.Optional(Nullable(Type.String({ description: 'Hex colour such as #3b82f6' }))),
        name: Type.Optional(Nullable(Type.String())),
        visible: Type.Optional(Nullable(Type.Boolean())),
      }),
    },
    handler: async (ctx, { path, body }) => (await sub()).updateSubscription(deps(ctx), await openScope(ctx), path.id, body),
  }),
];
