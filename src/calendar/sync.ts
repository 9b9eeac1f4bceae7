/**
 * Two-way sync of CalDAV accounts with their Home mirrors (docs/calendar-sync.md, "Sync").
 *
 * Remote changes: the collection's CTag (getctag, or its sync token where the server has no
 * CTag) says whether anything changed; if so one PROPFIND lists every object's ETag and a
 * calendar-multiget fetches the new and changed ones. Local changes: each mirrored file's Home
 * ETag against the one it had after the last sync. Local creates, edits and deletes are sent
 * with If-None-Match: * / If-Match: <remote ETag>. A conflict (both sides changed) keeps both:
 * the remote version becomes the event, and the local one is kept as a new event (new UID,
 * title prefixed "Conflict copy: ") that is sent to the server too. Nothing is dropped silently.
 */
import type * as Tsdav from 'tsdav';
import { createRequire } from 'node:module';
import type { XMLParser } from 'fast-xml-parser';
import type { Config } from '../core/config.js';
import { AppError } from '../core/errors.js';
import { guardedFetch, refuse } from '../core/outbound.js';
import type { Scope } from '../notes/access.js';
import type { CalendarAccountRecord } from '../store/schema.js';
import type { CalendarSyncState, SyncItem } from './sync-state.js';
import { newCalendarState, readSyncState, writeSyncState } from './sync-state.js';

/** tsdav loads at the first sync or discovery, not when the server starts (docs/performance.md, "Start-up"). */
const davLib = (): Promise<typeof Tsdav> => import('tsdav');
import { deleteMirrorEvent, eventPathIn, mirrorFiles, uidOf, writeMirrorEvent } from './sync-mirror.js';

export interface Dav {
  fetch: typeof globalThis.fetch;
  headers: Record<string, string>;
}

/** Remote objects are larger than clip pages: a multiget of 200 events stays well under this. */
const DAV_MAX_BYTES = 32 * 1024 * 1024;
const DAV_TIMEOUT_MS = 30_000;
const MULTIGET_BATCH = 200;
const PULL_CONCURRENCY = 8;

/** Runs `fn` over `items` with at most `n` at a time; the first failure is thrown once the others settle. */
async function inParallel<T>(items: T[], n: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const results = await Promise.allSettled(Array.from({ length: Math.min(n, items.length) }, async () => {
    while (next < items.length) await fn(items[next++]!);
  }));
  const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason;
}

export function davOf(config: Config, username: string, password: string): Dav {
  return {
    fetch: guardedFetch({ allowPrivate: config.allowPrivateFetch, maxBytes: DAV_MAX_BYTES, timeoutMs: DAV_TIMEOUT_MS, noun: 'The CalDAV answer' }),
    headers: { authorization: 'Basic ' + Buffer.from(`${username}:${password}`).toString('base64') },
  };
}

/** Checks that the credentials are accepted at `url` before discovery, so a wrong password reads as one. */
async function checkSignIn(dav: Dav, url: string): Promise<void> {
  const res = await dav.fetch(url, { method: 'PROPFIND', headers: { ...dav.headers, depth: '0', 'content-type': 'application/xml' }, body: '<?xml version="1.0"?><d:propfind xmlns:d="DAV:"><d:prop><d:current-user-principal/></d:prop></d:propfind>' });
  await res.arrayBuffer();
  if (res.status === 401 || res.status === 403) throw refuse('caldav_auth_failed', `The CalDAV server at ${url} refused the username and app password (HTTP ${res.status})`, { url });
}

export interface RemoteCalendar {
  url: string;
  name: string;
  color: string | null;
}

