/**
 * Note templates: Markdown files in the templates folder — Obsidian's
 * (`.obsidian/templates.json` `folder`), else `Templates/` (docs/templates.md).
 *
 * A template's `template_id` is its note id (frontmatter `id`, else the
 * index's path-derived id); its path (`Templates/Meeting.md`) and its name
 * (`Meeting`) are accepted too. The default template is kept in the Home's
 * `.quire/templates.json`, so it travels with the Home.
 */
import { randomUUID } from 'node:crypto';
import type { Moment, unitOfTime } from 'moment';
import { moment } from '../core/moment.js';
import { AppError, errors } from '../core/errors.js';
import type { NoteEntry } from '../index/home-index.js';
import { extractFacts } from '../markdown/extract.js';
import { checkWritable, visible, type Scope } from '../notes/access.js';
import { editFrontmatter } from '../notes/frontmatter.js';
import { DEFAULT_TEMPLATES, templatesSettings, type TemplatesSettings } from '../vault/obsidian-settings.js';
import { checkNotesFolder, fileNameFor, noteRecord, NOTES_ROOT, writeNewNote, type NoteRecord } from '../notes/notes.js';
import { checkTitle } from '../notes/limits.js';

export const SETTINGS_PATH = '.quire/templates.json';

export interface TemplateRecord {
  id: string;
  path: string;
  name: string;
  title: string;
  tags: readonly string[];
  etag: string;
  /** True for the default template. */
  default: boolean;
}

interface Settings {
  /** Path of the default template when it was set (kept to find it again if its id was derived). */
  default_template_path?: string | null;
  default_template_id?: string | null;
  folder?: string;
}

function isTemplate(n: NoteEntry, folder: string): boolean {
  return n.path.startsWith(`${folder}/`) && n.path.toLowerCase().endsWith('.md') && !n.path.toLowerCase().endsWith('.excalidraw.md');
}

/** The vault's templates settings (read from disk, cached by mtime). */
const templateSettingsOf = (scope: Scope): Promise<TemplatesSettings> => templatesSettings(scope.vault.home.root);

function templates(scope: Scope, folder: string): NoteEntry[] {
  return [...scope.index.notes()]
    .filter((n) => isTemplate(n, folder) && visible(scope, n.path))
    .sort((a, b) => (a.path.toLowerCase() < b.path.toLowerCase() ? -1 : a.path.toLowerCase() > b.path.toLowerCase() ? 1 : 0));
}

const nameOf = (p: string) => p.split('/').pop()!.replace(/\.md$/i, '');

async function readSettings(scope: Scope): Promise<{ settings: Settings; etag: string | null }> {
  try {
    const { bytes, etag } = await scope.vault.home.read(SETTINGS_PATH);
    const parsed = JSON.parse(bytes.toString('utf8')) as unknown;
    return { settings: typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Settings) : {}, etag };
  } catch (e) {
    if (e instanceof AppError && e.status === 404) return { settings: {}, etag: null };
    if (e instanceof SyntaxError) return { settings: {}, etag: null };
    throw e;
  }
}

/** A template by id, path (with or without `.md`) or name; null when none matches. */
function lookup(scope: Scope, folder: string, key: string): NoteEntry | null {
  const all = templates(scope, folder);
  const k = key.trim();
  const lower = k.toLowerCase();
  return (
    all.find((t) => t.id === k) ??
    all.find((t) => t.path === k || t.path === `${k}.md`) ??
    all.find((t) => t.path.toLowerCase() === lower || t.path.toLowerCase() === `${lower}.md`) ??
    all.find((t) => nameOf(t.path).toLowerCase() === lower) ??
    null
  );
}

function findTemplate(scope: Scope, folder: string, key: string, field: string): NoteEntry {
  const t = lookup(scope, folder, key);
  if (!t) throw errors.notFound(`No template ${key} in ${folder}/`, { field, template_id: key });
  return t;
}

