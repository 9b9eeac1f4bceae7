import MiniSearch from 'minisearch';
import { describe, expect, it } from 'vitest';
import { isLoadablePersistedSearch, loadEngine, persistEngine, type PersistedSearch } from '../../src/index/search-persist.js';
import { addDocument, MINISEARCH_OPTIONS, SearchIndex, searchDocOf, type SearchDoc } from '../../src/index/search.js';
import { extractFacts } from '../../src/markdown/extract.js';
import { generateVault } from '../../src/markdown/generate.js';

const vault = generateVault(3, 400);
const docOf = (path: string, text: string) => searchDocOf(path, extractFacts(text, path), text);
/** MiniSearch's own serialisation with terms in order: what an engine holds, whatever its tree's iteration order. */
const contents = (ms: MiniSearch<SearchDoc>) => {
  const js = ms.toJSON();
  return { ...js, index: [...js.index].sort((a, b) => (a[0] < b[0] ? -1 : 1)) };
};
const roundTrip = (p: PersistedSearch) => JSON.parse(JSON.stringify(p)) as unknown;

describe('search engine file', () => {
  it('loads into exactly the MiniSearch that was saved', () => {
    const ms = new MiniSearch<SearchDoc>(MINISEARCH_OPTIONS);
    for (const { path, text } of vault) addDocument(ms, docOf(path, text), null);
    const saved = roundTrip(persistEngine(ms, [['a.md', 'e1']])!);
    expect(isLoadablePersistedSearch(saved)).toBe(true);
    const loaded = loadEngine(saved as PersistedSearch, MINISEARCH_OPTIONS)!;
    expect(contents(loaded)).toEqual(contents(ms));
    expect(loaded.search('note')).toEqual(ms.search('note'));
  });

  it('leaves discarded documents out, and the loaded engine answers as the live one', () => {
    const idx = new SearchIndex(true);
    for (const { path, text } of vault) idx.set(docOf(path, text), 'e');
    for (const { path } of vault.slice(0, 30)) idx.delete(path);
    idx.set(docOf(vault[40]!.path, '# Changed\nwombat\n'), 'e2');
    const saved = idx.toPersisted()!;
    expect(saved.documents.length / 2).toBe(vault.length - 30);
    expect(saved.etags).toHaveLength(vault.length - 30);
    for (const postings of saved.postings) for (let k = 0; k < postings.length; k += 2 + 2 * postings[k + 1]!) expect(postings[k + 1]).toBeGreaterThan(0);
    const loaded = new SearchIndex(true, roundTrip(saved) as PersistedSearch);
    expect(loaded.statusNow()).toEqual({ pending: 0, documents: vault.length - 30 });
    for (const q of ['note', 'project meeting', 'wombat', 'garden', 'tasks', 'readinx']) {
      for (const combineWith of ['AND', 'OR'] as const) {
        // The loaded radix tree lists prefix and fuzzy expansions in another order, so equal
        // scores may come in another order: compare every hit's score and terms.
        const all = (i: SearchIndex) => new Map(i.queryNow({ q, combineWith, limit: 1000 }).map((h) => [h.path, h]));
        const [mine, theirs] = [all(loaded), all(idx)];
        expect([...mine.keys()].sort()).toEqual([...theirs.keys()].sort());
        for (const [path, h] of mine) {
          expect(h.score).toBeCloseTo(theirs.get(path)!.score, 9);
          expect([...h.terms].sort()).toEqual([...theirs.get(path)!.terms].sort());
        }
      }
    }
    expect(loaded.queryNow({ q: vault[0]!.path.split('/').pop()!.replace('.md', ''), combineWith: 'AND', limit: 5 }).map((h) => h.path)).not.toContain(vault[0]!.path);
  });

  it('refuses files of another version or shape, and malformed postings', () => {
    const ms = new MiniSearch<SearchDoc>(MINISEARCH_OPTIONS);
    addDocument(ms, docOf('a.md', '# A\nalpha beta\n'), null);
    const good = persistEngine(ms, [['a.md', 'e']])!;
    expect(isLoadablePersistedSearch({ ...good, version: 1 })).toBe(false);
    expect(isLoadablePersistedSearch({ format: 'quire-search', version: good.version, etags: [], index: ms.toJSON() })).toBe(false);
    expect(isLoadablePersistedSearch(null)).toBe(false);
    expect(() => loadEngine({ ...good, postings: [[0, 5, 0, 1]], terms: ['alpha'] }, MINISEARCH_OPTIONS)).toThrow(TypeError);
    expect(() => loadEngine({ ...good, fieldLengths: [] }, MINISEARCH_OPTIONS)).toThrow(TypeError);
    expect(() => loadEngine({ ...good, documents: ['a.md', 0] }, MINISEARCH_OPTIONS)).toThrow(TypeError);
  });
});
