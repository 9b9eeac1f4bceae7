/**
 * The CalDAV methods, independent of the HTTP framework: a request (method,
 * path, headers, body text) in, a response out. Every failure is answered
 * here — a DAV precondition body where RFC 4791/4918/6578 names one, a 4xx
 * otherwise — so no request reaches the app's error handler
 * (docs/caldav.md).
 */
import type { IncomingHttpHeaders } from 'node:http';
import { AppError, toAppError } from '../core/errors.js';
import type { Services } from '../core/services.js';
import { ensureDefaultCalendar } from '../calendar/events.js';
import { canWrite, davCaller } from './auth.js';
import { DavError, precondition } from './errors.js';
import { hrefPath, parseDavPath, WELL_KNOWN, type DavTarget } from './paths.js';
import { calendarQuery, type QueryFilter, parseFilter } from './query.js';
import { allPropNames, basePathOf, davContext, hrefOf, membersOf, propsOf, resolve, servedText, type DavContext, type Resource } from './resources.js';
import { deleteObject, makeCalendar, patchCalendar, putObject } from './writes.js';
import { child, children, errorXml, multistatus, NS, parseXml, Prefixes, responseXml, XmlError, type XmlNode } from './xml.js';

export interface DavRequest {
  method: string;
  /** The URL's path, without the query. */
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface DavResponse {
  status: number;
  headers: Record<string, string>;
  body?: string;
}

export const DAV_HEADER = '1, 3, calendar-access';
export const ALLOW = 'OPTIONS, GET, HEAD, PUT, DELETE, PROPFIND, PROPPATCH, REPORT, MKCALENDAR, MKCOL';
const XML_TYPE = 'application/xml; charset=utf-8';

function errorResponse(e: DavError): DavResponse {
  const headers = { ...e.headers };
  if (e.precondition) return { status: e.status, headers: { ...headers, 'content-type': XML_TYPE }, body: errorXml(e.precondition.ns, e.precondition.name, e.message, e.precondition.inner) };
  return { status: e.status, headers: { ...headers, 'content-type': 'text/plain; charset=utf-8' }, body: `${e.message}\n` };
}

/** AppErrors from the calendar and vault functions, as DAV answers. */
export function fromAppError(err: AppError): DavError {
  const reason = err.details?.reason;
  if (err.status === 401) return new DavError(401, err.message, undefined, err.headers);
  if (err.status === 403) return precondition(403, NS.dav, 'need-privileges', err.message);
  if (err.status === 412) return new DavError(412, err.message);
  if (err.status === 507 || reason === 'quota_exceeded') return precondition(507, NS.dav, 'quota-not-exceeded', err.message);
  if (err.status === 409 && reason === 'uid_exists') return precondition(409, NS.caldav, 'no-uid-conflict', err.message);
  if (err.status >= 400 && err.status < 500) return new DavError(err.status, err.message, undefined, err.headers);
  return new DavError(500, 'Internal error');
}

const notFound = () => new DavError(404, 'No such resource');

function depthOf(headers: IncomingHttpHeaders, fallback: '0' | '1' | 'infinity'): '0' | '1' | 'infinity' {
  const v = String(headers.depth ?? fallback).trim().toLowerCase();
  if (v === '0' || v === '1' || v === 'infinity') return v;
  throw new DavError(400, `Depth must be 0, 1 or infinity, not ${JSON.stringify(v)}`);
}

function bodyXml(body: string): XmlNode | null {
  if (body.trim() === '') return null;
  try {
    return parseXml(body);
  } catch (e) {
    if (e instanceof XmlError) throw new DavError(400, `The request body is not well-formed XML: ${e.message}`);
    throw e;
  }
}

function askedProps(prop: XmlNode | undefined): Array<{ ns: string; name: string }> {
  return (prop?.children ?? []).map((c) => ({ ns: c.ns, name: c.name }));
}

/** The redirect RFC 6764 asks for: `/.well-known/caldav` → the DAV root, for every method. */
function wellKnown(services: Services): DavResponse {
  return { status: 301, headers: { location: `${basePathOf(services)}/dav/`, 'cache-control': 'no-store' }, body: '' };
}

export async function handleDav(services: Services, req: DavRequest): Promise<DavResponse> {
  try {
    // A client given only the server's address looks at its root first.
    if (req.path === WELL_KNOWN || req.path === `${WELL_KNOWN}/` || req.path === '/') return wellKnown(services);
    const target = parseDavPath(req.path);
    if (!target) throw notFound();
    if (req.method === 'OPTIONS') return { status: 200, headers: { dav: DAV_HEADER, allow: ALLOW, 'content-length': '0' }, body: '' };
    const caller = davCaller(services.store, req.headers.authorization, Date.now());
    let ctx = await davContext(services, caller);
    // A phone set up with the profile lists the calendar home first and needs a calendar to add
    // events to: a Home without any gets the default one, as its first event through the API would
    // (the context's own list says whether there is one, so other requests do not list them again).
    const own = 'user' in target && target.user.toLowerCase() === caller.username.toLowerCase();
    if (own && target.kind !== 'principal' && ctx.calendars.length === 0 && canWrite(caller) && (await ensureDefaultCalendar(ctx.scope))) ctx = await davContext(services, caller);
    const out = await route(ctx, target, req);
    out.headers.dav ??= DAV_HEADER;
    return out;
  } catch (e) {
    if (e instanceof DavError) return errorResponse(e);
    const err = toAppError(e);
    if (err.code === 'internal' && !(e instanceof AppError)) console.error('[quire] CalDAV:', e);
    return errorResponse(fromAppError(err));
  }
}

function needWrite(ctx: DavContext): void {
  if (!canWrite(ctx.caller)) throw precondition(403, NS.dav, 'need-privileges', 'This credential may only read (data:read)');
}

async function route(ctx: DavContext, target: DavTarget, req: DavRequest): Promise<DavResponse> {
  switch (req.method) {
    case 'PROPFIND':
      return propfind(ctx, target, req);
    case 'REPORT':
      return report(ctx, target, req);
    case 'GET':
    case 'HEAD':
      return get(ctx, target);
    case 'PUT':
      needWrite(ctx);
      return putObject(ctx, target, req);
    case 'DELETE':
      needWrite(ctx);
      return deleteObject(ctx, target, req);
    case 'MKCALENDAR':
    case 'MKCOL':
      needWrite(ctx);
      return makeCalendar(ctx, target, bodyXml(req.body), req.method === 'MKCOL');
    case 'PROPPATCH':
      needWrite(ctx);
      return patchCalendar(ctx, target, bodyXml(req.body));
  }
  throw new DavError(405, `${req.method} is not supported here`, undefined, { allow: ALLOW });
}

function get(ctx: DavContext, target: DavTarget): DavResponse {
  const r = resolve(ctx, target);
  if (!r) throw notFound();
  if (r.kind !== 'object') {
    return { status: 200, headers: { 'content-type': 'text/plain; charset=utf-8' }, body: 'Quire CalDAV: add this address to a calendar app (CalDAV account).\n' };
  }
  return { status: 200, headers: { 'content-type': 'text/calendar; charset=utf-8', etag: `"${r.entry.etag}"` }, body: servedText(r.entry) };
}

function ok(px: Prefixes, responses: string[], extra = ''): DavResponse {
  return { status: 207, headers: { 'content-type': XML_TYPE }, body: multistatus(px, responses, extra) };
}

async function propfind(ctx: DavContext, target: DavTarget, req: DavRequest): Promise<DavResponse> {
  // RFC 4918 reads a missing Depth as infinity; clients that leave it out mean their members (as SabreDAV reads it).
  const depth = depthOf(req.headers, '1');
  if (depth === 'infinity') throw precondition(403, NS.dav, 'propfind-finite-depth', 'PROPFIND with Depth: infinity is not supported; use 0 or 1');
  const root = bodyXml(req.body);
  if (root && !(root.ns === NS.dav && root.name === 'propfind')) throw new DavError(400, 'The body of a PROPFIND is a DAV:propfind element');
  const r = resolve(ctx, target);
  if (!r) throw notFound();
  const seq = await ctx.state.current(ctx.index);
  const list: Resource[] = [r, ...(depth === '1' ? membersOf(ctx, r) : [])];
  const px = new Prefixes();
  const prop = child(root ?? undefined, NS.dav, 'prop');
  const propname = child(root ?? undefined, NS.dav, 'propname');
  const responses = list.map((res) => {
    if (propname) return responseXml(px, hrefOf(ctx, res), allPropNames(res.kind).map((p) => ({ ...p, status: 200 })));
    const asked = prop ? askedProps(prop) : allPropNames(res.kind);
    return responseXml(px, hrefOf(ctx, res), propsOf(ctx, px, res, asked, seq));
  });
  return ok(px, responses);
}

async function report(ctx: DavContext, target: DavTarget, req: DavRequest): Promise<DavResponse> {
  const root = bodyXml(req.body);
  if (!root) throw new DavError(400, 'A REPORT needs a body');
  const r = resolve(ctx, target);
  if (!r) throw notFound();
  const asked = askedProps(child(root, NS.dav, 'prop'));
  if (root.ns === NS.caldav && root.name === 'calendar-multiget') return multiget(ctx, root, asked);
  if (root.ns === NS.caldav && root.name === 'calendar-query') {
    if (r.kind !== 'calendar' && r.kind !== 'object') throw precondition(403, NS.dav, 'supported-report', 'calendar-query is answered on a calendar collection');
    return query(ctx, r, parseFilter(child(root, NS.caldav, 'filter')), asked);
  }
  if (root.ns === NS.dav && root.name === 'sync-collection') {
    if (r.kind !== 'calendar') throw precondition(403, NS.dav, 'supported-report', 'sync-collection is answered on a calendar collection');
    return syncCollection(ctx, r, root, asked);
  }
  throw precondition(403, NS.dav, 'supported-report', `The ${root.name} report is not supported`);
}

async function multiget(ctx: DavContext, root: XmlNode, asked: Array<{ ns: string; name: string }>): Promise<DavResponse> {
  const seq = await ctx.state.current(ctx.index);
  const px = new Prefixes();
  const responses: string[] = [];
  for (const h of children(root, NS.dav, 'href')) {
    const path = hrefPath(h.text);
    const t = path === null ? null : parseDavPath(path, ctx.basePath);
    const res = t ? resolve(ctx, t) : null;
    responses.push(res ? responseXml(px, hrefOf(ctx, res), propsOf(ctx, px, res, asked, seq)) : responseXml(px, h.text.trim(), { status: 404 }));
  }
  return ok(px, responses);
}

/** Asked of a calendar, the query looks at its members whatever the Depth: clients disagree on the Depth they send. */
async function query(ctx: DavContext, r: Resource & { kind: 'calendar' | 'object' }, filter: QueryFilter, asked: Array<{ ns: string; name: string }>): Promise<DavResponse> {
  const seq = await ctx.state.current(ctx.index);
  const px = new Prefixes();
  const members = r.kind === 'object' ? [r] : (membersOf(ctx, r) as Array<Resource & { kind: 'object' }>);
  const matched = calendarQuery(ctx.index, members, filter);
  return ok(px, matched.map((m) => responseXml(px, hrefOf(ctx, m), propsOf(ctx, px, m, asked, seq))));
}

async function syncCollection(ctx: DavContext, r: Resource & { kind: 'calendar' }, root: XmlNode, asked: Array<{ ns: string; name: string }>): Promise<DavResponse> {
  const tokenText = child(root, NS.dav, 'sync-token')?.text.trim() ?? '';
  const level = child(root, NS.dav, 'sync-level')?.text.trim() ?? '1';
  if (level !== '1' && level !== 'infinite') throw new DavError(400, 'sync-level must be 1 or infinite');
  const nresults = child(child(root, NS.dav, 'limit'), NS.dav, 'nresults')?.text.trim();
  const limit = nresults === undefined ? Infinity : Number(nresults);
  if (!(limit >= 1) || !Number.isInteger(limit === Infinity ? 1 : limit)) throw new DavError(400, 'DAV:nresults must be a positive integer');
  const seq = await ctx.state.current(ctx.index);
  const changes = ctx.state.changesSince(r.cal.id, tokenText === '' ? null : tokenText, seq);
  if (changes === 'invalid') throw precondition(403, NS.dav, 'valid-sync-token', 'This sync token is unknown or too old; sync again without a token');
  const all = [...changes.changed.map((c) => ({ ...c, gone: false })), ...changes.removed.map((c) => ({ ...c, gone: true }))].sort((a, b) => a.seq - b.seq);
  const truncated = all.length > limit;
  const shown = truncated ? all.slice(0, limit) : all;
  const view = ctx.state.view(ctx.index, r.cal.id);
  const px = new Prefixes();
  const responses = shown.map((c) => {
    const entry = c.gone ? undefined : view.byName.get(c.name);
    const href = ctx.h.object(ctx.caller.username, r.cal.id, c.name);
    // Changed, then gone before this answer: the client learns it is gone.
    if (!entry) return responseXml(px, href, { status: 404 });
    return responseXml(px, href, propsOf(ctx, px, { kind: 'object', cal: r.cal, name: c.name, entry }, asked, seq));
  });
  if (truncated) responses.push(responseXml(px, hrefOf(ctx, r), { status: 507 }));
  const token = ctx.state.tokenAt(truncated ? shown[shown.length - 1]!.seq : seq);
  return ok(px, responses, `<${px.of(NS.dav)}:sync-token>${token}</${px.of(NS.dav)}:sync-token>`);
}
