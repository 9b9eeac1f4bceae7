/**
 * Daily notes and log entries: the operations behind the journal actions.
 * Every function takes the caller's Scope. Writes go through `home.write`
 * (atomic, If-Match checked against the bytes on disk under the writer
 * lock) and rewrite only the lines of the entry they touch. The journal's
 * own read-modify-write steps are serialised per Home by `serialized`, and a
 * step without a caller's If-Match re-reads and retries when a desktop edit
 * lands between its read and its write.
 */
import { randomBytes } from 'node:crypto';
import { moment } from '../core/moment.js';
import { AppError, errors } from '../core/errors.js';
import { endAfter, parseComposer, type ComposerSpan } from '../composer/composer.js';
import { ifMatchAccepts } from '../vault/etag.js';
import { checkVisible, checkWritable, visible, type Scope } from '../notes/access.js';
import { createNote, updateNote } from '../notes/notes.js';
import { editFrontmatter } from '../notes/frontmatter.js';
import { extractFacts } from '../markdown/extract.js';
import { dailyFromTemplate } from '../templates/templates.js';
import {
  attachmentFolderFor,
  attachmentSettings,
  dailyNotePath,
  dailyNotesSettings,
  dateOfDailyNotePath,
  type DailyNotesSettings,
} from '../vault/obsidian-settings.js';
import { ClientIds } from './client-ids.js';
import { checkClock, checkDate, checkZone, clockInZone, parseWallTime, serverZone } from './dates.js';
import {
  applySplices,
  escapeText,
  formatTime,
  insertionIndex,
  parseDay,
  parseEntryContent,
  renderEntryContent,
  sectionEnd,
  tagsOf,
  type ParsedDay,
  type ParsedEntry,
  type Splice,
} from './log-format.js';

// ---------------------------------------------------------------- serialisation

const chains = new Map<string, Promise<unknown>>();

/** Runs `fn` after every journal operation already queued on this Home. */
function serialized<T>(scope: Scope, fn: () => Promise<T>): Promise<T> {
  const key = scope.vault.home.root;
  const prev = chains.get(key) ?? Promise.resolve();
  const run = prev.then(fn, fn);
  const tail = run.catch(() => undefined);
  chains.set(key, tail);
  void tail.then(() => {
    if (chains.get(key) === tail) chains.delete(key);
  });
  return run;
}

const isStale = (e: unknown) => e instanceof AppError && e.status === 412;

/** Re-runs a step whose write found other bytes than it read (a desktop edit in between). */
async function retrying<T>(fn: () => Promise<T>, times = 4): Promise<T> {
  for (let i = 1; ; i++) {
    try {
      return await fn();
    } catch (e) {
      if (!isStale(e) || i >= times) throw e;
    }
  }
}

// ---------------------------------------------------------------- Daily note files

export interface DayFile {
  date: string;
  path: string;
  /** The vault's Daily-notes settings this file was found by. */
  daily: DailyNotesSettings;
  exists: boolean;
  text: string;
  etag: string | null;
  day: ParsedDay;
}

/** Where and how this Home names its Daily notes: `.obsidian/daily-notes.json`, else `Journal/YYYY-MM-DD.md`. */
export const dailySettingsOf = (scope: Scope): Promise<DailyNotesSettings> => dailyNotesSettings(scope.vault.home.root);

export async function loadDay(scope: Scope, date: string, daily?: DailyNotesSettings): Promise<DayFile> {
  const settings = daily ?? (await dailySettingsOf(scope));
  const path = dailyNotePath(settings, date);
  checkVisible(scope, path);
  try {
    const { bytes, etag } = await scope.vault.home.read(path);
    const text = bytes.toString('utf8');
    return { date, path, daily: settings, exists: true, text, etag, day: parseDay(text, date, path) };
  } catch (e) {
    if (e instanceof AppError && e.status === 404) return { date, path, daily: settings, exists: false, text: '', etag: null, day: parseDay('', date, path) };
    throw e;
  }
}

/** The text of a Daily note the server creates without a template: its time zone in frontmatter and an empty log. */
export function plainDayText(zone: string | null): string {
  return (zone ? `---\ntimezone: ${zone}\n---\n` : '') + '## Log\n';
}

/**
 * The text of a new Daily note: Obsidian's Daily-notes template filled for
 * the day when the vault names one (with `timezone` added to its
 * frontmatter), else the plain note. A template without a `Log` heading
 * gets one from the first log entry.
 */
