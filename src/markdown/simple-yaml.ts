/**
 * A fast path for the frontmatter most notes have: a flat block mapping of
 * plain or quoted scalars, flow sequences of scalars and block sequences of
 * scalars. `parseSimpleYaml` returns exactly what the `yaml` package gives
 * (`parseDocument(raw)` + `toJS()`, YAML 1.2 core schema) or `undefined`
 * whenever it is not sure; the caller then asks the `yaml` package. The
 * property and corpus tests in test/markdown/simple-yaml.test.ts hold it to
 * that promise.
 */

import { textOverBudget } from './yaml-limits.js';

const BAIL = Symbol('bail');
/** A flow sequence still open where its line ends, every item before that well-formed. */
const UNCLOSED = Symbol('unclosed');
/** Only blank lines and comments: the `yaml` package reads that as null. */
const EMPTY = Symbol('empty');
type Parsed = unknown | typeof BAIL | typeof UNCLOSED;

/**
 * Characters whose YAML meaning is unusual or that the `yaml` package treats
 * in ways not worth mirroring: tabs (indentation and separation rules),
 * control and C1 characters, U+2028/9, BOMs and non-characters.
 */
const UNUSUAL_CHARS = /[\x00-\x09\x0B\x0C\x0E-\x1F\x7F-\x9F\u2028\u2029\uFEFF\uFFFE\uFFFF]/;
/** A lone CR is a line break to YAML but the `yaml` package mis-parses it. */
const LONE_CR = /\r(?!\n)/;

// The core-schema tag tests of the `yaml` package (src/schema/core), in the order it tries them.
const NULL_RE = /^(?:~|[Nn]ull|NULL)$/;
const BOOL_RE = /^(?:[Tt]rue|TRUE|[Ff]alse|FALSE)$/;
const INT_OCT_RE = /^0o[0-7]+$/;
const INT_RE = /^[-+]?[0-9]+$/;
const INT_HEX_RE = /^0x[0-9a-fA-F]+$/;
const FLOAT_NAN_RE = /^(?:[-+]?\.(?:inf|Inf|INF)|\.nan|\.NaN|\.NAN)$/;
const FLOAT_EXP_RE = /^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)[eE][-+]?[0-9]+$/;
const FLOAT_RE = /^[-+]?(?:\.[0-9]+|[0-9]+\.[0-9]*)$/;

/** The value of a (non-empty, trimmed) plain scalar under the YAML 1.2 core schema. */
function resolvePlain(s: string): unknown {
  const c = s.charCodeAt(0);
  // Every non-string starts with one of `~ + - .`, a digit or n N t T f F.
  const maybeTyped =
    c === 126 || c === 43 || c === 45 || c === 46 || (c >= 48 && c <= 57) ||
    c === 110 || c === 78 || c === 116 || c === 84 || c === 102 || c === 70;
  if (!maybeTyped) return s;
  if (NULL_RE.test(s)) return null;
  if (BOOL_RE.test(s)) return c === 116 || c === 84;
  if (INT_OCT_RE.test(s)) return parseInt(s.slice(2), 8);
  if (INT_RE.test(s)) return parseInt(s, 10);
  if (INT_HEX_RE.test(s)) return parseInt(s.slice(2), 16);
  if (FLOAT_NAN_RE.test(s)) {
    if (s.slice(-3).toLowerCase() === 'nan') return NaN;
    return c === 45 ? Number.NEGATIVE_INFINITY : Number.POSITIVE_INFINITY;
  }
  if (FLOAT_EXP_RE.test(s) || FLOAT_RE.test(s)) return parseFloat(s);
  return s;
}

const DQ_ESCAPES: Record<string, string> = {
  '0': '\0', a: '\x07', b: '\b', e: '\x1b', f: '\f', n: '\n', r: '\r', t: '\t', v: '\v',
  N: '\u0085', _: '\u00a0', L: '\u2028', P: '\u2029', ' ': ' ', '"': '"', '/': '/', '\\': '\\',
};
const HEX_RE = /^[0-9a-fA-F]+$/;

