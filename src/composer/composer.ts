/**
 * The composer's one-line grammar (spec action `notes_composer_parse`).
 *
 * `parseComposer({ mode, now, text })` reads line 1 of the composer and
 * returns structured fields plus the UTF-16 spans of every recognised part so
 * a client can highlight them. Dates and times come from chrono-node's casual
 * English parser; this module only masks what chrono must not see (tags,
 * priority tokens, `for 45m` durations), reads chrono's components, splits a
 * merged "tomorrow at 9" into a date span and a time span, and adds the few
 * things chrono leaves out (bare hour ranges such as `9-10`, ranges that cross
 * noon such as `11-1`). The grammar and every decision are in docs/composer.md.
 *
 * Pure: plain values in, plain values out, no clock (the client sends `now`).
 */
import { createRequire } from 'node:module';
import type { ParsedComponents, ParsedResult } from 'chrono-node';
import { AppError } from '../core/errors.js';

export const COMPOSER_MODES = ['event', 'task', 'note'] as const;
export type ComposerMode = (typeof COMPOSER_MODES)[number];

export type ComposerSpanKind = 'date' | 'time' | 'duration' | 'tag' | 'priority' | 'due';

/** A recognised part of `text`: `text.slice(start, end) === span.text` (UTF-16 offsets). */
export interface ComposerSpan {
  kind: ComposerSpanKind;
  start: number;
  end: number;
  text: string;
}

/** 1 = high (`!1`, `p1`, `!!!`, `!high`), 2 = medium, 3 = low. */
export type ComposerPriority = 1 | 2 | 3;

export interface ComposerInput {
  mode: ComposerMode;
  /** Client local wall time `YYYY-MM-DDTHH:MM[:SS]`; a trailing zone is accepted and ignored. */
  now: string;
  /** Line 1 of the composer; no line breaks. */
  text: string;
}

export interface ComposerResult {
  /** The text without the recognised parts (event, task) or without its tags only (note), whitespace tidied. */
  title: string;
  /** `YYYY-MM-DD` when the text names a day; for tasks the scheduled day (see `due`). */
  date: string | null;
  /** `HH:MM` (24-hour) when the text names a time of day. */
  start: string | null;
  /** `HH:MM`; from a range (`9-10:30`) or start + duration. May be earlier than `start` past midnight. */
  end: string | null;
  /** From `for 45m`, or the length of a range; null when neither is given. */
  duration_minutes: number | null;
  /** Tag names without `#`, first spelling of each (case-insensitive) in text order. */
  tags: string[];
  /** Task mode only: the day after `due` / `by` / `until` / `before`. Null in other modes. */
  due: string | null;
  /** Task mode only. Null in other modes. */
  priority: ComposerPriority | null;
  /** Every recognised part, ordered by `start`, never overlapping. */
  spans: ComposerSpan[];
}

/** Longest `text` accepted, in UTF-16 code units. */
export const COMPOSER_MAX_TEXT = 2000;

/** Bad composer input; maps to HTTP 400 `bad_request` with `details.field`. */
export class ComposerInputError extends AppError {
  readonly field: 'mode' | 'now' | 'text';
  constructor(field: 'mode' | 'now' | 'text', message: string) {
    super('bad_request', message, { details: { field, reason: 'invalid_composer_input' } });
    this.name = 'ComposerInputError';
    this.field = field;
  }
}

// ---------------------------------------------------------------------------
// Input validation

interface WallTime {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
}

const NOW_RE = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}(?::?\d{2})?)?$/;

