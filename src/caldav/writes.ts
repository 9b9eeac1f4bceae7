/**
 * DAV writes, through the calendar area's functions and the Home's writer
 * lock: a new event is `createEvent`'s (its file named from its UID), a
 * replaced one goes through the same update merge as the API's
 * (`mergeUpdate`) but is written against the ETag the client's If-Match
 * names, so a stale client gets 412 instead of a merge. Colours are
 * `updateCalendar`'s; a new calendar is its `calendar.json`
 * (docs/caldav.md, "Writes").
 */
import { calendarIndexOf, type CalendarEntry } from '../calendar/calendar-index.js';
import { createEvent, updateCalendar } from '../calendar/events.js';
import { mergeUpdate, parseEvent, type ParsedIcs } from '../calendar/ics.js';
import { checkCalendarId, checkColor, fileNameForUid, metaPathOf, metaText, parseMeta, readOrNull, writeFile } from '../calendar/storage.js';
import { AppError } from '../core/errors.js';
import { checkWritable } from '../notes/access.js';
import { ifMatchAccepts, parseEtagList } from '../vault/etag.js';
import { DavError, precondition } from './errors.js';
import { validResourceName, type DavTarget } from './paths.js';
import { calendarOf, hrefOf, type DavContext } from './resources.js';
import { child, children, multistatus, NS, Prefixes, responseXml, type PropResult, type XmlNode } from './xml.js';

interface Req {
  headers: { [k: string]: string | string[] | undefined };
  body: string;
}

interface Out {
  status: number;
  headers: Record<string, string>;
  body?: string;
}

const header = (req: Req, name: string): string | undefined => {
  const v = req.headers[name];
  return Array.isArray(v) ? v.join(',') : v;
};

const isStatus = (e: unknown, status: number) => e instanceof AppError && e.status === status;

/** The client's iCalendar text checked as an event file, or the RFC 4791 precondition it breaks. */
function parseBody(text: string): ParsedIcs {
  try {
    return parseEvent(text, { field: 'body', strict: true });
  } catch (e) {
    if (!(e instanceof AppError)) throw e;
    const reason = e.details?.reason;
    if (reason === 'no_event' || reason === 'unsupported_component') throw precondition(403, NS.caldav, 'supported-calendar-component', `${e.message} (calendars here hold VEVENTs)`);
    if (reason === 'missing_uid' || reason === 'several_uids' || reason === 'several_masters') throw precondition(403, NS.caldav, 'valid-calendar-object-resource', e.message);
    throw precondition(403, NS.caldav, 'valid-calendar-data', e.message);
  }
}

const preconditionFailed = (message: string) => new DavError(412, message);

/** A subscription's mirror changes only when it is refreshed (the API refuses the same writes: read_only_calendar). */
function checkNotReadOnly(cal: CalendarEntry): void {
  if (cal.meta.readOnly) throw precondition(403, NS.dav, 'need-privileges', `Calendar ${JSON.stringify(cal.id)} is a read-only subscription; its events change only when it is refreshed`);
}

