/**
 * Where calendars live in a Home: `Calendars/<calendar id>/`, one `.ics` file
 * per event named from its UID, and `calendar.json` (name, colour, visible)
 * beside them. Every write goes through the Home's writer lock with the ETag
 * the server read (docs/calendar.md, "Storage").
 */
import { createHash } from 'node:crypto';
import { AppError, errors } from '../core/errors.js';
import type { Scope } from '../notes/access.js';
import { checkWritable } from '../notes/access.js';

export const CALENDARS_DIR = 'Calendars';
export const META_FILE = 'calendar.json';
/** The calendar a Home gets on its first event when it has none. */
export const DEFAULT_CALENDAR_ID = 'Personal';

export interface CalendarMeta {
  name: string;
  /** `#rrggbb`, or null for the client's default. */
  color: string | null;
  visible: boolean;
  /** A mirror of a subscription (`"read_only": true` in calendar.json): its events are written only by refreshes (docs/calendar-sync.md). */
  readOnly: boolean;
}

export const folderOf = (calendarId: string) => `${CALENDARS_DIR}/${calendarId}`;
export const metaPathOf = (calendarId: string) => `${folderOf(calendarId)}/${META_FILE}`;

/** Characters a UID keeps in its file name; others are written `%XX` (UTF-8 bytes). */
const SAFE = /^[A-Za-z0-9@._+-]$/;
/** File names stay well inside 255 bytes (the atomic write's temp name adds a prefix and a suffix). */
const MAX_NAME_BYTES = 180;

/**
 * The file name of an event: its UID with unsafe characters percent-encoded,
 * a leading dot encoded (no hidden files), and a long UID cut and suffixed
 * with a hash of the whole UID. Two UIDs never share a name.
 */
export function fileNameForUid(uid: string): string {
  let out = '';
  for (const ch of uid) {
    if (SAFE.test(ch) && !(out === '' && ch === '.')) out += ch;
    else for (const b of Buffer.from(ch, 'utf8')) out += `%${b.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  if (out.length > MAX_NAME_BYTES) {
    out = `${out.slice(0, MAX_NAME_BYTES - 17).replace(/%[0-9A-F]?$/, '')}~${createHash('sha256').update(uid).digest('hex').slice(0, 16)}`;
  }
  return `${out}.ics`;
}

/** Calendar ids are folder names: one path segment, not hidden, no control characters. */
export function checkCalendarId(id: string, field: string): string {
  if (!id || id.length > 200 || id.includes('/') || id.includes('\\') || id.startsWith('.') || /[\u0000-\u001f\u007f]/.test(id)) {
    throw errors.badRequest(`${field} is not a calendar id (a folder name under ${CALENDARS_DIR}/)`, { field });
  }
  return id;
}

/** `Calendars/<id>/<name>.ics` → id and name; null for anything else (deeper files are not events). */
export function eventPathParts(path: string): { calendarId: string; name: string } | null {
  const parts = path.split('/');
  if (parts.length !== 3 || parts[0] !== CALENDARS_DIR || !parts[2]!.toLowerCase().endsWith('.ics') || parts[1]!.startsWith('.')) return null;
  return { calendarId: parts[1]!, name: parts[2]! };
}

export function isMetaPath(path: string): string | null {
  const parts = path.split('/');
  return parts.length === 3 && parts[0] === CALENDARS_DIR && parts[2] === META_FILE && !parts[1]!.startsWith('.') ? parts[1]! : null;
}

const HEX_COLOR = /^#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/;

export function checkColor(color: string, field: string): string {
  if (!HEX_COLOR.test(color)) throw errors.badRequest(`${field} must be a hex colour such as #3b82f6`, { field });
  return color.toLowerCase();
}

/** The metadata in `calendar.json`, read leniently: a file edited by hand with a missing or odd key keeps the default for that key. */
export function parseMeta(id: string, bytes: Buffer | null): CalendarMeta {
  const meta: CalendarMeta = { name: id, color: null, visible: true, readOnly: false };
  if (!bytes) return meta;
  try {
    const v = JSON.parse(bytes.toString('utf8')) as Record<string, unknown>;
    if (typeof v.name === 'string' && v.name.trim()) meta.name = v.name;
    if (typeof v.color === 'string' && HEX_COLOR.test(v.color)) meta.color = v.color.toLowerCase();
    if (typeof v.visible === 'boolean') meta.visible = v.visible;
    meta.readOnly = v.read_only === true;
  } catch {
    /* not JSON: defaults; the file stays as it is until the calendar is changed through the API */
  }
  return meta;
}

/** The new `calendar.json`: the stored object with the changed keys, so keys other programs added stay. */
export function metaText(stored: Buffer | null, meta: CalendarMeta): string {
  let base: Record<string, unknown> = {};
  try {
    const v = stored ? (JSON.parse(stored.toString('utf8')) as unknown) : null;
    if (v && typeof v === 'object' && !Array.isArray(v)) base = v as Record<string, unknown>;
  } catch {
    base = {};
  }
  return JSON.stringify({ ...base, name: meta.name, color: meta.color, visible: meta.visible }, null, 2) + '\n';
}

export async function writeFile(scope: Scope, path: string, text: string, cond: { ifMatch: string } | { ifNoneMatch: '*' }) {
  checkWritable(scope, path);
  return scope.vault.home.write(path, text, { ...cond, quotaBytes: scope.quotaBytes });
}

export async function readOrNull(scope: Scope, path: string): Promise<{ bytes: Buffer; etag: string } | null> {
  try {
    const r = await scope.vault.home.read(path);
    return { bytes: r.bytes, etag: r.etag };
  } catch (e) {
    if (e instanceof AppError && e.status === 404) return null;
    throw e;
  }
}
