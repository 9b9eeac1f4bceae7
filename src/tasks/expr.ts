/**
 * A pure evaluator for the filter and formula expressions of Obsidian Bases
 * (`.base` files), the subset task views need. Expressions are parsed by a
 * small hand-written recursive-descent parser (never `eval` / `Function`).
 *
 * Grammar (lowest precedence first):
 *
 *   expr     := or
 *   or       := and ( '||' and )*
 *   and      := cmp ( '&&' cmp )*
 *   cmp      := add ( ( '==' | '!=' | '>' | '<' | '>=' | '<=' ) add )?
 *   add      := mul ( ( '+' | '-' ) mul )*
 *   mul      := unary ( ( '*' | '/' | '%' ) unary )*
 *   unary    := ( '!' | '-' ) unary | postfix
 *   postfix  := primary ( '.' IDENT | '[' expr ']' | '(' args? ')' )*
 *   args     := expr ( ',' expr )*
 *   primary  := NUMBER | STRING | 'true' | 'false' | 'null' | IDENT | '(' expr ')' | '[' args? ']'
 *
 * STRING is single- or double-quoted with backslash escapes; NUMBER is
 * decimal. A bare IDENT other than `file`, `note`, `task`, `formula` and
 * `this` is a note (frontmatter) property, as in Obsidian.
 *
 * Values: null, string, number, boolean, dates (floating wall-clock time,
 * stored as UTC milliseconds), lists, objects, files and formula references.
 * A string compared with a date is read as a date; `date + "7d"` adds a
 * duration; `date - date` is milliseconds.
 */

export class ExprError extends Error {
  constructor(
    message: string,
    readonly position: number | null = null,
  ) {
    super(message);
  }
}

/** The request's step budget (Env.budget) is spent: the whole evaluation stops, not one cell. */
export class BudgetError extends ExprError {}

// ------------------------------------------------------------------ values

export interface DateValue {
  kind: 'date';
  /** Floating wall-clock time as if it were UTC, in ms. */
  ms: number;
  /** False for a date without a time of day. */
  time: boolean;
}

/** A link of a file: as written, and the Home path it resolves to (null: unresolved). */
export interface FileLink {
  target: string;
  resolved: string | null;
  /** True for an embed (`![[x]]`); `file.embeds` lists only these. */
  embed?: boolean;
}

export interface FileValue {
  kind: 'file';
  path: string;
  size: number;
  /** Wall-clock ms (see DateValue). */
  mtime: number;
  ctime: number;
  tags: string[];
  links: FileLink[];
  properties: Record<string, unknown>;
}

export interface FormulaRef {
  kind: 'formulas';
}

export type Value = null | string | number | boolean | DateValue | FileValue | FormulaRef | Value[] | { [k: string]: Value };

export interface Env {
  /** Current wall-clock time (floating, see DateValue). */
  now: number;
  file: FileValue | null;
  /** Frontmatter of the row's note. */
  note: Record<string, unknown>;
  /** Extra objects addressable by name (e.g. `task`). */
  objects?: Record<string, Value>;
  /** The `formulas` of the base, evaluated on demand. */
  formulas?: Record<string, string>;
  /**
   * Formula values already computed for this row: a formula is evaluated at
   * most once per row, so formulas referring to each other several times
   * cost linear, not exponential, work.
   */
  memo?: Map<string, Value>;
  /** What `this` is: the base file itself for file bases; the row's file when absent. */
  self?: FileValue | null;
  /** Paths of the notes linking to `path` (`file.backlinks`); absent: an empty list. */
  backlinks?: (path: string) => string[];
  /** Steps left for the whole request, shared by every row's Env; absent: only the per-evaluation limit. */
  budget?: { left: number };
  /** Steps left for this row, over all its evaluations (filters, keys, cells); absent: only the per-evaluation limit. */
  row?: { left: number };
}

export const isDate = (v: unknown): v is DateValue => typeof v === 'object' && v !== null && (v as DateValue).kind === 'date';
export const isFile = (v: unknown): v is FileValue => typeof v === 'object' && v !== null && (v as FileValue).kind === 'file';
const isFormulas = (v: unknown): v is FormulaRef => typeof v === 'object' && v !== null && (v as FormulaRef).kind === 'formulas';
const isPlainObject = (v: unknown): v is Record<string, Value> =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && !isDate(v) && !isFile(v) && !isFormulas(v);

export const dateValue = (ms: number, time: boolean): DateValue => ({ kind: 'date', ms, time });

const DATE_RE = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,3}))?)?)?(Z|[+-]\d{2}:?\d{2})?$/;

/** Parses `YYYY-MM-DD` or `YYYY-MM-DD[T ]HH:MM[:SS]` as a floating wall-clock date; an offset is dropped. */
export function parseDate(s: string): DateValue | null {
  const m = DATE_RE.exec(s.trim());
  if (!m) return null;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (mo < 1 || mo > 12 || d < 1 || d > 31) return null;
  const ms = Date.UTC(y, mo - 1, d, Number(m[4] ?? 0), Number(m[5] ?? 0), Number(m[6] ?? 0), Number((m[7] ?? '0').padEnd(3, '0')));
  if (new Date(ms).getUTCDate() !== d) return null;
  return dateValue(ms, m[4] !== undefined);
}

const pad = (n: number, w = 2) => String(n).padStart(w, '0');

/** `YYYY-MM-DD`, or `YYYY-MM-DDTHH:MM:SS` for a date with a time. */
export function formatDateValue(d: DateValue): string {
  const t = new Date(d.ms);
  const day = `${t.getUTCFullYear()}-${pad(t.getUTCMonth() + 1)}-${pad(t.getUTCDate())}`;
  return d.time ? `${day}T${pad(t.getUTCHours())}:${pad(t.getUTCMinutes())}:${pad(t.getUTCSeconds())}` : day;
}

