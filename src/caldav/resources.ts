/**
 * One DAV request's view of the caller's calendars: what a path names, and
 * each resource's properties (docs/caldav.md, "Properties").
 */
import type { Caller } from '../accounts/caller.js';
import type { CalendarEntry, CalendarIndex, ReadableEvent } from '../calendar/calendar-index.js';
import { openCalendars } from '../calendar/events.js';
import { CALENDARS_DIR, folderOf } from '../calendar/storage.js';
import { withZones } from '../calendar/vtimezone.js';
import { publicBaseUrl, paths } from '../core/config.js';
import type { Services } from '../core/services.js';
import { visible, type Scope } from '../notes/access.js';
import { canWrite } from './auth.js';
import { hrefs, type DavTarget, type Hrefs } from './paths.js';
import { davStateOf, type UserDavState } from './state.js';
import { element, escapeXml, keyOf, NS, Prefixes, qname, type PropResult, type PropValue } from './xml.js';

export interface DavContext {
  caller: Caller;
  scope: Scope;
  index: CalendarIndex;
  calendars: CalendarEntry[];
  seen: (calendarId: string) => boolean;
  state: UserDavState;
  /** The public URL's path (see basePathOf), which hrefs carry. */
  basePath: string;
  h: Hrefs;
}

export async function davContext(services: Services, caller: Caller): Promise<DavContext> {
  const { vault, quotaBytes } = await services.vaults.forCaller(caller);
  const scope: Scope = { vault, index: await vault.whenReady(), quotaBytes, prefix: caller.homePrefix };
  const { index, calendars, seen } = await openCalendars(scope);
  const basePath = basePathOf(services);
  return { caller, scope, index, calendars, seen, state: davStateOf(paths.state(services.config), caller.userId), basePath, h: hrefs(basePath) };
}

/** The path part of the public URL (a proxy serving Quire under `/quire`), prefixed to every href. */
export function basePathOf(services: Services): string {
  return new URL(publicBaseUrl(services.config)).pathname.replace(/\/+$/, '');
}

/** An object as GET and REPORT send it: the stored text plus a VTIMEZONE for each IANA TZID it names without one. */
export const servedText = (e: ReadableEvent): string => withZones(e.text, e.ics.root);

export type Resource =
  | { kind: 'root' }
  | { kind: 'principals' }
  | { kind: 'principal' }
  | { kind: 'home' }
  | { kind: 'calendar'; cal: CalendarEntry }
  | { kind: 'object'; cal: CalendarEntry; name: string; entry: ReadableEvent };

const ownUser = (ctx: DavContext, user: string) => user.toLowerCase() === ctx.caller.username.toLowerCase();

/** The calendar a path names, if the caller may see it. */
export function calendarOf(ctx: DavContext, user: string, id: string): CalendarEntry | null {
  if (!ownUser(ctx, user) || !ctx.seen(id)) return null;
  return ctx.index.calendarById(id) ?? null;
}

/** The resource a path names for this caller; null when there is none (another user's tree counts as none). */
export function resolve(ctx: DavContext, t: DavTarget): Resource | null {
  switch (t.kind) {
    case 'root':
    case 'principals':
      return { kind: t.kind };
    case 'principal':
      return ownUser(ctx, t.user) ? { kind: 'principal' } : null;
    case 'home':
      return ownUser(ctx, t.user) ? { kind: 'home' } : null;
    case 'calendar': {
      const cal = calendarOf(ctx, t.user, t.calendar);
      return cal ? { kind: 'calendar', cal } : null;
    }
    case 'object': {
      const cal = calendarOf(ctx, t.user, t.calendar);
      const entry = cal && ctx.state.view(ctx.index, cal.id).byName.get(t.name);
      return cal && entry ? { kind: 'object', cal, name: t.name, entry } : null;
    }
  }
}