/** Where a scalar or flow sequence ends inside a line: its value and the index just past it. */
interface Item {
  value: unknown;
  end: number;
}

function singleQuoted(line: string, start: number): Item | typeof BAIL {
  let out = '';
  let from = start + 1;
  for (;;) {
    const q = line.indexOf("'", from);
    // no closing quote on this line: a multi-line scalar
    if (q < 0) return BAIL;
    out += line.slice(from, q);
    if (line.charCodeAt(q + 1) !== 39) return { value: out, end: q + 1 };
    out += "'";
    from = q + 2;
  }
}

function doubleQuoted(line: string, start: number): Item | typeof BAIL {
  let out = '';
  let from = start + 1;
  for (let i = from; i < line.length; i++) {
    const c = line.charCodeAt(i);
    if (c === 34) return { value: out + line.slice(from, i), end: i + 1 };
    if (c !== 92) continue;
    out += line.slice(from, i);
    const e = line[i + 1];
    // a backslash ending the line escapes the line break
    if (e === undefined) return BAIL;
    const simple = DQ_ESCAPES[e];
    if (simple !== undefined) {
      out += simple;
      i += 1;
    } else {
      const len = e === 'x' ? 2 : e === 'u' ? 4 : e === 'U' ? 8 : 0;
      const hex = line.slice(i + 2, i + 2 + len);
      if (len === 0 || hex.length !== len || !HEX_RE.test(hex)) return BAIL;
      const code = parseInt(hex, 16);
      if (code > 0x10ffff) return BAIL;
      out += String.fromCodePoint(code);
      i += 1 + len;
    }
    from = i + 1;
  }
  return BAIL;
}

/** Plain scalars in flow context end at `,` and `]`; these would start a nested or odd construct. */
function isFlowPlainStop(c: number): boolean {
  return c === 44 || c === 93 || c === 91 || c === 123 || c === 125;
}

/** A plain scalar may not start with an indicator character (`-` only when not followed by a space). */
function badPlainStart(line: string, i: number, inFlow: boolean): boolean {
  switch (line.charCodeAt(i)) {
    case 45: {
      const n = line.charCodeAt(i + 1);
      return Number.isNaN(n) || n === 32 || (inFlow && isFlowPlainStop(n));
    }
    case 63: case 58: case 44: case 91: case 93: case 123: case 125: case 35: case 38: case 42:
    case 33: case 124: case 62: case 39: case 34: case 37: case 64: case 96:
      return true;
    default:
      return false;
  }
}

function flowSequence(line: string, start: number): Item | typeof BAIL | typeof UNCLOSED {
  const out: unknown[] = [];
  let i = start + 1;
  for (;;) {
    while (line.charCodeAt(i) === 32) i++;
    const c = line.charCodeAt(i);
    // a sequence continued on the next line, or never closed
    if (Number.isNaN(c)) return UNCLOSED;
    // also after a trailing comma: `[a,]` is `[a]`
    if (c === 93) return { value: out, end: i + 1 };
    let item: Item | typeof BAIL;
    if (c === 39) item = singleQuoted(line, i);
    else if (c === 34) item = doubleQuoted(line, i);
    else {
      // this also rejects the empty entries of `[,]` and `[a, , b]`
      if (badPlainStart(line, i, true)) return BAIL;
      let j = i;
      let last = i;
      for (; j < line.length; j++) {
        const d = line.charCodeAt(j);
        if (d === 44 || d === 93) break;
        if (d === 91 || d === 123 || d === 125) return BAIL;
        // `a: b` inside a flow sequence is a single-pair mapping
        if (d === 58) {
          const n = line.charCodeAt(j + 1);
          if (Number.isNaN(n) || n === 32 || isFlowPlainStop(n)) return BAIL;
        }
        if (d === 35 && line.charCodeAt(j - 1) === 32) return BAIL;
        if (d !== 32) last = j;
      }
      item = { value: resolvePlain(line.slice(i, last + 1)), end: j };
    }
    if (item === BAIL) return BAIL;
    out.push(item.value);
    i = item.end;
    while (i < line.length && line.charCodeAt(i) === 32) i++;
    if (i === line.length) return UNCLOSED;
    const sep = line.charCodeAt(i);
    if (sep === 44) i++;
    else if (sep !== 93) return BAIL;
  }
}