async function newDayText(scope: Scope, df: DayFile, zone: string | null, nowMs = Date.now()): Promise<string> {
  if (!df.daily.template) return plainDayText(zone);
  const at = moment().utc(`${df.date}T${clockInZone(nowMs, zone ?? serverZone())}`, 'YYYY-MM-DDTHH:mm:ss', true);
  const title = df.path.slice(df.path.lastIndexOf('/') + 1, -3);
  const text = await dailyFromTemplate(scope, df.daily.template, title, at, df.daily.format);
  if (text === null) return plainDayText(zone);
  if (!zone) return text;
  const facts = extractFacts(text, df.path);
  if (facts.frontmatterError) return text;
  try {
    return editFrontmatter(text, facts.frontmatterRange, { timezone: zone });
  } catch {
    return text; // frontmatter that is not a mapping: the template's text as written
  }
}

async function writeDay(scope: Scope, df: DayFile, text: string, ifMatch?: string): Promise<string> {
  checkWritable(scope, df.path);
  const opts = df.exists ? { ifMatch: ifMatch ?? df.etag!, quotaBytes: scope.quotaBytes } : { ifNoneMatch: '*' as const, quotaBytes: scope.quotaBytes };
  return (await scope.vault.home.write(df.path, text, opts)).etag;
}

/** Puts a file back as it was after a later step of the same operation failed. */
async function revert(scope: Scope, df: DayFile, writtenEtag: string): Promise<void> {
  try {
    if (df.exists) await scope.vault.home.write(df.path, df.text, { ifMatch: writtenEtag });
    else await scope.vault.home.delete(df.path, { ifMatch: writtenEtag });
  } catch {
    /* someone edited it meanwhile: their bytes win */
  }
}

function checkIfMatch(df: DayFile, ifMatch: string): void {
  if (!df.exists || !ifMatchAccepts(ifMatch, df.etag!)) throw errors.staleEtag(df.etag);
}

// ---------------------------------------------------------------- records

function resolveLink(scope: Scope, from: string, l: { target: string; kind: 'wikilink' | 'markdown' }): string | null {
  const p = scope.index.resolve(from, l);
  return p && visible(scope, p) ? p : null;
}

export function entryRecord(scope: Scope, df: DayFile, e: ParsedEntry, ids?: ClientIds) {
  const note = e.note ? resolveLink(scope, df.path, e.note) : null;
  return {
    block_id: e.blockId,
    anchored: e.anchored,
    date: df.date,
    path: df.path,
    line: e.line + 1,
    start: e.parts.start,
    end: e.parts.end,
    tz: e.parts.tz ?? df.day.dayZone,
    title: e.parts.title,
    text: e.parts.text,
    tags: e.tags,
    attachments: e.attachments.map((a) => {
      const path = resolveLink(scope, df.path, a);
      return { target: a.target, embed: a.embed, path, missing: path === null };
    }),
    note: e.note ? { target: e.note.target, path: note, id: note ? (scope.index.noteByPath(note)?.id ?? null) : null } : null,
    client_id: ids?.clientIdOf(e.blockId) ?? null,
    raw: df.day.lines[e.line]!.text,
    etag: df.etag,
  };
}
export type EntryRecord = ReturnType<typeof entryRecord>;

export function dayRecord(scope: Scope, df: DayFile, ids?: ClientIds, attachmentFolder: string | null = null) {
  return {
    date: df.date,
    path: df.path,
    exists: df.exists,
    attachment_folder: attachmentFolder,
    etag: df.etag,
    note_id: df.exists ? (scope.index.noteByPath(df.path)?.id ?? null) : null,
    timezone: df.day.dayZone,
    content: df.exists ? df.text : null,
    entries: df.day.entries.map((e) => entryRecord(scope, df, e, ids)),
    unparsed: df.day.unparsed.map((u) => ({ hash: u.hash, line: u.line + 1, text: u.text })),
  };
}

// ---------------------------------------------------------------- reading days

/** `date` from the query, else today in the zone of `X-Svc-Timezone`, else in the server's zone. */
export function dayFor(nowMs: number, query: { date?: string }, headers: { 'x-svc-timezone'?: string }): { date: string; zone: string } {
  const header = headers['x-svc-timezone'];
  const zone = header !== undefined ? checkZone(header.trim(), 'headers.x-svc-timezone') : serverZone();
  if (query.date !== undefined) return { date: checkDate(query.date, 'query.date'), zone };
  const parts = new Intl.DateTimeFormat('en-US', { timeZone: zone, year: 'numeric', month: '2-digit', day: '2-digit' }).formatToParts(new Date(nowMs));
  const get = (t: string) => parts.find((p) => p.type === t)!.value;
  return { date: `${get('year')}-${get('month')}-${get('day')}`, zone };
}

