/**
 * Pure helpers shared by the fast extractor (extract.ts) and the reference
 * (test/markdown/reference-extractor.ts). They hold the rules that do not depend on Markdown
 * structure: frontmatter YAML, frontmatter-derived facts, wikilink and link
 * destination syntax, due dates, the word rule and line/column arithmetic.
 * Everything structural (what is code, a heading, a list item, a text run)
 * is decided independently by each implementation.
 */
import type { NoteFacts, TagOccurrence, Heading, BlockAnchor, Link, Task, TextRange } from './facts.js';
import { readSimpleFrontmatter, type ParsedFrontmatter } from './simple-yaml.js';
import { parseYamlDocument } from './yaml-limits.js';

// ---------------------------------------------------------------- frontmatter

export type { ParsedFrontmatter };

/** Parse frontmatter YAML; never throws. Empty → `{}`; non-mapping or YAML errors → null + error. */
export function parseFrontmatterYaml(raw: string): ParsedFrontmatter {
  // Most frontmatter is simple enough for the fast path, which gives the `yaml` package's answer or nothing.
  return readSimpleFrontmatter(raw) ?? parseFrontmatterWithPackage(raw);
}

/** parseFrontmatterYaml's answer from the `yaml` package, whatever the text. */
export function parseFrontmatterWithPackage(raw: string): ParsedFrontmatter {
  let doc;
  try {
    doc = parseYamlDocument(raw);
  } catch (e) {
    return { data: null, error: e instanceof Error ? e.message : String(e) };
  }
  if (doc.errors.length > 0) {
    return { data: null, error: doc.errors[0]!.message };
  }
  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: 100 });
  } catch (e) {
    return { data: null, error: e instanceof Error ? e.message : String(e) };
  }
  if (value === null || value === undefined) return { data: {}, error: null };
  if (typeof value !== 'object' || Array.isArray(value) || value instanceof Map || value instanceof Set) {
    return { data: null, error: 'frontmatter is not a YAML mapping' };
  }
  return { data: value as Record<string, unknown>, error: null };
}

function scalarString(v: unknown): string | null {
  if (typeof v === 'string') return v;
  if (typeof v === 'number' && Number.isFinite(v)) return String(v);
  if (typeof v === 'bigint') return String(v);
  return null;
}

function listOrCommaString(v: unknown): string[] {
  const out: string[] = [];
  if (Array.isArray(v)) {
    for (const item of v) {
      const s = scalarString(item);
      if (s !== null && s.trim() !== '') out.push(s.trim());
    }
  } else {
    const s = scalarString(v);
    if (s !== null) {
      for (const part of s.split(',')) if (part.trim() !== '') out.push(part.trim());
    }
  }
  return out;
}

/** Title, id, aliases and tags read from a parsed frontmatter mapping. */
export function frontmatterFacts(fm: Record<string, unknown> | null): {
  title: string | null;
  id: string | null;
  aliases: string[];
  tags: string[];
} {
  if (!fm) return { title: null, id: null, aliases: [], tags: [] };
  const t = scalarString(fm['title']);
  const title = t !== null && t.trim() !== '' ? t.trim() : null;
  const idv = fm['id'];
  const id = typeof idv === 'string' && idv.trim() !== '' ? idv.trim() : null;
  const aliases: string[] = [];
  for (const a of [...listOrCommaString(fm['aliases']), ...listOrCommaString(fm['alias'])]) {
    if (!aliases.includes(a)) aliases.push(a);
  }
  const raw: string[] = [];
  for (const key of ['tags', 'tag']) {
    const v = fm[key];
    if (Array.isArray(v)) {
      // each list element is one tag
      for (const item of v) {
        const s = scalarString(item);
        if (s !== null) raw.push(s.trim());
      }
    } else {
      const s = scalarString(v);
      if (s !== null) raw.push(...s.split(/[\s,]+/u));
    }
  }
  const tags: string[] = [];
  for (let r of raw) {
    r = r.replace(/^#+/u, '');
    if (isValidTag(r)) tags.push(r);
  }
  return { title, id, aliases, tags: dedupeTags(tags) };
}

// ----------------------------------------------------------------------- tags

/** One tag character (ASCII letters/digits/_/-// are also matched by the fast path). */
export const TAG_CHAR_RE = /[\p{L}\p{M}\p{N}_\-/\p{Extended_Pictographic}\p{Emoji_Modifier}\u200D\uFE0F]/u;
const TAG_BODY_RE = /^[\p{L}\p{M}\p{N}_\-/\p{Extended_Pictographic}\p{Emoji_Modifier}\u200D\uFE0F]+$/u;

/** A tag body (without `#`) is valid when made of tag characters and not only ASCII digits. */
export function isValidTag(body: string): boolean {
  return TAG_BODY_RE.test(body) && !/^[0-9]+$/.test(body);
}

/** `s.toLowerCase()`, without the call when `s` has no upper-case ASCII letter and no other character. */
function lowerCase(s: string): string {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if ((c >= 65 && c <= 90) || c >= 128) return s.toLowerCase();
  }
  return s;
}

