import { describe, expect, it } from 'vitest';
import { SearchIndex, searchDocOf, type SearchQuery } from '../../src/index/search.js';
import { extractFacts } from '../../src/markdown/extract.js';
import { generateVault } from '../../src/markdown/generate.js';

/**
 * The query executor (search-query.ts) must rank exactly as
 * `MiniSearch#search` with the same options: same documents, same order
 * (ties included), same scores, terms and matched fields.
 */
describe('search query executor', () => {
  const vault = generateVault(7, 600);
  const load = (idx: SearchIndex, docs = vault) => {
    for (const { path, text } of docs) idx.set(searchDocOf(path, extractFacts(text, path), text), 'etag');
  };

  // Words of the generated vault, common and rare, plus typos and prefixes of them.
  const words = (() => {
    const counts = new Map<string, number>();
    for (const { text } of vault) for (const w of text.toLowerCase().match(/[a-z]{3,}/g) ?? []) counts.set(w, (counts.get(w) ?? 0) + 1);
    const sorted = [...counts.keys()].sort((a, b) => counts.get(b)! - counts.get(a)! || a.localeCompare(b));
    const picked = [...sorted.slice(0, 12), ...sorted.filter((_, i) => i % 37 === 5).slice(0, 12)];
    return [...picked, ...picked.filter((w) => w.length >= 5).map((w) => w.slice(0, -1) + 'x'), ...picked.map((w) => w.slice(0, 3))];
  })();
  const queries: string[] = [
    ...words,
    ...words.slice(0, 20).map((w, i) => `${w} ${words[(i * 7 + 3) % words.length]}`),
    ...words.slice(0, 8).map((w, i) => `${w} ${words[i + 1]} ${words[i + 2]}`),
    `${words[0]} ${words[0]}`,
    'zzzzunmatched',
    `${words[1]} zzzzunmatched`,
  ];

  const same = (idx: SearchIndex, q: Omit<SearchQuery, 'q'>) => {
    let compared = 0;
    for (const text of queries) {
      const query = { ...q, q: text };
      const fast = idx.queryNow(query);
      const reference = idx.queryWithMiniSearch(query);
      expect(fast, `${JSON.stringify(query)}`).toEqual(reference);
      compared += reference.length;
    }
    return compared;
  };

  it('answers what MiniSearch answers, AND and OR, at every limit', () => {
    const idx = new SearchIndex(true);
    load(idx);
    let hits = 0;
    for (const combineWith of ['AND', 'OR'] as const) for (const limit of [1, 5, 50, 1000]) hits += same(idx, { combineWith, limit });
    expect(hits).toBeGreaterThan(5000);
  });

  it('applies path-prefix and path filters before the limit', () => {
    const idx = new SearchIndex(true);
    load(idx);
    const prefix = vault[0]!.path.split('/')[0] + '/';
    const only = vault.filter((_, i) => i % 3 === 0).map((n) => n.path);
    expect(same(idx, { combineWith: 'OR', limit: 10, pathPrefix: prefix })).toBeGreaterThan(0);
    expect(same(idx, { combineWith: 'OR', limit: 10, paths: only })).toBeGreaterThan(0);
    const hits = idx.queryNow({ q: words[0]!, combineWith: 'OR', limit: 10, paths: only });
    expect(hits).toHaveLength(10);
    for (const h of hits) expect(only).toContain(h.path);
  });

  /** path → score of every hit. */
  const allScores = (idx: SearchIndex, q: string) => new Map(idx.queryNow({ q, combineWith: 'OR', limit: 1000 }).map((h) => [h.path, h.score]));
  const sameScores = (a: SearchIndex, b: SearchIndex) => {
    for (const q of queries.slice(0, 30)) {
      const [x, y] = [allScores(a, q), allScores(b, q)];
      expect([...x.keys()].sort(), q).toEqual([...y.keys()].sort());
      for (const [path, score] of x) expect(score, `${q} ${path}`).toBeCloseTo(y.get(path)!, 9);
    }
  };

  it('leaves out discarded notes before MiniSearch vacuums them, and sees edits at once', () => {
    const idx = new SearchIndex(true);
    load(idx);
    const [a, b] = [vault[0]!, vault[1]!];
    const newText = '# Renamed\nquokka\n';
    // A word of b's old body that no word of its new title, body or file name starts with.
    const newWords = `${b.path} renamed quokka`.toLowerCase().split(/[^a-z0-9]+/);
    const probe = words.find((w) => w.length < 5 && b.text.toLowerCase().includes(w) && a.text.toLowerCase().includes(w) && !newWords.some((t) => t.startsWith(w)))!;
    expect(probe).toBeDefined();
    const paths = (q: string) => idx.queryNow({ q, combineWith: 'OR', limit: 1000 }).map((h) => h.path);
    expect(paths(probe)).toEqual(expect.arrayContaining([a.path, b.path]));
    idx.delete(a.path);
    idx.set(searchDocOf(b.path, extractFacts(newText, b.path), newText), 'etag2');
    expect(paths(probe)).not.toContain(a.path);
    expect(paths(probe)).not.toContain(b.path);
    expect(paths('quokka')).toEqual([b.path]);
    // With discarded postings still in the tree, the executor counts only live
    // documents: a fresh index over the same notes scores identically.
    const fresh = new SearchIndex(true);
    load(fresh, vault.slice(2));
    fresh.set(searchDocOf(b.path, extractFacts(newText, b.path), newText), 'etag2');
    sameScores(idx, fresh);
  });

  it('answers the same after a save and load', () => {
    const idx = new SearchIndex(true);
    load(idx);
    idx.delete(vault[3]!.path);
    const loaded = new SearchIndex(true, JSON.parse(JSON.stringify(idx.toPersisted()!)));
    // A loaded radix tree lists prefix and fuzzy expansions in another order: terms may come in another order.
    sameScores(loaded, idx);
    // MiniSearch's own ranking of a loaded index (one without discarded postings; see the test above).
    const clean = new SearchIndex(true);
    load(clean);
    const cleanLoaded = new SearchIndex(true, JSON.parse(JSON.stringify(clean.toPersisted()!)));
    expect(same(cleanLoaded, { combineWith: 'OR', limit: 20 })).toBeGreaterThan(0);
    expect(same(cleanLoaded, { combineWith: 'AND', limit: 20 })).toBeGreaterThan(0);
  });

  it('passes a query of more terms than it tracks to MiniSearch', () => {
    const idx = new SearchIndex(true);
    load(idx);
    const long = Array.from({ length: 40 }, (_, i) => words[i % words.length]).join(' ');
    const hits = idx.queryNow({ q: long, combineWith: 'OR', limit: 5 });
    expect(hits).toHaveLength(5);
    expect(hits).toEqual(idx.queryWithMiniSearch({ q: long, combineWith: 'OR', limit: 5 }));
  });
});
