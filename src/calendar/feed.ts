/**
 * Published calendar feeds: the settings the feed actions take, the record they answer with,
 * and the public document at the feed's URL (no bearer token: the URL's token is the secret).
 * The document is built once per version of its collection and kept; conditional GETs answer
 * 304 from the kept ETag without building anything. docs/calendar.md, "Feeds".
 */
import { createHash } from 'node:crypto';
import type { Caller } from '../accounts/caller.js';
import { publicBaseUrl } from '../core/config.js';
import { errors } from '../core/errors.js';
import type { Services } from '../core/services.js';
import type { Scope } from '../notes/access.js';
import type { CalendarFeedRecord } from '../store/schema.js';
import { findUserById } from '../store/users.js';
import type { EventFile } from './feed-ical.js';
import { feedItems, normalTag } from './feed-items.js';
import { feedByToken, type FeedSettings } from './feed-store.js';
import { calendarCode } from './lazy-load.js';

/** Where feeds are served: `GET /feeds/<token>.ics` (HEAD too). */
export const FEED_ROUTE_PREFIX = '/feeds/';

export interface FeedBodyInput {
  color?: string | null;
  detail: 'full' | 'busy_only';
  include_notes?: boolean;
  include_tasks?: boolean;
  name: string;
  source: 'journal' | 'area' | 'calendar';
  source_id?: string | null;
}

/**
 * Events of one calendar for a feed, from the calendar area's storage. `version` changes
 * whenever an event file of the calendar does.
 */
export interface CalendarSource {
  /** The calendar's id for `source_id` (null: the default calendar); 404 naming `body.source_id` when unknown. */
  resolve(scope: Scope, sourceId: string | null): Promise<string>;
  version(scope: Scope): Promise<string>;
  /** The calendar's event files, parsed and as text. */
  files(scope: Scope, calendarId: string): Promise<EventFile[]>;
}

const TAG_RE = /^[\p{L}\p{M}\p{N}_\-/]+$/u;
const COLOR_RE = /^#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/;

/** Checks a create/update body and fills its defaults. `source_id` of a calendar is checked by the caller. */
export function checkFeedBody(body: FeedBodyInput): FeedSettings {
  const name = body.name.trim();
  if (!name || name.length > 200 || /[\r\n]/.test(name)) throw errors.badRequest('name must be one line of 1 to 200 characters', { field: 'body.name' });
  const color = body.color ?? null;
  if (color !== null && !COLOR_RE.test(color)) throw errors.badRequest(`color must be a hex colour such as #3366cc (got ${JSON.stringify(color)})`, { field: 'body.color' });
  let sourceId = body.source_id ?? null;
  if (body.source === 'journal' && sourceId !== null) {
    throw errors.badRequest('source_id must be null or omitted for source journal (the journal is one per Home)', { field: 'body.source_id' });
  }
  if (body.source === 'area') {
    const tag = sourceId === null ? '' : normalTag(sourceId);
    if (!tag || !TAG_RE.test(tag) || /^\d+$/.test(tag)) {
      throw errors.badRequest('source_id of an area feed must be a tag such as "project" or "#project/alpha"', { field: 'body.source_id' });
    }
    sourceId = tag;
  }
  return {
    name,
    color,
    detail: body.detail,
    source: body.source,
    source_id: sourceId,
    include_notes: body.include_notes ?? false,
    include_tasks: body.include_tasks ?? false,
  };
}

/** A feed as the actions answer it: its settings and its public URL (null once revoked). */
export function feedRecord(services: Services, f: CalendarFeedRecord) {
  return {
    id: f.id,
    name: f.name,
    color: f.color,
    detail: f.detail,
    source: f.source,
    source_id: f.source_id,
    include_notes: f.include_notes,
    include_tasks: f.include_tasks,
    url: f.token === null ? null : `${publicBaseUrl(services.config)}${FEED_ROUTE_PREFIX}${f.token}.ics`,
    created_at: f.created_ms,
    updated_at: f.updated_ms,
  };
}

// ---------------------------------------------------------------- the public document

interface Built {
  key: string;
  body: Buffer;
  etag: string;
}

/** Built documents by feed id; a feed's entry is replaced when its collection changes. */
const built = new Map<string, Built>();
const building = new Map<string, { key: string; done: Promise<Built> }>();
const MAX_KEPT = 64;

