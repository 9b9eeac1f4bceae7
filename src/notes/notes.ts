/**
 * Notes: create, read, list, update, move, delete, links, backlinks, tags
 * and search. Functions take a Scope (the caller's vault and index) and
 * plain values, so HTTP, the command line and the local vault mode share them.
 */
import { randomUUID } from 'node:crypto';
import { AppError, errors } from '../core/errors.js';
import { compareKeys, decodeCursor, encodeCursor } from '../core/cursor.js';
import type { NoteEntry, ResolvedLink } from '../index/home-index.js';
import { renderCanvasNote } from '../canvas/excalidraw-file.js';
import { extractFacts } from '../markdown/extract.js';
import { bodyOf, editFrontmatter } from './frontmatter.js';
import { checkVisible, checkWritable, visible, type Scope } from './access.js';
import type { Vault } from '../vault/vault.js';
import { nameKey } from '../vault/paths.js';
import { cachedList } from './answer-cache.js';
import { checkFrontmatterValues, checkTagList, checkTitle } from './limits.js';
import { noteRecord, type NotePage, type NoteRecord, type SearchResult } from './note-list.js';

export { noteRecord, type NoteRecord, type SearchResult } from './note-list.js';

/** Rule 1 of the notes area: new Notes go to the flat `Notes/` root. */
export const NOTES_ROOT = 'Notes/';

export function checkNotesFolder(folder: string | null | undefined): void {
  if (folder === undefined || folder === null || folder === '' || folder === 'Notes' || folder === NOTES_ROOT) return;
  throw new AppError('bad_request', `folder must be "${NOTES_ROOT}" (Notes live in the flat Notes/ root)`, {
    details: { field: 'body.folder' },
  });
}


export function findNote(scope: Scope, id: string): NoteEntry {
  const n = scope.index.noteById(id);
  if (!n || !visible(scope, n.path)) throw errors.notFound(`No note with id ${id}`, { id });
  return n;
}