function daysInMonth(year: number, month: number): number {
  if (month === 2) return isLeap(year) ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

function isLeap(year: number): boolean {
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
}

function parseNow(now: unknown): WallTime {
  if (typeof now !== 'string') {
    throw new ComposerInputError('now', 'now must be a string with the local wall time YYYY-MM-DDTHH:MM[:SS]');
  }
  const m = NOW_RE.exec(now);
  if (!m) {
    throw new ComposerInputError(
      'now',
      `now must be the local wall time YYYY-MM-DDTHH:MM[:SS] (e.g. 2026-03-12T09:30), got ${JSON.stringify(now.slice(0, 40))}`,
    );
  }
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map((v) => (v === undefined ? 0 : Number(v))) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  if (year < 1) throw new ComposerInputError('now', `now has year ${m[1]}; years start at 0001`);
  if (month < 1 || month > 12) throw new ComposerInputError('now', `now has month ${m[2]}; months run 01 to 12`);
  const dim = daysInMonth(year, month);
  if (day < 1 || day > dim) {
    throw new ComposerInputError('now', `now has day ${m[3]}, but ${m[1]}-${m[2]} has days 01 to ${dim}`);
  }
  if (hour > 23) throw new ComposerInputError('now', `now has hour ${m[4]}; hours run 00 to 23`);
  if (minute > 59) throw new ComposerInputError('now', `now has minute ${m[5]}; minutes run 00 to 59`);
  if (second > 59) throw new ComposerInputError('now', `now has second ${m[6]}; seconds run 00 to 59`);
  return { year, month, day, hour, minute };
}

function validate(input: unknown): { mode: ComposerMode; now: WallTime; text: string } {
  if (typeof input !== 'object' || input === null) {
    throw new ComposerInputError('text', 'composer input must be an object { mode, now, text }');
  }
  const { mode, now, text } = input as Record<string, unknown>;
  if (typeof mode !== 'string' || !(COMPOSER_MODES as readonly string[]).includes(mode)) {
    throw new ComposerInputError('mode', `mode must be one of ${COMPOSER_MODES.join(', ')}, got ${JSON.stringify(mode)}`);
  }
  const wall = parseNow(now);
  if (typeof text !== 'string') throw new ComposerInputError('text', 'text must be a string');
  if (/[\r\n\u2028\u2029]/.test(text)) {
    throw new ComposerInputError('text', 'text must be one line (line 1 of the composer); it contains a line break');
  }
  if (text.length > COMPOSER_MAX_TEXT) {
    throw new ComposerInputError('text', `text is ${text.length} characters long; the most is ${COMPOSER_MAX_TEXT}`);
  }
  return { mode: mode as ComposerMode, now: wall, text };
}

// ---------------------------------------------------------------------------
// Small date helpers (UTC arithmetic on wall values; no process zone involved)

const pad2 = (n: number) => String(n).padStart(2, '0');
const fmtDate = (y: number, m: number, d: number) => `${String(y).padStart(4, '0')}-${pad2(m)}-${pad2(d)}`;
const fmtTime = (minutesOfDay: number) => {
  const m = ((minutesOfDay % 1440) + 1440) % 1440;
  return `${pad2(Math.floor(m / 60))}:${pad2(m % 60)}`;
};
const toMinutes = (hhmm: string) => Number(hhmm.slice(0, 2)) * 60 + Number(hhmm.slice(3, 5));

/** `HH:MM` plus `minutes`, on a 24-hour clock (past midnight wraps): the end of an entry timed "now" with a `for …` duration. */
export function endAfter(start: string, minutes: number): string {
  return fmtTime(toMinutes(start) + minutes);
}

function utcMs(y: number, mo: number, d: number, h = 0, mi = 0): number {
  const dt = new Date(Date.UTC(2000, 0, 1, h, mi));
  dt.setUTCFullYear(y, mo - 1, d);
  return dt.getTime();
}

// ---------------------------------------------------------------------------
// chrono instances

type ChronoParser = ReturnType<(typeof import('chrono-node'))['casual']['clone']>;
const SPLIT_REFINERS_REMOVED = new Set(['ENMergeDateTimeRefiner', 'MergeWeekdayComponentRefiner']);
let parsers: { main: ChronoParser; split: ChronoParser } | null = null;

/**
 * `main`: chrono's casual English parser, as shipped. `split`: the same
 * parser without the refiners that merge a date and a time into one
 * result; used only to find where "tomorrow" ends and "at 9" begins inside a
 * merged result, so the two can be highlighted as separate spans.
 *
 * chrono-node is loaded at the first parse, through its CommonJS build so
 * that parsing stays synchronous: its 266 ES modules were a large share of
 * every server's start (docs/performance.md, "Start-up").
 */
function chrono(): { main: ChronoParser; split: ChronoParser } {
  if (parsers !== null) return parsers;
  const { casual } = createRequire(import.meta.url)('chrono-node') as typeof import('chrono-node');
  const split = casual.clone();
  split.refiners = split.refiners.filter((r) => !SPLIT_REFINERS_REMOVED.has(r.constructor.name));
  parsers = { main: casual.clone(), split };
  return parsers;
}

/** Reference for reading relative offsets ("in 2 hours"): 2001-01-15, far from any DST change. */
const OFFSET_REF_MS = Date.UTC(2001, 0, 15);

/** Stand-in for masked characters: not a word character, not whitespace, so chrono neither reads nor merges across it. */
const MASK = '\u00a6';

// ---------------------------------------------------------------------------
// Token grammars that are not dates (tags, priority, durations)

/** `#tag`: after start, whitespace or opening punctuation; letters, marks, digits, `_`, `-`, `/`. */
const TAG_RE = /(?<=^|[\s([{,;])#([\p{L}\p{M}\p{N}_\-/]+)/gu;
const DIGITS_ONLY = /^\p{N}+$/u;

const PRIORITY_RE = /(?<=^|\s)(!!!|!!|![1-3]|[pP][1-3]|!(?:high|medium|med|low))(?=$|[\s,.;:)])/giu;
const PRIORITY_MAP: Record<string, ComposerPriority> = {
  '!!!': 1,
  '!1': 1,
  p1: 1,
  '!high': 1,
  '!!': 2,
  '!2': 2,
  p2: 2,
  '!medium': 2,
  '!med': 2,
  '!3': 3,
  p3: 3,
  '!low': 3,
};

const H_UNIT = '(?:h|hrs?|hours?)';
const M_UNIT = '(?:m|mins?|minutes?)';
const DURATION_RE = new RegExp(
  '(?<![\\p{L}\\p{N}])for\\s+(?:' +
    // 1) hours, optionally followed by minutes: 2h, 1.5 hours, 1h30, 1h 30m, 1 hour and 15 minutes
    `(\\d{1,3}(?:[.,]\\d{1,2})?)\\s*${H_UNIT}(?:(\\d{1,2})(?:${M_UNIT})?|\\s*(?:and\\s+)?(\\d{1,2})\\s*${M_UNIT})?` +
    // 2) minutes: 45m, 90 minutes
    `|(\\d{1,4})\\s*${M_UNIT}` +
    // 3) words: an hour, one hour, half an hour, an hour and a half
    '|(an?\\s+hour\\s+and\\s+a\\s+half|one\\s+and\\s+a\\s+half\\s+hours?|half\\s+an\\s+hour|an?\\s+hour|one\\s+hour)' +
    ')(?![\\p{L}\\p{N}])',
  'giu',
);
const WORD_DURATIONS: Record<string, number> = {
  'a hour and a half': 90,
  'an hour and a half': 90,
  'one and a half hour': 90,
  'one and a half hours': 90,
  'half an hour': 30,
  'a hour': 60,
  'an hour': 60,
  'one hour': 60,
};
/** Durations longer than a day are not recognised (an event's `end` is a time of day). */
const MAX_DURATION_MINUTES = 1440;

function durationMinutes(m: RegExpExecArray): number | null {
  const [, hours, hm1, hm2, mins, words] = m;
  let total: number | null = null;
  if (hours !== undefined) {
    total = Math.round(Number(hours.replace(',', '.')) * 60) + Number(hm1 ?? hm2 ?? 0);
    if ((hm1 ?? hm2) !== undefined && Number(hm1 ?? hm2) > 59) return null;
  } else if (mins !== undefined) {
    total = Number(mins);
  } else if (words !== undefined) {
    total = WORD_DURATIONS[words.toLowerCase().replace(/\s+/g, ' ')] ?? null;
  }
  if (total === null || total <= 0 || total > MAX_DURATION_MINUTES) return null;
  return total;
}

/** Task mode: the word before a date that makes it the due date. */
const DUE_KEYWORD_RE = /(?:^|(?<=[\s(]))(due(?:\s+(?:on|by))?\s*:?|by|until|before)\s*$/i;
/** Connector words chrono sometimes leaves outside a time ("lunch at noon"). */
const TIME_CONNECTOR_RE = /(?:^|(?<=\s))(at|@)\s*$/i;
/** Lower-case weekday abbreviations that are more often English words. */
const AMBIGUOUS_WEEKDAYS = new Set(['sun', 'sat', 'wed']);
/** A bare hour range chrono does not read: 9-10, 11-1, 22 – 2. */
const BARE_RANGE_RE = /(?<![\p{L}\p{N}:/.\-–])(\d{1,2})\s*[-–]\s*(\d{1,2})(?![\p{L}\p{N}:/.\-–])/gu;
const BARE_RANGE_LEAD_RE = /(?:^|(?<=\s))(at|from)\s+$/i;

// ---------------------------------------------------------------------------

type Range = [number, number];

class Claims {
  private ranges: Range[] = [];
  free(s: number, e: number): boolean {
    return this.ranges.every(([a, b]) => e <= a || s >= b);
  }
  add(s: number, e: number): void {
    this.ranges.push([s, e]);
  }
}

interface ReadResult {
  index: number;
  end: number;
  date: string | null;
  start: string | null;
  end_time: string | null;
  hasTime: boolean;
  /** "in 2 hours": one expression that yields both a day and a time; highlighted as a time. */
  relativeTime: boolean;
}

/** Reads a chrono result into wall values; `now` resolves relative times ("in 2 hours"). */
function readResult(r: ParsedResult, now: WallTime, refMs: number): ReadResult {
  const c = r.start;
  const out: ReadResult = {
    index: r.index,
    end: r.index + r.text.length,
    date: null,
    start: null,
    end_time: null,
    hasTime: false,
    relativeTime: false,
  };
  const get = (k: Parameters<ParsedComponents['get']>[0]) => c.get(k) ?? 0;
  if (r.tags().has('result/relativeDateAndTime') && c.isCertain('hour')) {
    // "in 2 hours": chrono adds the offset in the process's zone, so a DST change near the
    // reference would skew it. Read the offset against a fixed mid-January day (no DST
    // change anywhere) and add it to the real `now` with zone-free arithmetic.
    const again = chrono().main.parse(r.text, { instant: new Date(OFFSET_REF_MS), timezone: 0 })[0];
    const a = again && again.index === 0 && again.text === r.text ? again.start : c;
    const base = again && again.index === 0 && again.text === r.text ? OFFSET_REF_MS : refMs;
    const ag = (k: Parameters<ParsedComponents['get']>[0]) => a.get(k) ?? 0;
    const offset = utcMs(ag('year'), ag('month'), ag('day'), ag('hour'), ag('minute')) - base;
    const actual = new Date(utcMs(now.year, now.month, now.day, now.hour, now.minute) + offset);
    out.date = fmtDate(actual.getUTCFullYear(), actual.getUTCMonth() + 1, actual.getUTCDate());
    out.start = fmtTime(actual.getUTCHours() * 60 + actual.getUTCMinutes());
    out.hasTime = true;
    out.relativeTime = true;
    return out;
  }
  if (c.isCertain('day') || c.isCertain('weekday')) out.date = fmtDate(get('year'), get('month'), get('day'));
  if (c.isCertain('hour')) {
    out.hasTime = true;
    const startMin = get('hour') * 60 + get('minute');
    out.start = fmtTime(startMin);
    const e = r.end;
    if (e && e.isCertain('hour')) {
      let endMin = (e.get('hour') ?? 0) * 60 + (e.get('minute') ?? 0);
      endMin = crossNoon(startMin, endMin, e.isCertain('meridiem'));
      out.end_time = fmtTime(endMin);
    }
  }
  return out;
}

/** `11-1` means 11:00-13:00: an end before the start without am/pm moves to the afternoon when that fits. */
function crossNoon(startMin: number, endMin: number, endMeridiemCertain: boolean): number {
  if (!endMeridiemCertain && endMin <= startMin && endMin < 720 && endMin + 720 > startMin) return endMin + 720;
  return endMin;
}

export function parseComposer(input: ComposerInput): ComposerResult {
  const { mode, now, text } = validate(input);
  const claims = new Claims();
  const spans: ComposerSpan[] = [];
  const removeFromTitle: Range[] = [];
  const tagRanges: Range[] = [];
  const addSpan = (kind: ComposerSpanKind, start: number, end: number, removable = true) => {
    spans.push({ kind, start, end, text: text.slice(start, end) });
    claims.add(start, end);
    if (removable) removeFromTitle.push([start, end]);
  };

  // 1. Tags (every mode).
  const tags: string[] = [];
  const seenTags = new Set<string>();
  for (const m of text.matchAll(TAG_RE)) {
    const name = m[1]!;
    if (DIGITS_ONLY.test(name)) continue;
    const s = m.index!;
    addSpan('tag', s, s + 1 + name.length);
    tagRanges.push([s, s + 1 + name.length]);
    const key = name.toLowerCase();
    if (!seenTags.has(key)) {
      seenTags.add(key);
      tags.push(name);
    }
  }

  // 2. Priority (task mode): the first token counts.
  let priority: ComposerPriority | null = null;
  if (mode === 'task') {
    for (const m of text.matchAll(PRIORITY_RE)) {
      const s = m.index!;
      const e = s + m[0].length;
      if (!claims.free(s, e)) continue;
      priority = PRIORITY_MAP[m[0].toLowerCase()] ?? null;
      if (priority !== null) {
        addSpan('priority', s, e);
        break;
      }
    }
  }

  // 3. Durations: the first `for …` counts.
  let explicitDuration: number | null = null;
  for (const m of text.matchAll(DURATION_RE)) {
    const s = m.index!;
    const e = s + m[0].length;
    if (!claims.free(s, e)) continue;
    const minutes = durationMinutes(m);
    if (minutes === null) continue;
    explicitDuration = minutes;
    addSpan('duration', s, e);
    break;
  }

  // 4. Dates and times through chrono, on the text with the parts above masked.
  let masked = '';
  for (let i = 0; i < text.length; i++) masked += claims.free(i, i + 1) ? text[i] : MASK;

  const refMs = utcMs(now.year, now.month, now.day);
  const ref = { instant: new Date(refMs), timezone: 0 };
  const forwardDate = mode !== 'note';
  let results = chrono().main.parse(masked, ref, { forwardDate });
  if (forwardDate) {
    // forwardDate also pushes "last friday" into the future; read backward-looking phrases without it.
    const backward = chrono().main.parse(masked, ref, { forwardDate: false });
    results = results.map((r) =>
      /^(last|past)\b/i.test(r.text) ? (backward.find((b) => b.index === r.index && b.text === r.text) ?? r) : r,
    );
  }
  results.sort((a, b) => a.index - b.index);

  let date: string | null = null;
  let due: string | null = null;
  let start: string | null = null;
  let end: string | null = null;
  const dateSpanEnds: number[] = [];

  for (const r of results) {
    if (/^for\b/i.test(r.text)) continue; // "for 2 days": a duration we do not read, not a date
    if (AMBIGUOUS_WEEKDAYS.has(r.text)) continue; // "sat on the chair"
    if (r.text.includes(MASK)) continue;
    const read = readResult(r, now, refMs);
    if (!claims.free(read.index, read.end)) continue;

    let dueStart: number | null = null;
    if (mode === 'task' && read.date !== null) {
      const kw = DUE_KEYWORD_RE.exec(text.slice(0, read.index));
      if (kw && claims.free(kw.index, read.index)) dueStart = kw.index;
    }
    const dateField: 'date' | 'due' = dueStart !== null ? 'due' : 'date';
    const setsDate = read.date !== null && (dateField === 'due' ? due === null : date === null);
    const setsTime = read.hasTime && start === null;
    if (!setsDate && !setsTime) continue;

    if (setsDate) {
      if (dateField === 'due') due = read.date;
      else date = read.date;
    }
    if (setsTime) {
      start = read.start;
      end = read.end_time;
    }

    const dateKind: ComposerSpanKind = dateField;
    // Split a merged "tomorrow at 9" into its date part and its time part.
    let dateRange: Range | null = null;
    let timeRange: Range | null = null;
    if (read.date !== null && read.hasTime && !read.relativeTime) {
      const subs = chrono().split.parse(masked.slice(read.index, read.end), ref, { forwardDate });
      const d = subs.filter((x) => (x.start.isCertain('day') || x.start.isCertain('weekday')) && !x.start.isCertain('hour'));
      const t = subs.filter((x) => x.start.isCertain('hour') && !x.start.isCertain('day') && !x.start.isCertain('weekday'));
      if (d.length > 0 && t.length > 0) {
        const span = (xs: ParsedResult[]): Range => [
          read.index + Math.min(...xs.map((x) => x.index)),
          read.index + Math.max(...xs.map((x) => x.index + x.text.length)),
        ];
        const dr = span(d);
        const tr = span(t);
        if (dr[1] <= tr[0] || tr[1] <= dr[0]) {
          // the later part takes the connector between them (" at ", ", ")
          if (dr[1] <= tr[0]) tr[0] = dr[1];
          else dr[0] = tr[1];
          dateRange = trimRange(text, dr);
          timeRange = trimRange(text, tr);
        }
      }
    }

    if (dateRange && timeRange) {
      if (dueStart !== null && dateRange[0] < timeRange[0]) dateRange[0] = dueStart;
      else if (dueStart !== null) timeRange[0] = dueStart; // "due 9am friday": keep spans contiguous
      addSpan(dateKind, dateRange[0], dateRange[1]);
      addSpan('time', timeRange[0], timeRange[1]);
      dateSpanEnds.push(Math.max(dateRange[1], timeRange[1]));
    } else if (read.date !== null && !read.relativeTime) {
      const s = dueStart ?? read.index;
      addSpan(dateKind, s, read.end);
      dateSpanEnds.push(read.end);
    } else {
      let s = read.index;
      const conn = TIME_CONNECTOR_RE.exec(text.slice(0, s));
      if (conn && claims.free(conn.index, s)) s = conn.index;
      addSpan('time', s, read.end);
    }
  }

  // 5. Bare hour ranges chrono leaves alone ("9-10", "Monday 11-1"): at the start of the
  //    text, right after a date, or after "at" / "from".
  if (start === null) {
    for (const m of text.matchAll(BARE_RANGE_RE)) {
      let s = m.index!;
      const e = s + m[0].length;
      if (!claims.free(s, e)) continue;
      const h1 = Number(m[1]);
      const h2 = Number(m[2]);
      if (h1 > 23 || h2 > 23) continue;
      const before = masked.slice(0, s);
      const lead = BARE_RANGE_LEAD_RE.exec(before);
      const atStart = /^[\s\u00a6]*$/.test(before);
      const afterDate = dateSpanEnds.some((de) => de <= s && /^\s*$/.test(text.slice(de, s)));
      if (!lead && !atStart && !afterDate) continue;
      if (lead && claims.free(lead.index, s)) s = lead.index;
      start = fmtTime(h1 * 60);
      end = fmtTime(crossNoon(h1 * 60, h2 * 60, false));
      addSpan('time', s, e);
      break;
    }
  }

  // 6. Duration and end.
  let duration: number | null = null;
  if (start !== null && end !== null) {
    duration = (((toMinutes(end) - toMinutes(start)) % 1440) + 1440) % 1440;
  } else if (explicitDuration !== null) {
    duration = explicitDuration;
    if (start !== null) end = fmtTime(toMinutes(start) + explicitDuration);
  }

  // 7. Title.
  const removal = mode === 'note' ? tagRanges : removeFromTitle;
  const title = tidy(cut(text, removal));

  spans.sort((a, b) => a.start - b.start);
  return {
    title,
    date,
    start,
    end,
    duration_minutes: duration,
    tags,
    due: mode === 'task' ? due : null,
    priority: mode === 'task' ? priority : null,
    spans,
  };
}

function trimRange(text: string, [s, e]: Range): Range {
  while (s < e && /\s/.test(text[s]!)) s++;
  while (e > s && /\s/.test(text[e - 1]!)) e--;
  return [s, e];
}

function cut(text: string, ranges: Range[]): string {
  const sorted = [...ranges].sort((a, b) => a[0] - b[0]);
  let out = '';
  let pos = 0;
  for (const [s, e] of sorted) {
    if (s > pos) out += text.slice(pos, s);
    out += ' ';
    pos = Math.max(pos, e);
  }
  return out + text.slice(pos);
}

function tidy(s: string): string {
  return s
    .replace(/\s+/g, ' ')
    .replace(/([([{]) /g, '$1')
    .replace(/ ([)\]}])/g, '$1')
    .replace(/\(\)|\[\]|\{\}/g, ' ')
    .replace(/\s+/g, ' ')
    .replace(/ ([,;:])/g, '$1')
    .replace(/([,;:])(?=[,;:])/g, '')
    .replace(/^[\s,;:–—-]+|[\s,;:–—-]+$/g, '')
    .trim();
}
