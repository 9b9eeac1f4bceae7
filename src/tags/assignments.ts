/**
 * Tags of the Home: the tag list with nested parents, a tag's page of notes,
 * and file assignments (a note's tags; `assign_tags` rewrites only its
 * frontmatter `tags`, never the inline `#tags` of the body).
 */
import { AppError, errors } from '../core/errors.js';
import { checkVisible, checkWritable, visible, type Scope } from '../notes/access.js';
import { noteRecord } from '../notes/notes.js';
import { editFrontmatter } from '../notes/frontmatter.js';
import { checkTagList } from '../notes/limits.js';
import { isValidTag } from '../markdown/common.js';
import { extractFacts } from '../markdown/extract.js';
import type { NoteEntry } from '../index/home-index.js';

function offsetPage<T>(items: T[], cursor: number | undefined, limit: number | undefined) {
  const from = cursor ?? 0;
  const size = Math.max(1, Math.min(limit || 100, 1000));
  const page = items.slice(from, from + size);
  return { items: page, next_cursor: from + size < items.length ? from + size : null };
}

export function listTags(scope: Scope) {
  if (scope.prefix === null) return { items: scope.index.tags(), next_cursor: null };
  const counts = new Map<string, { tag: string; count: number; direct: number }>();
  for (const n of scope.index.notes()) {
    if (!visible(scope, n.path)) continue;
    const seen = new Set<string>();
    for (const t of n.tags) {
      const parts = t.split('/');
      for (let i = 1; i <= parts.length; i++) {
        const name = parts.slice(0, i).join('/');
        const key = name.toLowerCase();
        const rec = counts.get(key) ?? { tag: name, count: 0, direct: 0 };
        if (!seen.has(key)) rec.count++;
        if (i === parts.length) rec.direct++;
        seen.add(key);
        counts.set(key, rec);
      }
    }
  }
  return { items: [...counts.values()].sort((a, b) => (a.tag.toLowerCase() < b.tag.toLowerCase() ? -1 : 1)), next_cursor: null };
}

export function tagPage(scope: Scope, tag: string, cursor?: number, limit?: number) {
  const t = tag.replace(/^#/, '');
  const notes = scope.index
    .notesWithTag(t, { nested: true })
    .filter((n) => visible(scope, n.path))
    .sort((a, b) => (a.path < b.path ? -1 : 1));
  if (notes.length === 0 && !scope.index.tags().some((x) => x.tag.toLowerCase() === t.toLowerCase())) {
    throw errors.notFound(`No note has the tag #${t}`, { tag: t });
  }
  const page = offsetPage(notes.map(noteRecord), cursor, limit);
  return { tag: t, count: notes.length, ...page };
}

function assignment(n: NoteEntry) {
  return { path: n.path, tags: n.tags, frontmatter_tags: n.facts.frontmatterTags, etag: n.etag };
}

function noteAt(scope: Scope, path: string): NoteEntry {
  checkVisible(scope, path);
  const n = scope.index.noteByPath(path);
  if (!n) {
    if (scope.index.has(path)) {
      throw errors.badRequest(`${path} is not a Markdown note; only notes carry tags`, { field: 'path' });
    }
    throw errors.notFound(`No such note: ${path}`, { path });
  }
  return n;
}

export function getFileAssignment(scope: Scope, path: string) {
  return assignment(noteAt(scope, path));
}

export function listFileAssignments(scope: Scope, q: { cursor?: number; folder?: string; limit?: number }) {
  const folder = q.folder ? q.folder.replace(/\/?$/, '/') : '';
  const notes = [...scope.index.notes()]
    .filter((n) => visible(scope, n.path) && n.path.startsWith(folder) && n.tags.length > 0)
    .sort((a, b) => (a.path < b.path ? -1 : 1));
  return offsetPage(notes.map(assignment), q.cursor, q.limit);
}

export async function assignTags(scope: Scope, path: string, tags: string[]) {
  checkTagList(tags, 'body.tags');
  const clean: string[] = [];
  const seen = new Set<string>();
  for (const raw of tags) {
    const t = raw.trim().replace(/^#/, '');
    if (!isValidTag(t)) {
      throw new AppError('bad_request', `"${raw}" is not a valid tag (letters, digits, _, -, / for nesting; not only digits)`, {
        details: { field: 'body.tags' },
      });
    }
    const key = t.toLowerCase();
    if (!seen.has(key)) {
      seen.add(key);
      clean.push(t);
    }
  }
  for (let attempt = 0; ; attempt++) {
    noteAt(scope, path);
    checkWritable(scope, path);
    const { bytes, etag } = await scope.vault.home.read(path);
    const text = bytes.toString('utf8');
    // Facts of the bytes just read: the index may not have seen an edit made a moment ago.
    const facts = extractFacts(text, path);
    const headEnd = facts.frontmatterRange?.end ?? (text.startsWith('\uFEFF') ? 1 : 0);
    const head = editFrontmatter(text.slice(0, headEnd), facts.frontmatterRange, { tags: clean.length ? clean : null }, {
      frontmatterError: facts.frontmatterError,
      field: 'body.tags',
    });
    try {
      await scope.vault.home.write(path, head + text.slice(headEnd), { ifMatch: etag, quotaBytes: scope.quotaBytes });
      return assignment(scope.index.noteByPath(path)!);
    } catch (e) {
      // Someone saved the note between our read and write: recompute from their version once.
      if (attempt === 0 && e instanceof AppError && e.status === 412) continue;
      throw e;
    }
  }
}