/** RFC 6764 discovery (/.well-known/caldav, then the principal and its calendar home) and the home's event calendars. */
export async function discoverCalendars(dav: Dav, endpoint: string): Promise<RemoteCalendar[]> {
  await checkSignIn(dav, endpoint);
  let account: Tsdav.DAVAccount;
  let calendars: Tsdav.DAVCalendar[];
  try {
    const tsdav = await davLib();
    account = await tsdav.createAccount({ account: { serverUrl: endpoint, accountType: 'caldav', credentials: {} }, headers: dav.headers, fetch: dav.fetch });
    calendars = await tsdav.fetchCalendars({ account, headers: dav.headers, fetch: dav.fetch });
  } catch (e) {
    if (e instanceof AppError) throw e;
    throw refuse('not_caldav', `${endpoint} does not answer as a CalDAV server: ${(e as Error).message}`, { url: endpoint });
  }
  if (!account.homeUrl) throw refuse('not_caldav', `${endpoint} does not answer as a CalDAV server (no calendar home found)`, { url: endpoint });
  return calendars
    .filter((c) => !c.components || c.components.includes('VEVENT'))
    .map((c) => ({
      url: c.url,
      name: typeof c.displayName === 'string' && c.displayName.trim() ? c.displayName.trim() : decodeURIComponent(new URL(c.url).pathname.split('/').filter(Boolean).pop() ?? 'Calendar'),
      color: typeof c.calendarColor === 'string' && /^#[0-9a-f]{6}/i.test(c.calendarColor) ? c.calendarColor.slice(0, 7).toLowerCase() : null,
    }));
}

const hrefKey = (href: string, base: string) => new URL(href, base).pathname;

const text = (v: unknown): string | null => (v === undefined || v === null || v === '' ? null : String(typeof v === 'object' ? JSON.stringify(v) : v));

/** CTag of the collection (its sync token when there is none), and its sync token (RFC 6578) if it has one. */
async function collectionTag(dav: Dav, url: string): Promise<{ tag: string | null; syncToken: string | null }> {
  const r = await (await davLib()).propfind({ url, props: { 'cs:getctag': {}, 'd:sync-token': {} }, depth: '0', headers: dav.headers, fetch: dav.fetch });
  const props = r[0]?.props ?? {};
  const syncToken = text(props.syncToken);
  return { tag: text(props.getctag) ?? syncToken, syncToken };
}

/** fast-xml-parser loads at the first sync-collection report (its CommonJS build, the one caldav/xml.ts loads too). */
const require = createRequire(import.meta.url);
let xmlParser: XMLParser | null = null;
const xml = () =>
  (xmlParser ??= new (require('fast-xml-parser') as typeof import('fast-xml-parser')).XMLParser({ removeNSPrefix: true, isArray: (name) => name === 'response' || name === 'propstat' }));

/**
 * RFC 6578 sync-collection from `token`: the objects changed (href → new ETag) and removed
 * since, and the new token; null when the server refuses the token or the report (the caller
 * then lists every ETag).
 */
async function syncCollection(dav: Dav, url: string, token: string): Promise<{ changed: Map<string, string>; removed: string[]; token: string | null } | null> {
  const body = `<?xml version="1.0" encoding="utf-8"?><d:sync-collection xmlns:d="DAV:"><d:sync-token>${token.replace(/&/g, '&amp;').replace(/</g, '&lt;')}</d:sync-token><d:sync-level>1</d:sync-level><d:prop><d:getetag/></d:prop></d:sync-collection>`;
  const res = await dav.fetch(url, { method: 'REPORT', headers: { ...dav.headers, depth: '1', 'content-type': 'application/xml; charset=utf-8' }, body });
  const raw = await res.text();
  if (res.status !== 207) return null;
  const ms = xml().parse(raw)?.multistatus;
  if (!ms) return null;
  const changed = new Map<string, string>();
  const removed: string[] = [];
  const self = new URL(url).pathname;
  for (const r of ms.response ?? []) {
    const href = typeof r.href === 'string' ? hrefKey(r.href, url) : null;
    if (!href || href === self || href.endsWith('/')) continue;
    if (typeof r.status === 'string' && / 404 /.test(r.status)) {
      removed.push(href);
      continue;
    }
    const ok = (r.propstat ?? []).find((p: { status?: string }) => / 200 /.test(String(p.status)));
    const etag = ok?.prop?.getetag;
    if (etag) changed.set(href, String(etag));
  }
  return { changed, removed, token: text(ms['sync-token']) };
}

