/** Small helpers for the index tests. */
import { HomeIndex, type FileStat, type HomeIndexOptions } from '../../src/index/home-index.js';
import { extractFacts } from '../../src/markdown/extract.js';

export function stat(text: string, mtimeMs = 1_700_000_000_000): FileStat {
  let h = 0;
  for (let i = 0; i < text.length; i++) h = (Math.imul(h, 31) + text.charCodeAt(i)) | 0;
  return { size: text.length, mtimeMs, etag: `e${(h >>> 0).toString(16)}` };
}

export function addNote(idx: HomeIndex, path: string, text = '', mtimeMs?: number): void {
  idx.upsertNote(path, extractFacts(text, path), stat(text, mtimeMs), text);
}

export function addFile(idx: HomeIndex, path: string): void {
  idx.upsertFile(path, { size: 10, mtimeMs: 1_700_000_000_000, etag: `f${path.length}` });
}

/** An index holding `files`: paths ending in .md become notes (text from `texts` or empty), others files. */
export function homeWith(files: Array<string | [string, string]>, opts: HomeIndexOptions = { mode: 'lazy' }): HomeIndex {
  const idx = new HomeIndex(opts);
  for (const f of files) {
    const [path, text] = typeof f === 'string' ? [f, ''] : f;
    if (path.endsWith('.md')) addNote(idx, path, text);
    else addFile(idx, path);
  }
  return idx;
}

/** Everything observable about links and tags, for comparing two indexes. */
export function linkState(idx: HomeIndex) {
  const paths = [...idx.notes()].map((n) => n.path).concat([...idx.files()].map((f) => f.path)).sort();
  return {
    paths,
    backlinks: Object.fromEntries(paths.map((p) => [p, idx.backlinks(p)])),
    outgoing: Object.fromEntries(
      [...idx.notes()].map((n) => n.path).sort().map((p) => [p, idx.outgoing(p).map((l) => [l.target, l.resolved])]),
    ),
    unresolved: idx.unresolved(),
    tags: idx.tags(),
    ids: [...idx.notes()].map((n) => [n.path, n.id]).sort(),
  };
}
