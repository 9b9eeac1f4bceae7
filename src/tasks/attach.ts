/**
 * Attaching a File Task to a log entry of the Daily notes (docs/tasks.md).
 *
 * Log entries are read straight from the files (this module does not depend
 * on the journal code): in the Daily notes (`Journal/YYYY-MM-DD.md`, or as the
 * vault's `.obsidian/daily-notes.json` names them), the list items of the
 * `Log` heading's section that end with a `^block-id`. Attaching writes one
 * child line `- [[<task note path>]]` at the end of the entry's block and the
 * key `log_entry: "[[Journal/YYYY-MM-DD#^id]]"` in the task note's
 * frontmatter; detaching removes both. Each file changes only in those lines.
 */
import { AppError, errors } from '../core/errors.js';
import { extractFacts } from '../markdown/extract.js';
import { checkWritable, type Scope } from '../notes/access.js';
import { editFrontmatter } from '../notes/frontmatter.js';
import { editNote, findTask, fileTaskRecord, type TaskRecord } from './tasks.js';
import * as L from './lines.js';
import { minutesOf, todayIn, wallClock } from './time.js';
import { DEFAULT_DAILY, dailyNotesSettings, dateOfDailyNotePath, type DailyNotesSettings } from '../vault/obsidian-settings.js';