/** href (path) → ETag of every object in the collection. */
async function listRemote(dav: Dav, url: string): Promise<Map<string, string>> {
  const r = await (await davLib()).propfind({ url, props: { 'd:getetag': {} }, depth: '1', headers: dav.headers, fetch: dav.fetch });
  const out = new Map<string, string>();
  const self = new URL(url).pathname;
  for (const x of r) {
    if (!x.href || x.href.endsWith('/')) continue;
    const key = hrefKey(x.href, url);
    if (key === self) continue;
    const etag = x.props?.getetag;
    if (etag) out.set(key, String(etag));
  }
  return out;
}

async function multiget(dav: Dav, url: string, hrefs: string[]): Promise<Map<string, { etag: string; data: string }>> {
  const tsdav = await davLib();
  const out = new Map<string, { etag: string; data: string }>();
  for (let i = 0; i < hrefs.length; i += MULTIGET_BATCH) {
    const r = await tsdav.calendarMultiGet({ url, props: { 'd:getetag': {}, 'c:calendar-data': {} }, objectUrls: hrefs.slice(i, i + MULTIGET_BATCH), depth: '1', headers: dav.headers, fetch: dav.fetch });
    for (const x of r) {
      const data = x.props?.calendarData;
      const text = typeof data === 'string' ? data : data?._cdata ?? data?._text;
      if (x.href && typeof text === 'string' && x.props?.getetag) out.set(hrefKey(x.href, url), { etag: String(x.props.getetag), data: text.includes('\r\n') ? text : text.replace(/\n/g, '\r\n') });
    }
  }
  return out;
}

type PutResult = { ok: true; etag: string | null } | { ok: false; status: number };

async function put(dav: Dav, url: string, text: string, cond: { ifMatch: string } | { ifNoneMatch: '*' }): Promise<PutResult> {
  const headers: Record<string, string> = { ...dav.headers, 'content-type': 'text/calendar; charset=utf-8' };
  if ('ifMatch' in cond) headers['if-match'] = cond.ifMatch;
  else headers['if-none-match'] = '*';
  const res = await dav.fetch(url, { method: 'PUT', headers, body: text });
  await res.arrayBuffer();
  if (res.status >= 200 && res.status < 300) return { ok: true, etag: res.headers.get('etag') };
  return { ok: false, status: res.status };
}

async function del(dav: Dav, url: string, etag: string): Promise<number> {
  const res = await dav.fetch(url, { method: 'DELETE', headers: { ...dav.headers, 'if-match': etag } });
  await res.arrayBuffer();
  return res.status;
}

/** The local version of a conflicting event as a new event: a fresh UID and its title marked, so both versions stay visible. */
export function conflictCopy(text: string, uid: string, at: Date): { uid: string; text: string } {
  const stamp = at.toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z');
  const newUid = `${uid}-conflict-${stamp}`;
  const unfolded = text.replace(/\r?\n[ \t]/g, '');
  let out = unfolded.replace(/^UID(;[^:\r\n]*)?:.*$/gim, `UID:${newUid}`);
  out = /^SUMMARY[;:]/im.test(out)
    ? out.replace(/^(SUMMARY(?:;[^:\r\n]*)?:)(.*)$/gim, '$1Conflict copy: $2')
    : out.replace(/^(BEGIN:VEVENT\r?\n)/im, '$1SUMMARY:Conflict copy\r\n');
  return { uid: newUid, text: out };
}

export interface SyncCounts {
  pulled: number;
  pushed: number;
  deleted_local: number;
  deleted_remote: number;
  conflicts: number;
}

const zero = (): SyncCounts => ({ pulled: 0, pushed: 0, deleted_local: 0, deleted_remote: 0, conflicts: 0 });
const is412 = (e: unknown) => e instanceof AppError && e.status === 412;