/** Moment-style tokens: YYYY, YY, MM, M, DD, D, HH, H, mm, ss; text in [brackets] is literal. */
export function formatWithPattern(d: DateValue, pattern: string): string {
  const t = new Date(d.ms);
  const parts: Record<string, string> = {
    YYYY: String(t.getUTCFullYear()),
    YY: String(t.getUTCFullYear()).slice(-2),
    MM: pad(t.getUTCMonth() + 1),
    M: String(t.getUTCMonth() + 1),
    DD: pad(t.getUTCDate()),
    D: String(t.getUTCDate()),
    HH: pad(t.getUTCHours()),
    H: String(t.getUTCHours()),
    mm: pad(t.getUTCMinutes()),
    ss: pad(t.getUTCSeconds()),
  };
  return pattern.replace(/\[([^\]]*)\]|YYYY|YY|MM|M|DD|D|HH|H|mm|ss/g, (tok, lit: string | undefined) => lit ?? parts[tok]!);
}

const UNITS: Record<string, 'y' | 'M' | 'w' | 'd' | 'h' | 'm' | 's'> = {
  y: 'y', year: 'y', years: 'y',
  M: 'M', month: 'M', months: 'M',
  w: 'w', week: 'w', weeks: 'w',
  d: 'd', day: 'd', days: 'd',
  h: 'h', hour: 'h', hours: 'h',
  m: 'm', minute: 'm', minutes: 'm',
  s: 's', second: 's', seconds: 's',
};

/** Adds a duration such as `7d`, `1 month`, `-2h`, `1y 2M` to a date; null when the text is not a duration. */
export function addDuration(d: DateValue, text: string, sign = 1): DateValue | null {
  const re = /\s*([+-]?\d+(?:\.\d+)?)\s*([A-Za-z]+)\s*/y;
  let pos = 0;
  const t = new Date(d.ms);
  let time = d.time;
  let matched = false;
  const s = text.trim();
  while (pos < s.length) {
    re.lastIndex = pos;
    const m = re.exec(s);
    if (!m) return null;
    const word = m[2]!;
    // Single letters are case-sensitive (`M` month, `m` minute); words are not.
    const unit = UNITS[word] ?? (word.length > 1 ? UNITS[word.toLowerCase()] : undefined);
    if (!unit) return null;
    const n = Number(m[1]) * sign;
    switch (unit) {
      case 'y': t.setUTCFullYear(t.getUTCFullYear() + n); break;
      case 'M': t.setUTCMonth(t.getUTCMonth() + n); break;
      case 'w': t.setUTCDate(t.getUTCDate() + 7 * n); break;
      case 'd': t.setUTCDate(t.getUTCDate() + n); break;
      default:
        t.setTime(t.getTime() + n * (unit === 'h' ? 3_600_000 : unit === 'm' ? 60_000 : 1000));
        time = true;
    }
    matched = true;
    pos = re.lastIndex;
  }
  return matched ? dateValue(t.getTime(), time) : null;
}

/** Turns a frontmatter value into an expression value (nested objects and lists included). */
export function fromYaml(v: unknown): Value {
  if (v === undefined || v === null) return null;
  if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') return v;
  if (v instanceof Date) return dateValue(v.getTime(), true);
  if (Array.isArray(v)) return v.map(fromYaml);
  if (typeof v === 'object') {
    const out: Record<string, Value> = {};
    for (const [k, x] of Object.entries(v as Record<string, unknown>)) out[k] = fromYaml(x);
    return out;
  }
  return null;
}

/** A JSON-friendly rendering of a value (dates as `YYYY-MM-DD[THH:MM:SS]`, files as their path). */
export function toJson(v: Value): unknown {
  if (isDate(v)) return formatDateValue(v);
  if (isFile(v)) return v.path;
  if (isFormulas(v)) return null;
  if (Array.isArray(v)) return v.map(toJson);
  if (isPlainObject(v)) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, toJson(x)]));
  return v;
}

export function truthy(v: Value): boolean {
  if (v === null || v === false || v === 0 || v === '') return false;
  if (typeof v === 'number') return !Number.isNaN(v);
  if (Array.isArray(v)) return v.length > 0;
  if (isPlainObject(v)) return Object.keys(v).length > 0;
  return true;
}

function isEmpty(v: Value): boolean {
  if (v === null || v === '') return true;
  if (Array.isArray(v)) return v.length === 0;
  if (isPlainObject(v)) return Object.keys(v).length === 0;
  return false;
}

export function valueToString(v: Value): string {
  if (v === null) return '';
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  if (isDate(v)) return formatDateValue(v);
  if (isFile(v)) return v.path;
  if (Array.isArray(v)) return v.map(valueToString).join(', ');
  return JSON.stringify(toJson(v));
}

/** Two dates, or a date and a date string, as two ms numbers; otherwise null. */
function asDates(a: Value, b: Value): [number, number] | null {
  if (isDate(a) && isDate(b)) return [a.ms, b.ms];
  if (isDate(a) && typeof b === 'string') {
    const d = parseDate(b);
    return d ? [a.ms, d.ms] : null;
  }
  if (typeof a === 'string' && isDate(b)) {
    const d = parseDate(a);
    return d ? [d.ms, b.ms] : null;
  }
  return null;
}

export function equals(a: Value, b: Value): boolean {
  if (a === null || b === null) return a === b;
  const dates = asDates(a, b);
  if (dates) return dates[0] === dates[1];
  if (isFile(a) || isFile(b)) {
    const f = (isFile(a) ? a : b) as FileValue;
    const o = isFile(a) ? b : a;
    return isFile(o) ? o.path === f.path : typeof o === 'string' && linkMatches(o, f.path, o);
  }
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => equals(x, b[i]!));
  if (isPlainObject(a) && isPlainObject(b)) {
    const ka = Object.keys(a);
    return ka.length === Object.keys(b).length && ka.every((k) => k in b && equals(a[k]!, b[k]!));
  }
  return a === b;
}

/** Orders two values: numbers, dates (and date strings against dates), strings, booleans; null when incomparable. */
export function compare(a: Value, b: Value): number | null {
  if (a === null || b === null) return null;
  const dates = asDates(a, b);
  if (dates) return dates[0] - dates[1];
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  if (typeof a === 'string' && typeof b === 'string') return a < b ? -1 : a > b ? 1 : 0;
  if (typeof a === 'boolean' && typeof b === 'boolean') return Number(a) - Number(b);
  return null;
}

