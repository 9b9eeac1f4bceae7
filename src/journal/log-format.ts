/**
 * The Markdown form of a Daily note's log (docs/vault-format.md, "Daily notes
 * and log entries"): parse a Daily note into log entries and unparsed lines,
 * and render the few lines an edit changes. Pure functions over text; every
 * edit is expressed as line replacements so all other bytes stay identical.
 *
 *   ## Log
 *   - 09:00 Coffee with Ana #people ^k2x9q4ta
 *   - 09:30–10:30 (Europe/Paris) **Standup** roadmap #work ^d20261122-1a2b3c4d
 *       - ![[Attachments/board.png]]
 *       - [[Attachments/minutes.pdf]]
 *       - Note: [[Notes/Standup 2026-11-22]]
 */
import { createHash } from 'node:crypto';
import { extractFacts } from '../markdown/extract.js';
import { isValidZone } from './dates.js';

// ---------------------------------------------------------------- lines

export interface Line {
  /** The line without its terminator. */
  text: string;
  /** `\n`, `\r\n`, `\r`, or `''` for a last line without one. */
  eol: string;
}

export function splitLines(s: string): Line[] {
  const out: Line[] = [];
  const re = /\r\n|\n|\r/g;
  let last = 0;
  for (let m = re.exec(s); m; m = re.exec(s)) {
    out.push({ text: s.slice(last, m.index), eol: m[0] });
    last = m.index + m[0].length;
  }
  if (last < s.length) out.push({ text: s.slice(last), eol: '' });
  return out;
}

export function joinLines(lines: readonly Line[]): string {
  let s = '';
  for (const l of lines) s += l.text + l.eol;
  return s;
}

/** The line ending most lines use (`\n` for a file without any). */
export function dominantEol(lines: readonly Line[]): string {
  const n: Record<string, number> = { '\n': 0, '\r\n': 0, '\r': 0 };
  for (const l of lines) if (l.eol) n[l.eol]!++;
  if (n['\r\n']! > n['\n']! && n['\r\n']! >= n['\r']!) return '\r\n';
  if (n['\r']! > n['\n']!) return '\r';
  return '\n';
}

const sha = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');

// ---------------------------------------------------------------- one entry line

