/**
 * Who made a change, as history points record it. Three object forms (the spec's `author`):
 *
 * - `{ "user": "alice" }`: a signed-in user through a browser session or an App Password;
 * - `{ "user": "alice", "installation": "laptop" }`: a user's installation (an app or the
 *   command line signed in as a named installation);
 * - `{ "guest": "<guest session id>", "link": "<slug>" }`: a guest editing through a public link.
 *
 * Edits made outside the server (an editor, git) and the file's text when collaboration first
 * opened it are the installation form without a user: `{ "installation": "disk" }`.
 */
import { AppError } from '../core/errors.js';

export type Author =
  | { user: string; installation?: undefined; guest?: undefined }
  | { user: string; installation: string; guest?: undefined }
  | { installation: 'disk'; user?: undefined; guest?: undefined }
  | { guest: string; link: string; user?: undefined; installation?: undefined };

export const DISK: Author = { installation: 'disk' };

/** One string per author, as history lines store it and undo compares it. */
export function authorKey(a: Author): string {
  if (a.guest !== undefined) return `guest:${a.link}/${a.guest}`;
  if (a.user !== undefined) return a.installation !== undefined ? `installation:${a.user}/${a.installation}` : `user:${a.user}`;
  return 'installation:disk';
}

export function authorOfKey(key: string): Author {
  const [kind, rest = ''] = splitOnce(key, ':');
  if (kind === 'guest') {
    const [link, guest] = splitOnce(rest, '/');
    return { guest: guest ?? '', link };
  }
  if (kind === 'installation') {
    if (rest === 'disk') return DISK;
    const [user, installation] = splitOnce(rest, '/');
    return { user, installation: installation ?? '' };
  }
  return { user: rest };
}

function splitOnce(s: string, sep: string): [string, string | undefined] {
  const i = s.indexOf(sep);
  return i < 0 ? [s, undefined] : [s.slice(0, i), s.slice(i + 1)];
}

/** Reads the `author` of an undo body: exactly one of the three forms, or 400 naming the field. */
export function parseAuthor(raw: Record<string, unknown>, field: string): Author {
  const str = (k: string) => (typeof raw[k] === 'string' && (raw[k] as string).length > 0 ? (raw[k] as string) : undefined);
  const keys = Object.keys(raw).sort().join(',');
  const user = str('user');
  const installation = str('installation');
  const guest = str('guest');
  const link = str('link');
  if (keys === 'user' && user) return { user };
  if (keys === 'installation,user' && user && installation) return { user, installation };
  if (keys === 'installation' && installation === 'disk') return DISK;
  if (keys === 'guest,link' && guest && link) return { guest, link };
  throw new AppError(
    'bad_request',
    `${field} must be one of {"user"}, {"user","installation"}, {"guest","link"} (non-empty strings) or {"installation":"disk"}`,
    { details: { field } },
  );
}
