/**
 * What a visitor gets from a public link: its details, a folder's entries, downloads, previews,
 * thumbnails, the notes a shared note links to, and a canvas's elements. Every function takes an
 * `OpenLink` (access.ts: slug, password and expiry already checked) and reaches files only
 * through `locate`, or through the index for the notes a note link shares.
 */
import { promises as fsp } from 'node:fs';
import { reply } from '../actions/reply.js';
import { paths } from '../core/config.js';
import { AppError, errors } from '../core/errors.js';
import type { Services } from '../core/services.js';
import type { NoteEntry } from '../index/types.js';
import { parseCanvasNote } from '../canvas/excalidraw-file.js';
import { visible } from '../notes/access.js';
import { etagOf, normalizeEtag, parseEtagList } from '../vault/etag.js';
import { isIgnoredPath, isTempName } from '../vault/ignore.js';
import { contentEtag, itemIdOf, locate, locateRel, plainEntry, readLocated, requirePermission, streamLocated, WHOLE_MAX, type Located, type OpenLink } from './access.js';
import { mimeOf, previewKind } from './media.js';
import { noteDocument, noteHtml, type LinkResolver } from './render.js';
import { ThumbCache, thumbSize } from './thumbs.js';

export const ENTRIES_PAGE = 200;
/** What tells a file's kind: as much as looksLikeText reads. */
const SNIFF_BYTES = 8192;

/** Headers on every file a visitor receives: it is the owner's content, not this site's page. */
const FILE_HEADERS = {
  'x-content-type-options': 'nosniff',
  'content-security-policy': "default-src 'none'; img-src 'self' data:; style-src 'unsafe-inline'; sandbox",
  'cache-control': 'private, no-cache',
};

/** The actions a link allows a visitor, by target kind and permission. */
export function allowedActions(open: Pick<OpenLink, 'link'>): string[] {
  const { target, permissions: p } = open.link;
  const out = ['info'];
  if (p.view) {
    if (target.kind === 'folder') out.push('entries', 'public_preview', 'public_thumb');
    if (target.kind === 'file') out.push('public_preview', 'public_thumb');
    if (target.kind === 'note') out.push('public_preview', 'public_linked_notes', 'linked_note');
    if (target.kind === 'canvas') out.push('public_canvas_view');
  }
  if (p.download) out.push('public_download');
  if (p.upload) out.push('public_upload_create', 'public_upload_head', 'public_upload_patch', 'public_upload_terminate');
  if (p.edit) out.push('edit_read', 'edit_session', 'edit_write');
  return out.sort();
}

const baseName = (p: string) => p.slice(p.lastIndexOf('/') + 1);

export async function info(open: OpenLink) {
  const { link } = open;
  const here = await locateRel(open, '');
  return {
    slug: link.slug,
    kind: link.target.kind,
    title: open.note?.title ?? baseName(open.targetPath),
    permissions: link.permissions,
    allowed_actions: allowedActions(open),
    has_password: link.password_hash !== null,
    expires_at: link.expires_at,
    size: here.kind === 'file' ? here.size : null,
    mime: here.kind === 'file' ? mimeOf(here.path) : null,
    updated: Math.floor(here.mtimeMs),
  };
}

// ---- entries ----------------------------------------------------------------------------------

/** `c.` + base64url of [folder below the target, sort key of the last entry sent]. */
const cursorOf = (folder: string, key: string) => `c.${Buffer.from(JSON.stringify([folder, key]), 'utf8').toString('base64url')}`;

function fromCursor(item: string): [string, string] {
  try {
    const v = JSON.parse(Buffer.from(item.slice(2), 'base64url').toString('utf8')) as unknown;
    if (Array.isArray(v) && v.length === 2 && typeof v[0] === 'string' && typeof v[1] === 'string') return [v[0], v[1]];
  } catch {
    /* below */
  }
  throw errors.badRequest('item is not a cursor this server issued; pass next_cursor back unchanged as `item`', { field: 'query.item' });
}

export interface Entry {
  id: string;
  name: string;
  path: string;
  kind: 'file' | 'folder';
  size: number;
  mtime: string;
  mime: string | null;
}