export async function putObject(ctx: DavContext, t: DavTarget, req: Req): Promise<Out> {
  if (t.kind !== 'object') throw new DavError(405, 'PUT creates or replaces an event inside a calendar', undefined, { allow: 'OPTIONS, GET, PROPFIND, PROPPATCH, REPORT, MKCALENDAR' });
  const cal = calendarOf(ctx, t.user, t.calendar);
  if (!cal) throw new DavError(409, `No calendar ${JSON.stringify(t.calendar)}; create it first (MKCALENDAR)`);
  if (!validResourceName(t.name)) throw new DavError(400, 'The resource name must be one path segment of at most 255 bytes without control characters');
  checkNotReadOnly(cal);
  const existing = ctx.state.view(ctx.index, cal.id).byName.get(t.name);
  const ifMatch = header(req, 'if-match');
  const ifNoneMatch = header(req, 'if-none-match');
  if (ifNoneMatch !== undefined && existing && parseEtagList(ifNoneMatch).some((x) => x === '*' || x === existing.etag)) {
    throw preconditionFailed('The resource exists already (If-None-Match)');
  }
  if (ifMatch !== undefined && !ifMatchAccepts(ifMatch, existing?.etag ?? null)) {
    throw preconditionFailed(existing ? 'The event changed since you read it (If-Match)' : 'No such resource (If-Match)');
  }
  const next = parseBody(req.body);
  const uid = next.facts.uid;

  if (existing) {
    if (existing.ics.facts.uid !== uid) {
      throw precondition(409, NS.caldav, 'no-uid-conflict', `This resource holds UID ${JSON.stringify(existing.ics.facts.uid)}; a new UID is a new resource`, `<d:href>${hrefOf(ctx, { kind: 'object', cal, name: t.name, entry: existing })}</d:href>`);
    }
    const merged = mergeUpdate(existing.text, existing.ics, next);
    if (merged !== existing.text) {
      try {
        await writeFile(ctx.scope, existing.path, merged, { ifMatch: existing.etag });
      } catch (e) {
        if (isStatus(e, 412)) throw preconditionFailed('The event changed while it was being written; read it again');
        throw e;
      }
    }
    // RFC 4791 §5.3.4: an ETag only when the stored bytes are the ones sent (the merge may have kept more).
    const now = (await calendarIndexOf(ctx.scope.vault)).eventByPath(existing.path);
    return { status: 204, headers: merged === req.body && now ? { etag: `"${now.etag}"` } : {} };
  }

  const other = ctx.index.eventByUid(uid);
  if (other) {
    const name = other.ics && ctx.seen(other.calendarId) ? ctx.state.view(ctx.index, other.calendarId).nameOf.get(other.path) : undefined;
    const where = name === undefined ? '' : `<d:href>${ctx.h.object(ctx.caller.username, other.calendarId, name)}</d:href>`;
    throw precondition(409, NS.caldav, 'no-uid-conflict', `An event with UID ${JSON.stringify(uid)} exists already`, where);
  }
  try {
    await createEvent(ctx.scope, cal.id, req.body, 'body');
  } catch (e) {
    // Another event took the UID-derived file name meanwhile (or an unreadable file holds it).
    if (isStatus(e, 412)) throw precondition(409, NS.caldav, 'no-uid-conflict', `The file ${fileNameForUid(uid)} exists already in this calendar`);
    throw e;
  }
  await ctx.state.setAlias(uid, t.name === fileNameForUid(uid) ? null : t.name);
  const created = ctx.index.eventByUid(uid);
  return { status: 201, headers: created ? { etag: `"${created.etag}"` } : {} };
}

export async function deleteObject(ctx: DavContext, t: DavTarget, req: Req): Promise<Out> {
  if (t.kind === 'calendar' || t.kind === 'home') {
    throw precondition(403, NS.dav, 'need-privileges', 'Calendars are not deleted over CalDAV: remove the folder from the Home (nothing is lost by accident)');
  }
  if (t.kind !== 'object') throw new DavError(405, 'Only events are deleted over CalDAV');
  const cal = calendarOf(ctx, t.user, t.calendar);
  const existing = cal ? ctx.state.view(ctx.index, cal.id).byName.get(t.name) : undefined;
  if (!cal || !existing) throw new DavError(404, 'No such resource');
  checkNotReadOnly(cal);
  const ifMatch = header(req, 'if-match');
  if (ifMatch !== undefined && !ifMatchAccepts(ifMatch, existing.etag)) throw preconditionFailed('The event changed since you read it (If-Match)');
  checkWritable(ctx.scope, existing.path);
  try {
    await ctx.scope.vault.home.delete(existing.path, { ifMatch: existing.etag });
  } catch (e) {
    if (isStatus(e, 412)) throw preconditionFailed('The event changed while it was being deleted; read it again');
    throw e;
  }
  await ctx.state.setAlias(existing.ics.facts.uid, null);
  return { status: 204, headers: {} };
}

