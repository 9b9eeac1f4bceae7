/**
 * Rows of one view of a `.base` file. A base lists either the Home's files
 * (Obsidian's own bases) or its tasks (Quire's task views); `rowsKindOf`
 * decides which (docs/bases.md "Files or tasks"). Both kinds share the
 * pipeline: filters (the base's AND the view's), sort, the view's limit,
 * the page, the `order` columns and groupBy.
 */
import type { FileEntry, NoteEntry } from '../index/home-index.js';
import { visible, type Scope } from '../notes/access.js';
import {
  BudgetError,
  checkExpr,
  dateValue,
  evalFilter,
  evaluate,
  ExprError,
  isDate,
  MAX_STEPS,
  numberStat,
  ROW_MAX_STEPS,
  propertyValue,
  readsMemberOf,
  sortCompare,
  toJson,
  uniqueValues,
  type Env,
  type FileLink,
  type FileValue,
  type Value,
} from './expr.js';
import { Pacer } from './pace.js';
import { wallClock } from './time.js';

export type RowsKind = 'tasks' | 'files';

type Doc = Record<string, unknown>;

const asViews = (doc: Doc): Doc[] =>
  Array.isArray(doc.views) ? doc.views.filter((v): v is Doc => typeof v === 'object' && v !== null && !Array.isArray(v)) : [];

/** Every expression and property id written in the base (filters, formulas, properties, each view's filters, order, sort, groupBy). */
function expressionsOf(doc: Doc): string[] {
  const out: string[] = [];
  const filters = (f: unknown): void => {
    if (typeof f === 'string') out.push(f);
    else if (Array.isArray(f)) f.forEach(filters);
    else if (typeof f === 'object' && f !== null) Object.values(f).forEach(filters);
  };
  const prop = (p: unknown) => {
    const id = (p as { property?: unknown } | null)?.property;
    if (typeof id === 'string') out.push(id);
  };
  filters(doc.filters);
  if (typeof doc.formulas === 'object' && doc.formulas !== null) for (const f of Object.values(doc.formulas)) if (typeof f === 'string') out.push(f);
  if (typeof doc.properties === 'object' && doc.properties !== null) out.push(...Object.keys(doc.properties));
  for (const v of asViews(doc)) {
    filters(v.filters);
    if (Array.isArray(v.order)) out.push(...v.order.filter((o): o is string => typeof o === 'string'));
    if (Array.isArray(v.sort)) v.sort.forEach(prop);
    prop(v.groupBy);
  }
  return out;
}

/** True when some expression of the base reads `task.<field>`. */
export function readsTasks(doc: Doc): boolean {
  return expressionsOf(doc).some((src) => {
    try {
      return readsMemberOf(src, 'task');
    } catch {
      return false; // a syntax error is reported when the view is evaluated
    }
  });
}

const hasId = (doc: Doc) => (typeof doc.id === 'string' && doc.id.trim() !== '') || typeof doc.id === 'number';

/**
 * Files or tasks: an explicit top-level `rows: files | tasks` wins; else a
 * base reading `task.<field>` anywhere lists tasks; else one with a
 * top-level `id` (which Quire writes into the views it creates, and which
 * Obsidian never writes) lists tasks; else it is an Obsidian base and lists
 * files. null: `rows` has another value.
 */
export function rowsKindOf(doc: Doc): RowsKind | null {
  const explicit = doc.rows;
  if (explicit !== undefined && explicit !== null) return explicit === 'tasks' || explicit === 'files' ? explicit : null;
  if (readsTasks(doc)) return 'tasks';
  return hasId(doc) ? 'tasks' : 'files';
}

// ------------------------------------------------------------- file values

/** A FileValue whose links are resolved only when an expression reads them. */
function fileValue(base: Omit<FileValue, 'links'>, links: () => FileLink[]): FileValue {
  let cached: FileLink[] | null = null;
  const v = base as FileValue;
  Object.defineProperty(v, 'links', { enumerable: true, get: () => (cached ??= links()) });
  return v;
}