/**
 * One page of a shared folder (or a folder below it), folders first, then by name. The next
 * page is asked for with `item` = `next_cursor` (the spec gives `entries` no cursor parameter).
 */
export async function entries(open: OpenLink, q: { item?: string; path?: string }) {
  requirePermission(open, 'view');
  if (open.link.target.kind !== 'folder') throw errors.badRequest('Only a folder link has entries', { reason: 'not_a_folder_link' });
  let after: string | null = null;
  let folder: Located;
  if (q.item?.startsWith('c.')) {
    if (q.path !== undefined) throw errors.badRequest('Give `item` or `path`, not both', { field: 'query' });
    const [rel, key] = fromCursor(q.item);
    folder = await locateRel(open, rel);
    after = key;
  } else {
    folder = await locate(open, q);
  }
  if (folder.kind !== 'folder') throw errors.badRequest('This is a file, not a folder', { reason: 'not_a_folder' });
  let names: string[];
  try {
    names = await fsp.readdir(folder.abs);
  } catch {
    throw errors.notFound('No such file in this public link', { reason: 'absent' });
  }
  const rows: Array<Entry & { key: string }> = [];
  await Promise.all(
    names.map(async (name) => {
      if (name.startsWith('.') || isTempName(name)) return;
      const rel = folder.rel === '' ? name : `${folder.rel}/${name}`;
      const home = `${open.targetPath}/${rel}`;
      if (isIgnoredPath(home) || !visible(open.scope, home)) return;
      const st = await plainEntry(open.scope, home);
      if (st === null) return;
      const kind = st.isDirectory() ? 'folder' : 'file';
      rows.push({
        key: `${kind === 'folder' ? 0 : 1}${name}`,
        id: itemIdOf(rel),
        name,
        path: rel,
        kind,
        size: kind === 'file' ? st.size : 0,
        mtime: st.mtime.toISOString(),
        mime: kind === 'file' ? mimeOf(name) : null,
      });
    }),
  );
  rows.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  const rest = after === null ? rows : rows.filter((r) => r.key > after!);
  const page = rest.slice(0, ENTRIES_PAGE);
  return {
    folder: { id: itemIdOf(folder.rel), path: folder.rel },
    entries: page.map(({ key: _key, ...e }) => e),
    next_cursor: rest.length > ENTRIES_PAGE ? cursorOf(folder.rel, page[page.length - 1]!.key) : null,
  };
}

// ---- files ------------------------------------------------------------------------------------

/** The file a download or preview names: a located file, or for a note link one of its linked notes (by note id). */
async function fileFor(open: OpenLink, q: { item?: string; path?: string }): Promise<{ file: Located; note: NoteEntry | null }> {
  if (open.note !== null && q.item !== undefined && !q.item.startsWith('i.') && q.path === undefined) {
    const note = linkedNote(open, q.item);
    const file = await locateRel({ ...open, targetPath: note.path, note }, '');
    return { file, note };
  }
  const file = await locate(open, q);
  if (file.kind !== 'file') throw errors.badRequest('This is a folder; name a file in it with `item` or `path`', { reason: 'is_folder' });
  return { file, note: file.rel === '' ? open.note : open.scope.index.noteByPath(file.path) ?? null };
}

const quoteName = (name: string) => `attachment; filename="${name.replace(/[^\x20-\x7e]|["\\]/g, '_')}"; filename*=UTF-8''${encodeURIComponent(name)}`;

/**
 * `streamed` (the HTTP surface) sends a file over WHOLE_MAX as a stream; smaller files, and every
 * file on the other surfaces (up to WHOLE_MAX), go whole in one write.
 */
