/**
 * Published calendar feeds in the sidecar store: the one module that touches `calendar_feeds`.
 * A feed's public URL carries an unguessable token (256 random bits); the token is kept so the
 * owner can read the URL again (like a calendar app's "secret address"), and looked up by its hash.
 */
import { hashSecret, newId, newSecret } from '../core/ids.js';
import { errors } from '../core/errors.js';
import type { SidecarStore } from '../store/sidecar.js';
import type { CalendarFeedRecord, SidecarData } from '../store/schema.js';

export type FeedSettings = Pick<CalendarFeedRecord, 'name' | 'color' | 'detail' | 'source' | 'source_id' | 'include_notes' | 'include_tasks'>;

const feedsOf = (data: SidecarData): CalendarFeedRecord[] => (data.calendar_feeds ??= [] as CalendarFeedRecord[]);
const readFeeds = (data: Readonly<SidecarData>): readonly CalendarFeedRecord[] => data.calendar_feeds ?? [];

const notFound = (id: string) => errors.notFound(`No calendar feed ${id}`, { field: 'path.id', id });

function ownFeed(data: SidecarData, userId: string, id: string): CalendarFeedRecord {
  const f = feedsOf(data).find((x) => x.id === id && x.user_id === userId);
  if (!f) throw notFound(id);
  return f;
}

function freshToken(): { token: string; token_hash: string } {
  const token = newSecret('qfeed');
  return { token, token_hash: hashSecret(token) };
}

export function createFeed(store: SidecarStore, userId: string, homePrefix: string | null, settings: FeedSettings, now: number): Promise<CalendarFeedRecord> {
  return store.transact((data) => {
    const rec: CalendarFeedRecord = { id: newId(), user_id: userId, home_prefix: homePrefix, ...settings, ...freshToken(), created_ms: now, updated_ms: now };
    feedsOf(data).push(rec);
    return rec;
  });
}

export function listFeeds(store: SidecarStore, userId: string): CalendarFeedRecord[] {
  return readFeeds(store.snapshot())
    .filter((f) => f.user_id === userId)
    .sort((a, b) => a.created_ms - b.created_ms || a.id.localeCompare(b.id));
}

export function getFeed(store: SidecarStore, userId: string, id: string): CalendarFeedRecord {
  const f = readFeeds(store.snapshot()).find((x) => x.id === id && x.user_id === userId);
  if (!f) throw notFound(id);
  return f;
}

export function updateFeed(store: SidecarStore, userId: string, id: string, settings: FeedSettings, now: number): Promise<CalendarFeedRecord> {
  return store.transact((data) => Object.assign(ownFeed(data, userId, id), settings, { updated_ms: now }));
}

export function deleteFeed(store: SidecarStore, userId: string, id: string): Promise<CalendarFeedRecord> {
  return store.transact((data) => {
    const f = ownFeed(data, userId, id);
    data.calendar_feeds = feedsOf(data).filter((x) => x !== f);
    return f;
  });
}

/** A new token; the old URL stops answering at once. Also gives a revoked feed a link again. */
export function rotateFeedToken(store: SidecarStore, userId: string, id: string, now: number): Promise<CalendarFeedRecord> {
  return store.transact((data) => Object.assign(ownFeed(data, userId, id), freshToken(), { updated_ms: now }));
}

export function revokeFeedToken(store: SidecarStore, userId: string, id: string, now: number): Promise<CalendarFeedRecord> {
  return store.transact((data) => Object.assign(ownFeed(data, userId, id), { token: null, token_hash: null, updated_ms: now }));
}

/** The feed a public URL's token names, or undefined (unknown, rotated away or revoked). */
export function feedByToken(store: SidecarStore, token: string): CalendarFeedRecord | undefined {
  if (!token.startsWith('qfeed_')) return undefined;
  const h = hashSecret(token);
  return readFeeds(store.snapshot()).find((f) => f.token_hash === h);
}