export function noteFileValue(scope: Scope, n: NoteEntry, tz: string | undefined): FileValue {
  return fileValue(
    {
      kind: 'file',
      path: n.path,
      size: n.size,
      mtime: wallClock(n.updated, tz),
      ctime: wallClock(n.created, tz),
      tags: [...n.tags],
      properties: n.frontmatter ?? {},
    },
    () => {
      const links = n.facts.links;
      const out: FileLink[] = [];
      for (let i = 0; i < links.length; i++) {
        const target = links.target(i);
        out.push({ target, resolved: target === '' ? n.path : scope.index.resolve(n.path, { target, kind: links.kind(i) }), embed: links.embed(i) });
      }
      return out;
    },
  );
}

/** An attachment, canvas, base or other non-note file: no tags, links or properties. */
export function otherFileValue(scope: Scope, f: FileEntry, tz: string | undefined): FileValue {
  const stat = scope.index.statOf(f.path);
  const born = stat?.birthtimeMs && stat.birthtimeMs > 0 ? stat.birthtimeMs : f.mtimeMs;
  return fileValue(
    { kind: 'file', path: f.path, size: f.size, mtime: wallClock(f.mtimeMs, tz), ctime: wallClock(born, tz), tags: [], properties: {} },
    () => [],
  );
}

// --------------------------------------------------------------- pipeline

export interface RowInput<R> {
  row: R;
  env: Env;
}

export interface RowOutput<R> {
  row: R;
  values: Record<string, unknown>;
  /** The groupBy value, when the view groups. */
  group?: unknown;
}

export interface Column {
  /** The property id as written in `order`. */
  id: string;
  /** `properties.<id>.displayName`, else the id. */
  name: string;
}

/** Display names from the base's `properties` (`note.x` and a bare `x` are the same property). */
export function columnsOf(doc: Doc, order: string[]): Column[] {
  const props = (typeof doc.properties === 'object' && doc.properties !== null ? doc.properties : {}) as Record<string, unknown>;
  const nameOf = (id: string): string => {
    const alt = id.startsWith('note.') ? id.slice(5) : id.includes('.') ? null : `note.${id}`;
    for (const k of [id, alt]) {
      const d = k === null ? undefined : (props[k] as { displayName?: unknown } | undefined)?.displayName;
      if (typeof d === 'string' && d.trim()) return d;
    }
    return id;
  };
  return order.map((id) => ({ id, name: nameOf(id) }));
}

/**
 * Filters, sorts (then input order; nulls last in both directions), cuts
 * to the view's limit and pages. Errors in filters and sort keys throw
 * (ExprError: the base is wrong for every row); an error in one cell of
 * `order` makes that cell null. Paced: after each row (and within the
 * sort) it lets other requests run once the slice's time is up. `input`
 * may be lazy; it is read once, in the filter pass.
 */
export async function evaluateRows<R>(
  input: Iterable<RowInput<R>>,
  base: Doc,
  view: Doc,
  page: { offset: number; limit: number },
  now = 0,
  pacer = new Pacer('The view'),
): Promise<{ total: number; items: RowOutput<R>[]; grouped: boolean; summaries: Record<string, unknown> | null; next_cursor: number | null }> {
  let rows: RowInput<R>[] = [];
  for (const r of input) {
    if (evalFilter(base.filters, r.env) && evalFilter(view.filters, r.env)) rows.push(r);
    if (pacer.due()) await pacer.pause();
  }
  const total = rows.length;
  const sorts = (Array.isArray(view.sort) ? view.sort : []) as Array<{ property: string; direction?: string }>;
  const group = (view.groupBy ?? null) as { property: string; direction?: string } | null;
  const keys = new Map<RowInput<R>, Value[]>();
  const keyOf = (r: RowInput<R>): Value[] => {
    let k = keys.get(r);
    if (!k) {
      k = [group ? propertyValue(group.property, r.env) : null, ...sorts.map((s) => propertyValue(s.property, r.env))];
      keys.set(r, k);
    }
    return k;
  };
  const dirs = [group, ...sorts].map((s) => ((s?.direction ?? 'ASC').toUpperCase() === 'DESC' ? -1 : 1));
  if (group || sorts.length > 0) {
    // Key errors surface here, outside the comparator.
    for (const r of rows) {
      keyOf(r);
      if (pacer.due()) await pacer.pause();
    }
    const byKeys = (a: RowInput<R>, b: RowInput<R>): number => {
      const ka = keyOf(a);
      const kb = keyOf(b);
      for (let j = 0; j < ka.length; j++) {
        const c = sortCompare(ka[j]!, kb[j]!);
        if (c !== 0) return ka[j] === null || kb[j] === null ? c : c * dirs[j]!;
      }
      return 0;
    };
    rows = await pacedSort(rows, byKeys, pacer);
  }
  if (typeof view.limit === 'number') rows = rows.slice(0, view.limit);
  const order = (Array.isArray(view.order) ? view.order : []).filter((o): o is string => typeof o === 'string');
  const cell = (id: string, env: Env): unknown => {
    try {
      return toJson(propertyValue(id, env));
    } catch (e) {
      if (e instanceof ExprError && !(e instanceof BudgetError)) return null;
      throw e;
    }
  };
  const items: RowOutput<R>[] = [];
  for (const r of rows.slice(page.offset, page.offset + page.limit)) {
    items.push({
      row: r.row,
      values: Object.fromEntries(order.map((id) => [id, cell(id, r.env)])),
      ...(group ? { group: toJson(keyOf(r)[0]!) } : {}),
    });
    if (pacer.due()) await pacer.pause();
  }
  const summaries = await summariesOf(rows, base, view, now, pacer);
  return { total, items, grouped: group !== null, summaries, next_cursor: page.offset + page.limit < rows.length ? page.offset + page.limit : null };
}