export async function download(open: OpenLink, q: { item?: string; path?: string }, streamed = false) {
  requirePermission(open, 'download');
  const { file } = await fileFor(open, q);
  if (streamed && file.size > WHOLE_MAX) {
    const etag = await contentEtag(file);
    const { stream, size } = await streamLocated(file);
    return reply(undefined, {
      etag,
      stream,
      contentType: mimeOf(file.path) ?? 'application/octet-stream',
      headers: { ...FILE_HEADERS, 'content-length': String(size), 'content-disposition': quoteName(baseName(file.path)) },
    });
  }
  const bytes = await readLocated(file);
  return reply(bytes, {
    etag: etagOf(bytes),
    contentType: mimeOf(file.path) ?? 'application/octet-stream',
    headers: { ...FILE_HEADERS, 'content-disposition': quoteName(baseName(file.path)) },
  });
}

export type ByteRange = { start: number; end: number } | 'unsatisfiable' | null;

/**
 * One `bytes=` range of a `size`-byte body (RFC 9110 §14.1.2): null when there is none to honour
 * (absent, another unit, several ranges, malformed: the whole body is sent), 'unsatisfiable' for
 * one that starts past the end.
 */
export function parseRange(header: string | null | undefined, size: number): ByteRange {
  if (!header) return null;
  const m = /^\s*bytes\s*=\s*(\d*)\s*-\s*(\d*)\s*$/i.exec(header);
  if (!m || (m[1] === '' && m[2] === '')) return null;
  if (m[1] === '') {
    const n = Number(m[2]);
    if (n === 0) return 'unsatisfiable';
    return { start: Math.max(0, size - n), end: size - 1 };
  }
  const start = Number(m[1]);
  const end = m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1);
  if (m[2] !== '' && Number(m[2]) < start) return null;
  if (start >= size) return 'unsatisfiable';
  return { start, end };
}

const noPreview = (open: OpenLink) =>
  new AppError('bad_request', `No preview for this kind of file; ${open.link.permissions.download ? 'download it instead' : 'the link does not offer a download'}`, {
    status: 415,
    details: { reason: 'no_preview' },
  });

const unsatisfiable = (size: number) =>
  new AppError('bad_request', `The range starts past the end of the ${size}-byte preview`, {
    status: 416,
    details: { reason: 'range_not_satisfiable', size: String(size) },
    headers: { 'content-range': `bytes */${size}` },
  });

const matches = (inm: string | null | undefined, etag: string) => !!inm && parseEtagList(inm).some((t) => t === '*' || normalizeEtag(t) === etag);

/**
 * A browser-viewable rendition: a note as an HTML document, images, PDF and UTF-8 text as their
 * bytes. `If-None-Match` → 304; one `bytes=` range → 206. A file is read only as far as asked:
 * its first 8 KiB tell its kind, its ETag is hashed once per version, and a range reads just
 * that range (at most WHOLE_MAX bytes of it), so files of any size are previewed in ranges.
 */
export async function preview(
  open: OpenLink,
  q: { item?: string; path?: string },
  h: { 'if-none-match'?: string | null; range?: string | null },
  streamed = false,
) {
  requirePermission(open, 'view');
  if (open.link.target.kind === 'canvas') throw errors.badRequest('A canvas link is viewed with public_canvas_view', { reason: 'canvas_link' });
  const { file, note } = await fileFor(open, q);
  const head = await readLocated(file, { start: 0, end: SNIFF_BYTES - 1 });
  const kind = previewKind(file.path, head);
  if (kind === null) throw noPreview(open);
  const headers: Record<string, string> = { ...FILE_HEADERS, 'accept-ranges': 'bytes' };
  if (kind === 'note') {
    const text = (await readLocated(file)).toString('utf8');
    const html = Buffer.from(noteDocument(note?.title ?? baseName(file.path).replace(/\.md$/i, ''), noteHtml(text, resolverFor(open, file.path))), 'utf8');
    const etag = etagOf(html);
    if (matches(h['if-none-match'], etag)) return reply(undefined, { status: 304, etag, headers });
    const range = parseRange(h.range, html.length);
    if (range === 'unsatisfiable') throw unsatisfiable(html.length);
    if (range === null) return reply(html, { etag, contentType: 'text/html; charset=utf-8', headers });
    return reply(html.subarray(range.start, range.end + 1), {
      status: 206,
      etag,
      contentType: 'text/html; charset=utf-8',
      headers: { ...headers, 'content-range': `bytes ${range.start}-${range.end}/${html.length}` },
    });
  }
  const contentType = kind === 'text' ? 'text/plain; charset=utf-8' : mimeOf(file.path)!;
  if (contentType === 'application/pdf') headers['content-security-policy'] = "default-src 'none'; img-src 'self' data:; style-src 'unsafe-inline'; object-src 'self'";
  const etag = await contentEtag(file);
  if (matches(h['if-none-match'], etag)) return reply(undefined, { status: 304, etag, headers });
  const range = parseRange(h.range, file.size);
  if (range === 'unsatisfiable') throw unsatisfiable(file.size);
  if (range === null && streamed && file.size > WHOLE_MAX) {
    const { stream, size } = await streamLocated(file);
    return reply(undefined, { etag, contentType, stream, headers: { ...headers, 'content-length': String(size) } });
  }
  if (range === null) return reply(await readLocated(file), { etag, contentType, headers });
  const end = Math.min(range.end, range.start + WHOLE_MAX - 1);
  const bytes = await readLocated(file, { start: range.start, end });
  return reply(bytes, {
    status: 206,
    etag,
    contentType,
    headers: { ...headers, 'content-range': `bytes ${range.start}-${range.start + bytes.length - 1}/${file.size}` },
  });
}

