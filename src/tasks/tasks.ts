/**
 * Tasks of a Home: the inline `- [ ]` tasks of every note (from the index's
 * facts) and File Tasks (notes whose frontmatter says `type: task` or
 * `task: true`). See docs/tasks.md.
 *
 * Identity: an inline task's `task_id` is its `^block-id`; a File Task's is
 * its note id. A task without a block id has `task_id: null` until the server
 * must name it (create, or a change addressed by `path` + `line`): then it
 * writes ` ^id` at the end of that task's line and nothing else.
 */
import { randomBytes } from 'node:crypto';
import { AppError, errors } from '../core/errors.js';
import type { NoteEntry, TaskEntry } from '../index/home-index.js';
import { extractFacts } from '../markdown/extract.js';
import type { Task } from '../markdown/facts.js';
import { checkVisible, checkWritable, visible, type Scope } from '../notes/access.js';
import { editFrontmatter } from '../notes/frontmatter.js';
import { normalizeEtag } from '../vault/etag.js';
import * as L from './lines.js';
import { Pacer } from './pace.js';
import { checkTimeZone, dayOf, parseDay, todayIn, wallClock } from './time.js';

// ------------------------------------------------------------- File Tasks

/** A note is a File Task when its frontmatter has `type: task` (any case) or `task: true`. */
export function isFileTask(fm: Record<string, unknown> | null | undefined): boolean {
  if (!fm) return false;
  return (typeof fm.type === 'string' && fm.type.trim().toLowerCase() === 'task') || fm.task === true;
}

const STATUS_WORDS: Record<string, string> = {
  done: 'x', completed: 'x', complete: 'x', x: 'x',
  cancelled: '-', canceled: '-', '-': '-',
  'in-progress': '/', 'in progress': '/', doing: '/', started: '/', '/': '/',
};
const WORD_OF_STATUS: Record<string, string> = { ' ': 'todo', x: 'done', X: 'done', '-': 'cancelled', '/': 'in-progress' };

function dateString(v: unknown): string | null {
  if (v instanceof Date) return v.toISOString().slice(0, 10);
  if (typeof v !== 'string') return null;
  const m = /^(\d{4}-\d{2}-\d{2})/.exec(v.trim());
  return m ? m[1]! : null;
}

// ---------------------------------------------------------------- records

export interface TaskRecord {
  /** The block id (inline) or the note id (File Task); null for an inline task without a block id. */
  task_id: string | null;
  kind: 'inline' | 'file';
  path: string;
  note_id: string;
  note_title: string;
  /** Line of the task (inline); null for a File Task. */
  line: number | null;
  /** The checkbox character (`' '`, `x`, `/`, `-`, ...); for a File Task mapped from `status`. */
  status: string;
  checked: boolean;
  cancelled: boolean;
  text: string;
  /** `YYYY-MM-DD` or null. */
  due: string | null;
  /** Completion date `YYYY-MM-DD` (`✅ date`, or a File Task's `done`/`completed` key) or null. */
  done: string | null;
  depth: number;
  /** The note's ETag: send it as If-Match to change the task only at this revision. */
  etag: string;
  /** File Tasks: the log entry they are attached to (`[[Journal/YYYY-MM-DD#^id]]`), else null. */
  log_entry: string | null;
}

export function inlineRecord(t: Task, note: NoteEntry): TaskRecord {
  return {
    task_id: t.blockId,
    kind: 'inline',
    path: note.path,
    note_id: note.id,
    note_title: note.title,
    line: t.line,
    status: t.status,
    checked: t.checked,
    cancelled: t.cancelled,
    text: t.text,
    due: t.due,
    done: L.doneDateOf(t.text),
    depth: t.depth,
    etag: note.etag,
    log_entry: null,
  };
}

