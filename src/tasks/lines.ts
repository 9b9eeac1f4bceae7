/**
 * Pure edits of one task line (Obsidian Tasks plugin style):
 *
 *   - [ ] Buy bulbs 📅 2026-11-25 ✅ 2026-11-22 ^buy-bulbs
 *   ^prefix^status ^description ^markers            ^block id
 *
 * Each function takes the line's text without its line ending and returns
 * the new text; callers splice it back so every other byte of the note stays.
 */

/** List marker, optional blockquote prefixes, and the `[c]` checkbox. */
const TASK_RE = /^((?:[ \t]*>)*[ \t]*(?:[-*+]|\d{1,9}[.)])[ \t]+\[)(.)(\])(.*)$/u;
const BLOCK_ID_RE = /[ \t]+\^([A-Za-z0-9-]+)[ \t]*$/;
/** Tasks-plugin markers that end the description (priority, recurrence, dates, dependencies). */
const MARKER_START = /[ \t]*(?:📅|⏳|🛫|✅|❌|➕|🔁|⏫|🔼|🔽|🔺|⏬|🆔|⛔|\[due::|due:\d)/u;
const DUE_RE = /(📅\uFE0F?[ \t]*)(\d{4}-\d{2}-\d{2})/u;
const DONE_RE = /[ \t]*✅\uFE0F?[ \t]*\d{4}-\d{2}-\d{2}/u;
const DONE_DATE_RE = /✅\uFE0F?[ \t]*(\d{4}-\d{2}-\d{2})/u;

export interface LineParts {
  /** Everything up to and including `[`. */
  prefix: string;
  status: string;
  /** The text after `]` up to the block id: a leading space, the description, the markers. */
  rest: string;
  /** The trailing ` ^id` as written (with its leading whitespace), or ''. */
  anchor: string;
  blockId: string | null;
}

export function parseTaskLine(line: string): LineParts | null {
  const m = TASK_RE.exec(line);
  if (!m) return null;
  let rest = m[4]!;
  let anchor = '';
  let blockId: string | null = null;
  const b = BLOCK_ID_RE.exec(rest);
  if (b) {
    anchor = rest.slice(b.index);
    rest = rest.slice(0, b.index);
    blockId = b[1]!;
  }
  return { prefix: m[1]!, status: m[2]!, rest, anchor, blockId };
}

const join = (p: LineParts) => `${p.prefix}${p.status}]${p.rest}${p.anchor}`;

function mustParse(line: string): LineParts {
  const p = parseTaskLine(line);
  if (!p) throw new Error('not a task line');
  return p;
}

export function isTaskLine(line: string): boolean {
  return TASK_RE.test(line);
}

/** The `✅ YYYY-MM-DD` completion date in a task's text, or null. */
export function doneDateOf(text: string): string | null {
  return DONE_DATE_RE.exec(text)?.[1] ?? null;
}

/** Appends ` ^id` to a task line that has no block id (trailing spaces are dropped). */
export function withBlockId(line: string, id: string): string {
  const p = mustParse(line);
  if (p.blockId) return line;
  return `${join({ ...p, rest: p.rest.replace(/[ \t]+$/, '') })} ^${id}`;
}

/**
 * Sets the status character. Becoming done (`x`/`X`) from not done adds
 * ` ✅ <today>` at the end of the markers; leaving done removes the `✅` marker.
 */
export function withStatus(line: string, status: string, today: string): string {
  const p = mustParse(line);
  const wasDone = p.status === 'x' || p.status === 'X';
  const isDone = status === 'x' || status === 'X';
  let rest = p.rest;
  if (isDone && !wasDone && !DONE_RE.test(rest)) rest = `${rest.replace(/[ \t]+$/, '')} ✅ ${today}`;
  if (!isDone && wasDone) rest = rest.replace(DONE_RE, '');
  return join({ ...p, status, rest });
}

/** Splits `rest` into the description (trimmed) and the markers after it (with their leading space). */
function splitRest(rest: string): { description: string; markers: string } {
  const body = rest.replace(/^[ \t]/, '');
  const m = MARKER_START.exec(body);
  const description = m ? body.slice(0, m.index) : body;
  const markers = m ? body.slice(m.index) : '';
  return { description: description.trim(), markers: markers.replace(/[ \t]+$/, '') };
}

/** The description of a task: its text without Tasks-plugin markers and block id. */
export function descriptionOf(line: string): string {
  return splitRest(mustParse(line).rest).description;
}

/** Replaces the description, keeping status, markers (dates, priority...) and block id. */
export function withText(line: string, text: string): string {
  const p = mustParse(line);
  const { markers } = splitRest(p.rest);
  const sep = markers === '' || /^[ \t]/.test(markers) ? '' : ' ';
  return join({ ...p, rest: ` ${text.trim()}${sep}${markers}` });
}

/**
 * Sets (`YYYY-MM-DD`) or removes (null) the due date: replaces an existing
 * `📅 date`, `[due:: date]` or `due:date`, else inserts ` 📅 date` right after the description.
 */
export function withDue(line: string, due: string | null): string {
  const p = mustParse(line);
  let rest = p.rest;
  const forms: RegExp[] = [DUE_RE, /(\[due::[ \t]*)(\d{4}-\d{2}-\d{2})(?=[ \t]*\])/u, /((?<![^\s])due:)(\d{4}-\d{2}-\d{2})/u];
  const found = forms.find((re) => re.test(rest));
  if (due === null) {
    if (found === DUE_RE) rest = rest.replace(/[ \t]*📅\uFE0F?[ \t]*\d{4}-\d{2}-\d{2}/u, '');
    else if (found) rest = rest.replace(found === forms[1] ? /[ \t]*\[due::[ \t]*\d{4}-\d{2}-\d{2}[ \t]*\]/u : /[ \t]*(?<![^\s])due:\d{4}-\d{2}-\d{2}/u, '');
    return join({ ...p, rest });
  }
  if (found) return join({ ...p, rest: rest.replace(found, (_m, head: string) => `${head}${due}`) });
  const { description, markers } = splitRest(rest);
  const sep = markers === '' || /^[ \t]/.test(markers) ? '' : ' ';
  return join({ ...p, rest: ` ${description} 📅 ${due}${sep}${markers}` });
}

/** A new task line. */
export function newTaskLine(text: string, due: string | null, id: string, indent = ''): string {
  return `${indent}- [ ] ${text.trim()}${due ? ` 📅 ${due}` : ''} ^${id}`;
}

// ------------------------------------------------------------ whole texts

export interface Line {
  text: string;
  /** '\n', '\r\n', '\r' or '' for the last line without one. */
  eol: string;
}

export function splitLines(text: string): Line[] {
  const out: Line[] = [];
  const re = /\r\n|\n|\r/g;
  let start = 0;
  let m: RegExpExecArray | null;
  while ((m = re.exec(text))) {
    out.push({ text: text.slice(start, m.index), eol: m[0] });
    start = m.index + m[0].length;
  }
  out.push({ text: text.slice(start), eol: '' });
  return out;
}

export const joinLines = (lines: Line[]) => lines.map((l) => l.text + l.eol).join('');

/** The most common line ending of a text, `\n` when it has none. */
export function eolOf(text: string): string {
  const crlf = (text.match(/\r\n/g) ?? []).length;
  const lf = (text.match(/\n/g) ?? []).length - crlf;
  return crlf > lf ? '\r\n' : '\n';
}

/** Replaces line `n` (1-based) keeping its line ending. */
export function replaceLine(text: string, n: number, next: string): string {
  const lines = splitLines(text);
  lines[n - 1] = { text: next, eol: lines[n - 1]!.eol };
  return joinLines(lines);
}

/** Inserts a line after line `n` (0: at the top), giving it the file's line ending. */
export function insertLineAfter(text: string, n: number, line: string): string {
  const lines = splitLines(text);
  const eol = eolOf(text);
  // A file ending in a line break has a last, empty "line": never insert after it.
  const last = lines[lines.length - 1]!.text === '' && lines.length > 1 ? lines.length - 1 : lines.length;
  const at = Math.max(0, Math.min(n, last));
  if (at > 0 && lines[at - 1]!.eol === '') lines[at - 1]!.eol = eol;
  lines.splice(at, 0, { text: line, eol: at === lines.length ? '' : eol });
  return joinLines(lines);
}

/** Appends a line at the end of a text, with the file's line ending after it. */
export function appendLine(text: string, line: string): string {
  const eol = eolOf(text);
  if (text === '' || text === '\uFEFF') return `${text}${line}${eol}`;
  return /(\r\n|\n|\r)$/.test(text) ? `${text}${line}${eol}` : `${text}${eol}${line}${eol}`;
}

/** Removes line `n` (1-based) with its line ending. */
export function removeLine(text: string, n: number): string {
  const lines = splitLines(text);
  const removed = lines.splice(n - 1, 1)[0]!;
  // Removing the last line of a file that did not end in a break: drop the previous break instead.
  if (removed.eol === '' && n - 2 >= 0) lines[n - 2]!.eol = '';
  return joinLines(lines);
}