/** Runs sorted by the built-in sort (stable), so one sync step never sorts more than this many rows. */
const SORT_RUN = 1024;

/**
 * A stable sort that lets other requests run: runs of SORT_RUN sorted
 * natively, then merged pairwise, pausing between slices. Equal rows keep
 * their input order.
 */
export async function pacedSort<T>(items: T[], cmp: (a: T, b: T) => number, pacer: Pacer): Promise<T[]> {
  if (items.length <= SORT_RUN) return items.slice().sort(cmp);
  let src: T[] = [];
  for (let i = 0; i < items.length; i += SORT_RUN) {
    src.push(...items.slice(i, i + SORT_RUN).sort(cmp));
    if (pacer.due()) await pacer.pause();
  }
  let dst = new Array<T>(src.length);
  for (let width = SORT_RUN; width < src.length; width *= 2) {
    for (let lo = 0; lo < src.length; lo += 2 * width) {
      const mid = Math.min(lo + width, src.length);
      const hi = Math.min(lo + 2 * width, src.length);
      let i = lo;
      let j = mid;
      for (let k = lo; k < hi; k++) {
        // `<= 0` takes from the left run first: stable.
        dst[k] = i < mid && (j >= hi || cmp(src[i]!, src[j]!) <= 0) ? src[i++]! : src[j++]!;
        if ((k & 255) === 255 && pacer.due()) await pacer.pause();
      }
    }
    [src, dst] = [dst, src];
  }
  return src;
}

// -------------------------------------------------------------- summaries

const isBlank = (v: Value) => v === null || v === '' || (Array.isArray(v) && v.length === 0);
const numbers = (vs: Value[]) => vs.filter((v): v is number => typeof v === 'number' && Number.isFinite(v));
const dates = (vs: Value[]) => vs.filter(isDate).map((d) => d.ms);
const extreme = (xs: number[], pick: (...n: number[]) => number) => (xs.length ? xs.reduce((a, b) => pick(a, b)) : null);

/** Obsidian's built-in summaries, by lower-case name. */
const BUILT_IN: Record<string, (vs: Value[]) => Value> = {
  average: (vs) => numberStat('mean', vs),
  sum: (vs) => numberStat('sum', vs),
  median: (vs) => numberStat('median', vs),
  stddev: (vs) => numberStat('stddev', vs),
  min: (vs) => extreme(numbers(vs), Math.min),
  max: (vs) => extreme(numbers(vs), Math.max),
  range: (vs) => {
    const ns = numbers(vs);
    if (ns.length) return extreme(ns, Math.max)! - extreme(ns, Math.min)!;
    const ds = dates(vs);
    return ds.length ? extreme(ds, Math.max)! - extreme(ds, Math.min)! : null;
  },
  earliest: (vs) => {
    const d = extreme(dates(vs), Math.min);
    return d === null ? null : dateValue(d, vs.some((v) => isDate(v) && v.time));
  },
  latest: (vs) => {
    const d = extreme(dates(vs), Math.max);
    return d === null ? null : dateValue(d, vs.some((v) => isDate(v) && v.time));
  },
  checked: (vs) => vs.filter((v) => v === true).length,
  unchecked: (vs) => vs.filter((v) => v === false).length,
  empty: (vs) => vs.filter(isBlank).length,
  filled: (vs) => vs.filter((v) => !isBlank(v)).length,
  unique: (vs) => uniqueValues(vs.filter((v) => !isBlank(v))).length,
};