/** The default template: by stored id, else by stored path; null when unset or gone. */
async function defaultTemplate(scope: Scope, folder: string): Promise<NoteEntry | null> {
  const { settings } = await readSettings(scope);
  const byId = settings.default_template_id ? templates(scope, folder).find((t) => t.id === settings.default_template_id) : undefined;
  if (byId) return byId;
  const byPath = settings.default_template_path ? templates(scope, folder).find((t) => t.path === settings.default_template_path) : undefined;
  return byPath ?? null;
}

function templateRecord(n: NoteEntry, defaultPath: string | null): TemplateRecord {
  return { id: n.id, path: n.path, name: nameOf(n.path), title: n.title, tags: n.tags, etag: n.etag, default: n.path === defaultPath };
}

export async function listTemplates(scope: Scope) {
  const { folder } = await templateSettingsOf(scope);
  const def = await defaultTemplate(scope, folder);
  return { items: templates(scope, folder).map((t) => templateRecord(t, def?.path ?? null)), next_cursor: null };
}

export async function setDefaultTemplate(scope: Scope, body: { folder?: string | null; template_id?: string | null }) {
  checkNotesFolder(body.folder);
  checkWritable(scope, SETTINGS_PATH);
  const { folder } = await templateSettingsOf(scope);
  const { settings, etag } = await readSettings(scope);
  const next: Settings = { ...settings, folder: NOTES_ROOT };
  let chosen: NoteEntry | null = null;
  if (body.template_id === null) {
    next.default_template_id = null;
    next.default_template_path = null;
  } else if (body.template_id !== undefined) {
    chosen = findTemplate(scope, folder, body.template_id, 'body.template_id');
    next.default_template_id = chosen.id;
    next.default_template_path = chosen.path;
  } else {
    chosen = await defaultTemplate(scope, folder);
  }
  const text = JSON.stringify(next, null, 2) + '\n';
  await scope.vault.home.write(SETTINGS_PATH, text, etag === null ? { ifNoneMatch: '*', quotaBytes: scope.quotaBytes } : { ifMatch: etag, quotaBytes: scope.quotaBytes });
  return { template: chosen ? templateRecord(chosen, chosen.path) : null, template_id: chosen?.id ?? null, folder: NOTES_ROOT };
}

/** Moment's `format`, as Obsidian's Templates plugin uses it; a `Date` is read in the server's local time. */
export function formatDate(d: Date | Moment, pattern: string): string {
  return (moment().isMoment(d) ? d : moment()(d)).format(pattern);
}

export interface FillOptions {
  /** Format of a bare `{{date}}` (templates.json `dateFormat`; for a Daily note its file name format). */
  dateFormat?: string;
  /** Format of a bare `{{time}}` (templates.json `timeFormat`). */
  timeFormat?: string;
  /** Daily-note templates also take `{{yesterday}}`, `{{tomorrow}}` and offsets such as `{{date+1d:FORMAT}}`. */
  daily?: boolean;
}

// Formats are at most 200 characters and no two whitespace runs meet: with `[^}]*` and adjacent
// `\s*`, a template of many unclosed `{{date:` took 12 s (140 KB) and one long run of spaces 53 s (200 KB).
const NOTE_VARS = /\{\{\s*(title|date|time)(?::([^}]{0,200})|\s*)\}\}/gi;
const DAILY_VARS = /\{\{\s*(title|date|time|yesterday|tomorrow)\s*(?:([+-]\d{1,6})\s*([yqMwdhms])\s*)?(?::([^}]{0,200}))?\}\}/gi;

/**
 * Fills Obsidian's template variables: `{{title}}`, `{{date}}`, `{{time}}`,
 * `{{date:FORMAT}}` / `{{time:FORMAT}}` (Moment tokens), and for Daily notes
 * the Daily-notes extras. `now` is a Date (server local time) or a Moment
 * holding the wall time to show. Other `{{...}}` stay as written.
 */