/** Where files attached to this day's entries belong, by Obsidian's `attachmentFolderPath` (else `Attachments`). */
async function attachmentFolderOf(scope: Scope, df: DayFile): Promise<string | null> {
  return attachmentFolderFor((await attachmentSettings(scope.vault.home.root)).attachmentFolderPath, df.path);
}

export async function getDay(scope: Scope, date: string) {
  const df = await loadDay(scope, date);
  return { record: dayRecord(scope, df, await ClientIds.load(scope.vault.home), await attachmentFolderOf(scope, df)), etag: df.etag };
}

export async function ensureDay(scope: Scope, date: string, zone: string) {
  return serialized(scope, async () => {
    let df = await loadDay(scope, date);
    let created = false;
    if (!df.exists) {
      checkWritable(scope, df.path);
      try {
        await scope.vault.home.write(df.path, await newDayText(scope, df, zone), { ifNoneMatch: '*', quotaBytes: scope.quotaBytes });
        created = true;
      } catch (e) {
        if (!isStale(e)) throw e; // 412: a desktop editor created it a moment ago
      }
      df = await loadDay(scope, date, df.daily);
    }
    const record = dayRecord(scope, df, await ClientIds.load(scope.vault.home), await attachmentFolderOf(scope, df));
    return { record: { ...record, created }, created, etag: df.etag };
  });
}

// ---------------------------------------------------------------- finding entries

interface Located {
  df: DayFile;
  entry: ParsedEntry;
}

function findIn(df: DayFile, blockId: string): ParsedEntry | undefined {
  return df.day.entries.find((e) => e.blockId === blockId);
}

/** The Daily note holding a block id: anchored ids through the index, derived ids through their date. */
async function locate(scope: Scope, blockId: string): Promise<Located> {
  const daily = await dailySettingsOf(scope);
  const dates: string[] = [];
  for (const o of scope.index.blockOwner(blockId)) {
    const d = dateOfDailyNotePath(daily, o.path);
    if (d && visible(scope, o.path) && !dates.includes(d)) dates.push(d);
  }
  const m = /^d(\d{4})(\d{2})(\d{2})-[0-9a-f]{8}$/.exec(blockId);
  if (m) {
    const d = `${m[1]}-${m[2]}-${m[3]}`;
    if (!dates.includes(d)) dates.push(d);
  }
  for (const d of dates) {
    if (!visible(scope, dailyNotePath(daily, d))) continue;
    let df: DayFile;
    try {
      df = await loadDay(scope, d, daily);
    } catch {
      continue;
    }
    const entry = findIn(df, blockId);
    if (entry) return { df, entry };
  }
  throw errors.notFound(`No log entry with block id ${blockId}`, { block_id: blockId });
}

export async function getEntry(scope: Scope, blockId: string) {
  const { df, entry } = await locate(scope, blockId);
  return { record: entryRecord(scope, df, entry, await ClientIds.load(scope.vault.home)), etag: df.etag! };
}

// ---------------------------------------------------------------- creating entries

const IMAGE_EXT = /\.(png|jpe?g|gif|webp|svg|avif|bmp|heic|tiff?)$/i;