/** The owner's Home as the feed's creator saw it (its App Password's prefix, if any). */
async function ownerScope(services: Services, f: CalendarFeedRecord): Promise<Scope | null> {
  const user = findUserById(services.store, f.user_id);
  if (!user || user.disabled) return null;
  const caller: Caller = {
    userId: user.id,
    username: user.username,
    role: user.role,
    credential: { kind: 'app_password', id: `feed:${f.id}` },
    grants: [],
    homePrefix: f.home_prefix,
    confirmedAt: null,
  };
  const { vault, quotaBytes } = await services.vaults.forCaller(caller);
  return { vault, index: await vault.whenReady(), quotaBytes, prefix: f.home_prefix };
}

async function versionKey(scope: Scope, f: CalendarFeedRecord, calendars: CalendarSource | null): Promise<{ key: string; calendarId: string | null }> {
  const calendarId = f.source === 'calendar' ? f.source_id : null;
  const calVersion = calendarId !== null && calendars ? await calendars.version(scope) : '';
  // Journal entries, notes and tasks come from the Home's index: its write count says when they may have changed.
  const fromHome = f.source !== 'calendar' || (f.detail === 'full' && (f.include_notes || f.include_tasks));
  return { key: `${f.token_hash}|${f.updated_ms}|${fromHome ? scope.index.version : ''}|${calendarId}|${calVersion}`, calendarId };
}

async function build(scope: Scope, f: CalendarFeedRecord, calendarId: string | null, calendars: CalendarSource | null, key: string): Promise<Built> {
  const busy = f.detail === 'busy_only';
  const items = await feedItems(scope, {
    tag: f.source === 'area' ? f.source_id : null,
    logs: f.source !== 'calendar',
    // Notes and tasks block no time: a busy-only feed has none of them.
    notes: f.include_notes && !busy,
    tasks: f.include_tasks && !busy,
  });
  const files = calendarId !== null && calendars ? await calendars.files(scope, calendarId) : [];
  // DTSTAMP of the generated items: the feed's last settings change, not the build time, so a rebuild
  // that finds the same items (an unrelated note changed) gives the same bytes and ETag, and clients keep their 304s.
  // The iCalendar writer (ical.js) is loaded by the first feed built, not by every start.
  const { feedDocument } = (await calendarCode()).feedIcal;
  const body = Buffer.from(feedDocument({ name: f.name, color: f.color, detail: f.detail, stampMs: f.updated_ms }, items, files), 'utf8');
  return { key, body, etag: createHash('sha256').update(body).digest('base64url').slice(0, 27) };
}

const gone = () => errors.notFound('No calendar feed at this address (it may have been rotated or revoked)');

/** `If-None-Match` holds `etag` (strong or weak form, or `*`). */
function matches(ifNoneMatch: string | undefined, etag: string): boolean {
  if (!ifNoneMatch) return false;
  return ifNoneMatch.split(',').some((t) => {
    const v = t.trim();
    return v === '*' || v.replace(/^W\//, '') === `"${etag}"`;
  });
}

export interface FeedResponse {
  status: 200 | 304;
  etag: string;
  body: Buffer | null;
}

/** The document at a feed URL, or 304 when `ifNoneMatch` names the current one. */
export async function serveFeed(services: Services, token: string, ifNoneMatch: string | undefined, calendars: CalendarSource | null): Promise<FeedResponse> {
  const f = feedByToken(services.store, token);
  if (!f) throw gone();
  const scope = await ownerScope(services, f);
  if (!scope) throw gone();
  const { key, calendarId } = await versionKey(scope, f, calendars);
  let doc = built.get(f.id);
  if (!doc || doc.key !== key) {
    // Concurrent requests for a collection version share one build.
    let job = building.get(f.id);
    if (!job || job.key !== key) {
      const done = build(scope, f, calendarId, calendars, key);
      const mine = { key, done };
      job = mine;
      building.set(f.id, mine);
      done.then(
        (b) => {
          if (building.get(f.id) !== mine) return; // a newer version is being built
          if (built.size >= MAX_KEPT && !built.has(f.id)) built.delete(built.keys().next().value!);
          built.set(f.id, b);
        },
        () => undefined,
      ).finally(() => {
        if (building.get(f.id) === mine) building.delete(f.id);
      });
    }
    doc = await job.done;
  }
  if (matches(ifNoneMatch, doc.etag)) return { status: 304, etag: doc.etag, body: null };
  return { status: 200, etag: doc.etag, body: doc.body };
}

/** Forgets a feed's kept document (deleted, rotated or revoked). */
export function forgetFeed(id: string): void {
  built.delete(id);
}
