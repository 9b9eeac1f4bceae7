/**
 * The parts of a vault's Obsidian settings (`.obsidian/*.json`) that decide
 * where the server puts things (docs/journal.md, "Obsidian's settings"):
 *
 * - `daily-notes.json`: `folder`, `format` (Moment tokens), `template` — where
 *   Daily notes are and how they are named;
 * - `templates.json`: `folder`, `dateFormat`, `timeFormat` — the templates
 *   folder and the default formats of `{{date}}` / `{{time}}`;
 * - `app.json`: `attachmentFolderPath` — where attachments land.
 *
 * The files are read, never written (the vault belongs to Obsidian too), and
 * they can change while the server runs: each use stats the file and parses
 * it again only when its mtime, size or inode changed. The parse and the
 * path rules below are pure.
 */
import { readFile, stat } from 'node:fs/promises';
import { moment } from '../core/moment.js';
import { resolveHomePath, validateRelPath } from './paths.js';

// ---------------------------------------------------------------- the settings

export interface DailyNotesSettings {
  /** Home-relative folder without slashes at either end; `''` = the Home root. */
  folder: string;
  /** Moment format of the note's path below `folder`, without `.md` (may contain `/`). */
  format: string;
  /** Home path of the template (`.md` added as Obsidian does), or null. */
  template: string | null;
}

export interface TemplatesSettings {
  /** Home-relative folder without slashes at either end (never the root). */
  folder: string;
  dateFormat: string;
  timeFormat: string;
}

export interface AttachmentSettings {
  /** Obsidian's `attachmentFolderPath` as written: `/`, `./`, `./sub` or a folder. */
  attachmentFolderPath: string;
}

/** Without `.obsidian/daily-notes.json`: the server's own layout (docs/vault-format.md). */
export const DEFAULT_DAILY: DailyNotesSettings = Object.freeze({ folder: 'Journal', format: 'YYYY-MM-DD', template: null });
export const DEFAULT_TEMPLATES: TemplatesSettings = Object.freeze({ folder: 'Templates', dateFormat: 'YYYY-MM-DD', timeFormat: 'HH:mm' });
/** Without `.obsidian/app.json`: the server's own `Attachments/` folder. */
export const DEFAULT_ATTACHMENTS: AttachmentSettings = Object.freeze({ attachmentFolderPath: 'Attachments' });

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string | null => (typeof v === 'string' && v.trim() !== '' ? v.trim() : null);

/**
 * Obsidian's `normalizePath`: one `/` between segments, none at either end,
 * no-break spaces as spaces, NFC. Null for a path that would leave the Home
 * or break the server's path rules (`..`, a control character, …).
 */
export function normalizeFolder(raw: string): string | null {
  const p = raw
    .replace(/[\\/]+/g, '/')
    .replace(/^\/+|\/+$/g, '')
    .replace(/[\u00A0\u202F]/g, ' ')
    .normalize('NFC');
  if (p === '') return '';
  try {
    validateRelPath(p);
  } catch {
    return null;
  }
  return p;
}

/** A format usable for Daily notes: every day gets its own valid file name, which reads back as that day. */
export function isUsableDailyFormat(folder: string, format: string): boolean {
  for (const day of FORMAT_PROBES) {
    const rel = moment().utc(day, ISO, true).format(format);
    if (!rel) return false;
    const back = moment().utc(rel, format, true);
    if (!back.isValid() || back.format(ISO) !== day) return false;
    try {
      validateRelPath(`${folder ? folder + '/' : ''}${rel}.md`);
    } catch {
      return false;
    }
  }
  return true;
}

const ISO = 'YYYY-MM-DD';
// Month and year ends, a leap day, week-year edges and single-digit days.
const FORMAT_PROBES = ['2024-02-29', '2024-12-30', '2025-01-01', '2025-01-09', '2026-03-09', '2026-10-31', '2026-12-31', '2027-01-03'];

/**
 * The Daily-notes settings from the parsed `daily-notes.json` (`undefined`
 * when there is no file). Obsidian's rules: an absent or empty `folder` is
 * the vault root and an empty `format` is `YYYY-MM-DD`. A value the server
 * cannot use (a folder that climbs out, a format that does not name one day
 * per file) falls back to that rule's default.
 */