export function hrefOf(ctx: DavContext, r: Resource): string {
  const u = ctx.caller.username;
  switch (r.kind) {
    case 'root':
      return ctx.h.root();
    case 'principals':
      return ctx.h.principals();
    case 'principal':
      return ctx.h.principal(u);
    case 'home':
      return ctx.h.home(u);
    case 'calendar':
      return ctx.h.calendar(u, r.cal.id);
    case 'object':
      return ctx.h.object(u, r.cal.id, r.name);
  }
}

/** The members PROPFIND Depth 1 lists. */
export function membersOf(ctx: DavContext, r: Resource): Resource[] {
  switch (r.kind) {
    case 'root':
      return [{ kind: 'principal' }, { kind: 'home' }];
    case 'principals':
      return [{ kind: 'principal' }];
    case 'home':
      return ctx.calendars.map((cal) => ({ kind: 'calendar', cal }));
    case 'calendar':
      return [...ctx.state.view(ctx.index, r.cal.id).byName].map(([name, entry]) => ({ kind: 'object', cal: r.cal, name, entry }));
    default:
      return [];
  }
}

// ---------------------------------------------------------------- properties

const D = (name: string) => qname(NS.dav, name);
const C = (name: string) => qname(NS.caldav, name);

/** What `allprop` returns per kind (calendar-data only when asked for by name: it is the whole file). */
const ALLPROP: Record<Resource['kind'], string[]> = {
  root: [D('resourcetype'), D('current-user-principal'), D('displayname')],
  principals: [D('resourcetype'), D('current-user-principal')],
  principal: [D('resourcetype'), D('displayname'), D('principal-URL'), C('calendar-home-set'), D('current-user-principal')],
  home: [D('resourcetype'), D('displayname'), D('current-user-principal'), D('owner')],
  calendar: [
    D('resourcetype'), D('displayname'), qname(NS.cs, 'getctag'), D('sync-token'), C('supported-calendar-component-set'),
    qname(NS.apple, 'calendar-color'), D('owner'), D('current-user-principal'),
  ],
  object: [D('resourcetype'), D('getetag'), D('getcontenttype'), D('getcontentlength')],
};

export function allPropNames(kind: Resource['kind']): Array<{ ns: string; name: string }> {
  return ALLPROP[kind].map((k) => {
    const i = k.indexOf('}');
    return { ns: k.slice(1, i), name: k.slice(i + 1) };
  });
}

const href = (px: Prefixes, h: string) => element(px, NS.dav, 'href', escapeXml(h));
const xml = (s: string): PropValue => ({ xml: s });
const txt = (s: string): PropValue => ({ text: s });

/** `#rgb` and `#rrggbb` as Apple's `#RRGGBB` (Apple apps add alpha themselves). */
function appleColor(c: string): string {
  const hex = c.length === 4 ? c.slice(1).split('').map((x) => x + x).join('') : c.slice(1);
  return `#${hex.toUpperCase()}`;
}

/**
 * Privileges the caller holds on a resource: reading always; writing with data:write inside the
 * Home prefix; of a subscription's read-only mirror, only its name and colour.
 */
function privileges(ctx: DavContext, px: Prefixes, r: Resource): string {
  const where = r.kind === 'calendar' || r.kind === 'object' ? folderOf(r.cal.id) + '/' : CALENDARS_DIR + '/';
  const names = ['read', 'read-current-user-privilege-set'];
  const readOnly = (r.kind === 'calendar' || r.kind === 'object') && r.cal.meta.readOnly;
  if (canWrite(ctx.caller) && visible(ctx.scope, where)) names.push(...(readOnly ? ['write-properties'] : ['write', 'write-content', 'write-properties', 'bind', 'unbind']));
  return names.map((n) => element(px, NS.dav, 'privilege', element(px, NS.dav, n))).join('');
}

const REPORTS: Record<string, string[]> = {
  calendar: ['calendar-multiget', 'calendar-query', 'sync-collection'],
  object: ['calendar-multiget'],
  home: ['calendar-multiget'],
};