/**
 * One calendar's two-way sync. Writes to the Home are conditional on the ETag read at the
 * start: a file another program changes during the sync answers 412 and is left for the next
 * sync (its change is then a local edit), never overwritten.
 */
export async function syncCalendar(dav: Dav, scope: Scope, calendarId: string, state: CalendarSyncState, progress: (done: number, total: number) => void = () => undefined): Promise<SyncCounts> {
  const counts = zero();
  const url = state.href;
  const { tag, syncToken } = await collectionTag(dav, url);
  const remoteDirty = tag === null || tag !== state.ctag;
  const known = () => new Map(Object.entries(state.items).map(([h, i]) => [h, i.etag]));
  let remote: Map<string, string>;
  if (!remoteDirty) remote = known();
  else {
    // Changes since the last token when the server keeps them (one small report), else every ETag.
    const delta = state.syncToken ? await syncCollection(dav, url, state.syncToken) : null;
    if (delta) {
      remote = known();
      for (const [h, e] of delta.changed) remote.set(h, e);
      for (const h of delta.removed) remote.delete(h);
    } else remote = await listRemote(dav, url);
  }
  const files = await mirrorFiles(scope, calendarId);
  const tracked = new Set<string>();
  const toFetch: string[] = [];
  const toConflict: string[] = [];
  const toFetchLate: string[] = [];
  const plan: Array<() => Promise<void>> = [];
  const items = state.items;
  const now = new Date();

  const absolute = (href: string) => new URL(href, url).href;
  const pushNew = async (text: string, uid: string) => {
    const href = new URL(encodeURIComponent(eventPathIn(calendarId, uid).split('/').pop()!), url).pathname;
    const r = await put(dav, absolute(href), text, { ifNoneMatch: '*' });
    if (!r.ok) throw refuse('caldav_write_failed', `The CalDAV server refused a new event (HTTP ${r.status})`, { href });
    return { href, etag: r.etag ?? '' };
  };

  for (const [href, item] of Object.entries(items)) {
    tracked.add(item.path);
    const rEtag = remote.get(href);
    const file = files.get(item.path);
    const remoteChanged = rEtag !== item.etag;
    const localChanged = !file || file.etag !== item.local;
    if (!remoteChanged && !localChanged) continue;
    if (remoteChanged && !localChanged) {
      if (rEtag === undefined) {
        plan.push(async () => {
          try {
            await deleteMirrorEvent(scope, item.path, file!.etag);
            counts.deleted_local++;
            delete items[href];
          } catch (e) {
            if (!is412(e)) throw e;
          }
        });
      } else toFetch.push(href);
      continue;
    }
    if (!remoteChanged && localChanged) {
      plan.push(async () => {
        if (!file) {
          const status = await del(dav, absolute(href), item.etag);
          if (status === 412) return void toFetchLate.push(href); // changed remotely meanwhile: the remote version comes back
          counts.deleted_remote++;
          delete items[href];
          return;
        }
        const r = await put(dav, absolute(href), file.text, { ifMatch: item.etag });
        if (r.ok) {
          counts.pushed++;
          items[href] = { ...item, etag: r.etag ?? '', local: file.etag };
        } else if (r.status === 412) toConflict.push(href);
        else throw refuse('caldav_write_failed', `The CalDAV server refused an update of ${href} (HTTP ${r.status})`, { href });
      });
      continue;
    }
    // Both sides changed.
    if (rEtag === undefined && !file) {
      delete items[href];
    } else if (rEtag === undefined) {
      // Deleted remotely, edited here: the edit is sent again as a new object, not dropped.
      plan.push(async () => {
        const sent = await pushNew(file!.text, uidOf(file!.text) ?? href);
        counts.pushed++;
        delete items[href];
        items[sent.href] = { etag: sent.etag, path: item.path, local: file!.etag };
      });
    } else toConflict.push(href);
  }
  // Objects that are new on the server.
  for (const href of remote.keys()) if (!items[href]) toFetch.push(href);

  const total = toFetch.length + plan.length + files.size;
  let done = 0;
  const tick = () => progress(++done, total);

  for (const step of plan) {
    await step();
    tick();
  }
  const toPull = [...new Set([...toFetch, ...toFetchLate, ...toConflict])];
  const fetched = await multiget(dav, url, toPull);
  const conflictSet = new Set(toConflict);
  // A few writes in flight: the Home prepares (writes and syncs) each temp file outside its writer lock, so they overlap.
  await inParallel(toPull, PULL_CONCURRENCY, async (href) => {
    const got = fetched.get(href);
    if (!got) return;
    const uid = uidOf(got.data) ?? href;
    const item = items[href];
    const path = item?.path ?? eventPathIn(calendarId, uid);
    tracked.add(path);
    const current = files.get(path);
    const localEdited = current && (!item || current.etag !== item.local) && current.text !== got.data;
    try {
      if ((localEdited || conflictSet.has(href)) && current && current.text !== got.data) {
        // Keep the local version as its own event, then let the remote one take the file.
        const copy = conflictCopy(current.text, uid, now);
        const copyPath = eventPathIn(calendarId, copy.uid);
        const localEtag = await writeMirrorEvent(scope, copyPath, copy.text, null);
        const sent = await pushNew(copy.text, copy.uid);
        items[sent.href] = { etag: sent.etag, path: copyPath, local: localEtag };
        tracked.add(copyPath);
        counts.conflicts++;
      }
      const local = current && current.text === got.data ? current.etag : await writeMirrorEvent(scope, path, got.data, current?.etag ?? null);
      items[href] = { etag: got.etag, path, local } satisfies SyncItem;
      counts.pulled++;
    } catch (e) {
      if (!is412(e)) throw e;
    }
    tick();
  });
  // Files created here: sent as new objects.
  for (const [path, file] of await mirrorFiles(scope, calendarId)) {
    if (tracked.has(path)) continue;
    const uid = uidOf(file.text);
    if (!uid) continue;
    const sent = await pushNew(file.text, uid);
    items[sent.href] = { etag: sent.etag, path, local: file.etag };
    counts.pushed++;
    tick();
  }
  // New objects the server answered without an ETag: theirs from one listing rather than one request each.
  if (Object.values(items).some((i) => i.etag === '')) {
    const listed = await listRemote(dav, url);
    for (const [href, i] of Object.entries(items)) if (i.etag === '' && listed.has(href)) i.etag = listed.get(href)!;
  }
  // The tag and token read before this sync's writes: the next sync sees its own writes again
  // (their ETags match, nothing to do) rather than missing a change made meanwhile by someone else.
  state.ctag = tag;
  state.syncToken = syncToken;
  progress(total, total);
  return counts;
}

/** Syncs every mirrored calendar of an account (or just `onlyCalendarId`), saving the state after each. */
export async function syncAccount(config: Config, scope: Scope, account: CalendarAccountRecord, password: string, opts: { onlyCalendarId?: string; progress?: (done: number, total: number) => void } = {}): Promise<SyncCounts> {
  const dav = davOf(config, account.username, password);
  const state = await readSyncState(config, account.id);
  let saved = JSON.stringify(state);
  const total = zero();
  const cals = account.calendars.filter((c) => !opts.onlyCalendarId || c.calendar_id === opts.onlyCalendarId);
  let i = 0;
  for (const c of cals) {
    const s = (state.calendars[c.calendar_id] ??= newCalendarState(c.href));
    const counts = await syncCalendar(dav, scope, c.calendar_id, s, (d, t) => opts.progress?.(i * 1000 + Math.round((d / Math.max(t, 1)) * 1000), cals.length * 1000));
    for (const k of Object.keys(total) as Array<keyof SyncCounts>) total[k] += counts[k];
    // An unchanged refresh writes nothing (the state of 2,000 events is ~300 KB).
    const now = JSON.stringify(state);
    if (now !== saved) await writeSyncState(config, account.id, state);
    saved = now;
    i++;
  }
  return total;
}