/** True when the rest of the line from `i` is empty, spaces, or spaces then a comment. */
function restIsBlank(line: string, i: number): boolean {
  const from = i;
  while (i < line.length && line.charCodeAt(i) === 32) i++;
  return i === line.length || (i > from && line.charCodeAt(i) === 35);
}

/**
 * The value that starts at `i` (a non-space character) and runs to the end
 * of the line: a quoted scalar, a flow sequence or a single-line plain scalar.
 */
function inlineValue(line: string, i: number): Parsed {
  const c = line.charCodeAt(i);
  let item: Item | typeof BAIL | typeof UNCLOSED;
  if (c === 39) item = singleQuoted(line, i);
  else if (c === 34) item = doubleQuoted(line, i);
  else if (c === 91) item = flowSequence(line, i);
  else {
    if (badPlainStart(line, i, false)) return BAIL;
    let end = line.length;
    for (let j = i + 1; j < line.length; j++) {
      const d = line.charCodeAt(j);
      if (d === 35 && line.charCodeAt(j - 1) === 32) {
        end = j;
        break;
      }
      // `: ` makes the value a nested mapping (an error on one line)
      if (d === 58 && line.charCodeAt(j + 1) === 32) return BAIL;
    }
    while (line.charCodeAt(end - 1) === 32) end--;
    if (line.charCodeAt(end - 1) === 58) return BAIL;
    return resolvePlain(line.slice(i, end));
  }
  if (item === BAIL || item === UNCLOSED) return item;
  if (!restIsBlank(line, item.end)) return BAIL;
  return item.value;
}

function indentOf(line: string): number {
  let i = 0;
  while (i < line.length && line.charCodeAt(i) === 32) i++;
  return i;
}

/** Blank, or only a comment after optional indentation. */
function isBlankOrComment(line: string): boolean {
  const i = indentOf(line);
  return i === line.length || line.charCodeAt(i) === 35;
}

/** `-` followed by a space or the end of the line at `i`. */
function isSeqEntry(line: string, i: number): boolean {
  if (line.charCodeAt(i) !== 45) return false;
  const n = line.charCodeAt(i + 1);
  return Number.isNaN(n) || n === 32;
}

/** The key of a `key: …` line, or BAIL for anything but a plain string key at column 0. */
function keyOf(line: string, colon: number): string | typeof BAIL {
  let end = colon;
  while (line.charCodeAt(end - 1) === 32) end--;
  // the `yaml` package limits implicit keys to 1024 characters
  if (end === 0 || colon > 1000 || badPlainStart(line, 0, false)) return BAIL;
  // `-` keys are legal but near the `---` and `- ` forms; `...` ends a document
  if (line.charCodeAt(0) === 45 || line.startsWith('...')) return BAIL;
  for (let j = 1; j < end; j++) {
    const d = line.charCodeAt(j);
    if (d === 35 || d === 44 || d === 91 || d === 93 || d === 123 || d === 125) return BAIL;
  }
  const key = line.slice(0, end);
  if (key === '<<' || key === '__proto__' || resolvePlain(key) !== key) return BAIL;
  return key;
}

/**
 * The mapping `raw` denotes, when it is made only of the simple forms this
 * parser knows and is exactly what the `yaml` package would return without
 * errors; otherwise `undefined`.
 */
export function parseSimpleYaml(raw: string): Record<string, unknown> | undefined {
  const r = read(raw);
  return typeof r === 'object' ? r : undefined;
}

/** The `yaml` package's only error for a document whose last line leaves a flow sequence open. */
export const UNCLOSED_FLOW_SEQUENCE = 'Flow sequence in block collection must be sufficiently indented and end with a ]';

/** Frontmatter as its reader sees it: the mapping, or why there is none. */
export interface ParsedFrontmatter {
  data: Record<string, unknown> | null;
  error: string | null;
}