// ---------------------------------------------------------------- collections

const APPLE_COLOR = /^#([0-9a-fA-F]{6})(?:[0-9a-fA-F]{2})?$/;

/** Apple's `#RRGGBBAA` (or `#RRGGBB`) as the `#rrggbb` calendar.json keeps; null when it is not a colour. */
export function colorFromApple(v: string): string | null {
  const m = APPLE_COLOR.exec(v.trim());
  return m ? checkColor(`#${m[1]}`, 'calendar-color') : null;
}

interface MetaChange {
  name?: string | null;
  color?: string | null;
}

type PropOp = { ns: string; name: string; value: string | null; node: XmlNode };

/** The `set` and `remove` instructions of a PROPPATCH or MKCALENDAR body, in order. */
function propOps(root: XmlNode | null, setOnly: boolean): PropOp[] {
  const ops: PropOp[] = [];
  for (const op of root?.children ?? []) {
    const remove = op.ns === NS.dav && op.name === 'remove';
    if (!(op.ns === NS.dav && (op.name === 'set' || remove)) || (remove && setOnly)) continue;
    for (const p of child(op, NS.dav, 'prop')?.children ?? []) ops.push({ ns: p.ns, name: p.name, value: remove ? null : p.text, node: p });
  }
  return ops;
}

/** What the properties change in `calendar.json`; each property's status (200, 403 for ones Quire does not keep, 409 for bad values). */
function metaChange(ops: PropOp[], mk: boolean): { change: MetaChange; results: PropResult[] } {
  const change: MetaChange = {};
  const results: PropResult[] = [];
  for (const op of ops) {
    let status = 200;
    if (op.ns === NS.dav && op.name === 'displayname') {
      if (op.value !== null && op.value.trim() === '') status = 409;
      else change.name = op.value === null ? null : op.value.trim();
    } else if (op.ns === NS.apple && op.name === 'calendar-color') {
      const c = op.value === null ? null : colorFromApple(op.value);
      if (op.value !== null && c === null) status = 409;
      else change.color = c;
    } else if (mk && op.ns === NS.caldav && op.name === 'supported-calendar-component-set') {
      const comps = children(op.node, NS.caldav, 'comp');
      if (comps.length > 0 && !comps.some((c) => c.attrs.name?.toUpperCase() === 'VEVENT')) status = 403;
    } else if (mk && op.ns === NS.dav && op.name === 'resourcetype') {
      // Extended MKCOL (RFC 5689) says what to make: a calendar, nothing else.
      if (!child(op.node, NS.caldav, 'calendar')) status = 403;
    } else if (mk && op.ns === NS.caldav && (op.name === 'calendar-description' || op.name === 'calendar-timezone')) {
      // Accepted and not kept: a new calendar's description or zone is not part of calendar.json.
    } else if (mk && op.ns === NS.apple && op.name === 'calendar-order') {
      // The same: clients send it with every new calendar.
    } else {
      status = 403;
    }
    results.push({ ns: op.ns, name: op.name, status });
  }
  return { change, results };
}

/** RFC 4918 §9.2: all or nothing — when one property fails, the others answer 424 and nothing is written. */
function failedDependency(results: PropResult[]): PropResult[] | null {
  if (results.every((r) => r.status === 200)) return null;
  return results.map((r) => (r.status === 200 ? { ...r, status: 424 } : r));
}

