/**
 * Note templates: Markdown files in `Templates/` (docs/templates.md).
 *
 * A template's `template_id` is its note id (frontmatter `id`, else the
 * index's path-derived id); its path (`Templates/Meeting.md`) and its name
 * (`Meeting`) are accepted too. The default template is kept in the Home's
 * `.quire/templates.json`, so it travels with the Home.
 */
import { randomUUID } from 'node:crypto';
import { AppError, errors } from '../core/errors.js';
import type { NoteEntry } from '../index/home-index.js';
import { extractFacts } from '../markdown/extract.js';
import { checkWritable, visible, type Scope } from '../notes/access.js';
import { editFrontmatter } from '../notes/frontmatter.js';
import { checkNotesFolder, fileNameFor, noteRecord, NOTES_ROOT, writeNewNote, type NoteRecord } from '../notes/notes.js';

export const TEMPLATES_ROOT = 'Templates/';
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

function isTemplate(n: NoteEntry): boolean {
  return n.path.startsWith(TEMPLATES_ROOT) && n.path.toLowerCase().endsWith('.md') && !n.path.toLowerCase().endsWith('.excalidraw.md');
}

function templates(scope: Scope): NoteEntry[] {
  return [...scope.index.notes()]
    .filter((n) => isTemplate(n) && visible(scope, n.path))
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
function lookup(scope: Scope, key: string): NoteEntry | null {
  const all = templates(scope);
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

function findTemplate(scope: Scope, key: string, field: string): NoteEntry {
  const t = lookup(scope, key);
  if (!t) throw errors.notFound(`No template ${key} in ${TEMPLATES_ROOT}`, { field, template_id: key });
  return t;
}

/** The default template: by stored id, else by stored path; null when unset or gone. */
async function defaultTemplate(scope: Scope): Promise<NoteEntry | null> {
  const { settings } = await readSettings(scope);
  const byId = settings.default_template_id ? templates(scope).find((t) => t.id === settings.default_template_id) : undefined;
  if (byId) return byId;
  const byPath = settings.default_template_path ? templates(scope).find((t) => t.path === settings.default_template_path) : undefined;
  return byPath ?? null;
}

function templateRecord(n: NoteEntry, defaultPath: string | null): TemplateRecord {
  return { id: n.id, path: n.path, name: nameOf(n.path), title: n.title, tags: n.tags, etag: n.etag, default: n.path === defaultPath };
}

export async function listTemplates(scope: Scope) {
  const def = await defaultTemplate(scope);
  return { items: templates(scope).map((t) => templateRecord(t, def?.path ?? null)), next_cursor: null };
}

export async function setDefaultTemplate(scope: Scope, body: { folder?: string | null; template_id?: string | null }) {
  checkNotesFolder(body.folder);
  checkWritable(scope, SETTINGS_PATH);
  const { settings, etag } = await readSettings(scope);
  const next: Settings = { ...settings, folder: NOTES_ROOT };
  let chosen: NoteEntry | null = null;
  if (body.template_id === null) {
    next.default_template_id = null;
    next.default_template_path = null;
  } else if (body.template_id !== undefined) {
    chosen = findTemplate(scope, body.template_id, 'body.template_id');
    next.default_template_id = chosen.id;
    next.default_template_path = chosen.path;
  } else {
    chosen = await defaultTemplate(scope);
  }
  const text = JSON.stringify(next, null, 2) + '\n';
  await scope.vault.home.write(SETTINGS_PATH, text, etag === null ? { ifNoneMatch: '*', quotaBytes: scope.quotaBytes } : { ifMatch: etag, quotaBytes: scope.quotaBytes });
  return { template: chosen ? templateRecord(chosen, chosen.path) : null, template_id: chosen?.id ?? null, folder: NOTES_ROOT };
}

const pad = (n: number) => String(n).padStart(2, '0');

/** Moment-style tokens used by Obsidian's core Templates plugin: YYYY, YY, MM, M, DD, D, HH, H, mm, ss, [literal]. */
export function formatDate(d: Date, pattern: string): string {
  const parts: Record<string, string> = {
    YYYY: String(d.getFullYear()),
    YY: String(d.getFullYear()).slice(-2),
    MM: pad(d.getMonth() + 1),
    M: String(d.getMonth() + 1),
    DD: pad(d.getDate()),
    D: String(d.getDate()),
    HH: pad(d.getHours()),
    H: String(d.getHours()),
    mm: pad(d.getMinutes()),
    ss: pad(d.getSeconds()),
  };
  return pattern.replace(/\[([^\]]*)\]|YYYY|YY|MM|M|DD|D|HH|H|mm|ss/g, (tok, lit: string | undefined) => lit ?? parts[tok]!);
}

/**
 * Fills `{{title}}`, `{{date}}` (YYYY-MM-DD), `{{time}}` (HH:mm) and
 * `{{date:FORMAT}}` / `{{time:FORMAT}}` in server local time. Other `{{...}}` stay as written.
 */
export function fillTemplate(text: string, title: string, now: Date): string {
  return text.replace(/\{\{\s*(title|date|time)(?::([^}]*))?\s*\}\}/gi, (_m, key: string, fmt: string | undefined) => {
    const k = key.toLowerCase();
    if (k === 'title') return title;
    return formatDate(now, fmt?.trim() || (k === 'date' ? 'YYYY-MM-DD' : 'HH:mm'));
  });
}

export async function createFromTemplate(
  scope: Scope,
  body: { folder?: string | null; template_id?: string | null; title: string },
  now = new Date(),
): Promise<NoteRecord & { template_id: string | null }> {
  checkNotesFolder(body.folder);
  const title = body.title.trim();
  if (!title) throw errors.badRequest('title must not be blank', { field: 'body.title' });
  const tpl = body.template_id === undefined || body.template_id === null ? await defaultTemplate(scope) : findTemplate(scope, body.template_id, 'body.template_id');
  const id = randomUUID();
  const own = { id, title, created: now.toISOString() };
  let text: string;
  if (tpl) {
    const { bytes } = await scope.vault.home.read(tpl.path);
    const filled = fillTemplate(bytes.toString('utf8'), title, now);
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