export function parseDailyNotesSettings(json: unknown): DailyNotesSettings {
  if (!isObject(json)) return DEFAULT_DAILY;
  const folder = normalizeFolder(str(json.folder) ?? '') ?? '';
  let format = str(json.format) ?? ISO;
  if (!isUsableDailyFormat(folder, format)) format = ISO;
  const t = str(json.template);
  const tpl = t === null ? null : normalizeFolder(t);
  const template = tpl ? (tpl.toLowerCase().endsWith('.md') ? tpl : `${tpl}.md`) : null;
  return { folder, format, template };
}

export function parseTemplatesSettings(json: unknown): TemplatesSettings {
  if (!isObject(json)) return DEFAULT_TEMPLATES;
  const folder = normalizeFolder(str(json.folder) ?? '');
  return {
    // An unset folder leaves Obsidian's Templates plugin without one; the server keeps its own.
    folder: folder ? folder : DEFAULT_TEMPLATES.folder,
    dateFormat: str(json.dateFormat) ?? DEFAULT_TEMPLATES.dateFormat,
    timeFormat: str(json.timeFormat) ?? DEFAULT_TEMPLATES.timeFormat,
  };
}

/** From the parsed `app.json`; an absent `attachmentFolderPath` is Obsidian's default, the vault root. */
export function parseAppSettings(json: unknown): AttachmentSettings {
  if (!isObject(json)) return DEFAULT_ATTACHMENTS;
  return { attachmentFolderPath: typeof json.attachmentFolderPath === 'string' ? json.attachmentFolderPath : '/' };
}

// ---------------------------------------------------------------- Daily-note paths

/** The Home path of the Daily note of `date` (`YYYY-MM-DD`). */
export function dailyNotePath(s: DailyNotesSettings, date: string): string {
  const name = moment().utc(date, ISO, true).format(s.format);
  return `${s.folder ? s.folder + '/' : ''}${name}.md`;
}