function linkText(path: string, embed: boolean): string {
  if (/[[\]|#^]/.test(path)) return `${embed ? '!' : ''}[${embed ? '' : path.split('/').pop()}](<${path}>)`;
  return `${embed ? '!' : ''}[[${path}]]`;
}

function childLine(indent: string, body: string): string {
  return `${indent}- ${body}`;
}

function childIndentOf(day: ParsedDay, e?: ParsedEntry): string {
  return e?.childIndent ?? day.entries.find((x) => x.childIndent)?.childIndent ?? '    ';
}

/** An attachment input: a Home `path` (restores also take the `target` a delete reported). */
export interface AttachmentInput {
  path?: string | null;
  target?: string;
  embed?: boolean;
}

/** Checks attachment inputs (their shape is the action's schema): with `mustExist`, the files must be there. */
async function checkAttachments(scope: Scope, list: ReadonlyArray<AttachmentInput> | undefined, field: string, mustExist: boolean): Promise<Array<{ path: string; embed: boolean }>> {
  const out: Array<{ path: string; embed: boolean }> = [];
  for (const [i, a] of (list ?? []).entries()) {
    const f = `${field}[${i}]`;
    const path = a.path || a.target;
    if (!path || !path.trim()) throw errors.badRequest(`${f}.path must be a Home-relative path`, { field: `${f}.path` });
    const p = path.trim().replace(/^\/+/, '');
    if (mustExist) {
      if (!visible(scope, p) || (await scope.vault.home.etag(p).catch(() => null)) === null) {
        throw errors.notFound(`No such file in the Home: ${p}`, { field: `${f}.path`, path: p });
      }
    }
    out.push({ path: p, embed: a.embed ?? IMAGE_EXT.test(p) });
  }
  return out;
}

/** Cuts the composer's date, time and duration spans out of the text, keeping tags and words. */
function withoutSpans(text: string, spans: ComposerSpan[], kinds: ReadonlySet<string>): string {
  let out = '';
  let at = 0;
  for (const s of spans) {
    if (!kinds.has(s.kind)) continue;
    out += text.slice(at, s.start) + ' ';
    at = s.end;
  }
  out += text.slice(at);
  return out
    .replace(/\s+/g, ' ')
    .replace(/\s+([,;:])/g, '$1')
    .replace(/^[\s,;:\-–—]+|[\s,;:\-–—]+$/g, '')
    .trim();
}

export type Position = { after: string } | { before: string } | { index: number } | null;

export interface CreateSpec {
  field: string;
  date: string;
  start: string | null;
  end: string | null;
  text: string;
  zone: string;
  attachments: Array<{ path: string; embed: boolean }>;
  position: Position;
  clientId: string | null;
}

const CUT_KINDS = new Set(['date', 'time', 'duration']);

/** One log entry to create, as `notes_journal_create_log` and each item of the batch take it. */
export interface LogEntryInput {
  text: string;
  now: string;
  timezone: string;
  client_id?: string | null;
  attachments?: AttachmentInput[];
  position?: Position;
}

/** The semantic checks of one entry (its shape is the action's schema); `field` names it in errors. */
export async function prepareCreate(scope: Scope, body: LogEntryInput, field = 'body'): Promise<CreateSpec> {
  const text = body.text.trim();
  if (!text) throw errors.badRequest('text must not be blank', { field: `${field}.text` });
  if (/[\r\n\u2028\u2029]/.test(text)) {
    throw errors.badRequest('text must be one line; a longer body goes to the entry note (notes_journal_entry_note)', { field: `${field}.text` });
  }
  const zone = checkZone(body.timezone.trim(), `${field}.timezone`);
  const now = parseWallTime(body.now, `${field}.now`);
  if (typeof body.client_id === 'string' && !body.client_id.trim()) {
    throw errors.badRequest('client_id must be a non-empty string or null', { field: `${field}.client_id` });
  }
  let parsed;
  try {
    parsed = parseComposer({ mode: 'event', now: body.now, text });
  } catch (e) {
    if (e instanceof AppError) throw errors.badRequest(e.message, { field: `${field}.${(e as { field?: string }).field ?? 'text'}` });
    throw e;
  }
  const start = parsed.start ?? now.time;
  return {
    field,
    date: parsed.date ?? now.date,
    start,
    // `Walk for 30m` names no time: the entry starts now and the duration gives its end.
    end: parsed.end ?? (parsed.duration_minutes !== null ? endAfter(start, parsed.duration_minutes) : null),
    text: escapeText(withoutSpans(text, parsed.spans, CUT_KINDS)),
    zone,
    attachments: await checkAttachments(scope, body.attachments, `${field}.attachments`, true),
    position: body.position ?? null,
    clientId: typeof body.client_id === 'string' ? body.client_id.trim() : null,
  };
}

function newBlockId(scope: Scope, taken: Set<string>): string {
  for (;;) {
    const b = randomBytes(8);
    let id = String.fromCharCode(97 + (b[0]! % 26));
    for (let i = 1; i < 8; i++) id += '0123456789abcdefghijklmnopqrstuvwxyz'[b[i]! % 36];
    if (!taken.has(id) && scope.index.blockOwner(id).length === 0) {
      taken.add(id);
      return id;
    }
  }
}

/** The lines of a new entry and where they go in the day. */
function insertionFor(day: ParsedDay, lines: string[], start: string | null, position: Position, field: string): Splice {
  if (!day.section) {
    const last = day.lines[day.lines.length - 1];
    const blank = last !== undefined && last.text.trim() !== '' ? [''] : [];
    return { at: day.lines.length, remove: 0, insert: [...blank, '## Log', ...lines] };
  }
  let at: number;
  if (position === null) at = insertionIndex(day, start);
  else if ('index' in position) at = position.index < day.entries.length ? day.entries[position.index]!.line : sectionEnd(day);
  else {
    const id = 'after' in position ? position.after : position.before;
    const ref = day.entries.find((e) => e.blockId === id);
    if (!ref) throw errors.badRequest(`position names block ${id}, which is not an entry of ${day.date}`, { field: `${field}.position` });
    at = 'after' in position ? ref.end : ref.line;
  }
  return { at, remove: 0, insert: lines };
}

function entryLines(day: ParsedDay, spec: Omit<CreateSpec, 'field' | 'clientId' | 'position' | 'date'>, blockId: string, zone: string | null): string[] {
  const prefix = day.entries.find((e) => /^[-*+]/.test(e.prefix))?.prefix ?? '- ';
  const tz = spec.zone !== zone ? `(${spec.zone})` : null;
  const line = prefix + renderEntryContent({ time: formatTime(spec.start, spec.end), tz, title: null, text: spec.text, anchor: blockId });
  const indent = childIndentOf(day);
  return [line, ...spec.attachments.map((a) => childLine(indent, linkText(a.path, a.embed)))];
}

/**
 * Creates entries (one or a batch), all or nothing: every Daily note
 * involved is computed first, then written one write per note; when a write
 * fails the notes already written are put back.
 */
export async function createEntries(scope: Scope, specs: CreateSpec[]): Promise<Array<{ record: EntryRecord; replayed: boolean }>> {
  const seen = new Set<string>();
  for (const s of specs) {
    if (s.clientId === null) continue;
    if (seen.has(s.clientId)) throw errors.badRequest(`client_id ${s.clientId} appears twice in the batch`, { field: `${s.field}.client_id` });
    seen.add(s.clientId);
  }
  return serialized(scope, () =>
    retrying(async () => {
      const ids = await ClientIds.load(scope.vault.home);
      const daily = await dailySettingsOf(scope);
      const taken = new Set<string>();
      const plan: Array<{ spec: CreateSpec; blockId: string; replay: boolean }> = [];
      let recordsChanged = false;
      for (const spec of specs) {
        const rec = spec.clientId !== null ? ids.get('log', spec.clientId) : undefined;
        if (rec) {
          const exists = await locate(scope, rec.block_id).then(
            () => true,
            () => false,
          );
          plan.push({ spec, blockId: rec.block_id, replay: exists });
          taken.add(rec.block_id);
          continue;
        }
        const blockId = newBlockId(scope, taken);
        if (spec.clientId !== null) {
          ids.set('log', spec.clientId, { block_id: blockId, date: spec.date, at: Date.now() });
          recordsChanged = true;
        }
        plan.push({ spec, blockId, replay: false });
      }
      // Compute every Daily note's new text before writing anything.
      const byDate = new Map<string, { df: DayFile; text: string }>();
      for (const p of plan) {
        if (p.replay) continue;
        let cur = byDate.get(p.spec.date);
        if (!cur) {
          checkWritable(scope, dailyNotePath(daily, p.spec.date));
          const df = await loadDay(scope, p.spec.date, daily);
          cur = { df, text: df.exists ? df.text : await newDayText(scope, df, p.spec.zone) };
          byDate.set(p.spec.date, cur);
        }
        const day = parseDay(cur.text, p.spec.date, cur.df.path);
        const lines = entryLines(day, p.spec, p.blockId, day.dayZone);
        cur.text = applySplices(day, [insertionFor(day, lines, p.spec.start, p.spec.position, p.spec.field)]);
      }
      // The client_id record goes first: a retry after a failure below reuses the reserved block id.
      if (recordsChanged) await ids.save();
      const written: Array<{ df: DayFile; etag: string }> = [];
      try {
        for (const { df, text } of byDate.values()) written.push({ df, etag: await writeDay(scope, df, text) });
      } catch (e) {
        for (const w of written.reverse()) await revert(scope, w.df, w.etag);
        throw e;
      }
      const out: Array<{ record: EntryRecord; replayed: boolean }> = [];
      for (const p of plan) {
        const { df, entry } = await locate(scope, p.blockId);
        out.push({ record: entryRecord(scope, df, entry, ids), replayed: p.replay });
      }
      return out;
    }),
  );
}

// ---------------------------------------------------------------- editing entries

/** The entry's line with its block id written in (unchanged otherwise). */
function anchoredLine(df: DayFile, e: ParsedEntry): string {
  const t = df.day.lines[e.line]!.text;
  return e.anchored ? t : `${t.trimEnd()} ^${e.blockId}`;
}

function anchorSplice(df: DayFile, e: ParsedEntry): Splice[] {
  return e.anchored ? [] : [{ at: e.line, remove: 1, insert: [anchoredLine(df, e)] }];
}

const TAG_OK = /^[\p{L}\p{M}\p{N}_\-/]+$/u;

function retag(text: string, tags: string[]): string {
  const want = tags.map((t) => t.replace(/^#/, '').trim());
  for (const t of want) {
    if (!t || !TAG_OK.test(t) || /^\d+$/.test(t)) throw errors.badRequest(`${JSON.stringify(t)} is not a valid tag`, { field: 'body.tags' });
  }
  const keep = new Set(want.map((t) => t.toLowerCase()));
  let out = text.replace(/(^|[\s([{,;])#([\p{L}\p{M}\p{N}_\-/]+)/gu, (m, pre: string, tag: string) =>
    keep.has(tag.replace(/\/+$/, '').toLowerCase()) || /^\d+$/.test(tag) ? m : pre,
  );
  out = out.replace(/[ \t]{2,}/g, ' ').trim();
  const have = new Set(tagsOf(out).map((t) => t.toLowerCase()));
  const add = want.filter((t, i) => !have.has(t.toLowerCase()) && want.findIndex((x) => x.toLowerCase() === t.toLowerCase()) === i);
  return [out, ...add.map((t) => `#${t}`)].filter(Boolean).join(' ');
}

export interface EntryPatch {
  date?: string | null;
  start?: string | null;
  end?: string | null;
  title?: string | null;
  tz?: string | null;
  tags?: string[] | null;
}

export async function patchEntry(scope: Scope, blockId: string, ifMatch: string, patch: EntryPatch) {
  return serialized(scope, async () => {
    const { df, entry: e } = await locate(scope, blockId);
    checkWritable(scope, df.path);
    checkIfMatch(df, ifMatch);
    const p = e.parts;
    const targetDate = patch.date === undefined || patch.date === null ? df.date : checkDate(patch.date, 'body.date');
    const moving = targetDate !== df.date;
    const target = moving ? await loadDay(scope, targetDate, df.daily) : df;
    if (moving) checkWritable(scope, target.path);
    const targetZone = moving ? (target.exists ? target.day.dayZone : df.day.dayZone) : df.day.dayZone;

    const start = patch.start === undefined ? p.start : patch.start === null ? null : checkClock(patch.start, 'body.start');
    let end = patch.end === undefined ? (start === null ? null : p.end) : patch.end === null ? null : checkClock(patch.end, 'body.end');
    if (patch.start === null && patch.end === undefined) end = null;
    if (end !== null && start === null) throw errors.badRequest('end needs a start time', { field: 'body.end' });
    const timeChanged = start !== p.start || end !== p.end;
    const time = timeChanged ? formatTime(start, end) : p.timeRaw;

    const oldZone = p.tz ?? df.day.dayZone;
    const zone = patch.tz === undefined ? oldZone : patch.tz === null || patch.tz.trim() === '' ? targetZone : checkZone(patch.tz.trim(), 'body.tz');
    const tz = zone !== null && zone !== targetZone ? `(${zone})` : null;
    const tzChanged = tz !== null ? p.tz !== zone || p.tzRaw === null : p.tzRaw !== null;

    let titleRaw = p.titleRaw;
    if (patch.title !== undefined) {
      const t = (patch.title ?? '').trim();
      if (/[\r\n]|\*\*/.test(t)) throw errors.badRequest('title must be one line without "**"', { field: 'body.title' });
      titleRaw = t ? `**${t}**` : null;
    }
    const titleChanged = titleRaw !== p.titleRaw;
    const text = patch.tags === undefined || patch.tags === null ? p.text : retag(p.text, patch.tags);
    const changed = timeChanged || tzChanged || titleChanged || text !== p.text;
    const line = changed
      ? e.prefix + renderEntryContent({ time, tz: tzChanged ? tz : p.tzRaw, title: titleRaw, text, anchor: e.blockId })
      : anchoredLine(df, e);
    if (changed && !parseEntryContent(line.slice(e.prefix.length))) throw errors.badRequest('The change would make the entry unreadable', { field: 'body' });

    if (!moving) {
      await writeDay(scope, df, applySplices(df.day, [{ at: e.line, remove: 1, insert: [line] }]), ifMatch);
    } else {
      const block = [line, ...df.day.lines.slice(e.line + 1, e.end).map((l) => l.text)];
      const base = target.exists ? target.text : await newDayText(scope, target, df.day.dayZone);
      const tday = parseDay(base, targetDate, target.path);
      const tText = applySplices(tday, [insertionFor(tday, block, start, null, 'body')]);
      const sText = applySplices(df.day, [{ at: e.line, remove: e.end - e.line, insert: [] }]);
      const tEtag = await writeDay(scope, target, tText);
      try {
        await writeDay(scope, df, sText, ifMatch);
      } catch (err) {
        await revert(scope, target, tEtag);
        throw err;
      }
    }
    const found = await locate(scope, blockId);
    return { record: entryRecord(scope, found.df, found.entry, await ClientIds.load(scope.vault.home)), etag: found.df.etag! };
  });
}

export async function deleteEntry(scope: Scope, blockId: string, ifMatch: string) {
  return serialized(scope, async () => {
    const { df, entry: e } = await locate(scope, blockId);
    checkWritable(scope, df.path);
    checkIfMatch(df, ifMatch);
    const before = entryRecord(scope, df, e);
    const etag = await writeDay(scope, df, applySplices(df.day, [{ at: e.line, remove: e.end - e.line, insert: [] }]), ifMatch);
    return {
      deleted: blockId,
      date: df.date,
      path: df.path,
      etag,
      attachments: before.attachments.map((a) => ({ path: a.path ?? a.target, target: a.target, embed: a.embed })),
    };
  });
}

/** Runs an edit of one entry with no caller If-Match: re-reads and retries if the note changed under it. */
function editEntry<T>(scope: Scope, blockId: string, edit: (df: DayFile, e: ParsedEntry) => Promise<{ splices: Splice[]; extra: T }>) {
  return serialized(scope, () =>
    retrying(async () => {
      const { df, entry } = await locate(scope, blockId);
      checkWritable(scope, df.path);
      const { splices, extra } = await edit(df, entry);
      if (splices.length) await writeDay(scope, df, applySplices(df.day, splices));
      const found = await locate(scope, blockId);
      return { record: entryRecord(scope, found.df, found.entry, await ClientIds.load(scope.vault.home)), etag: found.df.etag!, extra };
    }),
  );
}

function attachmentSplices(scope: Scope, df: DayFile, e: ParsedEntry, add: Array<{ path: string; embed: boolean }>): Splice[] {
  const present = new Set(e.attachments.flatMap((a) => [a.target, resolveLink(scope, df.path, a) ?? a.target]));
  const fresh = add.filter((a, i) => !present.has(a.path) && add.findIndex((b) => b.path === a.path) === i);
  if (!fresh.length) return anchorSplice(df, e);
  const indent = childIndentOf(df.day, e);
  const lines = fresh.map((a) => childLine(indent, linkText(a.path, a.embed)));
  const lastAttachment = e.attachments[e.attachments.length - 1];
  const at = lastAttachment ? lastAttachment.line + 1 : e.end;
  return [...anchorSplice(df, e), { at, remove: 0, insert: lines }];
}

export async function addAttachments(scope: Scope, blockId: string, list: AttachmentInput[]) {
  const add = await checkAttachments(scope, list, 'body.attachments', true);
  if (!add.length) throw errors.badRequest('attachments must name at least one file', { field: 'body.attachments' });
  return editEntry(scope, blockId, async (df, e) => ({ splices: attachmentSplices(scope, df, e, add), extra: null }));
}

export async function restoreAttachments(scope: Scope, blockId: string, list: AttachmentInput[]) {
  const add = await checkAttachments(scope, list, 'body.attachments', false);
  const missing: string[] = [];
  for (const a of add) if (!visible(scope, a.path) || (await scope.vault.home.etag(a.path).catch(() => null)) === null) missing.push(a.path);
  const r = await editEntry(scope, blockId, async (df, e) => ({ splices: attachmentSplices(scope, df, e, add), extra: null }));
  return { record: { ...r.record, missing }, etag: r.etag };
}

export async function removeAttachment(scope: Scope, blockId: string, target: string) {
  const t = target.trim().replace(/^\/+/, '');
  const r = await editEntry(scope, blockId, async (df, e) => {
    const a = e.attachments.find((x) => x.target === t || x.target === target || resolveLink(scope, df.path, x) === t);
    if (!a) throw errors.notFound(`The entry has no attachment ${t}`, { target: t, block_id: blockId });
    const path = resolveLink(scope, df.path, a);
    return {
      splices: [...anchorSplice(df, e), { at: a.line, remove: 1, insert: [] }],
      extra: { target: a.target, path: path ?? a.target, embed: a.embed },
    };
  });
  return { record: { ...r.record, removed: r.extra }, etag: r.etag };
}

/**
 * Adds child line `- <body>` below an entry (writing its block id into the line, so links to
 * the entry keep working), unless the entry has that child line already. The calendar's
 * links to events use it (docs/calendar.md, "Journal links").
 */
export async function addEntryLine(scope: Scope, blockId: string, body: string) {
  if (/[\r\n]/.test(body)) throw errors.badRequest('A child line must be one line', { field: 'body' });
  return editEntry(scope, blockId, async (df, e) => {
    for (let i = e.line + 1; i < e.end; i++) {
      if (df.day.lines[i]!.text.trim().replace(/^([-*+]|\d{1,9}[.)])[ \t]+/, '') === body) return { splices: anchorSplice(df, e), extra: null };
    }
    return { splices: [...anchorSplice(df, e), { at: e.end, remove: 0, insert: [childLine(childIndentOf(df.day, e), body)] }], extra: null };
  });
}

// ---------------------------------------------------------------- the entry's note

function noteTitleFor(df: DayFile, e: ParsedEntry): string {
  const base = (e.parts.title ?? e.parts.text.replace(/(^|\s)#[^\s#]+/gu, ' ').replace(/[[\]*_`]/g, ''))
    .replace(/\s+/g, ' ')
    .trim()
    .slice(0, 80)
    .trim();
  return `${base || 'Log entry'} ${df.date}`;
}

export async function entryNote(scope: Scope, blockId: string, body: string, clientId: string | null) {
  return serialized(scope, async () => {
    const ids = await ClientIds.load(scope.vault.home);
    const rec = clientId ? ids.get('note', clientId) : undefined;
    if (rec?.note_id && scope.index.noteById(rec.note_id)) {
      const { df, entry } = await locate(scope, blockId);
      return { record: { ...entryRecord(scope, df, entry, ids), note_written: false }, etag: df.etag!, created: false };
    }
    let { df, entry: e } = await locate(scope, blockId);
    checkWritable(scope, df.path);
    const existingPath = e.note ? resolveLink(scope, df.path, e.note) : null;
    const existing = existingPath ? scope.index.noteByPath(existingPath) : undefined;
    let noteId: string;
    let notePath: string;
    let created = false;
    if (existing) {
      const { etag } = await scope.vault.home.read(existing.path);
      const n = await updateNote(scope, existing.id, etag, { body });
      noteId = n.id;
      notePath = n.path;
    } else {
      const n = await createNote(scope, { title: noteTitleFor(df, e), body });
      noteId = n.id;
      notePath = n.path;
      created = true;
      await retrying(async () => {
        ({ df, entry: e } = await locate(scope, blockId));
        const indent = childIndentOf(df.day, e);
        const line = childLine(indent, `Note: ${linkText(notePath.replace(/\.md$/i, ''), false)}`);
        await writeDay(scope, df, applySplices(df.day, [...anchorSplice(df, e), { at: e.end, remove: 0, insert: [line] }]));
      });
    }
    if (clientId) {
      ids.set('note', clientId, { block_id: blockId, note_id: noteId, note_path: notePath, at: Date.now() });
      await ids.save();
    }
    const found = await locate(scope, blockId);
    return { record: { ...entryRecord(scope, found.df, found.entry, ids), note_written: true }, etag: found.df.etag!, created };
  });
}

// ---------------------------------------------------------------- fixing unparsed lines

export async function fixLine(scope: Scope, date: string, hash: string, ifMatch: string) {
  checkDate(date, 'path.date');
  return serialized(scope, async () => {
    const df = await loadDay(scope, date);
    checkWritable(scope, df.path);
    if (!df.exists) throw errors.notFound(`No Daily note for ${date}`, { date });
    checkIfMatch(df, ifMatch);
    const u = df.day.unparsed.find((x) => x.hash === hash);
    if (!u) throw errors.notFound(`No unparsed log line with hash ${hash} in ${date}`, { date, hash });
    // Quote and list markers are structure, not text.
    let content = u.text.trim().replace(/^(?:>\s*)+/, '').replace(/^([-*+]|\d{1,9}[.)])\s+/, '');
    const kept = /(?:^|\s)\^([A-Za-z0-9-]+)$/.exec(content);
    content = content.replace(/(^|\s+)\^[A-Za-z0-9-]+$/, '').trim();
    let start: string | null = null;
    let end: string | null = null;
    let text = content;
    if (content) {
      const r = parseComposer({ mode: 'event', now: `${date}T00:00`, text: content.slice(0, 2000) });
      start = r.start;
      end = r.end;
      if (start !== null) text = withoutSpans(content, r.spans, new Set(['time', 'duration']));
    }
    // A block id already written on the line is kept (links to it keep working).
    const id = kept && !df.day.entries.some((e) => e.blockId === kept[1]) ? kept[1]! : newBlockId(scope, new Set());
    const line = '- ' + renderEntryContent({ time: formatTime(start, end), tz: null, title: null, text: escapeText(text), anchor: id });
    const next = applySplices(df.day, [{ at: u.line, remove: 1, insert: [line] }]);
    const check = parseDay(next, date, df.path);
    if (!check.entries.some((x) => x.blockId === id)) {
      throw new AppError('conflict', 'This line cannot be turned into a log entry automatically; edit it by hand', {
        details: { reason: 'cannot_fix', hash },
      });
    }
    await writeDay(scope, df, next, ifMatch);
    const found = await locate(scope, id);
    return { record: entryRecord(scope, found.df, found.entry, await ClientIds.load(scope.vault.home)), etag: found.df.etag! };
  });
}