/** Deduplicate case-insensitively, keeping the first spelling. */
export function dedupeTags(tags: Iterable<string>): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const t of tags) {
    const k = lowerCase(t);
    if (!seen.has(k)) {
      seen.add(k);
      out.push(t);
    }
  }
  return out;
}

// ------------------------------------------------------------------ wikilinks

export interface LinkParts {
  target: string;
  heading: string | null;
  blockId: string | null;
}

/**
 * Parse the inside of `[[...]]`. Returns null when it is not a link (empty
 * target and no subpath). `\|` (the table escape) counts as `|`.
 */
export function parseWikilinkInner(inner: string): (LinkParts & { alias: string | null }) | null {
  const pipe = inner.indexOf('|');
  let left = pipe < 0 ? inner : inner.slice(0, pipe);
  let alias: string | null = pipe < 0 ? null : inner.slice(pipe + 1).trim();
  if (alias === '') alias = null;
  if (pipe >= 0 && left.charCodeAt(left.length - 1) === 92) left = left.slice(0, -1);
  const hash = left.indexOf('#');
  if (hash < 0) {
    // the common case: a plain target
    const target = left.trim();
    return target === '' ? null : { target, heading: null, blockId: null, alias };
  }
  const parts = splitSubpath(left, false);
  if (parts === null) return null;
  return { target: parts.target, heading: parts.heading, blockId: parts.blockId, alias };
}

function splitSubpath(s: string, decode: boolean): LinkParts | null {
  const hash = s.indexOf('#');
  const rawTarget = hash < 0 ? s : s.slice(0, hash);
  const rawSub = hash < 0 ? null : s.slice(hash + 1);
  const target = (decode ? percentDecode(rawTarget) : rawTarget).trim();
  let sub = rawSub === null ? null : (decode ? percentDecode(rawSub) : rawSub).trim();
  if (sub === '') sub = null;
  if (target === '' && sub === null) return null;
  let heading: string | null = null;
  let blockId: string | null = null;
  if (sub !== null) {
    if (sub.startsWith('^')) {
      const b = sub.slice(1).trim();
      if (b === '') {
        if (target === '') return null;
      } else blockId = b;
    } else heading = sub;
  }
  return { target, heading, blockId };
}

function percentDecode(s: string): string {
  let i = s.indexOf('%');
  if (i < 0) return s;
  // Escapes of ASCII characters (`%20`, the common case) decoded here:
  // `decodeURIComponent` is a call into the runtime.
  let out = '';
  let from = 0;
  while (i >= 0) {
    const v = hexDigit(s.charCodeAt(i + 1)) * 16 + hexDigit(s.charCodeAt(i + 2));
    if (!(v >= 0 && v < 0x80)) return decodeOrKeep(s);
    out += s.slice(from, i) + String.fromCharCode(v);
    from = i + 3;
    i = s.indexOf('%', from);
  }
  return out + s.slice(from);
}

