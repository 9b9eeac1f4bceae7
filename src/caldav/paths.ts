/**
 * The DAV tree's URLs (docs/caldav.md, "Paths"): what a request path names,
 * and the href of each resource. Segments are percent-decoded once on the way
 * in and encoded on the way out, so a file name that holds `%XX` (a UID with
 * unsafe characters, see fileNameForUid) round-trips as `%25XX`.
 */
export const DAV_ROOT = '/dav/';
export const WELL_KNOWN = '/.well-known/caldav';

export type DavTarget =
  | { kind: 'root' }
  | { kind: 'principals' }
  | { kind: 'principal'; user: string }
  | { kind: 'home'; user: string }
  | { kind: 'calendar'; user: string; calendar: string }
  | { kind: 'object'; user: string; calendar: string; name: string };

/** What a path (already without query, with or without the public base path) names; null when nothing in the tree. */
export function parseDavPath(path: string, basePath = ''): DavTarget | null {
  let p = path;
  if (basePath && p.startsWith(basePath + '/')) p = p.slice(basePath.length);
  if (p === '/dav') p = DAV_ROOT;
  if (!p.startsWith(DAV_ROOT)) return null;
  let segs: string[];
  try {
    segs = p.slice(DAV_ROOT.length).split('/').map(decodeURIComponent);
  } catch {
    return null;
  }
  if (segs[segs.length - 1] === '') segs.pop();
  if (segs.some((s) => s === '' || s === '.' || s === '..' || s.includes('/'))) return null;
  const [area, user, calendar, name, ...rest] = segs;
  if (rest.length > 0) return null;
  if (area === undefined) return { kind: 'root' };
  if (area === 'principals') {
    if (user === undefined) return { kind: 'principals' };
    return calendar === undefined ? { kind: 'principal', user } : null;
  }
  if (area !== 'calendars' || user === undefined) return null;
  if (calendar === undefined) return { kind: 'home', user };
  if (name === undefined) return { kind: 'calendar', user, calendar };
  return { kind: 'object', user, calendar, name };
}

/** Percent-encoding of one segment, but `@` stays as it is (legal in a path, and in most UIDs: `x@host`). */
const enc = (s: string) => encodeURIComponent(s).replace(/%40/g, '@');

export const hrefs = (basePath = '') => ({
  root: () => `${basePath}${DAV_ROOT}`,
  principals: () => `${basePath}${DAV_ROOT}principals/`,
  principal: (user: string) => `${basePath}${DAV_ROOT}principals/${enc(user)}/`,
  home: (user: string) => `${basePath}${DAV_ROOT}calendars/${enc(user)}/`,
  calendar: (user: string, calendar: string) => `${basePath}${DAV_ROOT}calendars/${enc(user)}/${enc(calendar)}/`,
  object: (user: string, calendar: string, name: string) => `${basePath}${DAV_ROOT}calendars/${enc(user)}/${enc(calendar)}/${enc(name)}`,
});
export type Hrefs = ReturnType<typeof hrefs>;

/** An href from a request body (absolute URL or path) as a path, or null when it is no URL at all. */
export function hrefPath(href: string): string | null {
  try {
    return new URL(href.trim(), 'http://x').pathname;
  } catch {
    return null;
  }
}

/**
 * Whether `name` may be the resource name of an event a client creates: one
 * segment a file system could also hold, so no client can make Quire keep a
 * name it could not show back.
 */
export function validResourceName(name: string): boolean {
  return name.length > 0 && Buffer.byteLength(name) <= 255 && !/[\u0000-\u001f\u007f/\\]/.test(name) && name !== '.' && name !== '..';
}