// Made at the first text comparison: making a collator loads ICU's collation data, about 9 ms of a server's start
// (docs/performance.md, "Start-up").
let collator: Intl.Collator | undefined;

/**
 * Sort order for rows: nulls last, then by `compare`, incomparable kinds by
 * their text. Two texts sort as people read them (case-insensitive,
 * numbers by value: "Note 2" before "note 10"), as in Obsidian's tables.
 */
export function sortCompare(a: Value, b: Value): number {
  const an = a === null || a === undefined;
  const bn = b === null || b === undefined;
  if (an || bn) return an === bn ? 0 : an ? 1 : -1;
  if (typeof a === 'string' && typeof b === 'string') return (collator ??= new Intl.Collator('en', { numeric: true, sensitivity: 'base' })).compare(a, b) || (a < b ? -1 : a > b ? 1 : 0);
  const c = compare(a, b);
  if (c !== null) return c;
  const sa = valueToString(a).toLowerCase();
  const sb = valueToString(b).toLowerCase();
  return sa < sb ? -1 : sa > sb ? 1 : 0;
}

// ------------------------------------------------------------------ lexer

type Tok =
  | { t: 'num'; v: number; pos: number }
  | { t: 'str'; v: string; pos: number }
  | { t: 'id'; v: string; pos: number }
  | { t: 'op'; v: string; pos: number }
  | { t: 'end'; pos: number };

const OPS = ['==', '!=', '>=', '<=', '&&', '||', '>', '<', '!', '+', '-', '*', '/', '%', '(', ')', '[', ']', ',', '.'];

function lex(src: string): Tok[] {
  const out: Tok[] = [];
  let i = 0;
  while (i < src.length) {
    const c = src[i]!;
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    if (/[0-9]/.test(c) || (c === '.' && /[0-9]/.test(src[i + 1] ?? ''))) {
      const m = /^(?:\d+(?:\.\d+)?|\.\d+)(?:[eE][+-]?\d+)?/.exec(src.slice(i))!;
      out.push({ t: 'num', v: Number(m[0]), pos: i });
      i += m[0].length;
      continue;
    }
    if (c === '"' || c === "'") {
      let j = i + 1;
      let s = '';
      for (;;) {
        if (j >= src.length) throw new ExprError('Unterminated string', i);
        const ch = src[j]!;
        if (ch === c) break;
        if (ch === '\\') {
          const nx = src[j + 1];
          if (nx === undefined) throw new ExprError('Unterminated string', i);
          s += nx === 'n' ? '\n' : nx === 't' ? '\t' : nx;
          j += 2;
          continue;
        }
        s += ch;
        j++;
      }
      out.push({ t: 'str', v: s, pos: i });
      i = j + 1;
      continue;
    }
    if (/[A-Za-z_$\u00C0-\uFFFF]/.test(c)) {
      const m = /^[A-Za-z_$\u00C0-\uFFFF][\w$\u00C0-\uFFFF]*/.exec(src.slice(i))!;
      out.push({ t: 'id', v: m[0], pos: i });
      i += m[0].length;
      continue;
    }
    const op = OPS.find((o) => src.startsWith(o, i));
    if (!op) throw new ExprError(`Unexpected character "${c}"`, i);
    out.push({ t: 'op', v: op, pos: i });
    i += op.length;
  }
  out.push({ t: 'end', pos: src.length });
  return out;
}

// ------------------------------------------------------------------ parser

export type Node =
  | { k: 'lit'; v: Value }
  | { k: 'id'; name: string }
  | { k: 'member'; obj: Node; name: string }
  | { k: 'index'; obj: Node; index: Node }
  | { k: 'call'; fn: Node; args: Node[] }
  | { k: 'list'; items: Node[] }
  | { k: 'unary'; op: '!' | '-'; arg: Node }
  | { k: 'bin'; op: string; left: Node; right: Node };

const MAX_DEPTH = 64;
/** Longest expression accepted; with MAX_STEPS this bounds the work one row can cost. */
export const MAX_EXPR_LENGTH = 2000;
/**
 * Steps one evaluation may take: a node visited is one, a list method costs
 * its list's length (times its argument count), `filter`/`map`/`reduce`
 * visit their argument once per element.
 */
export const MAX_STEPS = 100_000;
/**
 * Steps one row may take over all its evaluations: a row is evaluated
 * without a pause, so this bounds how long it holds the event loop (tens of
 * milliseconds) however many statements its filters have.
 */
export const ROW_MAX_STEPS = 200_000;
/** Steps one request may take over all its rows (about a second of evaluation). */
export const REQUEST_MAX_STEPS = 20_000_000;

