/**
 * Tag rewrites: preview, rename (small, at once), start a rewrite job
 * (any size, in the background), its status, undo, and reconciling the tag
 * index with the files. docs/tags-rewrite.md describes the rules.
 *
 * Every rewritten file is written with `If-Match` at the ETag just read (on
 * 412 it is re-read and retried once). Before a file is written, its
 * previous bytes are saved under `<data>/state/rewrites/<id>/blobs/`, and
 * once written an entry (path, ETag before, ETag written) is appended to
 * `entries.jsonl`, so an undo — even after a crash or restart — restores
 * exactly the previous bytes of every file nobody edited since.
 */
import fs from 'node:fs';
import path from 'node:path';
import { callerOf, type ActionContext } from '../actions/context.js';
import { reply } from '../actions/reply.js';
import { paths } from '../core/config.js';
import { AppError, errors } from '../core/errors.js';
import { newId } from '../core/ids.js';
import { extractFacts } from '../markdown/extract.js';
import { checkWritable, openScope, visible, type Scope } from '../notes/access.js';
import { writeFileAtomic } from '../vault/atomic.js';
import { etagOf } from '../vault/etag.js';
import { isIgnoredPath, isTempName } from '../vault/ignore.js';
import { jobsOf } from '../jobs/handlers.js';
import { normalizeTag, renameInText, type LineChange } from './rewrite-text.js';

/** `rename_tag` changes at most this many files at once; above it, use `start_rewrite` (or send `confirmed: true`). */
export const RENAME_SYNC_MAX_FILES = 50;
/** `preview_rename` lists at most this many files (`truncated` tells when there are more). */
export const PREVIEW_MAX_FILES = 1_000;

export type RewriteState = 'running' | 'succeeded' | 'failed' | 'cancelled' | 'interrupted' | 'undone';

interface Manifest {
  id: string;
  owner: string;
  old_tag: string;
  new_tag: string;
  state: RewriteState;
  job_id: string | null;
  created_at: number;
  finished_at: number | null;
  progress: { done: number; total: number };
  files_changed: number;
  occurrences: number;
  failed: Array<{ path: string; reason: string }>;
  undo: null | { at: number; restored: number; skipped: Array<{ path: string; reason: string }> };
}

interface Entry {
  path: string;
  /** Pack file under blobs/ and the previous bytes' place in it. */
  blob: string;
  offset: number;
  length: number;
  before_etag: string;
  after_etag: string;
}

/** Rewrites in progress in this process, by id (their manifests on disk lag behind). */
const live = new Map<string, Manifest>();

const dirOf = (ctx: ActionContext, id: string) => path.join(paths.state(ctx.services.config), 'rewrites', id);

function publicRewrite(m: Manifest) {
  const { owner: _owner, ...rest } = m;
  return { ...rest, undoable: m.files_changed > 0 && m.state !== 'running' && m.state !== 'undone' };
}

interface Body {
  old_tag: string;
  new_tag: string;
  confirmed?: boolean;
}

function parseBody(body: Body): { oldTag: string; newTag: string } {
  const oldTag = normalizeTag(body.old_tag, 'body.old_tag');
  const newTag = normalizeTag(body.new_tag, 'body.new_tag');
  if (oldTag === newTag) throw errors.badRequest('old_tag and new_tag are the same tag', { field: 'body.new_tag', reason: 'same_tag' });
  return { oldTag, newTag };
}

/** Notes the index says use the tag (or a nested one), visible to the caller, by path. */
function candidates(scope: Scope, oldTag: string): string[] {
  return scope.index
    .notesWithTag(oldTag, { nested: true })
    .filter((n) => visible(scope, n.path))
    .map((n) => n.path);
}

/** True when the new tag already names notes (the rename merges two tags). */
function mergesIntoExisting(scope: Scope, oldTag: string, newTag: string): boolean {
  if (newTag.toLowerCase() === oldTag.toLowerCase()) return false;
  return scope.index.notesWithTag(newTag, { nested: true }).some((n) => visible(scope, n.path));
}

