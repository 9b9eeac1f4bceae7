/**
 * `.base` views (Obsidian Bases format), identified by a stable top-level
 * `id` in their YAML. Found by scanning the Home's `.base` files (parsed YAML
 * cached by ETag), so a view keeps its id when the file is renamed by hand.
 * A task view's rows are the Home's tasks (docs/tasks.md "Task views"); an
 * Obsidian base's rows are the Home's files (docs/bases.md).
 */
import { randomUUID } from 'node:crypto';
import { yaml } from '../core/yaml.js';
import { AppError, errors } from '../core/errors.js';
import { derivedId, type FileEntry } from '../index/home-index.js';
import { checkWritable, visible, type Scope } from '../notes/access.js';
import { fileNameFor } from '../notes/notes.js';
import { normalizeEtag } from '../vault/etag.js';
import { checkSummaries, columnsOf, evaluateRows, groupsOf, homeFiles, noteFileValue, otherFileValue, readsTasks, rowsKindOf, type RowsKind } from './base-rows.js';
import { checkFilter, checkFormulas, checkProperty, ExprError, parseDate, REQUEST_MAX_STEPS, ROW_MAX_STEPS, type Env, type FileValue, type Value } from './expr.js';
import { Pacer } from './pace.js';
import { pageLimit, pageOffset, tasksOfNote, visibleNotes, type TaskRecord } from './tasks.js';
import { checkTimeZone, wallClock } from './time.js';

export const VIEWS_ROOT = 'Views/';
const ID_RE = /^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$/;

interface Parsed {
  etag: string;
  /** The parsed document (a mapping), or null when the YAML is invalid. */
  doc: Record<string, unknown> | null;
  error: string | null;
  /** Top-level `id` when it is a non-empty string. */
  id: string | null;
  /** What the rows are, decided once per version: deciding parses every expression of the base. */
  rows: RowsKind | null;
}

/**
 * Largest `.base` file read. Obsidian's bases are a few kilobytes; parsing
 * YAML is one step that cannot pause (about 25 ms for 64 KiB, half a second
 * for 1 MiB), and every view lookup reads every base once per version.
 */
export const MAX_BASE_BYTES = 64 * 1024;

/** Parsed `.base` files by path, reused while the ETag is unchanged. One cache per index. */
const caches = new WeakMap<object, Map<string, Parsed>>();

function parseBase(text: string): { doc: Record<string, unknown> | null; error: string | null; rows: RowsKind | null } {
  const { doc, error } = parseYaml(text);
  return { doc, error, rows: doc ? rowsKindOf(doc) : null };
}

function parseYaml(text: string): { doc: Record<string, unknown> | null; error: string | null } {
  try {
    const doc = yaml().parse(text === '' ? '{}' : text) as unknown;
    if (doc === null || doc === undefined) return { doc: {}, error: null };
    if (typeof doc !== 'object' || Array.isArray(doc)) return { doc: null, error: 'not a mapping of keys' };
    return { doc: doc as Record<string, unknown>, error: null };
  } catch (e) {
    return { doc: null, error: (e as Error).message.split('\n')[0]! };
  }
}