export function parseExpr(src: string): Node {
  if (src.length > MAX_EXPR_LENGTH) throw new ExprError(`Expression longer than ${MAX_EXPR_LENGTH} characters`, MAX_EXPR_LENGTH);
  const toks = lex(src);
  let p = 0;
  let depth = 0;
  const peek = () => toks[p]!;
  const isOp = (v: string) => {
    const t = peek();
    return t.t === 'op' && t.v === v;
  };
  const expect = (v: string) => {
    if (!isOp(v)) throw new ExprError(`Expected "${v}"`, peek().pos);
    p++;
  };
  /** Comma-separated expressions up to `close`, which is consumed: a list literal's items, a call's arguments. */
  const listUntil = (close: string): Node[] => {
    const items: Node[] = [];
    if (!isOp(close)) {
      items.push(expr());
      while (isOp(',')) {
        p++;
        items.push(expr());
      }
    }
    expect(close);
    return items;
  };
  const binary = (next: () => Node, ops: string[]) => (): Node => {
    let left = next();
    for (;;) {
      const t = peek();
      if (t.t !== 'op' || !ops.includes(t.v)) return left;
      p++;
      left = { k: 'bin', op: t.v, left, right: next() };
    }
  };
  const primary = (): Node => {
    const t = peek();
    p++;
    switch (t.t) {
      case 'num':
        return { k: 'lit', v: t.v };
      case 'str':
        return { k: 'lit', v: t.v };
      case 'id':
        if (t.v === 'true' || t.v === 'false') return { k: 'lit', v: t.v === 'true' };
        if (t.v === 'null') return { k: 'lit', v: null };
        return { k: 'id', name: t.v };
      case 'op':
        if (t.v === '(') {
          const e = expr();
          expect(')');
          return e;
        }
        if (t.v === '[') return { k: 'list', items: listUntil(']') };
        throw new ExprError(`Unexpected "${t.v}"`, t.pos);
      default:
        throw new ExprError('Unexpected end of expression', t.pos);
    }
  };
  const postfix = (): Node => {
    let n = primary();
    for (;;) {
      if (isOp('.')) {
        p++;
        const t = peek();
        if (t.t !== 'id') throw new ExprError('Expected a name after "."', t.pos);
        p++;
        n = { k: 'member', obj: n, name: t.v };
      } else if (isOp('[')) {
        p++;
        const index = expr();
        expect(']');
        n = { k: 'index', obj: n, index };
      } else if (isOp('(')) {
        p++;
        n = { k: 'call', fn: n, args: listUntil(')') };
      } else return n;
    }
  };
  const unary = (): Node => {
    if (isOp('!') || isOp('-')) {
      const op = (peek() as { v: '!' | '-' }).v;
      p++;
      return { k: 'unary', op, arg: unary() };
    }
    return postfix();
  };
  const mul = binary(unary, ['*', '/', '%']);
  const add = binary(mul, ['+', '-']);
  const cmp = (): Node => {
    const left = add();
    const t = peek();
    if (t.t === 'op' && ['==', '!=', '>', '<', '>=', '<='].includes(t.v)) {
      p++;
      return { k: 'bin', op: t.v, left, right: add() };
    }
    return left;
  };
  const and = binary(cmp, ['&&']);
  const or = binary(and, ['||']);
  function expr(): Node {
    if (++depth > MAX_DEPTH) throw new ExprError('Expression nested too deeply', peek().pos);
    const e = or();
    depth--;
    return e;
  }
  if (peek().t === 'end') throw new ExprError('Empty expression', 0);
  const e = expr();
  if (peek().t !== 'end') throw new ExprError('Unexpected text after the expression', peek().pos);
  return e;
}

// --------------------------------------------------------------- evaluator

const cache = new Map<string, Node>();

/** Parses with a small cache (views evaluate the same filters for every row). */
export function compile(src: string): Node {
  let n = cache.get(src);
  if (!n) {
    n = parseExpr(src);
    if (cache.size > 2000) cache.clear();
    cache.set(src, n);
  }
  return n;
}