export async function previewRename(ctx: ActionContext, body: Body) {
  const scope = await openScope(ctx);
  const { oldTag, newTag } = parseBody(body);
  const files: Array<{ path: string; occurrences: number; changes: LineChange[] }> = [];
  let fileCount = 0;
  let occurrences = 0;
  for (const p of candidates(scope, oldTag)) {
    let text: string;
    try {
      text = (await scope.vault.home.read(p)).bytes.toString('utf8');
    } catch {
      continue;
    }
    let r;
    try {
      r = renameInText(text, p, oldTag, newTag);
    } catch {
      r = null;
    }
    if (!r) continue;
    fileCount++;
    occurrences += r.occurrences;
    if (files.length < PREVIEW_MAX_FILES) files.push({ path: p, occurrences: r.occurrences, changes: r.changes });
  }
  return {
    old_tag: oldTag,
    new_tag: newTag,
    file_count: fileCount,
    occurrences,
    files,
    truncated: fileCount > files.length,
    merges_into_existing: mergesIntoExisting(scope, oldTag, newTag),
    needs_rewrite_job: fileCount > RENAME_SYNC_MAX_FILES,
    rename_max_files: RENAME_SYNC_MAX_FILES,
  };
}

// ---- the rewrite itself ----------------------------------------------------------

class RewriteLog {
  private fh: fs.promises.FileHandle | null = null;
  private n = 0;
  private entries = 0;
  constructor(private readonly dir: string) {}

  async open(): Promise<void> {
    await fs.promises.mkdir(path.join(this.dir, 'blobs'), { recursive: true });
    this.fh = await fs.promises.open(path.join(this.dir, 'entries.jsonl'), 'a');
  }

  /**
   * Saves the previous bytes of several files in one pack (one fsync for the
   * batch) before any of them is overwritten; returns where each one sits.
   */
  async savePack(files: Buffer[]): Promise<Array<{ blob: string; offset: number; length: number }>> {
    const name = `${++this.n}.pack`;
    await writeFileAtomic(path.join(this.dir, 'blobs', name), Buffer.concat(files));
    let offset = 0;
    return files.map((b) => {
      const at = { blob: name, offset, length: b.length };
      offset += b.length;
      return at;
    });
  }

  async append(e: Entry): Promise<void> {
    await this.fh!.appendFile(JSON.stringify(e) + '\n');
    if (++this.entries % 50 === 0) await this.fh!.datasync();
  }

  async close(): Promise<void> {
    if (!this.fh) return;
    await this.fh.datasync().catch(() => undefined);
    await this.fh.close();
    this.fh = null;
  }
}

async function saveManifest(dir: string, m: Manifest): Promise<void> {
  await writeFileAtomic(path.join(dir, 'manifest.json'), JSON.stringify(m, null, 1));
}

async function loadManifest(ctx: ActionContext, id: string): Promise<Manifest> {
  const caller = callerOf(ctx);
  const notFound = errors.notFound(`No tag update ${id}`, { id });
  if (!/^[0-9a-f-]{36}$/.test(id)) throw notFound;
  let m = live.get(id);
  if (!m) {
    try {
      m = JSON.parse(await fs.promises.readFile(path.join(dirOf(ctx, id), 'manifest.json'), 'utf8')) as Manifest;
    } catch {
      throw notFound;
    }
    // On disk as running but not running here: the process that ran it stopped.
    if (m.state === 'running') m.state = 'interrupted';
  }
  if (m.owner !== caller.userId) throw notFound;
  return m;
}

type FileOutcome = { kind: 'changed'; occurrences: number } | { kind: 'unchanged' } | { kind: 'failed'; reason: string };

/** A file read and renamed in memory, not yet written. */
interface Planned {
  path: string;
  bytes: Buffer;
  etag: string;
  text: string;
  occurrences: number;
}

type PlanResult = { kind: 'planned'; plan: Planned } | { kind: 'unchanged' } | { kind: 'failed'; reason: string };

async function planFile(scope: Scope, p: string, oldTag: string, newTag: string): Promise<PlanResult> {
  if (!visible(scope, p)) return { kind: 'failed', reason: 'outside_home_prefix' };
  let bytes: Buffer;
  let etag: string;
  try {
    ({ bytes, etag } = await scope.vault.home.read(p));
  } catch {
    return { kind: 'failed', reason: 'deleted' };
  }
  const text = bytes.toString('utf8');
  if (!Buffer.from(text, 'utf8').equals(bytes)) return { kind: 'failed', reason: 'not_utf8' };
  let r;
  try {
    r = renameInText(text, p, oldTag, newTag);
  } catch (e) {
    return { kind: 'failed', reason: e instanceof AppError ? (e.details?.reason ?? e.code) : 'invalid_frontmatter' };
  }
  if (!r) return { kind: 'unchanged' };
  return { kind: 'planned', plan: { path: p, bytes, etag, text: r.text, occurrences: r.occurrences } };
}