/**
 * The value of one property of a resource; undefined when the resource has no
 * such property (a 404 in its propstat). `syncSeq` is the change number the
 * request answers at (sync-token, ctag).
 */
export function propValue(ctx: DavContext, px: Prefixes, r: Resource, p: { ns: string; name: string }, syncSeq: number): PropValue | undefined {
  const u = ctx.caller.username;
  const key = keyOf(p);
  switch (key) {
    case D('resourcetype'):
      if (r.kind === 'object') return txt('');
      if (r.kind === 'principal') return xml(element(px, NS.dav, 'principal'));
      return xml(element(px, NS.dav, 'collection') + (r.kind === 'calendar' ? element(px, NS.caldav, 'calendar') : ''));
    case D('current-user-principal'):
      return xml(href(px, ctx.h.principal(u)));
    case D('principal-URL'):
      return r.kind === 'principal' ? xml(href(px, ctx.h.principal(u))) : undefined;
    case D('owner'):
      return r.kind === 'home' || r.kind === 'calendar' || r.kind === 'object' ? xml(href(px, ctx.h.principal(u))) : undefined;
    case C('calendar-home-set'):
      return r.kind === 'principal' || r.kind === 'root' ? xml(href(px, ctx.h.home(u))) : undefined;
    case C('calendar-user-address-set'):
      return r.kind === 'principal' ? xml(href(px, ctx.h.principal(u))) : undefined;
    case D('principal-collection-set'):
      return xml(href(px, ctx.h.principals()));
    case D('displayname'):
      if (r.kind === 'principal' || r.kind === 'home') return txt(u);
      if (r.kind === 'root') return txt('Quire');
      return r.kind === 'calendar' ? txt(r.cal.meta.name) : undefined;
    case D('current-user-privilege-set'):
      return r.kind === 'principals' ? undefined : xml(privileges(ctx, px, r));
    case D('supported-report-set'): {
      const list = REPORTS[r.kind];
      if (!list) return undefined;
      return xml(list.map((n) => element(px, NS.dav, 'supported-report', element(px, NS.dav, 'report', element(px, n === 'sync-collection' ? NS.dav : NS.caldav, n)))).join(''));
    }
    case qname(NS.cs, 'getctag'):
      return r.kind === 'calendar' ? txt(ctx.state.ctag(r.cal.id)) : undefined;
    case D('sync-token'):
      return r.kind === 'calendar' ? txt(ctx.state.tokenAt(syncSeq)) : undefined;
    case C('supported-calendar-component-set'):
      return r.kind === 'calendar' ? xml(`<${px.of(NS.caldav)}:comp name="VEVENT"/>`) : undefined;
    case C('supported-calendar-data'):
      return r.kind === 'calendar' ? xml(`<${px.of(NS.caldav)}:calendar-data content-type="text/calendar" version="2.0"/>`) : undefined;
    case qname(NS.apple, 'calendar-color'):
      return r.kind === 'calendar' && r.cal.meta.color ? txt(appleColor(r.cal.meta.color)) : undefined;
    case D('getetag'):
      return r.kind === 'object' ? txt(`"${r.entry.etag}"`) : undefined;
    case D('getcontenttype'):
      return r.kind === 'object' ? txt('text/calendar; charset=utf-8; component=vevent') : undefined;
    case D('getcontentlength'):
      return r.kind === 'object' ? txt(String(Buffer.byteLength(servedText(r.entry)))) : undefined;
    case C('calendar-data'):
      return r.kind === 'object' ? txt(servedText(r.entry)) : undefined;
  }
  return undefined;
}

/** Each asked-for property with its value (200) or without (404). */
export function propsOf(ctx: DavContext, px: Prefixes, r: Resource, asked: Array<{ ns: string; name: string }>, syncSeq: number): PropResult[] {
  return asked.map((p) => {
    const value = propValue(ctx, px, r, p, syncSeq);
    return value === undefined ? { ns: p.ns, name: p.name, status: 404 } : { ns: p.ns, name: p.name, status: 200, value };
  });
}