function normTag(t: string): string {
  return t.replace(/^#/, '').trim().toLowerCase();
}

function stripMd(p: string): string {
  return p.replace(/\.md$/i, '');
}

/** Does a link (target as written, resolved path) point at `wanted` (a name, a path, with or without `.md`)? */
function linkMatches(wanted: string, resolved: string | null, target: string): boolean {
  const w = stripMd(wanted.replace(/^\[\[|\]\]$/g, '').split('|')[0]!.split('#')[0]!.trim()).toLowerCase();
  if (!w) return false;
  if (resolved) {
    const r = stripMd(resolved).toLowerCase();
    if (r === w || r.split('/').pop() === w) return true;
  }
  return stripMd(target).toLowerCase() === w;
}

interface Ctx {
  env: Env;
  formulaStack: string[];
  steps: number;
  maxSteps: number;
  /** `value`, `index`, `acc` inside a list method's argument. */
  locals: Record<string, Value> | null;
}

function evalNode(n: Node, c: Ctx): Value {
  if (++c.steps > c.maxSteps) throw new ExprError(`The expression needs more than ${c.maxSteps} steps for one row`);
  switch (n.k) {
    case 'lit':
      return n.v;
    case 'id':
      return root(n.name, c);
    case 'member':
      return member(evalNode(n.obj, c), n.name, c);
    case 'index': {
      const obj = evalNode(n.obj, c);
      const idx = evalNode(n.index, c);
      if (Array.isArray(obj) && typeof idx === 'number') return obj[idx < 0 ? obj.length + idx : idx] ?? null;
      if (typeof idx === 'string') return member(obj, idx, c);
      return null;
    }
    case 'call':
      return call(n, c);
    case 'list':
      return n.items.map((x) => evalNode(x, c));
    case 'unary': {
      const v = evalNode(n.arg, c);
      if (n.op === '!') return !truthy(v);
      return typeof v === 'number' ? -v : null;
    }
    case 'bin':
      return binary(n.op, n.left, n.right, c);
  }
}

function root(name: string, c: Ctx): Value {
  const { env } = c;
  if (c.locals && Object.prototype.hasOwnProperty.call(c.locals, name)) return c.locals[name]!;
  switch (name) {
    case 'file':
      return env.file;
    case 'this':
      return env.self === undefined ? env.file : env.self;
    case 'note':
      return fromYaml(env.note);
    case 'formula':
      return { kind: 'formulas' };
    default:
      if (env.objects && Object.prototype.hasOwnProperty.call(env.objects, name)) return env.objects[name]!;
      return Object.prototype.hasOwnProperty.call(env.note, name) ? fromYaml(env.note[name]) : null;
  }
}

function fileField(f: FileValue, name: string, c: Ctx): Value {
  const base = f.path.split('/').pop()!;
  const dot = base.lastIndexOf('.');
  switch (name) {
    case 'path':
      return f.path;
    case 'name':
      return base;
    case 'basename':
      return dot > 0 ? base.slice(0, dot) : base;
    case 'ext':
      return dot > 0 ? base.slice(dot + 1) : '';
    case 'folder':
      return f.path.includes('/') ? f.path.slice(0, f.path.lastIndexOf('/')) : '';
    case 'size':
      return f.size;
    case 'mtime':
      return dateValue(f.mtime, true);
    case 'ctime':
      return dateValue(f.ctime, true);
    case 'tags':
      return [...f.tags];
    case 'links':
      return f.links.map((l) => l.resolved ?? l.target);
    case 'embeds':
      return f.links.filter((l) => l.embed).map((l) => l.resolved ?? l.target);
    case 'backlinks':
      return c.env.backlinks ? c.env.backlinks(f.path) : [];
    case 'properties':
      return fromYaml(f.properties);
    case 'file':
      return f;
    default:
      return null;
  }
}

function member(obj: Value, name: string, c: Ctx): Value {
  if (isFormulas(obj)) return formula(name, c);
  if (isFile(obj)) return fileField(obj, name, c);
  if (isDate(obj)) {
    const t = new Date(obj.ms);
    const fields: Record<string, number> = {
      year: t.getUTCFullYear(),
      month: t.getUTCMonth() + 1,
      day: t.getUTCDate(),
      hour: t.getUTCHours(),
      minute: t.getUTCMinutes(),
      second: t.getUTCSeconds(),
      millisecond: t.getUTCMilliseconds(),
    };
    return fields[name] ?? null;
  }
  if (typeof obj === 'string' || Array.isArray(obj)) return name === 'length' ? obj.length : null;
  if (isPlainObject(obj)) return Object.prototype.hasOwnProperty.call(obj, name) ? obj[name]! : null;
  return null;
}

function formula(name: string, c: Ctx): Value {
  const formulas = c.env.formulas;
  if (!formulas || !Object.prototype.hasOwnProperty.call(formulas, name)) return null;
  const src = formulas[name];
  if (src === undefined || src === null) return null;
  const memo = c.env.memo;
  if (memo?.has(name)) return memo.get(name)!;
  if (c.formulaStack.includes(name)) throw new ExprError(`Formula "${name}" refers to itself`);
  if (c.formulaStack.length > 32) throw new ExprError('Formulas nested too deeply');
  c.formulaStack.push(name);
  // A formula sees only the row, never the `value`/`index` of a list method that refers to it.
  const locals = c.locals;
  c.locals = null;
  try {
    const v = evalNode(compile(String(src)), c);
    memo?.set(name, v);
    return v;
  } finally {
    c.locals = locals;
    c.formulaStack.pop();
  }
}

function arith(op: string, a: Value, b: Value): Value {
  if (isDate(a) && typeof b === 'string' && (op === '+' || op === '-')) return addDuration(a, b, op === '+' ? 1 : -1);
  if (isDate(a) && typeof b === 'number' && (op === '+' || op === '-')) return dateValue(a.ms + (op === '+' ? b : -b), a.time);
  if (op === '-' && isDate(a) && isDate(b)) return a.ms - b.ms;
  if (op === '+' && (typeof a === 'string' || typeof b === 'string')) return valueToString(a) + valueToString(b);
  if (op === '+' && Array.isArray(a) && Array.isArray(b)) return [...a, ...b];
  if (typeof a !== 'number' || typeof b !== 'number') return null;
  switch (op) {
    case '+':
      return a + b;
    case '-':
      return a - b;
    case '*':
      return a * b;
    case '/':
      return b === 0 ? null : a / b;
    default:
      return b === 0 ? null : a % b;
  }
}

function binary(op: string, l: Node, r: Node, c: Ctx): Value {
  if (op === '&&') return truthy(evalNode(l, c)) && truthy(evalNode(r, c));
  if (op === '||') return truthy(evalNode(l, c)) || truthy(evalNode(r, c));
  const a = evalNode(l, c);
  const b = evalNode(r, c);
  switch (op) {
    case '==':
      return equals(a, b);
    case '!=':
      return !equals(a, b);
    case '>':
    case '<':
    case '>=':
    case '<=': {
      const d = compare(a, b);
      if (d === null || Number.isNaN(d)) return false;
      return op === '>' ? d > 0 : op === '<' ? d < 0 : op === '>=' ? d >= 0 : d <= 0;
    }
    default:
      return arith(op, a, b);
  }
}

function toDate(v: Value): DateValue | null {
  if (isDate(v)) return v;
  if (typeof v === 'string') return parseDate(v);
  if (typeof v === 'number') return dateValue(v, true);
  return null;
}

function call(n: Extract<Node, { k: 'call' }>, c: Ctx): Value {
  if (n.fn.k === 'id') return globalCall(n.fn.name, n.args, c);
  if (n.fn.k !== 'member') throw new ExprError('Only functions and methods can be called');
  const recv = evalNode(n.fn.obj, c);
  if (LIST_LAMBDAS.has(n.fn.name)) return listLambda(recv, n.fn.name, n.args, c);
  // A list method walks its list (once per argument for containsAll/Any): charged per element.
  if (Array.isArray(recv)) {
    c.steps += recv.length * Math.max(1, n.args.length);
    if (c.steps > c.maxSteps) throw new ExprError(`The expression needs more than ${c.maxSteps} steps for one row`);
  }
  return method(
    recv,
    n.fn.name,
    n.args.map((a) => evalNode(a, c)),
    c,
  );
}

const LIST_LAMBDAS = new Set(['filter', 'map', 'reduce']);

/**
 * `list.filter(cond)`, `list.map(expr)`, `list.reduce(expr, initial)`: the
 * argument is evaluated once per element with `value` and `index` (and `acc`
 * for reduce) bound, as in Bases.
 */
function listLambda(recv: Value, name: string, argNodes: Node[], c: Ctx): Value {
  if (!Array.isArray(recv)) return null;
  const body = argNodes[0];
  if (!body) throw new ExprError(`${name}() needs an expression`);
  const outer = c.locals;
  try {
    if (name === 'reduce') {
      let acc = argNodes[1] ? evalNode(argNodes[1], c) : null;
      recv.forEach((value, index) => {
        c.locals = { ...outer, value, index, acc };
        acc = evalNode(body, c);
      });
      return acc;
    }
    const out: Value[] = [];
    recv.forEach((value, index) => {
      c.locals = { ...outer, value, index };
      const r = evalNode(body, c);
      if (name === 'map') out.push(r);
      else if (truthy(r)) out.push(value);
    });
    return out;
  } finally {
    c.locals = outer;
  }
}

function globalCall(name: string, argNodes: Node[], c: Ctx): Value {
  if (name === 'if') {
    if (argNodes.length < 2) throw new ExprError('if() needs a condition and a result');
    return truthy(evalNode(argNodes[0]!, c)) ? evalNode(argNodes[1]!, c) : argNodes[2] ? evalNode(argNodes[2], c) : null;
  }
  const args = argNodes.map((a) => evalNode(a, c));
  const now = c.env.now;
  switch (name) {
    case 'now':
      return dateValue(now, true);
    case 'today':
      return dateValue(now - (((now % 86_400_000) + 86_400_000) % 86_400_000), false);
    case 'date':
      return toDate(args[0] ?? null);
    case 'list':
      return args[0] === undefined || args[0] === null ? [] : Array.isArray(args[0]) ? args[0] : [args[0]];
    case 'number': {
      const v = args[0] ?? null;
      if (typeof v === 'number') return v;
      if (typeof v === 'boolean') return v ? 1 : 0;
      if (isDate(v)) return v.ms;
      if (typeof v === 'string' && v.trim() !== '' && !Number.isNaN(Number(v))) return Number(v);
      return null;
    }
    case 'min':
    case 'max': {
      const nums = args.filter((a): a is number => typeof a === 'number');
      return nums.length ? (name === 'min' ? Math.min(...nums) : Math.max(...nums)) : null;
    }
    case 'link':
    case 'file':
      return typeof args[0] === 'string' ? args[0] : isFile(args[0]) ? args[0] : null;
    case 'random':
      return Math.random();
    case 'escapeHTML':
      return valueToString(args[0] ?? null).replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);
    default:
      throw new ExprError(`Unknown function ${name}()`);
  }
}