/** One time of day as written, e.g. `9:00`, `09:00`, `9am`, `9:30 p.m.`, `09:00:00`. */
const T = String.raw`(?:\d{1,2}:\d{2}(?::\d{2})?(?:\s?[aApP]\.?[mM]\.?)?|\d{1,2}\s?[aApP]\.?[mM]\.?)`;
/** A time or a range (`-`, `–`, `—` or `to` between), optionally in bold, ending at a space or the line's end. */
const TIME_RE = new RegExp(String.raw`^(\*\*)?(${T})(?:\s*(?:-|–|—|to)\s*(${T}))?\1(?=\s|$)`);
const TZ_RE = /^\(([A-Za-z][A-Za-z0-9_+-]*(?:\/[A-Za-z0-9_+-]+)*)\)(?=\s|$)/;
const TITLE_RE = /^\*\*(?!\s)(.+?)(?<!\s)\*\*(?=\s|$)/;
const ANCHOR_RE = /(^|\s+)\^([A-Za-z0-9-]+)\s*$/;
const TAG_RE = /(^|[\s([{,;])#([\p{L}\p{M}\p{N}_\-/]+)/gu;
export const BLOCK_ID_RE = /^[A-Za-z0-9-]+$/;

/** `9:30pm` → `21:30`; null when the values are impossible. */
export function clockOf(raw: string): string | null {
  const m = /^(\d{1,2})(?::(\d{2})(?::(\d{2}))?)?\s?(?:([aApP])\.?[mM]\.?)?$/.exec(raw.trim());
  if (!m) return null;
  let h = Number(m[1]);
  const min = m[2] === undefined ? 0 : Number(m[2]);
  if (min > 59 || (m[3] !== undefined && Number(m[3]) > 59)) return null;
  if (m[4]) {
    if (h < 1 || h > 12) return null;
    const pm = m[4].toLowerCase() === 'p';
    if (h === 12) h = pm ? 12 : 0;
    else if (pm) h += 12;
  } else if (h > 23) return null;
  return `${String(h).padStart(2, '0')}:${String(min).padStart(2, '0')}`;
}

export interface EntryParts {
  /** The time as written (with `**` if bold), or null for an entry without a time. */
  timeRaw: string | null;
  start: string | null;
  end: string | null;
  /** `(Zone/Name)` as written, and the zone. */
  tzRaw: string | null;
  tz: string | null;
  /** `**Title**` as written, and the title. */
  titleRaw: string | null;
  title: string | null;
  /** Everything after the time, zone and title, trimmed; raw Markdown. */
  text: string;
  /** The `^id` ending the line, without `^`. */
  anchor: string | null;
}

/** Parses the content of a log list item (after the marker). `null` when it starts with an impossible time (`25:00`). */
export function parseEntryContent(content: string): EntryParts | null {
  let rest = content.trimEnd();
  let anchor: string | null = null;
  const am = ANCHOR_RE.exec(rest);
  if (am) {
    anchor = am[2]!;
    rest = rest.slice(0, am.index);
  }
  rest = rest.trim();
  let timeRaw: string | null = null;
  let start: string | null = null;
  let end: string | null = null;
  const tm = TIME_RE.exec(rest);
  if (tm) {
    start = clockOf(tm[2]!);
    end = tm[3] !== undefined ? clockOf(tm[3]) : null;
    if (start === null || (tm[3] !== undefined && end === null)) return null;
    timeRaw = tm[0];
    rest = rest.slice(tm[0].length).trimStart();
  } else if (/^(\*\*)?\d{1,2}:\d{2}/.test(rest)) {
    return null; // looks like a time but is not one (`25:00`, `9:75`)
  }
  let tzRaw: string | null = null;
  let tz: string | null = null;
  const zm = timeRaw !== null ? TZ_RE.exec(rest) : null;
  if (zm && isValidZone(zm[1]!)) {
    tzRaw = zm[0];
    tz = zm[1]!;
    rest = rest.slice(zm[0].length).trimStart();
  }
  let titleRaw: string | null = null;
  let title: string | null = null;
  const ttl = TITLE_RE.exec(rest);
  if (ttl) {
    titleRaw = ttl[0];
    title = ttl[1]!;
    rest = rest.slice(ttl[0].length).trimStart();
  }
  return { timeRaw, start, end, tzRaw, tz, titleRaw, title, text: rest, anchor };
}

/** Inline `#tags` of a piece of text, without `#`, first spelling of each (case-insensitive). */
export function tagsOf(text: string): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  for (const m of text.matchAll(TAG_RE)) {
    const t = m[2]!.replace(/\/+$/, '');
    if (!t || /^\d+$/.test(t)) continue;
    if (seen.has(t.toLowerCase())) continue;
    seen.add(t.toLowerCase());
    out.push(t);
  }
  return out;
}

export function formatTime(start: string | null, end: string | null): string | null {
  if (start === null) return null;
  return end ? `${start}–${end}` : start;
}

/** Text typed by a person must not end the line with something read as a block id. */
export function escapeText(text: string): string {
  return text.replace(/(^|\s)\^([A-Za-z0-9-]+\s*)$/, '$1\\^$2');
}

/** Renders an entry's content (after the marker) from its parts. */
export function renderEntryContent(p: { time: string | null; tz: string | null; title: string | null; text: string; anchor: string | null }): string {
  const pieces = [p.time, p.tz, p.title, p.text].filter((x): x is string => x !== null && x !== '');
  let s = pieces.join(' ');
  if (p.anchor) s += (s ? ' ' : '') + `^${p.anchor}`;
  return s;
}

// ---------------------------------------------------------------- child lines

export interface LinkLine {
  /** Line index in the file. */
  line: number;
  /** Link target as written (wikilink target, or decoded Markdown destination). */
  target: string;
  embed: boolean;
  kind: 'wikilink' | 'markdown';
}

const WIKI_RE = /^(!?)\[\[([^\]|#^]+)(?:#[^\]|]*)?(?:\|[^\]]*)?\]\]$/;
const MD_RE = /^(!?)\[[^\]]*\]\((<[^>]+>|[^)\s]+)(?:\s+"[^"]*")?\)$/;

export function parseLink(s: string): Omit<LinkLine, 'line'> | null {
  const w = WIKI_RE.exec(s.trim());
  if (w) return { target: w[2]!.trim(), embed: w[1] === '!', kind: 'wikilink' };
  const m = MD_RE.exec(s.trim());
  if (m) {
    let dest = m[2]!;
    if (dest.startsWith('<')) dest = dest.slice(1, -1);
    if (/^[a-z][a-z0-9+.-]*:/i.test(dest)) return null; // an external address, not a Home file
    try {
      dest = decodeURI(dest);
    } catch {
      /* keep as written */
    }
    return { target: dest, embed: m[1] === '!', kind: 'markdown' };
  }
  return null;
}

// ---------------------------------------------------------------- a Daily note

export interface ParsedEntry {
  /** Index of the entry's line. */
  line: number;
  /** One past the last line of its block (the entry line and its indented child lines). */
  end: number;
  /** Indentation, list marker and the spaces after it, as written. */
  prefix: string;
  /** The rest of the line. */
  content: string;
  parts: EntryParts;
  blockId: string;
  /** True when the id is a `^id` written in the line; false when derived from date and content. */
  anchored: boolean;
  attachments: LinkLine[];
  /** The `Note: [[...]]` child line linking the entry's longer body, if any. */
  note: LinkLine | null;
  /** Indentation the child lines use (from the first child line), or null. */
  childIndent: string | null;
  tags: string[];
}

export interface UnparsedLine {
  line: number;
  text: string;
  hash: string;
}

export interface ParsedDay {
  date: string;
  lines: Line[];
  eol: string;
  /** Frontmatter `timezone` when it is a valid zone, else null (a floating day). */
  dayZone: string | null;
  section: { heading: number; level: number; end: number } | null;
  entries: ParsedEntry[];
  unparsed: UnparsedLine[];
}

const LIST_ITEM_RE = /^( {0,3})([-*+]|\d{1,9}[.)])([ \t]+|$)/;
const TASK_RE = /^\[.\](\s|$)/;
const FENCE_RE = /^ {0,3}(`{3,}|~{3,})/;

function indentWidth(s: string): number {
  let w = 0;
  for (const ch of s) {
    if (ch === ' ') w++;
    else if (ch === '\t') w += 4 - (w % 4);
    else break;
  }
  return w;
}

export function derivedBlockId(date: string, content: string, occurrence: number): string {
  return `d${date.replace(/-/g, '')}-${sha(`${content.trim()}\n${occurrence}`).slice(0, 8)}`;
}

export function lineHash(text: string, occurrence: number): string {
  return sha(`${text.trim()}\n${occurrence}`).slice(0, 12);
}

export function parseDay(text: string, date: string, path = `Journal/${date}.md`): ParsedDay {
  const lines = splitLines(text);
  const facts = extractFacts(text, path);
  const tzv = facts.frontmatter?.timezone;
  const dayZone = typeof tzv === 'string' && isValidZone(tzv.trim()) ? tzv.trim() : null;
  const day: ParsedDay = { date, lines, eol: dominantEol(lines), dayZone, section: null, entries: [], unparsed: [] };
  const h = facts.headings.findIndex((x) => x.text.trim().toLowerCase() === 'log');
  if (h < 0) return day;
  const heading = facts.headings[h]!;
  const next = facts.headings.slice(h + 1).find((x) => x.level <= heading.level);
  const section = { heading: heading.line - 1, level: heading.level, end: next ? next.line - 1 : lines.length };
  day.section = section;
  const headingLines = new Set(facts.headings.map((x) => x.line - 1));

  type Owner = { kind: 'entry'; entry: ParsedEntry; offset: number } | { kind: 'other'; offset: number } | null;
  let owner: Owner = null;
  let fence: string | null = null;
  const entryOcc = new Map<string, number>();
  const lineOcc = new Map<string, number>();
  const unparsed = (i: number) => {
    const t = lines[i]!.text;
    const key = t.trim();
    const n = lineOcc.get(key) ?? 0;
    lineOcc.set(key, n + 1);
    day.unparsed.push({ line: i, text: t, hash: lineHash(t, n) });
  };

  for (let i = section.heading + 1; i < section.end; i++) {
    const t = lines[i]!.text;
    if (fence !== null) {
      if (t.trim().startsWith(fence)) fence = null;
      if (owner?.kind === 'entry') owner.entry.end = i + 1;
      continue;
    }
    if (t.trim() === '') continue;
    const fm = FENCE_RE.exec(t);
    if (headingLines.has(i)) {
      owner = null;
      continue;
    }
    const w = indentWidth(t);
    if (owner && w >= owner.offset) {
      if (fm) fence = fm[1]!;
      if (owner.kind === 'entry') addChild(owner.entry, i, t);
      continue;
    }
    if (fm) {
      fence = fm[1]!;
      owner = { kind: 'other', offset: 1 };
      continue;
    }
    const li = LIST_ITEM_RE.exec(t);
    if (!li) {
      owner = null;
      unparsed(i);
      continue;
    }
    const prefix = li[0];
    const content = t.slice(prefix.length);
    const offset = li[3] === '' ? li[1]!.length + li[2]!.length + 1 : indentWidth(prefix.replace(/[^\s]/g, ' '));
    if (TASK_RE.test(content)) {
      owner = { kind: 'other', offset }; // a task belongs to the tasks area, with its children
      continue;
    }
    const parts = parseEntryContent(content);
    if (!parts) {
      owner = null;
      unparsed(i);
      continue;
    }
    let blockId: string;
    if (parts.anchor) blockId = parts.anchor;
    else {
      const key = content.trim();
      const n = entryOcc.get(key) ?? 0;
      entryOcc.set(key, n + 1);
      blockId = derivedBlockId(date, content, n);
    }
    const entry: ParsedEntry = {
      line: i,
      end: i + 1,
      prefix,
      content,
      parts,
      blockId,
      anchored: parts.anchor !== null,
      attachments: [],
      note: null,
      childIndent: null,
      tags: tagsOf([parts.title ?? '', parts.text].join(' ')),
    };
    day.entries.push(entry);
    owner = { kind: 'entry', entry, offset: Math.max(1, Math.min(offset, 4)) };
  }
  return day;
}

function addChild(e: ParsedEntry, i: number, t: string): void {
  e.end = i + 1;
  const indent = /^[ \t]*/.exec(t)![0];
  e.childIndent ??= indent;
  let body = t.trim();
  const li = /^([-*+]|\d{1,9}[.)])[ \t]+/.exec(body);
  if (li) body = body.slice(li[0].length);
  const note = /^note:\s*(.+)$/i.exec(body);
  if (note) {
    const l = parseLink(note[1]!);
    if (l && !e.note) {
      e.note = { ...l, line: i };
      return;
    }
  }
  const l = parseLink(body);
  if (l) e.attachments.push({ ...l, line: i });
}

// ---------------------------------------------------------------- edits as line splices

export interface Splice {
  /** First line index replaced. */
  at: number;
  /** How many lines are removed there. */
  remove: number;
  /** New lines (without terminators); they get the file's line ending. */
  insert: string[];
}

/**
 * Applies splices (non-overlapping, any order) to a day's lines and returns
 * the new text. Lines outside the splices keep their bytes, terminators
 * included; a last line without a terminator gets one if lines follow it.
 */
export function applySplices(day: ParsedDay, splices: Splice[]): string {
  const lines = day.lines.map((l) => ({ ...l }));
  const sorted = [...splices].sort((a, b) => b.at - a.at);
  for (const s of sorted) {
    const removed = lines.slice(s.at, s.at + s.remove);
    const lastEol = removed.length ? removed[removed.length - 1]!.eol : null;
    const fresh: Line[] = s.insert.map((text) => ({ text, eol: day.eol }));
    if (fresh.length && s.at + s.remove >= lines.length && lastEol === '') fresh[fresh.length - 1]!.eol = '';
    if (fresh.length && s.at > 0 && s.remove === 0 && lines[s.at - 1]!.eol === '') lines[s.at - 1]!.eol = day.eol;
    lines.splice(s.at, s.remove, ...fresh);
  }
  return joinLines(lines);
}

/**
 * Where a new block goes when a position names none: after the block of the
 * last entry timed at or before it; else (the earliest) before the first
 * timed entry; untimed, or in a log without times, at the section's end.
 */
export function insertionIndex(day: ParsedDay, start: string | null): number {
  if (start !== null) {
    for (let i = day.entries.length - 1; i >= 0; i--) {
      const e = day.entries[i]!;
      if (e.parts.start !== null && e.parts.start <= start) return e.end;
    }
    const first = day.entries.find((e) => e.parts.start !== null);
    if (first) return first.line;
  }
  return sectionEnd(day);
}

/** The index after the section's last non-blank line (the heading line when the section is empty). */
export function sectionEnd(day: ParsedDay): number {
  const s = day.section!;
  let i = s.end - 1;
  while (i > s.heading && day.lines[i]!.text.trim() === '') i--;
  return i + 1;
}