/** Writes one planned file at the ETag it was read at; on 412 re-reads and retries once. */
async function writePlanned(scope: Scope, log: RewriteLog, plan: Planned, at: { blob: string; offset: number; length: number }, oldTag: string, newTag: string): Promise<FileOutcome> {
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const w = await scope.vault.home.write(plan.path, plan.text, { ifMatch: plan.etag, quotaBytes: scope.quotaBytes });
      await log.append({ path: w.path, ...at, before_etag: plan.etag, after_etag: w.etag });
      return { kind: 'changed', occurrences: plan.occurrences };
    } catch (e) {
      if (!(e instanceof AppError && e.status === 412) || attempt > 0) {
        return { kind: 'failed', reason: e instanceof AppError && e.status === 412 ? 'changed_during_rewrite' : e instanceof AppError ? (e.details?.reason ?? e.code) : 'write_failed' };
      }
      // Edited meanwhile: re-read, save those bytes, and retry once.
      const again = await planFile(scope, plan.path, oldTag, newTag);
      if (again.kind !== 'planned') return again.kind === 'unchanged' ? { kind: 'unchanged' } : again;
      plan = again.plan;
      at = (await log.savePack([plan.bytes]))[0]!;
    }
  }
  return { kind: 'failed', reason: 'changed_during_rewrite' };
}

/** Files per batch: their previous bytes go to one pack, synced once, before any of them is written. */
const BATCH = 50;

async function runRewrite(scope: Scope, dir: string, m: Manifest, files: string[], signal: AbortSignal | null, onProgress: (done: number, total: number) => void): Promise<void> {
  const log = new RewriteLog(dir);
  await log.open();
  m.progress = { done: 0, total: files.length };
  let lastSave = Date.now();
  const count = (p: string, out: FileOutcome) => {
    if (out.kind === 'changed') {
      m.files_changed++;
      m.occurrences += out.occurrences;
    } else if (out.kind === 'failed') {
      m.failed.push({ path: p, reason: out.reason });
    }
    m.progress.done++;
    onProgress(m.progress.done, m.progress.total);
  };
  try {
    for (let i = 0; i < files.length && !signal?.aborted; i += BATCH) {
      const plans: Planned[] = [];
      for (const p of files.slice(i, i + BATCH)) {
        const r = await planFile(scope, p, m.old_tag, m.new_tag);
        if (r.kind === 'planned') plans.push(r.plan);
        else count(p, r);
      }
      const places = plans.length > 0 ? await log.savePack(plans.map((x) => x.bytes)) : [];
      for (let k = 0; k < plans.length; k++) {
        if (signal?.aborted) break;
        count(plans[k]!.path, await writePlanned(scope, log, plans[k]!, places[k]!, m.old_tag, m.new_tag));
      }
      if (Date.now() - lastSave > 1_000) {
        lastSave = Date.now();
        await saveManifest(dir, m);
      }
    }
  } finally {
    await log.close();
    m.state = signal?.aborted ? 'cancelled' : m.failed.length > 0 && m.files_changed === 0 ? 'failed' : 'succeeded';
    m.finished_at = Date.now();
    await saveManifest(dir, m);
  }
}

async function newRewrite(ctx: ActionContext, oldTag: string, newTag: string, total: number): Promise<{ m: Manifest; dir: string }> {
  const m: Manifest = {
    id: newId(),
    owner: callerOf(ctx).userId,
    old_tag: oldTag,
    new_tag: newTag,
    state: 'running',
    job_id: null,
    created_at: Date.now(),
    finished_at: null,
    progress: { done: 0, total },
    files_changed: 0,
    occurrences: 0,
    failed: [],
    undo: null,
  };
  const dir = dirOf(ctx, m.id);
  await fs.promises.mkdir(dir, { recursive: true });
  await saveManifest(dir, m);
  return { m, dir };
}