/** Longest file name `fileNameFor` returns, in UTF-8 bytes (file systems allow 255; room is left for " 10000" and the extension). */
export const FILE_NAME_MAX_BYTES = 200;
/** UTF-16 code units of the title a file name is made from: enough for 200 bytes after whitespace runs collapse. */
const NAME_SOURCE_MAX = 1024;
const NOT_IN_NAME = /[\u0000-\u001f\u007f/\\:*?"<>|#^[\]]/g;
/** What is stripped from the front of a name anyway (so a name is never hidden or dot-led). */
const KEPT_FIRST = /[^\s.\u0000-\u001f\u007f/\\:*?"<>|#^[\]]/;
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;
// Made at the first file name: making one loads ICU's break rules, 10-15 ms of a server's start (docs/performance.md, "Start-up").
let graphemes: Intl.Segmenter | undefined;

/**
 * A file name for a title: no path or link syntax characters, never hidden
 * (no leading dot), never an ignored temp name, at most FILE_NAME_MAX_BYTES
 * cut at a grapheme boundary. Linear in the title: only a bounded prefix is
 * looked at, so a megabyte title costs microseconds (docs/notes-api.md, "File names").
 */
export function fileNameFor(title: string): string {
  // Skip what would be stripped from the front anyway, then look at a bounded prefix only.
  let from = title.search(KEPT_FIRST);
  if (from < 0) from = title.length;
  let to = Math.min(title.length, from + NAME_SOURCE_MAX);
  const cut = to < title.length;
  // Never end inside a surrogate pair.
  if (cut && /[\ud800-\udbff]/.test(title[to - 1]!)) to--;
  let name = title
    .slice(from, to)
    // A lone surrogate has no UTF-8 form: the disk would store U+FFFD under a name the index does not know.
    .replace(LONE_SURROGATE, '\ufffd')
    .replace(NOT_IN_NAME, ' ')
    .replace(/\s+/g, ' ')
    // `..quire-tmp-x` must not become our own temp-file marker (ignored, so never indexed).
    .replace(/\.+(?=quire-tmp-)/g, '')
    .trim();
  let bytes = 0;
  let end = 0;
  const parts = [...(graphemes ??= new Intl.Segmenter(undefined, { granularity: 'grapheme' })).segment(name)];
  // A prefix cut mid-grapheme (a base letter without its combining mark) loses that last grapheme.
  const usable = cut ? parts.length - 1 : parts.length;
  for (let i = 0; i < usable; i++) {
    const seg = parts[i]!.segment;
    bytes += Buffer.byteLength(seg, 'utf8');
    if (bytes > FILE_NAME_MAX_BYTES) break;
    end += seg.length;
  }
  name = name.slice(0, end).replace(/^[\s.]+|[\s.]+$/g, '');
  return name || 'Untitled';
}

/** Names being written right now, per Home (by `nameKey`), so concurrent creates with one title pick different names. */
const claimedNames = new WeakMap<object, Set<string>>();
/** Most notes `writeNewNote` numbers from one base name. */
const MAX_SAME_NAME = 10_000;

/**
 * Writes a new file under Notes/, adding " 2", " 3", ... when the name is
 * taken (in any case). Names the index already knows, or another request is
 * writing, are skipped without touching the disk or the writer lock; the
 * write's If-None-Match still catches a file the index has not seen yet.
 */
export async function writeNewNote(scope: Scope, base: string, ext: string, text: string): Promise<string> {
  let claimed = claimedNames.get(scope.vault.home);
  if (!claimed) claimedNames.set(scope.vault.home, (claimed = new Set()));
  for (let n = 1; n <= MAX_SAME_NAME; n++) {
    const path = `${NOTES_ROOT}${base}${n === 1 ? '' : ` ${n}`}${ext}`;
    const key = nameKey(path);
    if (claimed.has(key) || scope.index.has(path)) continue;
    checkWritable(scope, path);
    claimed.add(key);
    try {
      await scope.vault.home.write(path, text, { ifNoneMatch: '*', quotaBytes: scope.quotaBytes });
      return path;
    } catch (e) {
      if (e instanceof AppError && (e.status === 412 || e.code === 'name_conflict_case')) continue;
      throw e;
    } finally {
      claimed.delete(key);
    }
  }
  throw errors.conflict(`Too many notes named "${base}"`);
}

function entryAt(scope: Scope, path: string): NoteEntry {
  const n = scope.index.noteByPath(path);
  if (!n) throw new AppError('internal', 'The note was written but is not in the index');
  return n;
}

export async function createNote(
  scope: Scope,
  input: { title: string; body?: string | null; tags?: string[] | null; folder?: string | null; canvas?: boolean },
  now = new Date(),
): Promise<NoteRecord> {
  checkNotesFolder(input.folder);
  const title = checkTitle(input.title, 'body.title');
  checkTagList(input.tags ?? [], 'body.tags');
  const id = randomUUID();
  const tags = (input.tags ?? []).map((t) => t.replace(/^#/, '').trim()).filter(Boolean);
  let text: string;
  let ext = '.md';
  if (input.canvas) {
    text = renderCanvasNote({ title, id, tags });
    ext = '.excalidraw.md';
  } else {
    const fm: Record<string, unknown> = { id, title, created: now.toISOString() };
    if (tags.length) fm.tags = tags;
    text = editFrontmatter('', null, fm) + (input.body ?? '');
  }
  const path = await writeNewNote(scope, fileNameFor(title), ext, text);
  return noteRecord(entryAt(scope, path));
}

export async function getNote(scope: Scope, id: string) {
  const n = findNote(scope, id);
  const { bytes, etag } = await scope.vault.home.read(n.path);
  const text = bytes.toString('utf8');
  const facts = n.facts;
  return {
    // Not a spread of the record: see docs/architecture.md, "What a request must not leave in the old generation".
    record: Object.assign(noteRecord(n), { etag, frontmatter: facts.frontmatter ?? {}, body: bodyOf(text, facts.frontmatterRange) }),
    etag,
  };
}

const SORTS = ['title', 'created', 'updated'] as const;
type Sort = (typeof SORTS)[number];

interface Sorted {
  generation: number;
  keyed: Array<{ note: NoteEntry; key: unknown[] }>;
}
/** Each vault's notes in each sort order, rebuilt only after the index changed. */
const sortedViews = new WeakMap<Vault, Map<Sort, Sorted>>();

function sortedNotes(scope: Scope, sort: Sort): Sorted['keyed'] {
  let views = sortedViews.get(scope.vault);
  if (!views) sortedViews.set(scope.vault, (views = new Map()));
  const cached = views.get(sort);
  if (cached && cached.generation === scope.vault.generation) return cached.keyed;
  const keyOf = (n: NoteEntry): unknown[] =>
    sort === 'title' ? [n.title.toLowerCase(), n.path] : [sort === 'created' ? n.created : n.updated, n.path];
  const keyed = [...scope.index.notes()].map((note) => ({ note, key: keyOf(note) }));
  keyed.sort((a, b) => compareKeys(a.key, b.key));
  views.set(sort, { generation: scope.vault.generation, keyed });
  return keyed;
}

/** A page of notes in the requested order (records: `noteList` in note-list.ts). */
export function listNotes(
  scope: Scope,
  q: { cursor?: string; limit?: number; path?: string; sort?: string; recent?: boolean },
): NotePage {
  const spec = q.sort ?? (q.recent ? '-updated' : 'title');
  const descending = spec.startsWith('-');
  const sort = spec.replace(/^-/, '');
  if (!(SORTS as readonly string[]).includes(sort)) {
    throw errors.badRequest(`sort must be one of ${SORTS.join(', ')} (prefix "-" for descending)`, { field: 'query.sort' });
  }
  const limit = Math.max(1, Math.min(q.limit ?? 50, 500));
  const all = sortedNotes(scope, sort as Sort);
  const after = decodeCursor(q.cursor);
  const dir = descending ? -1 : 1;
  const items: NoteEntry[] = [];
  let lastKey: unknown[] | null = null;
  let more = false;
  // Walk in the requested direction from just past the cursor's key (a binary search finds it).
  let lo = 0;
  let hi = all.length;
  if (after) {
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (compareKeys(all[mid]!.key, after) <= 0) lo = mid + 1;
      else hi = mid;
    }
  }
  // `lo` is the first key past the cursor; going down, skip the cursor's own note when it is still there.
  let start = descending ? all.length - 1 : 0;
  if (after && !descending) start = lo;
  if (after && descending) start = lo > 0 && compareKeys(all[lo - 1]!.key, after) === 0 ? lo - 2 : lo - 1;
  for (let i = start; i >= 0 && i < all.length; i += dir) {
    const { note, key } = all[i]!;
    if (!visible(scope, note.path) || (q.path && !note.path.startsWith(q.path))) continue;
    if (items.length === limit) {
      more = true;
      break;
    }
    items.push(note);
    lastKey = key;
  }
  return { entries: items, next_cursor: more && lastKey ? encodeCursor(lastKey) : null };
}

/** Reads a note's current bytes under the caller's If-Match (the write re-checks under the lock). */
async function currentText(scope: Scope, n: NoteEntry) {
  const { bytes, etag } = await scope.vault.home.read(n.path);
  return { text: bytes.toString('utf8'), etag };
}

export async function updateNote(
  scope: Scope,
  id: string,
  ifMatch: string,
  change: { title?: string; body?: string; tags?: string[]; frontmatter?: Record<string, unknown> },
): Promise<NoteRecord> {
  if (change.title !== undefined) checkTitle(change.title, 'body.title');
  if (change.tags !== undefined) checkTagList(change.tags, 'body.tags');
  if (change.frontmatter !== undefined) checkFrontmatterValues(change.frontmatter, 'body.frontmatter');
  const n = findNote(scope, id);
  checkWritable(scope, n.path);
  const { text } = await currentText(scope, n);
  // Facts of the bytes just read: the index may not have seen an edit made a moment ago.
  const facts = extractFacts(text, n.path);
  const fm: Record<string, unknown> = { ...(change.frontmatter ?? {}) };
  if (change.title !== undefined) fm.title = change.title;
  if (change.tags !== undefined) fm.tags = change.tags.map((t) => t.replace(/^#/, ''));
  // Keep the note's id stable: the id it answers under is written down on the first server write
  // (a path-derived one, also when another note owns the frontmatter id this copy carries).
  if (facts.id !== n.id) fm.id = n.id;
  // Edit the frontmatter block on its own so the body's bytes stay exactly as they were.
  const headEnd = facts.frontmatterRange?.end ?? (text.startsWith('\uFEFF') ? 1 : 0);
  const head = editFrontmatter(text.slice(0, headEnd), facts.frontmatterRange, fm, { frontmatterError: facts.frontmatterError });
  const next = head + (change.body ?? text.slice(headEnd));
  await scope.vault.home.write(n.path, next, { ifMatch, quotaBytes: scope.quotaBytes });
  return noteRecord(entryAt(scope, n.path));
}

export async function deleteNote(scope: Scope, id: string, ifMatch: string) {
  const n = findNote(scope, id);
  checkWritable(scope, n.path);
  await scope.vault.home.delete(n.path, { ifMatch });
  return { deleted: id, path: n.path };
}

export async function moveNote(scope: Scope, id: string, ifMatch: string, folder: string): Promise<NoteRecord> {
  if (folder !== NOTES_ROOT && folder !== 'Notes') {
    throw errors.badRequest(`folder must be "${NOTES_ROOT}": only the flat Notes/ root is a valid folder`, { field: 'body.folder' });
  }
  const n = findNote(scope, id);
  const name = n.path.split('/').pop()!;
  const target = `${NOTES_ROOT}${name}`;
  checkWritable(scope, n.path);
  checkWritable(scope, target);
  if (target === n.path) {
    const etag = await scope.vault.home.etag(n.path);
    if (etag !== null && ifMatch.replace(/^W\//, '').replace(/"/g, '') !== etag) throw errors.staleEtag(etag);
    return noteRecord(n);
  }
  let ifMatchNow = ifMatch;
  if (n.facts.id !== n.id) {
    // Write the id it answers under into the note first so the move keeps its identity.
    const { text } = await currentText(scope, n);
    const facts = extractFacts(text, n.path);
    const withId = editFrontmatter(text, facts.frontmatterRange, { id: n.id }, { frontmatterError: facts.frontmatterError });
    ifMatchNow = (await scope.vault.home.write(n.path, withId, { ifMatch, quotaBytes: scope.quotaBytes })).etag;
  }
  await scope.vault.home.move(n.path, target, { ifMatch: ifMatchNow });
  return noteRecord(entryAt(scope, target));
}

function linkRecord(l: ResolvedLink, scope: Scope) {
  const target = l.resolved && visible(scope, l.resolved) ? scope.index.noteByPath(l.resolved) : undefined;
  return {
    target: l.target,
    heading: l.heading,
    block_id: l.blockId,
    alias: l.alias,
    embed: l.embed,
    kind: l.kind,
    line: l.line,
    resolved_path: l.resolved && visible(scope, l.resolved) ? l.resolved : null,
    resolved_id: target?.id ?? null,
  };
}

export function noteLinks(scope: Scope, id: string) {
  const n = findNote(scope, id);
  return { items: scope.index.outgoing(n.path).map((l) => linkRecord(l, scope)), next_cursor: null };
}

export function backlinksOf(scope: Scope, path: string) {
  checkVisible(scope, path);
  if (!scope.index.has(path)) throw errors.notFound(`No such file: ${path}`, { path });
  return cachedList(scope.index, `backlinks\0${scope.prefix ?? ''}\0${path}`, () => ({
    items: scope.index
      .backlinks(path)
      .filter((b) => visible(scope, b.from))
      .map((b) => {
        const src = scope.index.noteByPath(b.from);
        return {
          path: b.from,
          id: src?.id ?? null,
          title: src?.title ?? null,
          occurrences: b.occurrences.map((o) => ({ line: o.line, embed: o.embed, heading: o.heading, block_id: o.blockId })),
        };
      }),
    next_cursor: null,
  }));
}

export function noteBacklinks(scope: Scope, id: string) {
  return backlinksOf(scope, findNote(scope, id).path);
}

export function notesByTag(scope: Scope, tag: string): NotePage {
  const t = tag.replace(/^#/, '');
  const entries = scope.index.notesWithTag(t, { nested: true }).filter((n) => visible(scope, n.path));
  return { entries, next_cursor: null };
}

/** Search hits the caller may see, best first, with their note entries. */
export async function searchNotes(scope: Scope, q: { q: string; limit?: number; path?: string; tag?: string }): Promise<SearchResult[]> {
  const query = q.q.trim();
  if (!query) throw errors.badRequest('q must not be blank', { field: 'query.q' });
  const hits = await scope.index.search(query, {
    limit: Math.min(q.limit ?? 20, 200),
    pathPrefix: q.path ?? scope.prefix ?? undefined,
    tag: q.tag,
  });
  return hits.filter((h) => visible(scope, h.path)).map((h) => ({ entry: scope.index.noteByPath(h.path)!, score: h.score, terms: h.terms }));
}

/** A Note about a Home file: frontmatter `linked_file` names it, the body embeds it. */
export async function createLinked(scope: Scope, path: string, now = new Date()): Promise<NoteRecord> {
  checkVisible(scope, path);
  if (!scope.index.has(path)) throw errors.notFound(`No such file: ${path}`, { path });
  const name = path.split('/').pop()!;
  const title = `About ${name}`;
  const id = randomUUID();
  const text = editFrontmatter('', null, { id, title, linked_file: path, created: now.toISOString() }) + `# ${title}\n\n![[${path}]]\n\n`;
  const written = await writeNewNote(scope, fileNameFor(title), '.md', text);
  return noteRecord(entryAt(scope, written));
}

export function linkedNotes(scope: Scope, path: string) {
  checkVisible(scope, path);
  const items = [...scope.index.notes()]
    .filter((n) => visible(scope, n.path) && n.frontmatter?.linked_file === path)
    .sort((a, b) => (a.path < b.path ? -1 : 1))
    .map(noteRecord);
  return { items, next_cursor: null };
}