function baseFiles(scope: Scope): FileEntry[] {
  return [...scope.index.files()]
    .filter((f) => f.path.toLowerCase().endsWith('.base') && visible(scope, f.path))
    .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

async function parsedOf(scope: Scope, f: FileEntry): Promise<Parsed> {
  let cache = caches.get(scope.index);
  if (!cache) caches.set(scope.index, (cache = new Map()));
  const hit = cache.get(f.path);
  if (hit && hit.etag === f.etag) return hit;
  const tooLarge = (etag: string): Parsed => {
    const p: Parsed = { etag, doc: null, error: `the file is larger than ${MAX_BASE_BYTES / 1024} KiB, more than a base needs; it is not read`, id: null, rows: null };
    cache!.set(f.path, p);
    return p;
  };
  if (f.size > MAX_BASE_BYTES) return tooLarge(f.etag);
  let text: string;
  let etag: string;
  try {
    const r = await scope.vault.home.read(f.path);
    // The file grew since the index saw it.
    if (r.bytes.length > MAX_BASE_BYTES) return tooLarge(r.etag);
    text = r.bytes.toString('utf8');
    etag = r.etag;
  } catch (e) {
    if (e instanceof AppError && e.status === 404) return { etag: f.etag, doc: null, error: 'file is gone', id: null, rows: null };
    throw e;
  }
  const { doc, error, rows } = parseBase(text);
  const rawId = doc?.id;
  const p: Parsed = { etag, doc, error, rows, id: typeof rawId === 'string' && rawId.trim() ? rawId.trim() : typeof rawId === 'number' ? String(rawId) : null };
  cache.set(f.path, p);
  return p;
}

export interface ViewRecord {
  id: string;
  /** True when the id is written in the file; false for a path-derived id (written on the first update). */
  id_in_file: boolean;
  path: string;
  name: string;
  etag: string;
  /** The first entry of `views` (the one these actions read and replace), or `{}`. */
  view: Record<string, unknown>;
  /** Names of all views in the file. */
  views: string[];
  /** The whole parsed `.base` document. */
  base: Record<string, unknown> | null;
  /** Why the YAML could not be read, else null. */
  error: string | null;
  /** What the rows are (docs/bases.md "Files or tasks"); null when the YAML is invalid or `rows` has another value. */
  rows: RowsKind | null;
}

function viewsOf(doc: Record<string, unknown> | null): Record<string, unknown>[] {
  const v = doc?.views;
  return Array.isArray(v) ? v.filter((x): x is Record<string, unknown> => typeof x === 'object' && x !== null && !Array.isArray(x)) : [];
}

function record(path: string, p: Parsed): ViewRecord {
  const views = viewsOf(p.doc);
  const first = views[0] ?? {};
  const fileName = path.split('/').pop()!.replace(/\.base$/i, '');
  return {
    id: p.id ?? derivedId(path),
    id_in_file: p.id !== null,
    path,
    name: typeof first.name === 'string' && first.name ? first.name : fileName,
    etag: p.etag,
    view: first,
    views: views.map((v, i) => (typeof v.name === 'string' ? v.name : `View ${i + 1}`)),
    base: p.doc,
    error: p.error,
    rows: p.rows,
  };
}

async function allViews(scope: Scope): Promise<ViewRecord[]> {
  const out: ViewRecord[] = [];
  for (const f of baseFiles(scope)) out.push(record(f.path, await parsedOf(scope, f)));
  return out;
}

export async function listViews(scope: Scope, q: { cursor?: number; limit?: number }) {
  const limit = pageLimit(q.limit, 200, 50);
  const offset = pageOffset(q.cursor);
  const files = baseFiles(scope);
  const items: ViewRecord[] = [];
  for (const f of files.slice(offset, offset + limit)) items.push(record(f.path, await parsedOf(scope, f)));
  return { items, next_cursor: offset + limit < files.length ? offset + limit : null };
}

/** A view by its YAML id (then by path-derived id); the first file by path wins when two claim one id. */
export async function findView(scope: Scope, id: string): Promise<ViewRecord> {
  const all = await allViews(scope);
  const v = all.find((r) => r.id_in_file && r.id === id) ?? all.find((r) => r.id === id);
  if (!v) throw errors.notFound(`No task view with id ${id}`, { id });
  return v;
}

// ------------------------------------------------------------- validation

const DIRECTIONS = ['ASC', 'DESC'];

function bad(message: string, field: string): AppError {
  return errors.badRequest(message, { field });
}

/** Checks the parts of a view object these actions use; other keys pass through untouched. */
export function checkView(view: Record<string, unknown>, field = 'body.view'): void {
  if (view.type !== undefined && typeof view.type !== 'string') throw bad('view.type must be a string such as "table"', `${field}.type`);
  if (view.name !== undefined && (typeof view.name !== 'string' || !view.name.trim())) throw bad('view.name must be a non-empty string', `${field}.name`);
  if (view.limit !== undefined && (!Number.isInteger(view.limit) || (view.limit as number) < 1)) throw bad('view.limit must be a positive integer', `${field}.limit`);
  if (view.order !== undefined && (!Array.isArray(view.order) || view.order.some((o) => typeof o !== 'string'))) {
    throw bad('view.order must be a list of property names', `${field}.order`);
  }
  (view.order as string[] | undefined)?.forEach((o, i) => {
    try {
      checkProperty(o, `${field}.order[${i}]`);
    } catch (e) {
      if (e instanceof ExprError) throw bad(e.message, `${field}.order[${i}]`);
      throw e;
    }
  });
  const checkProp = (p: unknown, where: string) => {
    if (typeof p !== 'object' || p === null || typeof (p as { property?: unknown }).property !== 'string') {
      throw bad(`${where} must be { property, direction }`, where);
    }
    const d = (p as { direction?: unknown }).direction;
    if (d !== undefined && (typeof d !== 'string' || !DIRECTIONS.includes(d.toUpperCase()))) throw bad(`${where}.direction must be ASC or DESC`, `${where}.direction`);
    try {
      checkProperty((p as { property: string }).property, where);
    } catch (e) {
      if (e instanceof ExprError) throw bad(e.message, `${where}.property`);
      throw e;
    }
  };
  if (view.sort !== undefined) {
    if (!Array.isArray(view.sort)) throw bad('view.sort must be a list of { property, direction }', `${field}.sort`);
    view.sort.forEach((s, i) => checkProp(s, `${field}.sort[${i}]`));
  }
  if (view.groupBy !== undefined && view.groupBy !== null) checkProp(view.groupBy, `${field}.groupBy`);
  try {
    checkFilter(view.filters, `${field}.filters`);
  } catch (e) {
    if (e instanceof ExprError) throw bad(e.message, `${field}.filters`);
    throw e;
  }
}

function splitId(view: Record<string, unknown>): { id: string | null; rest: Record<string, unknown> } {
  const { id, ...rest } = view;
  if (id === undefined || id === null) return { id: null, rest };
  if (typeof id !== 'string' || !ID_RE.test(id)) {
    throw bad('view.id must be 1 to 128 letters, digits, "-" or "_", starting with a letter or digit', 'body.view.id');
  }
  return { id, rest };
}

function render(doc: Record<string, unknown>): string {
  return yaml().stringify(doc, { lineWidth: 0 });
}

// ------------------------------------------------------------------ writes

export async function createView(scope: Scope, view: Record<string, unknown>) {
  const { id: wanted, rest } = splitId(view);
  checkView(rest);
  const all = await allViews(scope);
  if (wanted && all.some((v) => v.id === wanted)) {
    throw errors.conflict(`A task view with id ${wanted} already exists`, { reason: 'id_taken', id: wanted });
  }
  const id = wanted ?? randomUUID();
  const name = typeof rest.name === 'string' ? rest.name.trim() : 'Tasks';
  const body = { type: 'table', ...rest, name };
  const text = render({ id, views: [body] });
  if (Buffer.byteLength(text) > MAX_BASE_BYTES) throw bad(`The view is larger than ${MAX_BASE_BYTES / 1024} KiB as YAML`, 'body.view');
  const base = fileNameFor(name);
  for (let n = 1; n < 1000; n++) {
    const path = `${VIEWS_ROOT}${base}${n === 1 ? '' : ` ${n}`}.base`;
    checkWritable(scope, path);
    try {
      const w = await scope.vault.home.write(path, text, { ifNoneMatch: '*', quotaBytes: scope.quotaBytes });
      return record(path, { ...parseBase(text), etag: w.etag, id });
    } catch (e) {
      if (e instanceof AppError && (e.status === 412 || e.code === 'name_conflict_case')) continue;
      throw e;
    }
  }
  throw errors.conflict(`Too many views named "${base}"`);
}

/**
 * Replaces the first view of the file at the client's revision. Other views,
 * global filters, formulas, properties and comments stay. A path-derived id
 * is written into the file so the view keeps it after a rename.
 */
export async function updateView(scope: Scope, id: string, ifMatch: string, view: Record<string, unknown>) {
  const current = await findView(scope, id);
  checkWritable(scope, current.path);
  const { id: given, rest } = splitId(view);
  if (given !== null && given !== current.id) throw bad(`view.id is ${given} but the view being replaced is ${current.id}`, 'body.view.id');
  checkView(rest);
  const { bytes, etag } = await scope.vault.home.read(current.path);
  if (normalizeEtag(ifMatch) !== etag) throw errors.staleEtag(etag);
  if (bytes.length > MAX_BASE_BYTES) {
    throw errors.conflict(`${current.path} is larger than ${MAX_BASE_BYTES / 1024} KiB, more than a base needs; shorten it first`, { reason: 'invalid_base' });
  }
  const text = bytes.toString('utf8');
  const doc = yaml().parseDocument(text);
  if (doc.errors.length > 0 || (doc.contents !== null && !yaml().isMap(doc.contents))) {
    throw errors.conflict(`${current.path} is not valid Bases YAML; fix the file first`, { reason: 'invalid_base' });
  }
  if (doc.contents === null) doc.contents = doc.createNode({}) as never;
  if (!current.id_in_file) doc.set('id', current.id);
  const views = doc.get('views');
  if (yaml().isSeq(views) && views.items.length > 0) views.set(0, doc.createNode(rest));
  else doc.set('views', doc.createNode([rest]));
  // The id written above would make an Obsidian base list tasks; it keeps listing files.
  if (current.rows === 'files' && !current.id_in_file) {
    const js = doc.toJS() as Record<string, unknown>;
    if (rowsKindOf(js) === 'tasks' && !readsTasks(js)) doc.set('rows', 'files');
  }
  const next = doc.toString({ lineWidth: 0 });
  if (Buffer.byteLength(next) > MAX_BASE_BYTES) throw bad(`The file would be larger than ${MAX_BASE_BYTES / 1024} KiB`, 'body.view');
  const w = await scope.vault.home.write(current.path, next, { ifMatch, quotaBytes: scope.quotaBytes });
  return record(current.path, { ...parseBase(next), etag: w.etag, id: current.id });
}

// -------------------------------------------------------------------- rows

function taskObject(t: TaskRecord): Value {
  const date = (s: string | null) => (s ? parseDate(s) : null);
  return {
    id: t.task_id,
    kind: t.kind,
    status: t.status,
    text: t.text,
    due: date(t.due),
    done: date(t.done),
    checked: t.checked,
    completed: t.checked,
    cancelled: t.cancelled,
    line: t.line,
    path: t.path,
    depth: t.depth,
  };
}

export interface RowsQuery {
  view?: string;
  cursor?: number;
  limit?: number;
  tz?: string;
}

/** A row of a file base: the file, and the view's columns. */
export interface FileRow {
  path: string;
  /** The note's id; null for a file that is not a note (attachment, canvas, base). */
  note_id: string | null;
  title: string;
  etag: string;
  values: Record<string, unknown>;
  group?: unknown;
}

/**
 * Evaluates one view of the file: over the Home's tasks for a task view,
 * over its files for an Obsidian base (docs/bases.md). Filters (global AND
 * view), sort, limit, groupBy, then the page.
 */
export async function viewRows(scope: Scope, id: string, q: RowsQuery, nowMs = Date.now()) {
  const tz = checkTimeZone(q.tz, 'query.tz');
  const limit = pageLimit(q.limit, 1000, 200);
  const offset = pageOffset(q.cursor);
  const v = await findView(scope, id);
  if (!v.base) throw errors.conflict(`${v.path} is not valid Bases YAML (${v.error}); fix the file first`, { reason: 'invalid_base' });
  const kind = rowsKindOf(v.base);
  if (kind === null) throw errors.conflict(`${v.path}: rows must be "tasks" or "files"`, { reason: 'invalid_base' });
  const views = viewsOf(v.base);
  const chosen = q.view === undefined ? (views[0] ?? {}) : views.find((x) => x.name === q.view);
  if (!chosen) throw errors.notFound(`The file has no view named "${q.view}"`, { field: 'query.view' });
  const invalid = (e: unknown): never => {
    // A 503 from the pacer (too slow) is not the base's fault and keeps its status.
    if (e instanceof ExprError || (e instanceof AppError && e.status === 400)) {
      throw errors.badRequest(`The view cannot be evaluated: ${e.message}`, { reason: 'invalid_expression', id: v.id });
    }
    throw e;
  };
  try {
    checkFilter(v.base.filters, 'filters');
    checkFormulas(v.base.formulas, 'formulas');
    checkView(chosen, 'view');
    checkSummaries(v.base, chosen);
  } catch (e) {
    invalid(e);
  }
  const formulas = (v.base.formulas ?? {}) as Record<string, string>;
  const now = wallClock(nowMs, tz);
  // A credential limited to a folder sees only the backlinks from inside it.
  const backlinks = (p: string) => scope.index.backlinks(p).flatMap((b) => (visible(scope, b.from) ? [b.from] : []));
  const order = (Array.isArray(chosen.order) ? chosen.order : []).filter((o): o is string => typeof o === 'string');
  const budget = { left: REQUEST_MAX_STEPS };
  const head = {
    id: v.id,
    path: v.path,
    view: typeof chosen.name === 'string' ? chosen.name : v.name,
    etag: v.etag,
    rows: kind,
    columns: columnsOf(v.base, order),
  };
  // Rows are read off a snapshot of the index taken now (its entries are replaced, never changed, when a file changes), so a paused evaluation sees one version of every note.
  const pacer = new Pacer('The view');
  const run = async <R>(input: Iterable<{ row: R; env: Env }>) => {
    try {
      return await evaluateRows(input, v.base!, chosen, { offset, limit }, now, pacer);
    } catch (e) {
      return invalid(e);
    }
  };

  if (kind === 'files') {
    const baseFile = scope.index.fileByPath(v.path);
    const self = baseFile ? otherFileValue(scope, baseFile, tz) : null;
    const snapshot = homeFiles(scope);
    // Lazy: each row's values are built inside the paced filter pass.
    const input = (function* () {
      for (const { note, file } of snapshot) {
        const f = note ? noteFileValue(scope, note, tz) : otherFileValue(scope, file!, tz);
        const env: Env = { now, file: f, note: note?.frontmatter ?? {}, formulas, memo: new Map(), self, backlinks, budget, row: { left: ROW_MAX_STEPS } };
        yield { row: { note, file }, env };
      }
    })();
    const r = await run(input);
    const items: FileRow[] = r.items.map(({ row: { note, file }, values, group }) => {
      const path = note ? note.path : file!.path;
      return {
        path,
        note_id: note ? note.id : null,
        title: note ? note.title : path.split('/').pop()!,
        etag: note ? note.etag : file!.etag,
        values,
        ...(r.grouped ? { group } : {}),
      };
    });
    return { ...head, total: r.total, items, groups: r.grouped ? groupsOf(items) : null, summaries: r.summaries, next_cursor: r.next_cursor };
  }

  const notes = visibleNotes(scope);
  const input = (function* () {
    for (const n of notes) {
      let f: FileValue | null = null;
      for (const t of tasksOfNote(n)) {
        f ??= noteFileValue(scope, n, tz);
        const env: Env = { now, file: f, note: n.frontmatter ?? {}, objects: { task: taskObject(t) }, formulas, memo: new Map(), backlinks, budget, row: { left: ROW_MAX_STEPS } };
        yield { row: t, env };
      }
    }
  })();
  const r = await run(input);
  const items = r.items.map(({ row, values, group }) => ({ ...row, values, ...(r.grouped ? { group } : {}) }));
  return { ...head, total: r.total, items, groups: r.grouped ? groupsOf(items) : null, summaries: r.summaries, next_cursor: r.next_cursor };
}
