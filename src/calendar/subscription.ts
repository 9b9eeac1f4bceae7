/**
 * Calendar subscriptions: an ICS address fetched through the shared outbound fetch
 * (address checks, size/time/redirect limits), its events mirrored read-only into a
 * Home calendar folder. Refreshes send the last answer's ETag and Last-Modified back
 * (If-None-Match / If-Modified-Since): a 304 changes nothing. A refresh writes only the
 * events whose text changed and deletes those the feed dropped (docs/calendar-sync.md).
 */
import type { Config } from '../core/config.js';
import { AppError, errors } from '../core/errors.js';
import { newId } from '../core/ids.js';
import { outboundFetch, parseOutboundUrl, refuse } from '../core/outbound.js';
import type { Scope } from '../notes/access.js';
import type { SidecarStore } from '../store/sidecar.js';
import type { CalendarSubscriptionRecord } from '../store/schema.js';
import { checkColor } from './storage.js';
import {
  addSubscription, getSubscription, listSubscriptions, patchSubscription, removeSubscriptionRecord, subscriptionView,
} from './account-store.js';
import {
  createMirrorCalendar, deleteMirrorEvent, eventPathIn, freeCalendarId, mirrorFiles, patchMirrorMeta, removeMirrorCalendar, splitFeed, writeMirrorEvent,
} from './sync-mirror.js';

export interface SubscriptionDeps {
  store: SidecarStore;
  config: Config;
  userId: string;
}

interface Feed {
  notModified: boolean;
  events: Map<string, string> | null;
  etag: string | null;
  lastModified: string | null;
}

/** Fetches the feed, conditionally when validators are given; a non-2xx answer or a non-iCalendar body is a 400 naming the reason. */
export async function fetchFeed(url: string, allowPrivate: boolean, validators: { etag: string | null; lastModified: string | null } = { etag: null, lastModified: null }): Promise<Feed> {
  const headers: Record<string, string> = { accept: 'text/calendar, */*;q=0.5', 'user-agent': 'Quire calendar subscription' };
  if (validators.etag) headers['if-none-match'] = validators.etag;
  if (validators.lastModified) headers['if-modified-since'] = validators.lastModified;
  const res = await outboundFetch(url, {
    allowPrivate,
    headers,
    noun: 'The calendar',
    onHeaders: ({ status, url: at }) => {
      if (status !== 304 && (status < 200 || status >= 300)) throw refuse('fetch_failed', `The calendar address answered HTTP ${status}`, { url: at.href, status: String(status) });
    },
  });
  const etag = typeof res.headers.etag === 'string' ? res.headers.etag : null;
  const lastModified = typeof res.headers['last-modified'] === 'string' ? res.headers['last-modified'] : null;
  if (res.status === 304) return { notModified: true, events: null, etag: etag ?? validators.etag, lastModified: lastModified ?? validators.lastModified };
  return { notModified: false, events: splitFeed(res.body.toString('utf8'), 'url'), etag, lastModified };
}

/** Makes the mirror match the feed: writes new and changed events, deletes the ones the feed dropped. */
async function applyFeed(scope: Scope, calendarId: string, events: Map<string, string>): Promise<{ added: number; changed: number; removed: number }> {
  const files = await mirrorFiles(scope, calendarId);
  const counts = { added: 0, changed: 0, removed: 0 };
  const wanted = new Set<string>();
  for (const [uid, text] of events) {
    const path = eventPathIn(calendarId, uid);
    wanted.add(path);
    const have = files.get(path);
    if (have && have.text === text) continue;
    await writeMirrorEvent(scope, path, text, have?.etag ?? null);
    counts[have ? 'changed' : 'added']++;
  }
  for (const [path, f] of files) {
    if (wanted.has(path)) continue;
    await deleteMirrorEvent(scope, path, f.etag);
    counts.removed++;
  }
  return counts;
}

export async function createSubscription(deps: SubscriptionDeps, scope: Scope, body: { name: string; url: string; color?: string | null }) {
  const url = parseOutboundUrl(body.url, 'body.url').href;
  const name = body.name.trim();
  if (!name) throw errors.badRequest('body.name must not be empty', { field: 'body.name' });
  const color = body.color ? checkColor(body.color, 'body.color') : null;
  // Fetched and parsed before anything is written: a bad address leaves the Home untouched.
  const feed = await fetchFeed(url, deps.config.allowPrivateFetch);
  const now = Date.now();
  const id = newId();
  const calendarId = await freeCalendarId(scope, name);
  await createMirrorCalendar(scope, calendarId, { name, color }, { kind: 'subscription', id });
  const rec: CalendarSubscriptionRecord = {
    id, user_id: deps.userId, calendar_id: calendarId, name, url, color, etag: feed.etag, last_modified: feed.lastModified,
    created_ms: now, updated_ms: now, last_refresh_ms: now, last_error: null,
  };
  await addSubscription(deps.store, rec);
  const counts = await applyFeed(scope, calendarId, feed.events!);
  return { ...subscriptionView(rec), ...counts };
}

export function listSubscriptionViews(deps: SubscriptionDeps) {
  return { subscriptions: listSubscriptions(deps.store, deps.userId).map(subscriptionView) };
}

/** Refreshes one subscription now. A failed fetch is recorded on the subscription and answered as the 4xx it is; the mirror stays as it was. */
export async function refreshSubscription(deps: SubscriptionDeps, scope: Scope, id: string) {
  const sub = getSubscription(deps.store, deps.userId, id);
  let feed: Feed;
  try {
    feed = await fetchFeed(sub.url, deps.config.allowPrivateFetch, { etag: sub.etag, lastModified: sub.last_modified });
  } catch (e) {
    if (e instanceof AppError) await patchSubscription(deps.store, deps.userId, id, { last_error: e.message, last_refresh_ms: Date.now() });
    throw e;
  }
  const counts = feed.notModified ? { added: 0, changed: 0, removed: 0 } : await applyFeed(scope, sub.calendar_id, feed.events!);
  const rec = await patchSubscription(deps.store, deps.userId, id, { etag: feed.etag, last_modified: feed.lastModified, last_refresh_ms: Date.now(), last_error: null });
  return { ...subscriptionView(rec), not_modified: feed.notModified, ...counts };
}

export async function updateSubscription(deps: SubscriptionDeps, scope: Scope, id: string, body: { name?: string | null; color?: string | null; visible?: boolean | null }) {
  const sub = getSubscription(deps.store, deps.userId, id);
  const name = body.name === undefined || body.name === null ? undefined : body.name.trim();
  if (name === '') throw errors.badRequest('body.name must not be empty', { field: 'body.name' });
  const color = body.color ? checkColor(body.color, 'body.color') : body.color;
  await patchMirrorMeta(scope, sub.calendar_id, { name, color, visible: body.visible });
  const rec = await patchSubscription(deps.store, deps.userId, id, { ...(name ? { name } : {}), ...(color !== undefined ? { color } : {}) });
  return subscriptionView(rec);
}

export async function removeSubscription(deps: SubscriptionDeps, scope: Scope, id: string) {
  const sub = getSubscription(deps.store, deps.userId, id);
  const r = await removeMirrorCalendar(scope, sub.calendar_id);
  await removeSubscriptionRecord(deps.store, deps.userId, id);
  return { id, removed: true, calendar_id: sub.calendar_id, events_removed: r.removed, events_kept: r.kept };
}
