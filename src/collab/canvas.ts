/**
 * Canvas Notes through collaboration: merge complete elements into the
 * scene stored in the note (the Excalidraw plugin's `.excalidraw.md`
 * layout), and export the scene as SVG or PNG in byte chunks. Every chunk
 * of one render carries the same ETag: the hash of the whole rendered file.
 */
import { reply } from '../actions/reply.js';
import { AppError } from '../core/errors.js';
import { parseCanvasNote, replaceScene } from '../canvas/excalidraw-file.js';
import { chunk } from '../canvas/export.js';
import { renderNoteOffThread } from '../canvas/render.js';
import { mergeElements, validateElements } from '../canvas/merge.js';
import { checkWritable, type Scope } from '../notes/access.js';
import { findNote, noteRecord } from '../notes/notes.js';
import { etagOf } from '../vault/etag.js';

async function readCanvas(scope: Scope, id: string) {
  const n = findNote(scope, id);
  const { bytes, etag } = await scope.vault.home.read(n.path);
  const text = bytes.toString('utf8');
  return { note: n, text, etag, parsed: parseCanvasNote(text) };
}

export async function applyElements(scope: Scope, id: string, elements: unknown[], font?: string | null) {
  validateElements(elements, 'body.elements');
  for (let attempt = 0; ; attempt++) {
    const { note, text, etag, parsed } = await readCanvas(scope, id);
    checkWritable(scope, note.path);
    const merged = mergeElements(parsed.scene.elements, elements);
    const appState = font === undefined || font === null ? parsed.scene.appState : { ...parsed.scene.appState, quireFont: font };
    const next = replaceScene(text, { ...parsed.scene, elements: merged, appState });
    if (next === text) return { ...noteRecord(note), elements: merged.length, changed: false };
    try {
      await scope.vault.home.write(note.path, next, { ifMatch: etag, quotaBytes: scope.quotaBytes });
    } catch (e) {
      // A concurrent writer saved first: merging is commutative, so merge into their version.
      if (attempt < 2 && e instanceof AppError && e.status === 412) continue;
      throw e;
    }
    return { ...noteRecord(scope.index.noteByPath(note.path)!), elements: merged.length, changed: true };
  }
}

/** Recent renders by note ETag and format, so paging through chunks renders once. */
const renders = new Map<string, Buffer>();
const RENDER_CACHE = 16;

async function rendered(noteEtag: string, format: 'png' | 'svg', noteText: string): Promise<Buffer> {
  const key = `${format}:${noteEtag}`;
  let bytes = renders.get(key);
  if (!bytes) {
    bytes = await renderNoteOffThread(noteText, format);
    renders.set(key, bytes);
    if (renders.size > RENDER_CACHE) renders.delete(renders.keys().next().value!);
  }
  return bytes;
}

export async function exportCanvas(scope: Scope, id: string, q: { format: 'png' | 'svg'; offset?: number; limit?: number }) {
  // The worker reads the drawing: parsing a large one here would hold this thread.
  const { bytes: file, etag } = await scope.vault.home.read(findNote(scope, id).path);
  const bytes = await rendered(etag, q.format, file.toString('utf8'));
  const part = chunk(bytes, q.offset ?? 0, q.limit);
  const last = part.offset + part.bytes.length - 1;
  return reply(part.bytes, {
    status: part.offset === 0 && part.next_offset === null ? 200 : 206,
    etag: etagOf(bytes),
    contentType: q.format === 'svg' ? 'image/svg+xml' : 'image/png',
    headers: {
      'content-range': `bytes ${part.offset}-${Math.max(last, part.offset)}/${part.total}`,
      ...(part.next_offset !== null ? { 'x-next-offset': String(part.next_offset) } : {}),
    },
  });
}
