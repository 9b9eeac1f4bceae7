import { describe, expect, it } from 'vitest';
import { HomeIndex, IndexSnapshotError, INDEX_SNAPSHOT_VERSION, type SearchHit } from '../../src/index/home-index.js';
import { generateVault } from '../../src/markdown/generate.js';
import { addFile, addNote, linkState } from './helpers.js';

function sample(): HomeIndex {
  const idx = new HomeIndex({ mode: 'lazy' });
  for (const n of generateVault(3, 60)) addNote(idx, n.path, n.text);
  // The names the generator links to, so that some links resolve; one with an alias and a duplicate id.
  addNote(idx, 'Home.md', '---\nid: home\naliases: [Start]\n---\n# Home\n[[Project Alpha]] ![[assets/café.png]] #hub/root\n- [ ] hub task ^hub1\n');
  addNote(idx, 'copy/Home.md', '---\nid: home\n---\ncopy of home');
  addNote(idx, 'Projects/Project Alpha.md', 'alpha [[Start]] [[Reading List]]');
  addNote(idx, 'Ideas/Inbox.md', 'inbox');
  addFile(idx, 'assets/café.png');
  addFile(idx, 'assets/Board.canvas');
  idx.remove('gen/note-5.md');
  addNote(idx, 'gen/note-7.md', 'rewritten [[Home]] #meta');
  return idx;
}

/**
 * MiniSearch's loadJS rebuilds its radix tree in a different insertion
 * order, so after a round trip prefix expansions come in another order:
 * `terms` may be permuted and scores differ in the last bits. Compare hits
 * up to that.
 */
function hits(h: SearchHit[]) {
  return h
    .map((x) => ({
      path: x.path,
      id: x.id,
      title: x.title,
      score: Math.round(x.score * 1e9) / 1e9,
      terms: [...x.terms].sort(),
      queryTerms: [...x.queryTerms].sort(),
      match: Object.fromEntries(Object.entries(x.match).sort()),
    }))
    .sort((a, b) => b.score - a.score || (a.path < b.path ? -1 : 1));
}

function queries(idx: HomeIndex) {
  return {
    ...linkState(idx),
    notes: [...idx.notes()].map((n) => ({ ...n })).sort((a, b) => (a.path < b.path ? -1 : 1)),
    files: [...idx.files()].sort((a, b) => (a.path < b.path ? -1 : 1)),
    stats: [...idx.notes()].map((n) => [n.path, idx.statOf(n.path)]).sort(),
    tasks: [...idx.tasks()].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : a.line - b.line)),
    taggedHub: idx.notesWithTag('hub').map((n) => n.path),
    home: idx.noteById('home')?.path,
    task: idx.taskByBlockId('hub1'),
    blocks: idx.blockOwner('hub1'),
    search: ['project', 'home', 'café', 'garden', 'link', 'rewritten', 'obsidian vault', 'note'].map((q) => hits(idx.search(q, { limit: 1000 }))),
    filtered: hits(idx.search('note', { pathPrefix: 'gen/', tag: 'project', limit: 1000 })),
    counts: [idx.noteCount, idx.fileCount],
  };
}

describe('snapshot', () => {
  it('round-trips through JSON: every query answers the same', () => {
    const idx = sample();
    const before = queries(idx);
    const snap = idx.toSnapshot();
    expect(snap.version).toBe(INDEX_SNAPSHOT_VERSION);
    expect(snap.notes.map((n) => n.path)).toEqual([...snap.notes.map((n) => n.path)].sort());
    const back = HomeIndex.fromSnapshot(JSON.parse(JSON.stringify(snap)), { mode: 'lazy' });
    expect(queries(back)).toEqual(before);
    // And it keeps working incrementally.
    addNote(back, 'Reading List.md', 'list');
    addNote(idx, 'Reading List.md', 'list');
    expect(queries(back)).toEqual(queries(idx));
  });

  it('loads the search index in the background, or at the first search', async () => {
    const snap = JSON.parse(JSON.stringify(sample().toSnapshot()));
    const bg = HomeIndex.fromSnapshot(snap);
    expect(bg.searchStatus().loaded).toBe(false);
    for (let i = 0; i < 500 && !bg.searchStatus().loaded; i++) await new Promise((r) => setTimeout(r, 10));
    expect(bg.searchStatus()).toEqual({ pending: 0, loaded: true, lost: false });
    const lazy = HomeIndex.fromSnapshot(snap, { mode: 'lazy' });
    addNote(lazy, 'new.md', 'zanzibar');
    lazy.remove('Ideas/Inbox.md');
    expect(lazy.searchStatus()).toEqual({ pending: 2, loaded: false, lost: false });
    expect(lazy.search('zanzibar').map((h) => h.path)).toEqual(['new.md']);
    expect(lazy.search('inbox').map((h) => h.path)).not.toContain('Ideas/Inbox.md');
    expect(lazy.search('rewritten').map((h) => h.path)).toEqual(['gen/note-7.md']);
  });

  it.each([
    ['an unknown version', (s: Record<string, unknown>) => ({ ...s, version: 999 }), 'index_snapshot_version'],
    ['another format', (s: Record<string, unknown>) => ({ ...s, format: 'x' }), 'index_snapshot_invalid'],
    ['a malformed note', (s: Record<string, unknown>) => ({ ...s, notes: [{ path: 'a.md' }] }), 'index_snapshot_invalid'],
    ['a foreign search index', (s: Record<string, unknown>) => ({ ...s, search: { serializationVersion: 1 } }), 'index_snapshot_version'],
    ['not an object', () => null, 'index_snapshot_invalid'],
  ])('throws IndexSnapshotError on %s', (_name, mutate, reason) => {
    const snap = JSON.parse(JSON.stringify(sample().toSnapshot()));
    let err: unknown;
    try {
      HomeIndex.fromSnapshot(mutate(snap) as never);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(IndexSnapshotError);
    expect((err as IndexSnapshotError).details).toEqual({ reason });
  });
});