export function fillTemplate(text: string, title: string, now: Date | Moment, opts: FillOptions = {}): string {
  const at = moment().isMoment(now) ? now : moment()(now);
  const dateFormat = opts.dateFormat ?? DEFAULT_TEMPLATES.dateFormat;
  const timeFormat = opts.timeFormat ?? DEFAULT_TEMPLATES.timeFormat;
  if (!opts.daily) {
    return text.replace(NOTE_VARS, (_m, key: string, fmt: string | undefined) => {
      const k = key.toLowerCase();
      if (k === 'title') return title;
      return at.format(fmt?.trim() || (k === 'date' ? dateFormat : timeFormat));
    });
  }
  return text.replace(DAILY_VARS, (m, key: string, delta: string | undefined, unit: string | undefined, fmt: string | undefined) => {
    const k = key.toLowerCase();
    if (k === 'title') return delta || fmt !== undefined ? m : title;
    if ((k === 'yesterday' || k === 'tomorrow') && (delta || fmt !== undefined)) return m;
    const t = at.clone();
    if (k === 'yesterday') t.subtract(1, 'day');
    if (k === 'tomorrow') t.add(1, 'day');
    if (delta) t.add(Number(delta), unit as unitOfTime.DurationConstructor);
    return t.format(fmt?.trim() || (k === 'time' ? timeFormat : dateFormat));
  });
}

export async function createFromTemplate(
  scope: Scope,
  body: { folder?: string | null; template_id?: string | null; title: string },
  now = new Date(),
): Promise<NoteRecord & { template_id: string | null }> {
  checkNotesFolder(body.folder);
  const title = checkTitle(body.title, 'body.title');
  const ts = await templateSettingsOf(scope);
  const tpl =
    body.template_id === undefined || body.template_id === null
      ? await defaultTemplate(scope, ts.folder)
      : findTemplate(scope, ts.folder, body.template_id, 'body.template_id');
  const id = randomUUID();
  const own = { id, title, created: now.toISOString() };
  let text: string;
  if (tpl) {
    const { bytes } = await scope.vault.home.read(tpl.path);
    const filled = fillTemplate(bytes.toString('utf8'), title, now, ts);
    const facts = extractFacts(filled, tpl.path);
    if (facts.frontmatterError) {
      throw errors.conflict(`The template's frontmatter is not valid YAML (${facts.frontmatterError}); fix the template first`, {
        reason: 'invalid_template',
        path: tpl.path,
      });
    }
    // The new note's own identity replaces the template's; its other keys (tags, ...) stay as written.
    text = editFrontmatter(filled, facts.frontmatterRange, own);
  } else {
    text = editFrontmatter('', null, own);
  }
  const path = await writeNewNote(scope, fileNameFor(title), '.md', text);
  const n = scope.index.noteByPath(path);
  if (!n) throw new AppError('internal', 'The note was written but is not in the index');
  return { ...noteRecord(n), template_id: tpl?.id ?? null };
}

/**
 * A new Daily note's text from Obsidian's Daily-notes template
 * (daily-notes.json `template`), filled for the day `at` (the day's date
 * with the caller's wall-clock time); null when the template is absent or
 * outside what the caller may read, so the caller writes its plain note.
 */
export async function dailyFromTemplate(scope: Scope, templatePath: string, title: string, at: Moment, dayFormat: string): Promise<string | null> {
  if (!visible(scope, templatePath)) return null;
  let text: string;
  try {
    text = (await scope.vault.home.read(templatePath)).bytes.toString('utf8');
  } catch (e) {
    if (e instanceof AppError && (e.status === 404 || e.status === 400)) return null;
    throw e;
  }
  return fillTemplate(text, title, at, { dateFormat: dayFormat, timeFormat: DEFAULT_TEMPLATES.timeFormat, daily: true });
}