const thumbCaches = new Map<string, ThumbCache>();

export async function thumb(services: Services, open: OpenLink, q: { item?: string; path?: string; s: number }) {
  requirePermission(open, 'view');
  const s = thumbSize(q.s);
  const { file } = await fileFor(open, q);
  const dir = `${paths.cache(services.config)}/thumbs`;
  let cache = thumbCaches.get(dir);
  if (!cache) thumbCaches.set(dir, (cache = new ThumbCache(dir)));
  const t = await cache.get({ abs: file.abs, size: file.size, mtimeMs: file.mtimeMs, ino: file.ino, read: () => readLocated(file) }, s);
  return reply(t.bytes, { etag: t.etag, contentType: t.contentType, headers: { ...FILE_HEADERS, 'cache-control': 'private, max-age=300' } });
}

// ---- notes a note link shares -----------------------------------------------------------------

/** The notes a shared note links to, in the order it first links to them: visible to the link's prefix, no symlinked files. */
function linkedNotes(open: OpenLink): NoteEntry[] {
  if (open.note === null || open.link.target.kind !== 'note') throw errors.badRequest('Only a note link has linked notes', { reason: 'not_a_note_link' });
  const index = open.scope.index;
  const seen = new Set<string>([open.note.path]);
  const out: NoteEntry[] = [];
  for (const l of index.outgoing(open.note.path)) {
    if (l.resolved === null || seen.has(l.resolved)) continue;
    seen.add(l.resolved);
    const n = index.noteByPath(l.resolved);
    if (n && visible(open.scope, n.path) && !isIgnoredPath(n.path)) out.push(n);
  }
  return out;
}

function linkedNote(open: OpenLink, id: string): NoteEntry {
  const n = linkedNotes(open).find((x) => x.id === id);
  if (!n) throw errors.notFound('The shared note links to no note with this id', { id });
  return n;
}

export function listLinkedNotes(open: OpenLink) {
  requirePermission(open, 'view');
  return { notes: linkedNotes(open).map((n) => ({ id: n.id, title: n.title, size: n.size, updated: n.updated })) };
}

export async function readLinkedNote(open: OpenLink, id: string) {
  requirePermission(open, 'view');
  const note = linkedNote(open, id);
  const file = await locateRel({ ...open, targetPath: note.path, note }, '');
  return reply((await readLocated(file)).toString('utf8'), { contentType: 'text/markdown; charset=utf-8', headers: FILE_HEADERS });
}

// ---- links inside a shared note ---------------------------------------------------------------

const IMAGE = /\.(png|jpe?g|gif|webp|avif|svg)$/i;

/**
 * Where links in a note shown through this link lead: to the page of another note the same link
 * shares (a note in the shared folder; for a note link, the notes it links to), to the preview of
 * an image in the shared folder; anything else stays text.
 */