/** MKCALENDAR, or an extended MKCOL (RFC 5689) that makes a calendar (vdirsyncer's way). */
export async function makeCalendar(ctx: DavContext, t: DavTarget, body: XmlNode | null, extendedMkcol = false): Promise<Out> {
  if (t.kind !== 'calendar' || t.user.toLowerCase() !== ctx.caller.username.toLowerCase()) {
    throw precondition(403, NS.caldav, 'calendar-collection-location-ok', 'Calendars are made directly under your calendar home');
  }
  try {
    checkCalendarId(t.calendar, 'path');
  } catch (e) {
    throw precondition(403, NS.caldav, 'calendar-collection-location-ok', (e as Error).message);
  }
  if (ctx.index.calendarById(t.calendar)) throw precondition(405, NS.dav, 'resource-must-be-null', `A calendar ${JSON.stringify(t.calendar)} exists already`);
  if (body && !(body.ns === NS.caldav && body.name === 'mkcalendar') && !(body.ns === NS.dav && body.name === 'mkcol')) {
    throw new DavError(400, 'The body of a MKCALENDAR is a CALDAV:mkcalendar element (of an extended MKCOL, a DAV:mkcol element)');
  }
  if (!body && extendedMkcol) throw precondition(403, NS.dav, 'valid-resourcetype', 'Only calendars are made here: send an extended MKCOL whose resourcetype is a CALDAV:calendar, or MKCALENDAR');
  const { change, results } = metaChange(propOps(body, true), true);
  const failed = failedDependency(results);
  if (failed) {
    const px = new Prefixes();
    return { status: 403, headers: { 'content-type': 'application/xml; charset=utf-8' }, body: multistatus(px, [responseXml(px, ctx.h.calendar(ctx.caller.username, t.calendar), failed)]) };
  }
  const meta = parseMeta(t.calendar, null);
  if (change.name) meta.name = change.name;
  if (change.color) meta.color = change.color;
  try {
    await writeFile(ctx.scope, metaPathOf(t.calendar), metaText(null, meta), { ifNoneMatch: '*' });
  } catch (e) {
    if (isStatus(e, 412)) throw precondition(405, NS.dav, 'resource-must-be-null', `A calendar ${JSON.stringify(t.calendar)} exists already`);
    throw e;
  }
  return { status: 201, headers: {} };
}

/** A new display name in `calendar.json` (the colour goes through updateCalendar). */
async function renameCalendar(ctx: DavContext, id: string, name: string | null): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    const stored = await readOrNull(ctx.scope, metaPathOf(id));
    const meta = parseMeta(id, stored?.bytes ?? null);
    meta.name = name ?? id;
    try {
      await writeFile(ctx.scope, metaPathOf(id), metaText(stored?.bytes ?? null, meta), stored ? { ifMatch: stored.etag } : { ifNoneMatch: '*' });
      return;
    } catch (e) {
      if (!isStatus(e, 412) || attempt >= 3) throw e;
    }
  }
}

export async function patchCalendar(ctx: DavContext, t: DavTarget, body: XmlNode | null): Promise<Out> {
  if (!body || !(body.ns === NS.dav && body.name === 'propertyupdate')) throw new DavError(400, 'The body of a PROPPATCH is a DAV:propertyupdate element');
  const cal = t.kind === 'calendar' ? calendarOf(ctx, t.user, t.calendar) : null;
  const px = new Prefixes();
  const ops = propOps(body, false);
  const href = cal ? hrefOf(ctx, { kind: 'calendar', cal }) : '';
  const answer = (results: PropResult[]): Out => ({ status: 207, headers: { 'content-type': 'application/xml; charset=utf-8' }, body: multistatus(px, [responseXml(px, href, results)]) });
  if (!cal) {
    if (t.kind === 'home' || t.kind === 'principal' || t.kind === 'object') return answer(ops.map((o) => ({ ns: o.ns, name: o.name, status: 403 })));
    throw new DavError(404, 'No such resource');
  }
  const { change, results } = metaChange(ops, false);
  const failed = failedDependency(results);
  if (failed) return answer(failed);
  if (change.name !== undefined) await renameCalendar(ctx, cal.id, change.name);
  if (change.color !== undefined) await updateCalendar(ctx.scope, cal.id, { color: change.color });
  return answer(results);
}
