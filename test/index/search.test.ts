import { describe, expect, it } from 'vitest';
import { AppError } from '../../src/core/errors.js';
import type { PartialIndex } from '../../src/index/fulltext/full-text.js';
import { HomeIndex } from '../../src/index/home-index.js';
import { addNote, homeWith } from './helpers.js';

describe('search', () => {
  const build = () =>
    homeWith([
      ['notes/Gardening.md', '# Gardening\nTomatoes and basil.\n'],
      ['notes/Diary.md', '# Diary\nI spent the day gardening, gardening, gardening in the garden.\n'],
      ['projects/Plan.md', '---\ntags: [work/q3]\naliases: [Roadmap]\n---\n# Plan\nQuarterly objectives and projections.\n'],
      ['projects/Other.md', '---\ntitle: Budget\n---\nNumbers for the project.\n#work\n'],
      ['archive/Old.md', 'A gardening note from long ago. #work/q3\n'],
    ]);

  it('boosts the title over repeated body matches', async () => {
    const hits = await build().search('gardening');
    expect(hits[0]!.path).toBe('notes/Gardening.md');
    expect(hits.map((h) => h.path).sort()).toEqual(['archive/Old.md', 'notes/Diary.md', 'notes/Gardening.md']);
    expect(hits[0]).toMatchObject({ title: 'Gardening', terms: ['gardening'], queryTerms: ['gardening'] });
    expect(hits[0]!.match['gardening']).toContain('title');
    expect(hits[0]!.score).toBeGreaterThan(hits[1]!.score);
  });

  it('matches prefixes and small typos', async () => {
    const idx = build();
    expect((await idx.search('quarter')).map((h) => h.path)).toEqual(['projects/Plan.md']);
    expect((await idx.search('objectivs')).map((h) => h.path)).toEqual(['projects/Plan.md']);
  });

  it('searches frontmatter titles, file names, tags and aliases, not other frontmatter', async () => {
    const idx = build();
    expect((await idx.search('budget')).map((h) => h.path)).toEqual(['projects/Other.md']);
    expect((await idx.search('other')).map((h) => h.path)).toEqual(['projects/Other.md']); // file name
    expect((await idx.search('roadmap')).map((h) => h.path)).toEqual(['projects/Plan.md']);
    expect((await idx.search('q3')).map((h) => h.path).sort()).toEqual(['archive/Old.md', 'projects/Plan.md']);
    expect((await idx.search('aliases'))).toEqual([]);
  });

  it('combines terms with AND by default, OR on request', async () => {
    const idx = build();
    expect((await idx.search('tomatoes basil')).map((h) => h.path)).toEqual(['notes/Gardening.md']);
    expect((await idx.search('tomatoes quarterly'))).toEqual([]);
    expect((await idx.search('tomatoes quarterly', { combineWith: 'OR' })).map((h) => h.path).sort()).toEqual(['notes/Gardening.md', 'projects/Plan.md']);
  });

  it('filters by path prefix and by tag (nested, case-insensitive), and limits', async () => {
    const idx = build();
    expect((await idx.search('gardening', { pathPrefix: 'notes/' })).map((h) => h.path).sort()).toEqual(['notes/Diary.md', 'notes/Gardening.md']);
    expect((await idx.search('gardening', { tag: '#WORK' })).map((h) => h.path)).toEqual(['archive/Old.md']);
    expect((await idx.search('project', { tag: 'work' })).map((h) => h.path).sort()).toEqual(['projects/Other.md', 'projects/Plan.md']);
    expect((await idx.search('gardening', { tag: 'nope' }))).toEqual([]);
    expect((await idx.search('gardening', { limit: 1 }))).toHaveLength(1);
    expect((await idx.search('   '))).toEqual([]);
  });

  it('forgets removed notes and replaces edited ones', async () => {
    const idx = build();
    idx.remove('notes/Gardening.md');
    expect((await idx.search('tomatoes'))).toEqual([]);
    addNote(idx, 'notes/Diary.md', 'Now about sailing.');
    expect((await idx.search('gardening')).map((h) => h.path)).toEqual(['archive/Old.md']);
    expect((await idx.search('sailing')).map((h) => h.path)).toEqual(['notes/Diary.md']);
    expect((await idx.search('sailing'))[0]!.id).toBe(idx.noteByPath('notes/Diary.md')!.id);
  });

  it('body excludes frontmatter; ids and titles come from the index at query time', async () => {
    const idx = homeWith([['a.md', '---\nsecret: zebra\n---\nvisible\n']]);
    expect((await idx.search('zebra'))).toEqual([]);
    expect((await idx.search('visible'))[0]).toMatchObject({ path: 'a.md', title: 'a' });
  });

  it('indexes each change at once: a search right after an upsert or remove sees it', async () => {
    const idx = new HomeIndex({ mode: 'background' });
    const words = ['alpha', 'beta', 'gamma', 'delta', 'omega', 'kappa', 'sigma'];
    for (let i = 0; i < 200; i++) addNote(idx, `n/${i}.md`, `note ${i} ${words[i % 7]}`);
    expect(idx.searchStatus()).toEqual({ documents: 200 });
    expect((await idx.search('kappa', { limit: 100 })).length).toBe(28);
    addNote(idx, 'n/new.md', 'brandnew');
    expect((await idx.search('brandnew')).map((h) => h.path)).toEqual(['n/new.md']);
    idx.remove('n/new.md');
    expect(await idx.search('brandnew')).toEqual([]);
    expect(idx.searchStatus()).toEqual({ documents: 200 });
  });
});

describe('tokenizer', () => {
  it('splits wikilink aliases, block ids and highlights into words', async () => {
    const idx = homeWith([['a.md', 'See [[Target Note|shown label]] ==marked== ~~gone~~ para ^blockid\n| cell1 | cell2 |\n']]);
    for (const q of ['label', 'target', 'marked', 'gone', 'blockid', 'cell2']) expect((await idx.search(q)).map((h) => h.path)).toEqual(['a.md']);
  });
});

describe('search during a cold opening', () => {
  it("waits for a cold opening's full text, and past its limit answers 503 instead of waiting without end", async () => {
    const idx = new HomeIndex({ mode: 'sync', fullTextWaitMs: 50 });
    addNote(idx, 'notes/Gardening.md', '# Gardening\nTomatoes and basil.\n');
    let arrive!: (parts: PartialIndex[]) => void;
    idx.fullText.expectPartials(new Promise((resolve) => (arrive = resolve)));
    const err = await idx.search('tomatoes').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AppError);
    expect(err).toMatchObject({ code: 'service_unavailable', details: { reason: 'indexing' } });
    // A search made while it is awaited answers once it arrives, from the whole index.
    const waiting = idx.search('tomatoes');
    arrive([]);
    expect((await waiting).map((h) => h.path)).toEqual(['notes/Gardening.md']);
  });
});