/** The value of a hexadecimal digit's code unit; NaN for anything else (and past the end). */
function hexDigit(c: number): number {
  if (c >= 48 && c <= 57) return c - 48;
  if (c >= 65 && c <= 70) return c - 55;
  if (c >= 97 && c <= 102) return c - 87;
  return NaN;
}

function decodeOrKeep(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/**
 * Interpret a Markdown link destination (escapes and character references
 * already decoded, angle brackets removed). Null when it is not a link to a
 * Home file: empty, has a URI scheme (`http:`, `mailto:`, `obsidian:`, …) or
 * starts with `//`.
 */
export function parseMarkdownDestination(url: string): LinkParts | null {
  if (url === '' || url.startsWith('//') || /^[A-Za-z][A-Za-z0-9+.-]*:/.test(url)) return null;
  return splitSubpath(url, true);
}

// ------------------------------------------------------------------ due dates

const DUE_RE = /📅\uFE0F?[ \t]*(\d{4}-\d{2}-\d{2})(?![0-9])|\[due::[ \t]*(\d{4}-\d{2}-\d{2})[ \t]*\]|(?<![^\s])due:(\d{4}-\d{2}-\d{2})(?![0-9])/gu;

function validDate(s: string): boolean {
  const y = Number(s.slice(0, 4));
  const m = Number(s.slice(5, 7));
  const d = Number(s.slice(8, 10));
  if (m < 1 || m > 12 || d < 1) return false;
  const dim = new Date(Date.UTC(y, m, 0)).getUTCDate();
  return d <= dim;
}

/** The first valid due date in a task's text, by position, or null. */
export function findDue(text: string): string | null {
  if (!text.includes('📅') && !text.includes('due:')) return null;
  DUE_RE.lastIndex = 0;
  let m: RegExpExecArray | null;
  while ((m = DUE_RE.exec(text)) !== null) {
    const d = m[1] ?? m[2] ?? m[3];
    if (d !== undefined && validDate(d)) return d;
  }
  return null;
}

// ----------------------------------------------------------------- task text

/** A block id at the very end of a task's first line: returns [textWithoutId, id] or null. */
export const TRAILING_ID_RE = /(?:^|[ \t])\^([A-Za-z0-9-]+)[ \t]*$/;

// ---------------------------------------------------------------------- words

const UNICODE_WORD_RE = /[\p{L}\p{N}]/u;
const UNICODE_SPACE_RE = /\s/u;

const SPACE = 1;
const WORD = 2;
const OTHER = 3;
/**
 * Class of each UTF-16 code unit (SPACE, WORD: a letter or number, OTHER),
 * taken from the regexes the first time it is met: a regex test for every
 * non-ASCII character cost more than the rest of word counting. ASCII is
 * filled now, so the hot loops below never leave the table for it.
 */
const CLASS = new Uint8Array(0x10000);

function classOf(c: number): number {
  const k = CLASS[c]!;
  if (k !== 0) return k;
  const s = String.fromCharCode(c);
  return (CLASS[c] = UNICODE_SPACE_RE.test(s) ? SPACE : UNICODE_WORD_RE.test(s) ? WORD : OTHER);
}
for (let c = 0; c < 128; c++) classOf(c);

/** True for the characters that separate words (JavaScript `\s`). */
export function isSpaceCode(c: number): boolean {
  return classOf(c) === SPACE;
}

/**
 * Number of words in `s`: maximal runs of non-whitespace characters that
 * contain at least one Unicode letter or number (`\p{L}`, `\p{N}`).
 *
 * One loop: a run is counted at its first letter or number, then skipped to
 * its end (printable ASCII needs no table there). Spaces and the other
 * characters before a letter cost one table lookup each. (Two nested loops,
 * one per run, took a fifth longer on the bench vault's two-byte texts.)
 */
export function countWords(s: string, from = 0, to = s.length): number {
  let n = 0;
  for (let i = from; i < to; i++) {
    let c = s.charCodeAt(i);
    const k = classOf(c);
    // A surrogate pair is one code point: its class is the pair's, not either half's.
    if (k === WORD || (k === OTHER && c >= 0xd800 && c <= 0xdbff && i + 1 < to && UNICODE_WORD_RE.test(String.fromCodePoint(s.codePointAt(i)!)))) {
      n++;
      while (++i < to) {
        c = s.charCodeAt(i);
        if (c > 32 && c < 127) continue;
        if (classOf(c) === SPACE) break;
      }
    }
  }
  return n;
}

// ---------------------------------------------------------- lines & columns

/** Offsets at which each line starts (lines end at \n, \r\n or a lone \r). */
export function lineStarts(text: string): number[] {
  const starts = [0];
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 10) starts.push(i + 1);
    else if (c === 13) {
      if (text.charCodeAt(i + 1) === 10) i++;
      starts.push(i + 1);
    }
  }
  return starts;
}