/**
 * What parseFrontmatterYaml (common.ts) gets from the `yaml` package for
 * `raw`, without the package, or `undefined` when not sure: the mappings
 * `parseSimpleYaml` reads, `{}` for a block of only blank lines and
 * comments, and the package's error for the typo of a flow sequence left
 * open on the last line (`tags: [a, b`). The last two are the frontmatter
 * the package was still called for in a generated vault: a few hundred
 * notes in ten thousand, enough to make the package's parser hot, so each
 * scan thread spent a quarter of its optimizing compiler's work on it.
 */
export function readSimpleFrontmatter(raw: string): ParsedFrontmatter | undefined {
  const r = read(raw);
  if (r === undefined) return undefined;
  if (r === EMPTY) return { data: {}, error: null };
  // The package refuses over-long or deeply bracketed text with another error, before parsing.
  if (r === UNCLOSED) return textOverBudget(raw) === null ? { data: null, error: UNCLOSED_FLOW_SEQUENCE } : undefined;
  return { data: r, error: null };
}

function read(raw: string): Record<string, unknown> | typeof EMPTY | typeof UNCLOSED | undefined {
  if (UNUSUAL_CHARS.test(raw)) return undefined;
  let src = raw;
  if (raw.includes('\r')) {
    if (LONE_CR.test(raw)) return undefined;
    src = raw.replace(/\r\n/g, '\n');
  }
  const lines = src.split('\n');
  const out: Record<string, unknown> = {};
  let empty = true;
  let n = 0;
  while (n < lines.length) {
    const line = lines[n]!;
    if (isBlankOrComment(line)) {
      n++;
      continue;
    }
    // a top-level mapping indented as a whole is legal YAML, but unusual
    if (line.charCodeAt(0) === 32) return undefined;
    const colon = line.indexOf(':');
    if (colon < 0) return undefined;
    if (colon + 1 < line.length && line.charCodeAt(colon + 1) !== 32) return undefined;
    const key = keyOf(line, colon);
    if (key === BAIL || Object.prototype.hasOwnProperty.call(out, key)) return undefined;
    n++;
    let v = colon + 1;
    while (v < line.length && line.charCodeAt(v) === 32) v++;
    if (v < line.length && line.charCodeAt(v) !== 35) {
      const value = inlineValue(line, v);
      // open to the end of the document: after it only blank lines (anything else the package may read into the sequence)
      if (value === UNCLOSED) return onlyBlankFrom(lines, n) ? UNCLOSED : undefined;
      if (value === BAIL) return undefined;
      out[key] = value;
      empty = false;
      continue;
    }
    // `key:` alone: null, or a block sequence on the following lines
    let k = n;
    while (k < lines.length && isBlankOrComment(lines[k]!)) k++;
    const next = lines[k];
    const indent = next === undefined ? 0 : indentOf(next);
    if (next === undefined || (indent === 0 && !isSeqEntry(next, 0))) {
      out[key] = null;
      empty = false;
      continue;
    }
    if (!isSeqEntry(next, indent)) return undefined;
    const items: unknown[] = [];
    for (n = k; n < lines.length; n++) {
      const item = lines[n]!;
      if (isBlankOrComment(item)) continue;
      const at = indentOf(item);
      if (at !== indent || !isSeqEntry(item, at)) {
        // the sequence ends at the next line in column 0 (a key, or else a line the caller rejects);
        // any other indentation is unusual
        if (at === 0) break;
        return undefined;
      }
      let s = at + 1;
      while (item.charCodeAt(s) === 32) s++;
      if (s === item.length || item.charCodeAt(s) === 35) {
        items.push(null);
        continue;
      }
      const value = inlineValue(item, s);
      if (value === BAIL || value === UNCLOSED) return undefined;
      items.push(value);
    }
    out[key] = items;
    empty = false;
  }
  // an empty or comment-only document is null to the `yaml` package, not a mapping
  return empty ? EMPTY : out;
}

function onlyBlankFrom(lines: string[], n: number): boolean {
  for (; n < lines.length; n++) if (indentOf(lines[n]!) !== lines[n]!.length) return false;
  return true;
}
