/**
 * Calendar feeds (spec document 3): published iCalendar feeds of the journal, an area (a tag)
 * or a calendar. Handlers call ./feed.ts and ./feed-store.ts; docs/calendar.md, "Feeds".
 */
import { Type } from '@sinclair/typebox';
import { reply } from '../actions/reply.js';
import { Nullable, Obj, PathString, specAction } from '../actions/spec.js';
import { callerOf, type ActionContext } from '../actions/context.js';
import { openScope } from '../notes/access.js';
import * as store from './feed-store.js';
import { checkFeedBody, feedRecord, forgetFeed, type FeedBodyInput } from './feed.js';
import { calendarFeedSource } from './feed-calendar.js';

const FeedId = Obj({ id: PathString('ID of the feed') });

/** The body of `calendar_create_feed`, which `calendar_update_feed` takes as well. */
const FeedBody = Obj({
  color: Type.Optional(Nullable(Type.String({ description: 'Hex colour such as #3366cc' }))),
  detail: Type.Union([Type.Literal('full'), Type.Literal('busy_only')], { description: 'Busy-only feeds reveal only availability' }),
  include_notes: Type.Optional(Type.Boolean({ description: 'Notes with a frontmatter date, as all-day events' })),
  include_tasks: Type.Optional(Type.Boolean({ description: 'Open tasks with a due date, as all-day events' })),
  name: Type.String(),
  source: Type.Union([Type.Literal('journal'), Type.Literal('area'), Type.Literal('calendar')], { description: 'Selects one owner-scoped collection' }),
  source_id: Type.Optional(
    Nullable(Type.String({ description: 'ID of the source collection: a calendar id (null: the default calendar) or, for an area, a tag' })),
  ),
});

/** The checked settings; a calendar feed's `source_id` must name one of the caller's calendars. */
async function settingsOf(ctx: ActionContext, body: FeedBodyInput) {
  const s = checkFeedBody(body);
  if (s.source === 'calendar') s.source_id = await calendarFeedSource.resolve(await openScope(ctx), s.source_id);
  return s;
}

const uid = (ctx: ActionContext) => callerOf(ctx).userId;
const out = (ctx: ActionContext, f: Parameters<typeof feedRecord>[1]) => feedRecord(ctx.services, f);

export const actions = [
  specAction('calendar_create_feed', {
    summary:
      'Creates a calendar feed link for one owner-scoped collection (`journal`, `area` or `calendar`), with `full` detail or `busy_only` (reveals only availability).',
    input: { body: FeedBody },
    handler: async (ctx, { body }) =>
      reply(out(ctx, await store.createFeed(ctx.services.store, uid(ctx), callerOf(ctx).homePrefix, await settingsOf(ctx, body), ctx.now())), { status: 201 }),
  }),
  specAction('calendar_delete_feed', {
    summary: 'Deletes a calendar feed and its link.',
    input: { path: FeedId },
    handler: async (ctx, { path }) => {
      const f = await store.deleteFeed(ctx.services.store, uid(ctx), path.id);
      forgetFeed(f.id);
      return { deleted: f.id };
    },
  }),
  specAction('calendar_list_feeds', {
    summary: "Lists the caller's calendar feeds.",
    input: {},
    handler: (ctx) => ({ items: store.listFeeds(ctx.services.store, uid(ctx)).map((f) => out(ctx, f)), next_cursor: null }),
  }),
  specAction('calendar_revoke_feed_link', {
    summary: 'Revokes the current link of a calendar feed.',
    input: { path: FeedId },
    handler: async (ctx, { path }) => {
      const f = await store.revokeFeedToken(ctx.services.store, uid(ctx), path.id, ctx.now());
      forgetFeed(f.id);
      return out(ctx, f);
    },
  }),
  specAction('calendar_rotate_feed_link', {
    summary: 'Replaces the link of a calendar feed with a new one; the old link stops working.',
    input: { path: FeedId },
    handler: async (ctx, { path }) => {
      const f = await store.rotateFeedToken(ctx.services.store, uid(ctx), path.id, ctx.now());
      forgetFeed(f.id);
      return out(ctx, f);
    },
  }),
  specAction('calendar_update_feed', {
    summary: 'Replaces the settings of a calendar feed; takes the same body as `calendar_create_feed`.',
    input: { path: FeedId, body: FeedBody },
    handler: async (ctx, { path, body }) => {
      store.getFeed(ctx.services.store, uid(ctx), path.id);
      return out(ctx, await store.updateFeed(ctx.services.store, uid(ctx), path.id, await settingsOf(ctx, body), ctx.now()));
    },
  }),
];
