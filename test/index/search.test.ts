import fs from 'node:fs';
import { join } from 'node:path';
import MiniSearch from 'minisearch';
import { describe, expect, it } from 'vitest';
import { HomeIndex } from '../../src/index/home-index.js';
import { addDocument, MINISEARCH_OPTIONS, SearchIndex, searchDocOf, type SearchDoc } from '../../src/index/search.js';
import { extractFacts } from '../../src/markdown/extract.js';
import { etagOf } from '../../src/vault/etag.js';
import { tempDir } from '../helpers/instance.js';
import { generateNote, generateVault } from '../../src/markdown/generate.js';
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

  it('background mode catches up by itself; searches never see stale state', async () => {
    const idx = new HomeIndex({ mode: 'background', sliceMs: 1 });
    for (let i = 0; i < 200; i++) addNote(idx, `n/${i}.md`, `note ${i} word${i % 7}`);
    expect(idx.pendingWork().search).toBe(200);
    // Nothing runs while writes keep coming; then it catches up in slices (allow a slow, busy machine).
    for (let i = 0; i < 500 && idx.pendingWork().search > 0; i++) await new Promise((r) => setTimeout(r, 10));
    expect(await idx.searchStatus()).toEqual({ pending: 0, documents: 200 });
    expect(idx.pendingWork()).toEqual({ notes: 0, keys: 0, tags: 0, search: 0 });
    addNote(idx, 'n/new.md', 'brandnew');
    expect((await idx.search('brandnew')).map((h) => h.path)).toEqual(['n/new.md']);
  });

  it('the fast add builds exactly the index MiniSearch#add builds', async () => {
    const docs: SearchDoc[] = [];
    for (let i = 0; i < 60; i++) {
      const text = generateNote(7, i);
      docs.push({ path: `p${i}.md`, title: `T${i} ${text.slice(0, 20)}`, body: text, tags: 'a b/c', aliases: i % 3 ? '' : 'Alias Ünïcode' });
    }
    const stock = new MiniSearch(MINISEARCH_OPTIONS);
    const fast = new MiniSearch(MINISEARCH_OPTIONS);
    const cache = new Map();
    for (const d of docs) {
      stock.add(d);
      addDocument(fast, d, cache);
    }
    expect(JSON.stringify(fast)).toBe(JSON.stringify(stock));
    // Discards and re-adds (no cache once documents were discarded).
    for (const i of [3, 10, 11]) {
      stock.discard(docs[i]!.path);
      fast.discard(docs[i]!.path);
      stock.add({ ...docs[i]!, body: 'replaced body' });
      addDocument(fast, { ...docs[i]!, body: 'replaced body' }, null);
    }
    expect(JSON.stringify(fast)).toBe(JSON.stringify(stock));
    expect(fast.search('replaced')).toEqual(stock.search('replaced'));
    expect(() => addDocument(fast, docs[0]!, null)).toThrow(/duplicate/);
  });
});

describe('documents whose body is in a file', () => {
  it('are read when applied, body from bodyStart, exactly as the same documents given as text', () => {
    const dir = tempDir();
    const notes = generateVault(21, 60).map(({ path, text }) => ({ path, text: path.endsWith('7.md') ? '\uFEFF' + text : text }));
    const asText = new SearchIndex(false);
    const fromFiles = new SearchIndex(false);
    for (const [i, { path, text }] of notes.entries()) {
      const facts = extractFacts(text, path);
      const file = join(dir, `n${i}.md`);
      fs.writeFileSync(file, text);
      asText.set(searchDocOf(path, facts, text), etagOf(Buffer.from(text)));
      fromFiles.setFile(searchDocOf(path, facts, ''), file, facts.frontmatterRange?.end ?? 0, etagOf(Buffer.from(text)));
    }
    expect(fromFiles.statusNow()).toEqual({ pending: notes.length, documents: 0 });
    for (const q of ['note', 'project', 'tasks', 'title', 'garden']) {
      expect(fromFiles.queryNow({ q, combineWith: 'OR', limit: 100 })).toEqual(asText.queryNow({ q, combineWith: 'OR', limit: 100 }));
    }
    expect(fromFiles.statusNow()).toEqual({ pending: 0, documents: notes.length });
  });

  it('records the ETag of the bytes indexed when the file changed meanwhile, and drops a note whose file is gone', async () => {
    const dir = tempDir();
    const idx = new SearchIndex(false);
    const doc = (p: string): SearchDoc => ({ path: p, title: p, body: '', tags: '', aliases: '' });
    fs.writeFileSync(join(dir, 'a.md'), 'curlew');
    fs.writeFileSync(join(dir, 'b.md'), 'whimbrel');
    idx.setFile(doc('a.md'), join(dir, 'a.md'), 0, etagOf(Buffer.from('curlew')));
    idx.setFile(doc('b.md'), join(dir, 'b.md'), 0, etagOf(Buffer.from('whimbrel')));
    fs.writeFileSync(join(dir, 'a.md'), 'curlew and godwit');
    fs.rmSync(join(dir, 'b.md'));
    expect(idx.queryNow({ q: 'godwit', combineWith: 'AND', limit: 5 }).map((h) => h.path)).toEqual(['a.md']);
    expect(idx.queryNow({ q: 'whimbrel', combineWith: 'AND', limit: 5 })).toEqual([]);
    expect(await idx.indexed()).toEqual(new Map([['a.md', etagOf(Buffer.from('curlew and godwit'))]]));
  });
});

describe('tokenizer', () => {
  it('splits wikilink aliases, block ids and highlights into words', async () => {
    const idx = homeWith([['a.md', 'See [[Target Note|shown label]] ==marked== ~~gone~~ para ^blockid\n| cell1 | cell2 |\n']]);
    for (const q of ['label', 'target', 'marked', 'gone', 'blockid', 'cell2']) expect((await idx.search(q)).map((h) => h.path)).toEqual(['a.md']);
  });
});