// Moment's own tokenizer (moment/src/lib/format/format.js, formattingTokens), so the shape splits a format as Moment does.
const MOMENT_TOKENS =
  /(\[[^[]*\])|(\\)?([Hh]mm(ss)?|Mo|MM?M?M?|Do|DDDo|DD?D?D?|ddd?d?|do?|w[o|w]?|W[o|W]?|Qo?|N{1,5}|YYYYYY|YYYYY|YYYY|YY|y{2,4}|yo?|gg(ggg?)?|GG(GGG?)?|e|E|a|A|hh?|HH?|kk?|mm?|ss?|S{1,9}|x|X|zz?|ZZ?|.)/g;
const DIGITS: Record<string, string> = {
  YYYY: '\\d{4}', gggg: '\\d{4}', GGGG: '\\d{4}', YY: '\\d{2}', gg: '\\d{2}', GG: '\\d{2}',
  MM: '\\d{2}', DD: '\\d{2}', HH: '\\d{2}', hh: '\\d{2}', kk: '\\d{2}', mm: '\\d{2}', ss: '\\d{2}', ww: '\\d{2}', WW: '\\d{2}',
  M: '\\d{1,2}', D: '\\d{1,2}', H: '\\d{1,2}', h: '\\d{1,2}', k: '\\d{1,2}', m: '\\d{1,2}', s: '\\d{1,2}', w: '\\d{1,2}', W: '\\d{1,2}',
  DDDD: '\\d{3}', DDD: '\\d{1,3}', Q: '\\d', E: '\\d', e: '\\d', d: '\\d',
};
const escapeRe = (t: string) => t.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');
const shapes = new Map<string, RegExp>();

/**
 * A quick test that a name can be in `format`: numeric tokens as digits,
 * other tokens (month and day names, ordinals, …) as any text within one
 * folder, the rest literal. Only a prefilter — strict Moment parsing decides —
 * so that finding the Daily notes among 100,000 paths costs milliseconds.
 */
function shapeOf(format: string): RegExp {
  let re = shapes.get(format);
  if (!re) {
    let src = '';
    for (const [tok, bracket, escaped, t] of format.matchAll(MOMENT_TOKENS)) {
      if (bracket !== undefined) src += escapeRe(bracket.slice(1, -1));
      else if (escaped !== undefined) src += escapeRe(t!);
      else if (DIGITS[t!]) src += DIGITS[t!];
      else if (/[A-Za-z]/.test(t!)) src += '[^/]*?';
      else src += escapeRe(tok);
    }
    re = new RegExp(`^${src}$`);
    if (shapes.size > 100) shapes.clear();
    shapes.set(format, re);
  }
  return re;
}

/** The date whose Daily note is at `path`, or null: the path must be exactly what `dailyNotePath` writes. */
export function dateOfDailyNotePath(s: DailyNotesSettings, path: string): string | null {
  if (!path.endsWith('.md')) return null;
  const prefix = s.folder ? s.folder + '/' : '';
  if (!path.startsWith(prefix)) return null;
  const rel = path.slice(prefix.length, -3);
  if (!rel || !shapeOf(s.format).test(rel)) return null;
  const key = `${s.format}\u0000${rel}`;
  let date = parsedNames.get(key);
  if (date === undefined) {
    const m = moment().utc(rel, s.format, true);
    // Strict parsing still accepts some spellings the format would not write (case of names).
    date = m.isValid() && m.format(s.format) === rel ? m.format(ISO) : null;
    if (parsedNames.size >= MAX_PARSED_NAMES) parsedNames.clear();
    parsedNames.set(key, date);
  }
  return date;
}

// Moment's strict parse costs tens of microseconds; tasks read every Daily note's name on each attach.
const parsedNames = new Map<string, string | null>();
const MAX_PARSED_NAMES = 200_000;

// ---------------------------------------------------------------- attachments

/**
 * The folder (`''` = the Home root) where an attachment added to the note at
 * `notePath` goes, by Obsidian's `attachmentFolderPath`: `/` (or empty) the
 * vault root, `./` the note's folder, `./sub` a subfolder of the note's
 * folder, anything else a folder of the vault. Null for a setting that
 * would leave the Home.
 */
export function attachmentFolderFor(setting: string, notePath: string): string | null {
  const s = setting.trim();
  const noteFolder = notePath.includes('/') ? notePath.slice(0, notePath.lastIndexOf('/')) : '';
  if (s === '.' || s === './' || /^\.\/+$/.test(s)) return noteFolder;
  if (s.startsWith('./')) {
    const sub = normalizeFolder(s.slice(2));
    if (sub === null) return null;
    return normalizeFolder(noteFolder ? `${noteFolder}/${sub}` : sub);
  }
  return normalizeFolder(s);
}

// ---------------------------------------------------------------- reading from a Home

interface Cached<T> {
  mtimeMs: number;
  size: number;
  ino: number;
  value: T;
}

const cache = new Map<string, Cached<unknown>>();
const MAX_CACHED = 3000;

/**
 * The settings file `rel` of the Home at `root`, parsed with `parse`
 * (`undefined` when the file is absent, unreadable or not JSON). One stat
 * per call; the file is read again only after it changed.
 */
async function settingsFile<T>(root: string, rel: string, parse: (json: unknown) => T): Promise<T> {
  let abs: string;
  try {
    abs = await resolveHomePath(root, rel);
  } catch {
    return parse(undefined); // a link out of the Home, or a dangling one: not the vault's settings
  }
  let st;
  try {
    st = await stat(abs);
  } catch {
    cache.delete(abs);
    return parse(undefined);
  }
  const hit = cache.get(abs) as Cached<T> | undefined;
  if (hit && hit.mtimeMs === st.mtimeMs && hit.size === st.size && hit.ino === st.ino) return hit.value;
  let json: unknown;
  try {
    json = st.isFile() ? JSON.parse(await readFile(abs, 'utf8')) : undefined;
  } catch {
    json = undefined; // half-written by Obsidian or hand-edited into invalid JSON: the defaults until it is fixed
  }
  const value = parse(json);
  if (cache.size >= MAX_CACHED) cache.delete(cache.keys().next().value!);
  cache.set(abs, { mtimeMs: st.mtimeMs, size: st.size, ino: st.ino, value });
  return value;
}

export const DAILY_NOTES_FILE = '.obsidian/daily-notes.json';
export const TEMPLATES_FILE = '.obsidian/templates.json';
export const APP_FILE = '.obsidian/app.json';

export const dailyNotesSettings = (root: string) => settingsFile(root, DAILY_NOTES_FILE, parseDailyNotesSettings);
export const templatesSettings = (root: string) => settingsFile(root, TEMPLATES_FILE, parseTemplatesSettings);
export const attachmentSettings = (root: string) => settingsFile(root, APP_FILE, parseAppSettings);