export function resolverFor(open: OpenLink, fromPath: string): LinkResolver {
  const base = `/p/${encodeURIComponent(open.link.slug)}`;
  const api = `/api/v1/public/${encodeURIComponent(open.link.slug)}`;
  const index = open.scope.index;
  const inFolder = (p: string) => open.link.target.kind === 'folder' && p.startsWith(open.targetPath + '/');
  const shared = (p: string): string | null => {
    const rel = p.slice(open.targetPath.length + 1);
    if (inFolder(p) && !rel.split('/').some((s) => s.startsWith('.')) && !isIgnoredPath(p) && visible(open.scope, p)) return rel;
    return null;
  };
  const targetOf = (target: string) => target.replace(/[#^].*$/, '').trim();
  return {
    href(target, kind) {
      const t = targetOf(target);
      if (t === '') return null;
      const p = index.resolve(fromPath, { target: t, kind });
      if (p === null) return null;
      if (open.link.target.kind === 'note') {
        if (p === open.targetPath) return base;
        const n = linkedNotes(open).find((x) => x.path === p);
        return n ? `${base}?note=${encodeURIComponent(n.id)}` : null;
      }
      const rel = shared(p);
      return rel === null ? null : `${base}?path=${encodeURIComponent(rel)}`;
    },
    imageSrc(target, kind) {
      const t = targetOf(target);
      if (!IMAGE.test(t)) return null;
      const p = index.resolve(fromPath, { target: t, kind });
      const rel = p === null ? null : shared(p);
      return rel === null ? null : `${api}/preview?path=${encodeURIComponent(rel)}`;
    },
  };
}

// ---- canvas -----------------------------------------------------------------------------------

/** Only http(s) links leave a canvas as they are: a link into the Home is something the visitor was not given. */
const OPEN_LINK = /^https?:\/\//i;

/**
 * The canvas's elements as stored, but every element that points into the Home (a `link` to a
 * note, an image whose file is not embedded in the drawing) is a placeholder: same place and
 * size, no link, no file, `customData.quire_placeholder` true.
 */
export async function canvasView(open: OpenLink) {
  requirePermission(open, 'view');
  if (open.link.target.kind !== 'canvas' || open.note === null) throw errors.badRequest('Only a canvas link has a canvas view', { reason: 'not_a_canvas_link' });
  const file = await locateRel(open, '');
  const bytes = await readLocated(file);
  let scene;
  try {
    scene = parseCanvasNote(bytes.toString('utf8')).scene;
  } catch (e) {
    throw new AppError('conflict', 'The canvas cannot be read right now (its drawing is not in a form this server reads)', {
      details: { reason: 'unreadable_canvas', detail: (e as Error).message.slice(0, 200) },
    });
  }
  const files = scene.files ?? {};
  const embedded: Record<string, unknown> = {};
  let placeholders = 0;
  const elements = scene.elements.map((el) => {
    const e = el as Record<string, unknown>;
    const link = typeof e.link === 'string' && e.link !== '' ? e.link : null;
    const fileId = typeof e.fileId === 'string' ? e.fileId : null;
    const fileData = fileId !== null ? (files[fileId] as { dataURL?: unknown } | undefined) : undefined;
    const inlineImage = fileData !== undefined && typeof fileData.dataURL === 'string' && fileData.dataURL.startsWith('data:image/');
    if (fileId !== null && inlineImage) embedded[fileId] = fileData;
    const hidden = (link !== null && !OPEN_LINK.test(link)) || (e.type === 'image' && !inlineImage);
    if (!hidden) return e;
    placeholders++;
    const { link: _l, fileId: _f, ...rest } = e;
    return { ...rest, link: null, customData: { ...(e.customData as object | undefined), quire_placeholder: true } };
  });
  return {
    id: open.note.id,
    title: open.note.title,
    etag: etagOf(bytes),
    elements,
    app_state: { viewBackgroundColor: scene.appState?.viewBackgroundColor ?? '#ffffff' },
    files: embedded,
    placeholders,
  };
}