const LIST_ITEM_RE = /^( {0,3})([-*+]|\d{1,9}[.)])[ \t]+(.*)$/;
const ANCHOR_RE = /(?:^|[ \t]+)\^([A-Za-z0-9-]+)[ \t]*$/;
const HEADING_RE = /^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$/;
const FENCE_RE = /^ {0,3}(`{3,}|~{3,})/;
const WIKILINK_LINE_RE = /^[ \t]+(?:[-*+]|\d{1,9}[.)])[ \t]+!?\[\[([^\]|#]+)(?:#[^\]|]*)?(?:\|[^\]]*)?\]\][ \t]*$/;

export interface LogEntry {
  /** 1-based line of the entry. */
  line: number;
  /** Last line of its block (the entry line and its indented child lines). */
  end: number;
  blockId: string;
  /** Start time `HH:MM` as written at the start of the content, or null. */
  minutes: number | null;
  /** Indentation of its first child line, or null. */
  childIndent: string | null;
}

function indentWidth(s: string): number {
  let w = 0;
  for (const ch of s) {
    if (ch === ' ') w++;
    else if (ch === '\t') w += 4 - (w % 4);
    else break;
  }
  return w;
}

/** The anchored log entries of a Daily note, in document order. Pure. */
export function logEntries(text: string): LogEntry[] {
  const lines = L.splitLines(text).map((l) => l.text);
  const out: LogEntry[] = [];
  let inLog = false;
  let logLevel = 0;
  let fence: string | null = null;
  let start = 0;
  // Skip a frontmatter block.
  if (/^\uFEFF?---[ \t]*$/.test(lines[0] ?? '')) {
    const close = lines.findIndex((l, i) => i > 0 && /^(---|\.\.\.)[ \t]*$/.test(l));
    if (close > 0) start = close + 1;
  }
  let current: LogEntry | null = null;
  for (let i = start; i < lines.length; i++) {
    const t = lines[i]!;
    const f = FENCE_RE.exec(t);
    if (fence) {
      if (f && f[1]![0] === fence[0] && f[1]!.length >= fence.length && t.trim() === f[1]) fence = null;
      if (current) current.end = i + 1;
      continue;
    }
    const indent = indentWidth(t);
    if (current && t.trim() !== '' && indent >= 2) {
      current.end = i + 1;
      current.childIndent ??= /^[ \t]*/.exec(t)![0];
      if (f) fence = f[1]!;
      continue;
    }
    if (f) {
      current = null;
      fence = f[1]!;
      continue;
    }
    const h = HEADING_RE.exec(t);
    if (h) {
      current = null;
      const level = h[1]!.length;
      if ((h[2] ?? '').trim().toLowerCase() === 'log') {
        inLog = true;
        logLevel = level;
      } else if (inLog && level <= logLevel) inLog = false;
      continue;
    }
    if (!inLog || t.trim() === '') continue;
    current = null;
    const li = LIST_ITEM_RE.exec(t);
    if (!li) continue;
    const content = li[3]!;
    if (/^\[.\](\s|$)/.test(content)) continue; // a task, not a log entry
    const a = ANCHOR_RE.exec(content);
    if (!a) continue;
    const tm = /^(?:\*\*)?(\d{1,2}):(\d{2})(?=\D|$)/.exec(content);
    const minutes = tm && Number(tm[1]) < 24 && Number(tm[2]) < 60 ? Number(tm[1]) * 60 + Number(tm[2]) : null;
    current = { line: i + 1, end: i + 1, blockId: a[1]!, minutes, childIndent: null };
    out.push(current);
  }
  return out;
}

export interface EntryRef {
  path: string;
  date: string;
  blockId: string;
}

export const entryLink = (e: EntryRef) => `[[${e.path.replace(/\.md$/, '')}#^${e.blockId}]]`;

/** Reads `[[<Daily note path>#^id]]` (with or without `.md`; Daily notes as the vault's settings name them) back into a reference. */
export function parseEntryLink(s: unknown, daily: DailyNotesSettings = DEFAULT_DAILY): EntryRef | null {
  if (typeof s !== 'string') return null;
  const m = /^\[\[([^\]#|]+?)(?:\.md)?#\^([A-Za-z0-9-]+)(?:\|[^\]]*)?\]\]$/.exec(s.trim());
  if (!m) return null;
  const path = `${m[1]}.md`;
  const date = dateOfDailyNotePath(daily, path);
  return date ? { path, date, blockId: m[2]! } : null;
}

/** The latest anchored log entry that is not in the future (server time), newest Daily note first. */
export async function latestEligibleEntry(scope: Scope, now = Date.now()): Promise<EntryRef | null> {
  const today = todayIn(undefined, now);
  const nowMinutes = minutesOf(wallClock(now));
  const daily = await dailyNotesSettings(scope.vault.home.root);
  const dailies = [...scope.index.notes()]
    .map((n) => ({ path: n.path, date: dateOfDailyNotePath(daily, n.path) }))
    .filter((d): d is { path: string; date: string } => d.date !== null && d.date <= today)
    .sort((a, b) => (a.date < b.date ? 1 : -1));
  for (const d of dailies) {
    const { bytes } = await scope.vault.home.read(d.path);
    const entries = logEntries(bytes.toString('utf8')).filter((e) => !(d.date === today && e.minutes !== null && e.minutes > nowMinutes));
    const e = entries[entries.length - 1];
    if (e) return { path: d.path, date: d.date, blockId: e.blockId };
  }
  return null;
}

const linkTargetOf = (notePath: string) => notePath.replace(/\.md$/, '');

/** Lines (1-based) of the entry's child lines that are just a wikilink to the task note. */
function childLinksTo(scope: Scope, dailyPath: string, text: string, entry: LogEntry, notePath: string): number[] {
  const lines = L.splitLines(text);
  const out: number[] = [];
  for (let n = entry.line + 1; n <= entry.end; n++) {
    const m = WIKILINK_LINE_RE.exec(lines[n - 1]!.text);
    if (!m) continue;
    const target = m[1]!.trim();
    const resolved = scope.index.resolve(dailyPath, { target, kind: 'wikilink' });
    if (resolved === notePath || target === linkTargetOf(notePath) || target === notePath) out.push(n);
  }
  return out;
}

function fileTaskOf(scope: Scope, taskId: string): TaskRecord {
  const t = findTask(scope, taskId);
  if (t.kind !== 'file') {
    throw errors.badRequest('Only File Tasks (notes with `type: task`) can be attached to a log entry', {
      field: 'body.task_id',
      reason: 'not_a_file_task',
    });
  }
  return t;
}

/** Removes the task's child link under the entry (when both still exist). */
async function unlinkFromEntry(scope: Scope, ref: EntryRef, notePath: string): Promise<boolean> {
  if (!scope.index.noteByPath(ref.path)) return false;
  return editNote(scope, ref.path, undefined, (text) => {
    const entry = logEntries(text).find((e) => e.blockId === ref.blockId);
    if (!entry) return { text, result: false };
    const lines = childLinksTo(scope, ref.path, text, entry, notePath);
    let next = text;
    for (const n of lines.reverse()) next = L.removeLine(next, n);
    return { text: next, result: lines.length > 0 };
  });
}

async function setLogEntryKey(scope: Scope, task: TaskRecord, value: string | null): Promise<void> {
  await editNote(scope, task.path, undefined, (text, facts) => {
    const changes: Record<string, unknown> = { log_entry: value };
    if (!facts.id) changes.id = task.task_id;
    if (value === null && facts.frontmatter?.log_entry === undefined) return { text, result: null };
    if (value !== null && facts.frontmatter?.log_entry === value) return { text, result: null };
    return { text: editFrontmatter(text, facts.frontmatterRange, changes, { frontmatterError: facts.frontmatterError }), result: null };
  });
}

export async function attachTask(scope: Scope, taskId: string, now = Date.now()) {
  const task = fileTaskOf(scope, taskId);
  const target = await latestEligibleEntry(scope, now);
  if (!target) {
    throw new AppError('conflict', 'No log entry to attach to: write a log entry (with a ^block-id) in a Daily note first', {
      details: { reason: 'no_log_entry' },
    });
  }
  // Refuse before touching the Daily note if the task note's frontmatter cannot take the key.
  const facts = extractFacts((await scope.vault.home.read(task.path)).bytes.toString('utf8'), task.path);
  if (facts.frontmatterError) {
    throw new AppError('conflict', `The task note's frontmatter is not valid YAML (${facts.frontmatterError}); fix it first`, {
      details: { reason: 'invalid_frontmatter', path: task.path },
    });
  }
  checkWritable(scope, task.path);
  checkWritable(scope, target.path);
  const old = parseEntryLink(task.log_entry, await dailyNotesSettings(scope.vault.home.root));
  if (old && (old.path !== target.path || old.blockId !== target.blockId)) await unlinkFromEntry(scope, old, task.path);
  const inserted = await editNote(scope, target.path, undefined, (text) => {
    const entry = logEntries(text).find((e) => e.blockId === target.blockId);
    if (!entry) {
      throw new AppError('conflict', 'The log entry changed while attaching; try again', { status: 412, details: { reason: 'entry_moved' } });
    }
    if (childLinksTo(scope, target.path, text, entry, task.path).length > 0) return { text, result: false };
    const indent = entry.childIndent ?? logEntries(text).find((e) => e.childIndent)?.childIndent ?? '    ';
    return { text: L.insertLineAfter(text, entry.end, `${indent}- [[${linkTargetOf(task.path)}]]`), result: true };
  });
  try {
    await setLogEntryKey(scope, task, entryLink(target));
  } catch (e) {
    // Take back the link just written so the two files do not disagree.
    if (inserted) await unlinkFromEntry(scope, target, task.path).catch(() => undefined);
    throw e;
  }
  return { task: fileTaskRecord(scope.index.noteByPath(task.path)!), log_entry: { path: target.path, date: target.date, block_id: target.blockId } };
}

export async function detachTask(scope: Scope, taskId: string) {
  const task = fileTaskOf(scope, taskId);
  const ref = parseEntryLink(task.log_entry, await dailyNotesSettings(scope.vault.home.root));
  if (!ref && task.log_entry === null) return { task, detached: false, log_entry: null };
  const removed = ref ? await unlinkFromEntry(scope, ref, task.path) : false;
  await setLogEntryKey(scope, task, null);
  return {
    task: fileTaskRecord(scope.index.noteByPath(task.path)!),
    detached: true,
    link_removed: removed,
    log_entry: ref ? { path: ref.path, date: ref.date, block_id: ref.blockId } : null,
  };
}