export function fileTaskRecord(note: NoteEntry): TaskRecord {
  const fm = note.frontmatter ?? {};
  const raw = typeof fm.status === 'string' ? fm.status.trim().toLowerCase() : fm.done === true || fm.completed === true ? 'done' : '';
  const status = STATUS_WORDS[raw] ?? ' ';
  return {
    task_id: note.id,
    kind: 'file',
    path: note.path,
    note_id: note.id,
    note_title: note.title,
    line: null,
    status,
    checked: status === 'x',
    cancelled: status === '-',
    text: note.title,
    due: dateString(fm.due),
    done: dateString(fm.done) ?? dateString(fm.completed),
    depth: 0,
    etag: note.etag,
    log_entry: typeof fm.log_entry === 'string' ? fm.log_entry : null,
  };
}

/** The visible notes by path: a snapshot (the index replaces an entry when its file changes, it never edits one). */
export function visibleNotes(scope: Scope): NoteEntry[] {
  return [...scope.index.notes()].filter((n) => visible(scope, n.path)).sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/** The tasks of one note: its File Task first, then its inline tasks by line. */
export function* tasksOfNote(n: NoteEntry): Generator<TaskRecord> {
  if (isFileTask(n.frontmatter)) yield fileTaskRecord(n);
  for (const t of n.facts.tasks) yield inlineRecord(t, n);
}

const taskCount = (n: NoteEntry) => (isFileTask(n.frontmatter) ? 1 : 0) + n.facts.tasks.length;

export const PAGE_DEFAULT = 100;
export const PAGE_MAX = 500;

export function pageLimit(limit: number | undefined, max = PAGE_MAX, dflt = PAGE_DEFAULT): number {
  if (limit === undefined) return dflt;
  if (limit < 1 || limit > max) throw errors.badRequest(`limit must be between 1 and ${max}`, { field: 'query.limit' });
  return limit;
}

export function pageOffset(cursor: number | undefined): number {
  if (cursor === undefined) return 0;
  if (cursor < 0) throw errors.badRequest('cursor must be a next_cursor from a previous page', { field: 'query.cursor' });
  return cursor;
}

/** One page of every visible task, by path then line. Only the page's records are built; the rest are counted. */
export async function listTasks(scope: Scope, q: { cursor?: number; limit?: number }) {
  const limit = pageLimit(q.limit);
  const offset = pageOffset(q.cursor);
  const pacer = new Pacer('The task list');
  const items: TaskRecord[] = [];
  let seen = 0;
  for (const n of visibleNotes(scope)) {
    const count = taskCount(n);
    if (seen + count > offset && items.length < limit) {
      let i = seen;
      for (const t of tasksOfNote(n)) if (i++ >= offset && items.length < limit) items.push(t);
    }
    seen += count;
    if (pacer.due()) await pacer.pause();
  }
  return { items, next_cursor: offset + limit < seen ? offset + limit : null };
}

/** Finds a task by id: an inline task by block id, else a File Task by note id. */
export function findTask(scope: Scope, taskId: string): TaskRecord {
  for (const t of scope.index.tasksByBlockId(taskId)) {
    if (!visible(scope, t.path)) continue;
    const note = scope.index.noteByPath(t.path)!;
    return inlineRecord(t, note);
  }
  const note = scope.index.noteById(taskId);
  if (note && visible(scope, note.path) && isFileTask(note.frontmatter)) return fileTaskRecord(note);
  throw errors.notFound(`No task with id ${taskId}`, { task_id: taskId });
}

export function taskById(scope: Scope, taskId: string): TaskRecord {
  return findTask(scope, taskId);
}

// ----------------------------------------------------------------- by day

export const BY_DAY_MAX_DAYS = 366;

export async function tasksByDay(scope: Scope, q: { from: string; to: string; tz?: string }) {
  const tz = checkTimeZone(q.tz, 'query.tz');
  const from = parseDay(q.from, 'query.from');
  const to = parseDay(q.to, 'query.to');
  if (to < from) throw errors.badRequest('to must not be before from', { field: 'query.to' });
  const days = Math.round((to - from) / 86_400_000) + 1;
  if (days > BY_DAY_MAX_DAYS) {
    throw errors.badRequest(`The window is ${days} days; request at most ${BY_DAY_MAX_DAYS} days at a time`, {
      field: 'query.to',
      reason: 'window_too_large',
      max_days: String(BY_DAY_MAX_DAYS),
    });
  }
  const byDate = new Map<string, { date: string; due: TaskRecord[]; done: TaskRecord[] }>();
  const items: Array<{ date: string; due: TaskRecord[]; done: TaskRecord[] }> = [];
  for (let i = 0; i < days; i++) {
    const d = { date: dayOf(from + i * 86_400_000), due: [] as TaskRecord[], done: [] as TaskRecord[] };
    byDate.set(d.date, d);
    items.push(d);
  }
  const pacer = new Pacer('The tasks by day');
  for (const n of visibleNotes(scope)) {
    for (const t of tasksOfNote(n)) {
      if (t.due) byDate.get(t.due)?.due.push(t);
      if (t.done) byDate.get(t.done)?.done.push(t);
    }
    if (pacer.due()) await pacer.pause();
  }
  return { from: q.from, to: q.to, tz: tz ?? null, today: todayIn(tz), items, next_cursor: null };
}

// ------------------------------------------------------------------ edits

/** A Home-wide unused block id for a task: `t` and 6 base-36 characters. */
export function newTaskBlockId(scope: Scope, text: string): string {
  for (;;) {
    const id = 't' + BigInt('0x' + randomBytes(5).toString('hex')).toString(36).padStart(6, '0').slice(-6);
    if (scope.index.blockOwner(id).length === 0 && !text.includes(`^${id}`)) return id;
  }
}

function sameEtag(a: string, b: string): boolean {
  return normalizeEtag(a) === normalizeEtag(b);
}

/**
 * Read-modify-write of one note. `edit` gets the current text and facts and
 * returns the new text. With the client's If-Match the write happens only at
 * that revision (412 otherwise); without it, the write is conditional on the
 * bytes just read and is retried when the file changed in between, because
 * `edit` locates its line again on the fresh text.
 */
export async function editNote<R>(
  scope: Scope,
  path: string,
  ifMatch: string | undefined,
  edit: (text: string, facts: ReturnType<typeof extractFacts>) => { text: string; result: R },
): Promise<R> {
  checkWritable(scope, path);
  for (let attempt = 0; ; attempt++) {
    const { bytes, etag } = await scope.vault.home.read(path);
    if (ifMatch !== undefined && !sameEtag(ifMatch, etag)) throw errors.staleEtag(etag);
    const text = bytes.toString('utf8');
    const out = edit(text, extractFacts(text, path));
    if (out.text === text) return out.result;
    try {
      await scope.vault.home.write(path, out.text, { ifMatch: ifMatch ?? etag, quotaBytes: scope.quotaBytes });
      return out.result;
    } catch (e) {
      if (ifMatch === undefined && attempt < 3 && e instanceof AppError && e.status === 412) continue;
      throw e;
    }
  }
}

/** The task at `line` in the note's current facts, or the one with this block id. */
function locate(facts: ReturnType<typeof extractFacts>, where: { blockId?: string; line?: number }): Task {
  const t =
    where.blockId !== undefined
      ? facts.tasks.find((x) => x.blockId === where.blockId)
      : facts.tasks.find((x) => x.line === where.line);
  if (!t) {
    if (where.blockId !== undefined) {
      throw new AppError('conflict', `The task ^${where.blockId} is no longer in ${facts.path}`, {
        status: 412,
        details: { reason: 'task_moved', task_id: where.blockId },
      });
    }
    throw errors.notFound(`No task on line ${where.line} of ${facts.path}`, { field: 'body.line' });
  }
  return t;
}

function recordAfterWrite(scope: Scope, path: string, blockId: string): TaskRecord {
  const note = scope.index.noteByPath(path);
  const t = note?.facts.tasks.find((x) => x.blockId === blockId);
  if (!note || !t) throw new AppError('internal', 'The task was written but is not in the index');
  return inlineRecord(t, note);
}

export interface TaskTarget {
  task_id?: string;
  path?: string;
  line?: number;
}

/**
 * Resolves the task a change names: by `task_id`, or by `path` + `line` (then
 * it gets a block id). A line number means something only at one revision of
 * the note, so addressing by position needs If-Match.
 */
function target(scope: Scope, t: TaskTarget, ifMatch: string | undefined): { kind: 'inline'; path: string; blockId?: string; line?: number } | { kind: 'file'; note: NoteEntry } {
  if (t.task_id !== undefined) {
    if (t.path !== undefined || t.line !== undefined) throw errors.badRequest('Give task_id, or path and line, not both', { field: 'body.task_id' });
    const rec = findTask(scope, t.task_id);
    if (rec.kind === 'file') return { kind: 'file', note: scope.index.noteByPath(rec.path)! };
    return { kind: 'inline', path: rec.path, blockId: t.task_id };
  }
  if (t.path === undefined || t.line === undefined) throw errors.badRequest('Give task_id, or path and line', { field: 'body.task_id' });
  if (ifMatch === undefined) throw errors.preconditionRequired('If-Match');
  checkVisible(scope, t.path);
  if (!scope.index.noteByPath(t.path)) throw errors.notFound(`No note at ${t.path}`, { path: t.path });
  return { kind: 'inline', path: t.path, line: t.line };
}

const STATUS_RE = /^[^\r\n\]\[]$/u;

export async function setTaskStatus(
  scope: Scope,
  body: TaskTarget & { status: string; timezone?: string },
  ifMatch: string | undefined,
): Promise<TaskRecord> {
  if (!STATUS_RE.test(body.status)) throw errors.badRequest('status is one character such as " ", "x", "/" or "-"', { field: 'body.status' });
  const tz = checkTimeZone(body.timezone, 'body.timezone');
  const today = todayIn(tz);
  const tgt = target(scope, body, ifMatch);
  if (tgt.kind === 'file') {
    const done = body.status === 'x' || body.status === 'X';
    await editNote(scope, tgt.note.path, ifMatch, (text, facts) => {
      const word = WORD_OF_STATUS[body.status] ?? body.status;
      const changes: Record<string, unknown> = { status: word, done: done ? (dateString(facts.frontmatter?.done) ?? today) : null };
      if (!facts.id) changes.id = tgt.note.id;
      return { text: editFrontmatter(text, facts.frontmatterRange, changes, { frontmatterError: facts.frontmatterError }), result: null };
    });
    return fileTaskRecord(scope.index.noteByPath(tgt.note.path)!);
  }
  const blockId = await editNote(scope, tgt.path, ifMatch, (text, facts) => {
    const task = locate(facts, tgt);
    const lines = L.splitLines(text);
    let line = L.withStatus(lines[task.line - 1]!.text, body.status, today);
    const id = task.blockId ?? newTaskBlockId(scope, text);
    line = L.withBlockId(line, id);
    return { text: L.replaceLine(text, task.line, line), result: id };
  });
  return recordAfterWrite(scope, tgt.path, blockId);
}

const DUE_DAY = /^\d{4}-\d{2}-\d{2}$/;

function checkDue(due: string | null | undefined, field: string): void {
  if (due === undefined || due === null) return;
  if (!DUE_DAY.test(due)) throw errors.badRequest(`${field} must be a date YYYY-MM-DD`, { field });
  parseDay(due, field);
}

function checkText(text: string, field: string): string {
  const t = text.trim();
  if (!t) throw errors.badRequest(`${field} must not be blank`, { field });
  if (/[\r\n]/.test(t)) throw errors.badRequest(`${field} must be one line`, { field });
  return t;
}

export async function editTask(
  scope: Scope,
  body: TaskTarget & { text?: string; due?: string | null },
  ifMatch: string | undefined,
): Promise<TaskRecord> {
  if (body.text === undefined && body.due === undefined) throw errors.badRequest('Nothing to change: give text and/or due', { field: 'body' });
  const text = body.text === undefined ? undefined : checkText(body.text, 'body.text');
  checkDue(body.due, 'body.due');
  const tgt = target(scope, body, ifMatch);
  if (tgt.kind === 'file') {
    await editNote(scope, tgt.note.path, ifMatch, (src, facts) => {
      const changes: Record<string, unknown> = { title: text, due: body.due };
      if (!facts.id) changes.id = tgt.note.id;
      return { text: editFrontmatter(src, facts.frontmatterRange, changes, { frontmatterError: facts.frontmatterError }), result: null };
    });
    return fileTaskRecord(scope.index.noteByPath(tgt.note.path)!);
  }
  const blockId = await editNote(scope, tgt.path, ifMatch, (src, facts) => {
    const task = locate(facts, tgt);
    let line = L.splitLines(src)[task.line - 1]!.text;
    if (text !== undefined) line = L.withText(line, text);
    if (body.due !== undefined) line = L.withDue(line, body.due);
    const id = task.blockId ?? newTaskBlockId(scope, src);
    line = L.withBlockId(line, id);
    return { text: L.replaceLine(src, task.line, line), result: id };
  });
  return recordAfterWrite(scope, tgt.path, blockId);
}

/** End of a heading's section: the last non-blank line before the next heading of the same or a higher level. */
function sectionEnd(facts: ReturnType<typeof extractFacts>, lines: L.Line[], headingLine: number, level: number): number {
  const next = facts.headings.find((h) => h.line > headingLine && h.level <= level);
  let end = (next ? next.line - 1 : lines.length);
  while (end > headingLine && lines[end - 1]!.text.trim() === '') end--;
  return end;
}

export async function createTask(
  scope: Scope,
  body: { note_id?: string; path?: string; text: string; due?: string | null; heading?: string; after_line?: number },
  ifMatch: string | undefined,
): Promise<TaskRecord> {
  const text = checkText(body.text, 'body.text');
  checkDue(body.due, 'body.due');
  if ((body.note_id === undefined) === (body.path === undefined)) throw errors.badRequest('Give note_id or path (one of them)', { field: 'body.note_id' });
  if (body.heading !== undefined && body.after_line !== undefined) throw errors.badRequest('Give heading or after_line, not both', { field: 'body.after_line' });
  // A line number means something only at one revision of the note.
  if (body.after_line !== undefined && ifMatch === undefined) throw errors.preconditionRequired('If-Match');
  let note: NoteEntry | undefined;
  if (body.note_id !== undefined) note = scope.index.noteById(body.note_id);
  else note = scope.index.noteByPath(body.path!);
  if (!note || !visible(scope, note.path)) throw errors.notFound('No such note', body.note_id !== undefined ? { note_id: body.note_id } : { path: body.path! });
  const path = note.path;
  const blockId = await editNote(scope, path, ifMatch, (src, facts) => {
    const id = newTaskBlockId(scope, src);
    const line = L.newTaskLine(text, body.due ?? null, id);
    const lines = L.splitLines(src);
    let next: string;
    if (body.after_line !== undefined) {
      const last = lines[lines.length - 1]!.text === '' ? lines.length - 1 : lines.length;
      if (body.after_line < 0 || body.after_line > last) throw errors.badRequest(`after_line must be between 0 and ${last}`, { field: 'body.after_line' });
      next = L.insertLineAfter(src, body.after_line, line);
    } else if (body.heading !== undefined) {
      const want = body.heading.replace(/^#+\s*/, '').trim().toLowerCase();
      const h = facts.headings.find((x) => x.text.trim().toLowerCase() === want);
      if (!h) throw errors.notFound(`No heading "${body.heading}" in ${path}`, { field: 'body.heading' });
      next = L.insertLineAfter(src, sectionEnd(facts, lines, h.line, h.level), line);
    } else {
      next = L.appendLine(src, line);
    }
    return { text: next, result: id };
  });
  return recordAfterWrite(scope, path, blockId);
}

export { WORD_OF_STATUS, dateString, wallClock };
export type { TaskEntry };