/** 1-based line number of an offset, given `lineStarts`. */
export function lineOf(starts: number[], offset: number): number {
  let lo = 0;
  let hi = starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (starts[mid]! <= offset) lo = mid;
    else hi = mid - 1;
  }
  return lo + 1;
}

/** The file name of a Home-relative path without its extension. */
export function fileTitle(path: string): string {
  const slash = Math.max(path.lastIndexOf('/'), path.lastIndexOf('\\'));
  const name = path.slice(slash + 1);
  const dot = name.lastIndexOf('.');
  return dot > 0 ? name.slice(0, dot) : name;
}

// ------------------------------------------------------------------ assembly

/** The parts each implementation finds; `assembleFacts` turns them into NoteFacts. */
export interface RawFacts {
  frontmatterRange: TextRange | null;
  /** The YAML between the fences (null when there is no block). */
  frontmatterRaw: string | null;
  tagOccurrences: TagOccurrence[];
  headings: Heading[];
  blocks: BlockAnchor[];
  links: Link[];
  tasks: Task[];
  wordCount: number;
}

/** Sort by `key` unless already in order (the common case). */
function sorted<T>(xs: T[], cmp: (a: T, b: T) => number): T[] {
  for (let i = 1; i < xs.length; i++) if (cmp(xs[i - 1]!, xs[i]!) > 0) return xs.slice().sort(cmp);
  return xs;
}

/** Frontmatter tags, then inline ones (a loop: spreading the two arrays deoptimized on their element kinds). */
function allTags(frontmatterTags: readonly string[], occurrences: readonly TagOccurrence[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < frontmatterTags.length; i++) out.push(frontmatterTags[i]!);
  for (let i = 0; i < occurrences.length; i++) out.push(occurrences[i]!.tag);
  return out;
}

export function assembleFacts(path: string, raw: RawFacts): NoteFacts {
  let frontmatter: Record<string, unknown> | null = null;
  let frontmatterError: string | null = null;
  if (raw.frontmatterRaw !== null) {
    const p = parseFrontmatterYaml(raw.frontmatterRaw);
    frontmatter = p.data;
    frontmatterError = p.error;
  }
  const fm = frontmatterFacts(frontmatter);
  const tagOccurrences = sorted(raw.tagOccurrences, (a, b) => a.offset - b.offset);
  let title: string;
  let titleSource: NoteFacts['titleSource'];
  const h1 = raw.headings.find((h) => h.level === 1 && h.text !== '');
  if (fm.title !== null) {
    title = fm.title;
    titleSource = 'frontmatter';
  } else if (h1) {
    title = h1.text;
    titleSource = 'heading';
  } else {
    title = fileTitle(path);
    titleSource = 'filename';
  }
  return {
    path,
    frontmatter,
    frontmatterError,
    frontmatterRange: raw.frontmatterRange,
    title,
    titleSource,
    id: fm.id,
    aliases: fm.aliases,
    frontmatterTags: fm.tags,
    tagOccurrences,
    tags: dedupeTags(allTags(fm.tags, tagOccurrences)),
    headings: sorted(raw.headings, (a, b) => a.line - b.line),
    blocks: sorted(raw.blocks, (a, b) => a.line - b.line || a.column - b.column),
    links: sorted(raw.links, (a, b) => a.start - b.start),
    tasks: sorted(raw.tasks, (a, b) => a.line - b.line),
    wordCount: raw.wordCount,
  };
}