function checkMerge(scope: Scope, oldTag: string, newTag: string, confirmed: boolean | undefined): void {
  if (!confirmed && mergesIntoExisting(scope, oldTag, newTag)) {
    throw new AppError('conflict', `Notes already use #${newTag}; renaming #${oldTag} merges the two tags. Send confirmed: true to go ahead`, {
      details: { reason: 'tag_exists', tag: newTag },
    });
  }
}

/** `rename_tag`: renames at once, up to 50 files (more with `confirmed: true`); undoable like a rewrite. */
export async function renameTag(ctx: ActionContext, body: Body) {
  const scope = await openScope(ctx);
  const { oldTag, newTag } = parseBody(body);
  const files = candidates(scope, oldTag);
  if (files.length === 0) throw errors.notFound(`No note has the tag #${oldTag}`, { tag: oldTag });
  if (files.length > RENAME_SYNC_MAX_FILES && !body.confirmed) {
    throw new AppError('conflict', `#${oldTag} is used in ${files.length} files; rename_tag changes at most ${RENAME_SYNC_MAX_FILES} at once. Use start_rewrite (a background job with progress), or send confirmed: true`, {
      details: { reason: 'too_many_files', files: String(files.length), max: String(RENAME_SYNC_MAX_FILES), hint: 'start_rewrite' },
    });
  }
  checkMerge(scope, oldTag, newTag, body.confirmed);
  const { m, dir } = await newRewrite(ctx, oldTag, newTag, files.length);
  live.set(m.id, m);
  try {
    await runRewrite(scope, dir, m, files, null, () => undefined);
  } finally {
    live.delete(m.id);
  }
  return publicRewrite(m);
}

/** `start_rewrite`: a background job over the Home; answers 202 with the rewrite's id and job id. */
export async function startRewrite(ctx: ActionContext, body: Body) {
  const scope = await openScope(ctx);
  const { oldTag, newTag } = parseBody(body);
  checkMerge(scope, oldTag, newTag, body.confirmed);
  const jobs = jobsOf(ctx);
  const files = candidates(scope, oldTag);
  const { m, dir } = await newRewrite(ctx, oldTag, newTag, files.length);
  live.set(m.id, m);
  const job = jobs.start(
    m.owner,
    'tag_rewrite',
    async (job) => {
      try {
        await runRewrite(scope, dir, m, files, job.signal, (done, total) => job.progress(done, total));
      } finally {
        live.delete(m.id);
      }
      return { rewrite_id: m.id, files_changed: m.files_changed, failed: m.failed.length, state: m.state };
    },
    { total: files.length, meta: { rewrite_id: m.id, old_tag: oldTag, new_tag: newTag } },
  );
  m.job_id = job.id;
  await saveManifest(dir, m);
  // The command line's local vault mode exits after the call: finish the job first there.
  if (ctx.surface === 'local') {
    await jobs.wait(job.id);
    return publicRewrite(m);
  }
  return reply(publicRewrite(m), { status: 202 });
}

export async function rewriteStatus(ctx: ActionContext, id: string) {
  return publicRewrite(await loadManifest(ctx, id));
}