function method(recv: Value, name: string, args: Value[], c: Ctx): Value {
  // Any type
  switch (name) {
    case 'isTruthy':
      return truthy(recv);
    case 'isEmpty':
      return isEmpty(recv);
    case 'toString':
      return valueToString(recv);
    case 'isType': {
      const t = String(args[0] ?? '').toLowerCase();
      const actual = recv === null ? 'null' : isDate(recv) ? 'date' : isFile(recv) ? 'file' : Array.isArray(recv) ? 'list' : isPlainObject(recv) ? 'object' : typeof recv;
      return actual === t;
    }
  }
  if (isFile(recv)) {
    switch (name) {
      case 'hasTag': {
        const tags = recv.tags.map(normTag);
        return args.some((a) => {
          const w = normTag(valueToString(a));
          return w !== '' && tags.some((t) => t === w || t.startsWith(w + '/'));
        });
      }
      case 'inFolder': {
        const f = valueToString(args[0] ?? '').replace(/^\/+|\/+$/g, '');
        if (f === '') return true;
        return recv.path.toLowerCase().startsWith(f.toLowerCase() + '/');
      }
      case 'hasLink': {
        const w = args[0] ?? null;
        const wanted = isFile(w) ? w.path : valueToString(w);
        return recv.links.some((l) => linkMatches(wanted, l.resolved, l.target));
      }
      case 'hasProperty':
        return Object.prototype.hasOwnProperty.call(recv.properties, valueToString(args[0] ?? ''));
      case 'asLink':
        return recv.path;
    }
  }
  if (typeof recv === 'string') {
    const s = recv;
    const strs = args.map((a) => valueToString(a));
    switch (name) {
      case 'contains':
        return s.includes(strs[0] ?? '');
      case 'containsAll':
        return strs.every((x) => s.includes(x));
      case 'containsAny':
        return strs.some((x) => s.includes(x));
      case 'startsWith':
        return s.startsWith(strs[0] ?? '');
      case 'endsWith':
        return s.endsWith(strs[0] ?? '');
      case 'lower':
        return s.toLowerCase();
      case 'upper':
        return s.toUpperCase();
      case 'trim':
        return s.trim();
      case 'title':
        return s.replace(/\b\w/g, (ch) => ch.toUpperCase());
      case 'slice':
        return s.slice(Number(args[0] ?? 0), args[1] === undefined ? undefined : Number(args[1]));
      case 'split': {
        const parts = s.split(strs[0] ?? '');
        return typeof args[1] === 'number' ? parts.slice(0, Math.max(0, args[1])) : parts;
      }
      case 'replace':
        return s.split(strs[0] ?? '').join(strs[1] ?? '');
      case 'reverse':
        return Array.from(s).reverse().join('');
      case 'repeat': {
        const n = Math.max(0, Math.floor(Number(args[0] ?? 0)));
        if (!Number.isFinite(n) || s.length * n > MAX_STRING) throw new ExprError(`repeat() would build a text longer than ${MAX_STRING} characters`);
        return s.repeat(n);
      }
    }
  }
  if (typeof recv === 'number') {
    switch (name) {
      case 'abs':
        return Math.abs(recv);
      case 'ceil':
        return Math.ceil(recv);
      case 'floor':
        return Math.floor(recv);
      case 'round': {
        const k = 10 ** Number(args[0] ?? 0);
        return Math.round(recv * k) / k;
      }
      case 'toFixed':
        return recv.toFixed(Number(args[0] ?? 0));
    }
  }
  if (Array.isArray(recv)) {
    const has = (x: Value) => recv.some((e) => equals(e, x) || (typeof e === 'string' && typeof x === 'string' && e.toLowerCase() === x.toLowerCase()));
    switch (name) {
      case 'contains':
        return has(args[0] ?? null);
      case 'containsAll':
        return args.every(has);
      case 'containsAny':
        return args.some(has);
      case 'join':
        return recv.map(valueToString).join(valueToString(args[0] ?? ','));
      case 'unique':
        return uniqueValues(recv);
      case 'sort':
        return [...recv].sort(sortCompare);
      case 'reverse':
        return [...recv].reverse();
      case 'flat':
        return recv.flat() as Value[];
      case 'slice':
        return recv.slice(Number(args[0] ?? 0), args[1] === undefined ? undefined : Number(args[1]));
      case 'sum':
      case 'mean':
      case 'median':
      case 'stddev':
        return numberStat(name, recv);
    }
  }
  if (isPlainObject(recv)) {
    if (name === 'keys') return Object.keys(recv);
    if (name === 'values') return Object.values(recv);
  }
  if (isDate(recv)) {
    switch (name) {
      case 'date':
        return dateValue(recv.ms - (((recv.ms % 86_400_000) + 86_400_000) % 86_400_000), false);
      case 'format':
        return formatWithPattern(recv, valueToString(args[0] ?? 'YYYY-MM-DD'));
      case 'time':
        return formatWithPattern(recv, 'HH:mm:ss');
      case 'relative':
        return relativeTime(recv.ms - c.env.now);
    }
  }
  // A known method on a value of another type (or null) is null, as a missing property is.
  if (recv === null || METHODS.has(name)) return null;
  throw new ExprError(`Unknown method ${name}()`);
}