/** Checks the view's `summaries` (property id → a built-in name or a name of the base's `summaries`, whose expression parses). */
export function checkSummaries(base: Doc, view: Doc): void {
  const wanted = view.summaries;
  if (wanted === undefined || wanted === null) return;
  if (typeof wanted !== 'object' || Array.isArray(wanted)) throw new ExprError('view.summaries is a mapping of property to summary name');
  const custom = (typeof base.summaries === 'object' && base.summaries !== null ? base.summaries : {}) as Record<string, unknown>;
  for (const [prop, name] of Object.entries(wanted)) {
    if (typeof name !== 'string') throw new ExprError(`view.summaries.${prop}: a summary is named by a string`);
    if (Object.prototype.hasOwnProperty.call(custom, name)) {
      if (typeof custom[name] !== 'string') throw new ExprError(`summaries.${name}: a summary is an expression string`);
      checkExpr(custom[name] as string, `summaries.${name}`);
    } else if (!BUILT_IN[name.toLowerCase()]) {
      throw new ExprError(`view.summaries.${prop}: unknown summary "${name}" (built in: ${Object.keys(BUILT_IN).join(', ')}; or a name of the base's summaries)`);
    }
  }
}

/**
 * Each summary over the view's rows (after its limit, all pages): a
 * built-in, or an expression of the base's `summaries` with the column's
 * values bound to `values`. A summary that fails is null.
 */
async function summariesOf<R>(rows: RowInput<R>[], base: Doc, view: Doc, now: number, pacer: Pacer): Promise<Record<string, unknown> | null> {
  const wanted = view.summaries;
  if (typeof wanted !== 'object' || wanted === null || Array.isArray(wanted)) return null;
  const custom = (typeof base.summaries === 'object' && base.summaries !== null ? base.summaries : {}) as Record<string, string>;
  const out: Record<string, unknown> = {};
  for (const [prop, name] of Object.entries(wanted as Record<string, string>)) {
    try {
      const values: Value[] = [];
      for (const r of rows) {
        values.push(propertyValue(prop, r.env));
        if (pacer.due()) await pacer.pause();
      }
      const src = Object.prototype.hasOwnProperty.call(custom, name) ? custom[name]! : null;
      // The expression walks the column: its allowance grows with the rows, up to what one
      // row may take, as it runs without a pause.
      const budget = rows[0]?.env.budget; // one budget shared by every row of the request
      const steps = Math.min(MAX_STEPS + 20 * values.length, ROW_MAX_STEPS);
      const run = (expr: string) => evaluate(expr, { now, file: null, note: {}, objects: { values }, budget }, steps);
      out[prop] = toJson(src !== null ? run(src) : BUILT_IN[name.toLowerCase()]!(values));
    } catch (e) {
      if (!(e instanceof ExprError) || e instanceof BudgetError) throw e;
      out[prop] = null;
    }
  }
  return out;
}

/** Groups consecutive rows of a page by their `group` value. */
export function groupsOf<T extends { group?: unknown }>(items: T[]): Array<{ key: unknown; items: T[] }> {
  const groups: Array<{ key: unknown; items: T[] }> = [];
  for (const it of items) {
    const last = groups[groups.length - 1];
    if (last && JSON.stringify(last.key) === JSON.stringify(it.group)) last.items.push(it);
    else groups.push({ key: it.group, items: [it] });
  }
  return groups;
}

/** One row per visible file of the Home (notes and other files, as in Obsidian), by path. */
export function homeFiles(scope: Scope): Array<{ path: string; note: NoteEntry | null; file: FileEntry | null }> {
  const out: Array<{ path: string; note: NoteEntry | null; file: FileEntry | null }> = [];
  for (const n of scope.index.notes()) if (visible(scope, n.path)) out.push({ path: n.path, note: n, file: null });
  for (const f of scope.index.files()) if (visible(scope, f.path)) out.push({ path: f.path, note: null, file: f });
  return out.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}