/** Restores the previous bytes of every file the rewrite wrote that nobody edited since; reports the others. */
export async function undoRewrite(ctx: ActionContext, id: string) {
  const scope = await openScope(ctx);
  const m = await loadManifest(ctx, id);
  if (m.state === 'running') {
    throw new AppError('conflict', 'This tag update is still running; cancel its job or wait for it to finish', { details: { reason: 'rewrite_running', job_id: m.job_id ?? '' } });
  }
  if (m.state === 'undone') throw new AppError('conflict', 'This tag update was already undone', { details: { reason: 'already_undone' } });
  const dir = dirOf(ctx, id);
  let lines: string[] = [];
  try {
    lines = (await fs.promises.readFile(path.join(dir, 'entries.jsonl'), 'utf8')).split('\n').filter(Boolean);
  } catch {
    lines = [];
  }
  const entries: Entry[] = [];
  for (const l of lines) {
    try {
      entries.push(JSON.parse(l) as Entry);
    } catch {
      // a torn last line after a crash: that file's write may not have happened; its ETag check below decides
    }
  }
  let restored = 0;
  const skipped: Array<{ path: string; reason: string }> = [];
  const packs = new Map<string, Buffer>();
  for (const e of entries.reverse()) {
    try {
      checkWritable(scope, e.path);
    } catch {
      skipped.push({ path: e.path, reason: 'outside_home_prefix' });
      continue;
    }
    let current: string;
    try {
      current = (await scope.vault.home.read(e.path)).etag;
    } catch {
      skipped.push({ path: e.path, reason: 'deleted' });
      continue;
    }
    if (current !== e.after_etag) {
      skipped.push({ path: e.path, reason: 'edited_since' });
      continue;
    }
    let pack = packs.get(e.blob);
    if (!pack) {
      pack = await fs.promises.readFile(path.join(dir, 'blobs', path.basename(e.blob))).catch(() => Buffer.alloc(0));
      packs.set(e.blob, pack);
    }
    const previous = pack.subarray(e.offset, e.offset + e.length);
    if (etagOf(previous) !== e.before_etag) {
      skipped.push({ path: e.path, reason: 'undo_data_damaged' });
      continue;
    }
    try {
      await scope.vault.home.write(e.path, previous, { ifMatch: e.after_etag, quotaBytes: scope.quotaBytes });
      restored++;
    } catch (err) {
      skipped.push({ path: e.path, reason: err instanceof AppError && err.status === 412 ? 'edited_since' : 'write_failed' });
    }
  }
  skipped.sort((a, b) => (a.path < b.path ? -1 : 1));
  m.state = 'undone';
  m.undo = { at: Date.now(), restored, skipped };
  await saveManifest(dir, m);
  return { id: m.id, state: m.state, restored, skipped };
}

// ---- reconcile -------------------------------------------------------------------

async function walkNotes(root: string, rel = '', out: string[] = []): Promise<string[]> {
  let entries: fs.Dirent[];
  try {
    entries = await fs.promises.readdir(rel ? path.join(root, rel) : root, { withFileTypes: true });
  } catch {
    return out;
  }
  for (const ent of entries) {
    const child = rel ? `${rel}/${ent.name}` : ent.name;
    if (isTempName(ent.name) || isIgnoredPath(child)) continue;
    if (ent.isDirectory()) await walkNotes(root, child, out);
    else if (ent.isFile() && ent.name.toLowerCase().endsWith('.md')) out.push(child);
  }
  return out;
}

const sameTags = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((x, i) => x === b[i]);

/**
 * `tags_reconcile`: re-reads every note in the Home (or the caller's prefix),
 * re-derives its tags, fixes index entries that disagree with the files,
 * adds notes the index missed and drops ones no longer on disk.
 */
export async function reconcileTags(ctx: ActionContext) {
  const scope = await openScope(ctx);
  const index = scope.index;
  const onDisk = (await walkNotes(scope.vault.root)).filter((p) => visible(scope, p));
  const seen = new Set(onDisk);
  const fixed: Array<{ path: string; indexed: string[]; on_disk: string[] }> = [];
  const added: string[] = [];
  const removed: string[] = [];
  for (const p of onDisk) {
    let bytes: Buffer;
    let st: fs.Stats;
    try {
      const abs = path.join(scope.vault.root, p);
      [bytes, st] = await Promise.all([fs.promises.readFile(abs), fs.promises.stat(abs)]);
    } catch {
      continue;
    }
    const text = bytes.toString('utf8');
    const facts = extractFacts(text, p);
    const entry = index.noteByPath(p);
    const etag = etagOf(bytes);
    if (entry && entry.etag === etag && sameTags(entry.tags, facts.tags)) continue;
    if (!entry) added.push(p);
    else if (!sameTags(entry.tags, facts.tags)) fixed.push({ path: p, indexed: [...entry.tags], on_disk: facts.tags });
    index.upsertNote(p, facts, { size: bytes.length, mtimeMs: st.mtimeMs, etag, birthtimeMs: st.birthtimeMs }, text);
  }
  for (const n of [...index.notes()]) {
    if (visible(scope, n.path) && !seen.has(n.path)) {
      removed.push(n.path);
      index.remove(n.path);
    }
  }
  return { checked: onDisk.length, fixed, added, removed, changed: fixed.length + added.length + removed.length > 0 };
}