const MAX_STRING = 100_000;

/** A text standing for a value, equal for equal values (dates by instant), to dedupe in linear time. */
function identity(v: Value): string {
  if (isDate(v)) return `d${v.ms}`;
  if (typeof v === 'string') return `s${v}`;
  return `j${JSON.stringify(toJson(v))}`;
}

/** The distinct values of a list, first occurrence kept. */
export function uniqueValues(list: Value[]): Value[] {
  const seen = new Set<string>();
  return list.filter((v) => {
    const k = identity(v);
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}

/** Statistics of the numbers of a list (other values ignored); null when it has none. `stddev` is the population's. */
export function numberStat(name: 'sum' | 'mean' | 'median' | 'stddev', list: Value[]): number | null {
  const nums = list.filter((v): v is number => typeof v === 'number' && Number.isFinite(v));
  if (nums.length === 0) return null;
  const sum = nums.reduce((a, b) => a + b, 0);
  const mean = sum / nums.length;
  switch (name) {
    case 'sum':
      return sum;
    case 'mean':
      return mean;
    case 'median': {
      const s = [...nums].sort((a, b) => a - b);
      const mid = s.length >> 1;
      return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
    }
    case 'stddev':
      return Math.sqrt(nums.reduce((a, b) => a + (b - mean) ** 2, 0) / nums.length);
  }
}

/** Moment's `fromNow()` wording, which Obsidian's `date.relative()` shows: "3 days ago", "in an hour". */
export function relativeTime(deltaMs: number): string {
  const s = Math.abs(deltaMs) / 1000;
  const d = s / 86_400;
  const n = (x: number, one: string, many: string) => (Math.round(x) <= 1 ? one : `${Math.round(x)} ${many}`);
  const text =
    s < 45 ? 'a few seconds'
    : s < 90 ? 'a minute'
    : s < 45 * 60 ? n(s / 60, 'a minute', 'minutes')
    : s < 90 * 60 ? 'an hour'
    : s < 22 * 3600 ? n(s / 3600, 'an hour', 'hours')
    : s < 36 * 3600 ? 'a day'
    : d < 26 ? n(d, 'a day', 'days')
    : d < 45 ? 'a month'
    : d < 320 ? n(d / 30.4375, 'a month', 'months')
    : d < 548 ? 'a year'
    : n(d / 365.25, 'a year', 'years');
  return deltaMs > 0 ? `in ${text}` : `${text} ago`;
}

const FUNCTIONS = new Set(['if', 'now', 'today', 'date', 'list', 'number', 'min', 'max', 'link', 'file', 'random', 'escapeHTML']);
const METHODS = new Set([
  // any
  'isTruthy', 'isEmpty', 'toString', 'isType',
  // file
  'hasTag', 'inFolder', 'hasLink', 'hasProperty', 'asLink',
  // string
  'contains', 'containsAll', 'containsAny', 'startsWith', 'endsWith', 'lower', 'upper', 'trim', 'title', 'slice', 'split', 'replace', 'reverse', 'repeat',
  // number
  'abs', 'ceil', 'floor', 'round', 'toFixed',
  // list
  'join', 'unique', 'sort', 'flat', 'filter', 'map', 'reduce', 'sum', 'mean', 'median', 'stddev',
  // object
  'keys', 'values',
  // date
  'date', 'format', 'time', 'relative',
]);

function walk(n: Node, visit: (n: Node) => void): void {
  visit(n);
  switch (n.k) {
    case 'member':
      walk(n.obj, visit);
      break;
    case 'index':
      walk(n.obj, visit);
      walk(n.index, visit);
      break;
    case 'call':
      walk(n.fn, visit);
      n.args.forEach((a) => walk(a, visit));
      break;
    case 'list':
      n.items.forEach((a) => walk(a, visit));
      break;
    case 'unary':
      walk(n.arg, visit);
      break;
    case 'bin':
      walk(n.left, visit);
      walk(n.right, visit);
      break;
  }
}

/** Unknown functions and methods are refused when the base is read, before any row. */
function checkNames(n: Node): void {
  walk(n, (x) => {
    if (x.k !== 'call') return;
    if (x.fn.k === 'id' && !FUNCTIONS.has(x.fn.name)) throw new ExprError(`Unknown function ${x.fn.name}()`);
    if (x.fn.k === 'member' && !METHODS.has(x.fn.name)) throw new ExprError(`Unknown method ${x.fn.name}()`);
  });
}

/** Parses an expression and checks its function and method names; throws ExprError naming `where`. */
export function checkExpr(src: string, where: string): void {
  try {
    checkNames(compile(src));
  } catch (e) {
    if (e instanceof ExprError) throw new ExprError(`${where}: ${e.message} in "${src}"`, e.position);
    throw e;
  }
}

/** Does the expression read a member of the object `root` (`task.due`, `task["due"]`)? A bare `root` is a note property, not counted. */
export function readsMemberOf(src: string, root: string): boolean {
  let found = false;
  walk(compile(src), (x) => {
    if ((x.k === 'member' || x.k === 'index') && x.obj.k === 'id' && x.obj.name === root) found = true;
  });
  return found;
}

/**
 * Checks a base's `formulas` (a mapping of name to expression): each parses
 * with known names, and no formula refers to itself through others.
 */
export function checkFormulas(formulas: unknown, where = 'formulas'): void {
  if (formulas === null || formulas === undefined) return;
  if (typeof formulas !== 'object' || Array.isArray(formulas)) throw new ExprError(`${where}: formulas is a mapping of name to expression`);
  const srcs = formulas as Record<string, unknown>;
  for (const [name, src] of Object.entries(srcs)) {
    if (typeof src !== 'string' && typeof src !== 'number' && typeof src !== 'boolean') throw new ExprError(`${where}.${name}: a formula is an expression string`);
    checkExpr(String(src), `${where}.${name}`);
  }
  const state = new Map<string, 'open' | 'done'>();
  const visit = (name: string, path: string[]): void => {
    if (state.get(name) === 'done' || !Object.prototype.hasOwnProperty.call(srcs, name)) return;
    if (state.get(name) === 'open') throw new ExprError(`${where}: formula "${name}" refers to itself (${[...path, name].join(' → ')})`);
    state.set(name, 'open');
    for (const r of formulaRefs(String(srcs[name]))) visit(r, [...path, name]);
    state.set(name, 'done');
  };
  for (const name of Object.keys(srcs)) visit(name, []);
}

/** The `formula.x` names an expression refers to. */
export function formulaRefs(src: string): string[] {
  const out: string[] = [];
  walk(compile(src), (x) => {
    if (x.k === 'member' && x.obj.k === 'id' && x.obj.name === 'formula') out.push(x.name);
    if (x.k === 'index' && x.obj.k === 'id' && x.obj.name === 'formula' && x.index.k === 'lit' && typeof x.index.v === 'string') out.push(x.index.v);
  });
  return out;
}

/** Parsed property ids (a view asks for the same few for every row). */
const propertyIds = new Map<string, { ns: string | undefined; name: string } | null>();

const PROPERTY_ID_RE = /^(?:(file|note|formula|task)\.)?([^.()[\]"'!=<>&|+*/%,]+)$/;

/**
 * A property id as written in `order`, `sort` and `groupBy` (`file.name`,
 * `note.status`, `formula.x`, a bare frontmatter key, which may contain
 * spaces); anything else is evaluated as an expression.
 */
export function propertyValue(id: string, env: Env): Value {
  let parsed = propertyIds.get(id);
  if (parsed === undefined) {
    const m = PROPERTY_ID_RE.exec(id.trim());
    parsed = m ? { ns: m[1], name: m[2]!.trim() } : null;
    if (propertyIds.size > 2000) propertyIds.clear();
    propertyIds.set(id, parsed);
  }
  if (parsed === null) return evaluate(id, env);
  const { ns, name } = parsed;
  if (ns === undefined || ns === 'note') return Object.prototype.hasOwnProperty.call(env.note, name) ? fromYaml(env.note[name]) : null;
  return run(env, MAX_STEPS, (c) => (ns === 'file' ? (env.file ? fileField(env.file, name, c) : null) : ns === 'formula' ? formula(name, c) : member(env.objects?.task ?? null, name, c)));
}

/** Runs one evaluation, then charges its steps to the request's budget. */
function run(env: Env, maxSteps: number, body: (c: Ctx) => Value): Value {
  const rowCapped = env.row !== undefined && env.row.left < maxSteps;
  const c: Ctx = { env, formulaStack: [], steps: 0, maxSteps: rowCapped ? Math.max(0, env.row!.left) : maxSteps, locals: null };
  try {
    return body(c);
  } catch (e) {
    if (rowCapped && e instanceof ExprError && !(e instanceof BudgetError) && c.steps > c.maxSteps) {
      throw new ExprError(`The row needs more than ${ROW_MAX_STEPS} steps in all (filters, formulas, sort keys and cells); simplify the base`);
    }
    throw e;
  } finally {
    if (env.row) env.row.left -= c.steps;
    if (env.budget && (env.budget.left -= c.steps) < 0) {
      throw new BudgetError('The view needs too much work in all; narrow its filters or simplify its formulas');
    }
  }
}

/** Checks a property id (see propertyValue); throws ExprError naming `where`. */
export function checkProperty(id: string, where: string): void {
  if (!PROPERTY_ID_RE.test(id.trim())) checkExpr(id, where);
}

/** Evaluates one expression against a row. Throws ExprError for a syntax error or an unknown function. */
export function evaluate(src: string, env: Env, maxSteps = MAX_STEPS): Value {
  const node = compile(src);
  return run(env, maxSteps, (c) => evalNode(node, c));
}

/** A Bases filter: a statement string, or `{ and | or | not: [filters] }`. null/undefined: everything passes. */
export function evalFilter(filter: unknown, env: Env): boolean {
  if (filter === null || filter === undefined) return true;
  if (typeof filter === 'string') return truthy(evaluate(filter, env));
  if (typeof filter === 'boolean') return filter;
  if (Array.isArray(filter)) return filter.every((f) => evalFilter(f, env));
  if (typeof filter === 'object') {
    const keys = Object.keys(filter);
    if (keys.length !== 1 || !['and', 'or', 'not'].includes(keys[0]!)) {
      throw new ExprError('A filter group has exactly one of "and", "or" or "not"');
    }
    const key = keys[0]!;
    const raw = (filter as Record<string, unknown>)[key];
    const items = Array.isArray(raw) ? raw : raw === null || raw === undefined ? [] : [raw];
    if (key === 'and') return items.every((f) => evalFilter(f, env));
    if (key === 'or') return items.some((f) => evalFilter(f, env));
    return !items.some((f) => evalFilter(f, env));
  }
  throw new ExprError('A filter is a statement string or an and/or/not group');
}

/** Parses every statement in a filter so syntax errors surface before any row is read. */
export function checkFilter(filter: unknown, where = 'filters'): void {
  if (filter === null || filter === undefined || typeof filter === 'boolean') return;
  if (typeof filter === 'string') {
    checkExpr(filter, where);
    return;
  }
  if (Array.isArray(filter)) {
    filter.forEach((f, i) => checkFilter(f, `${where}[${i}]`));
    return;
  }
  if (typeof filter === 'object') {
    const keys = Object.keys(filter);
    if (keys.length !== 1 || !['and', 'or', 'not'].includes(keys[0]!)) {
      throw new ExprError(`${where}: a filter group has exactly one of "and", "or" or "not"`);
    }
    const raw = (filter as Record<string, unknown>)[keys[0]!];
    const items = Array.isArray(raw) ? raw : raw === null || raw === undefined ? [] : [raw];
    items.forEach((f, i) => checkFilter(f, `${where}.${keys[0]}[${i}]`));
    return;
  }
  throw new ExprError(`${where}: a filter is a statement string or an and/or/not group`);
}
