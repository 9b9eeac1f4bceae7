/**
 * The sorted term dictionary (src/index/fulltext/term-match.ts) must answer
 * exact, prefix and fuzzy lookups exactly as MiniSearch's radix tree does:
 * on a table of edge cases, on random dictionaries over small alphabets (so
 * that every query has many near neighbours) and on the vocabulary of a
 * generated vault (and of the benchmark vault, when it has been built).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import SearchableMap from 'minisearch/SearchableMap';
import { describe, expect, it } from 'vitest';
import { findTerm, fuzzyMatch, prefixRange } from '../../../src/index/fulltext/term-match.js';
import { generateVault, prng } from '../../helpers/generate-vault.js';

const root = fileURLToPath(new URL('../../..', import.meta.url));
const benchVault = join(root, 'bench/vaults/n10000/data');

/** fuzzyMatch's answer as (term, distance) pairs, checking the order and uniqueness promised by its contract. */
function fuzzy(sorted: readonly string[], query: string, maxDistance: number): Array<[string, number]> {
  const out: Array<[string, number]> = [];
  let last = -1;
  fuzzyMatch(sorted, query, maxDistance, (index, distance) => {
    expect(index).toBeGreaterThan(last);
    last = index;
    out.push([sorted[index]!, distance]);
  });
  return out;
}

/** SearchableMap#fuzzyGet's answer in dictionary order. */
function reference(map: SearchableMap<number>, query: string, maxDistance: number): Array<[string, number]> {
  return [...map.fuzzyGet(query, maxDistance)]
    .map(([term, [, distance]]): [string, number] => [term, distance])
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

function dictionary(words: Iterable<string>): string[] {
  return [...new Set(words)].sort();
}

function mapOf(sorted: readonly string[]): SearchableMap<number> {
  return SearchableMap.from(sorted.map((term, i): [string, number] => [term, i]));
}

/** Every lookup on `query` agrees with the radix tree built from the same terms. */
function expectSameAsMiniSearch(sorted: readonly string[], map: SearchableMap<number>, query: string, distances: readonly number[]): void {
  for (const k of distances) {
    expect(fuzzy(sorted, query, k), `fuzzy ${JSON.stringify(query)} ~${k}`).toEqual(reference(map, query, k));
  }
  const [lo, hi] = prefixRange(sorted, query);
  expect(sorted.slice(lo, hi), `prefix ${JSON.stringify(query)}`).toEqual([...map.atPrefix(query).keys()].sort());
  expect(findTerm(sorted, query) !== -1, `has ${JSON.stringify(query)}`).toBe(map.has(query));
}

/** Tokenises like the full-text index's vocabulary, for the realistic dictionaries. */
function words(texts: Iterable<string>): string[] {
  const out: string[] = [];
  for (const text of texts) {
    for (const w of text.split(/[\n\r\p{Z}\p{P}|^~=+<>`$]+/u)) if (w !== '') out.push(w.toLowerCase());
  }
  return dictionary(out);
}

/** Queries near the dictionary's words: the words themselves and copies with 1–3 random edits, drawn from the vocabulary's own code units. */
function nearQueries(sorted: readonly string[], count: number, seed: number): string[] {
  const r = prng(seed);
  const units = [...new Set(sorted.join(''))].join('');
  const int = (n: number) => Math.floor(r() * n);
  const out: string[] = [];
  for (let i = 0; i < count; i++) {
    let q = sorted[int(sorted.length)]!;
    for (let edits = int(4); edits > 0; edits--) {
      const at = int(q.length + 1);
      const unit = units[int(units.length)]!;
      const op = int(3);
      q = op === 0 ? q.slice(0, at) + unit + q.slice(at) : op === 1 ? q.slice(0, at) + unit + q.slice(at + 1) : q.slice(0, at) + q.slice(at + 1);
    }
    out.push(q);
  }
  return out;
}

describe('findTerm and prefixRange', () => {
  const sorted = dictionary(['', 'a', 'ab', 'abc', 'abd', 'b', 'ba', 'é', '🚀', '🚁', '\uffff']);

  it('find every term and nothing else', () => {
    sorted.forEach((term, i) => expect(findTerm(sorted, term)).toBe(i));
    for (const missing of ['aa', 'abcd', 'c', 'e', '\ud83d', '\uffff\uffff']) expect(findTerm(sorted, missing)).toBe(-1);
    expect(findTerm([], '')).toBe(-1);
  });

  it('give the range of terms starting with the prefix', () => {
    const range = (p: string) => {
      const [lo, hi] = prefixRange(sorted, p);
      return sorted.slice(lo, hi);
    };
    expect(prefixRange(sorted, '')).toEqual([0, sorted.length]);
    expect(range('a')).toEqual(['a', 'ab', 'abc', 'abd']);
    expect(range('ab')).toEqual(['ab', 'abc', 'abd']);
    expect(range('abc')).toEqual(['abc']);
    expect(range('abcd')).toEqual([]);
    expect(range('aa')).toEqual([]);
    expect(range('\ud83d')).toEqual(['🚀', '🚁']);
    expect(range('\uffff')).toEqual(['\uffff']);
    expect(prefixRange(sorted, 'c')).toEqual([sorted.indexOf('é'), sorted.indexOf('é')]);
    expect(prefixRange([], '')).toEqual([0, 0]);
    expect(prefixRange([], 'a')).toEqual([0, 0]);
  });
});

describe('fuzzyMatch', () => {
  const cases: Array<{ name: string; terms: string[]; query: string; k: number; expected: Array<[string, number]> }> = [
    { name: 'empty dictionary', terms: [], query: 'abc', k: 2, expected: [] },
    { name: 'empty dictionary, empty query', terms: [], query: '', k: 0, expected: [] },
    { name: 'empty query, k 0', terms: ['', 'a', 'ab', 'abc', 'b'], query: '', k: 0, expected: [['', 0]] },
    { name: 'empty query, k 1', terms: ['', 'a', 'ab', 'abc', 'b'], query: '', k: 1, expected: [['', 0], ['a', 1], ['b', 1]] },
    { name: 'empty query, k 2', terms: ['', 'a', 'ab', 'abc', 'b'], query: '', k: 2, expected: [['', 0], ['a', 1], ['ab', 2], ['b', 1]] },
    { name: 'empty term, k 3', terms: ['', 'xyz'], query: 'abc', k: 3, expected: [['', 3], ['xyz', 3]] },
    { name: 'k 0 is exact', terms: ['a', 'ab', 'abc', 'abcd'], query: 'ab', k: 0, expected: [['ab', 0]] },
    { name: 'prefixes of each other, k 1', terms: ['a', 'ab', 'abc', 'abcd'], query: 'ab', k: 1, expected: [['a', 1], ['ab', 0], ['abc', 1]] },
    { name: 'prefixes of each other, k 2', terms: ['a', 'ab', 'abc', 'abcd'], query: 'ab', k: 2, expected: [['a', 1], ['ab', 0], ['abc', 1], ['abcd', 2]] },
    { name: 'query longer than the terms', terms: ['cat', 'ca'], query: 'cattle', k: 3, expected: [['cat', 3]] },
    { name: 'query longer, out of reach', terms: ['cat'], query: 'cattle', k: 2, expected: [] },
    { name: 'query shorter than the terms', terms: ['kitten', 'sitting', 'sit'], query: 'sit', k: 3, expected: [['sit', 0]] },
    { name: 'kitten/sitting, k 3', terms: ['kitten', 'sitting'], query: 'sitting', k: 3, expected: [['kitten', 3], ['sitting', 0]] },
    { name: 'kitten/sitting, k 2', terms: ['kitten', 'sitting'], query: 'sitting', k: 2, expected: [['sitting', 0]] },
    { name: 'a transposition costs 2', terms: ['ab', 'ba'], query: 'ab', k: 1, expected: [['ab', 0]] },
    { name: 'no common unit', terms: ['abc', 'xyz'], query: 'xbz', k: 2, expected: [['abc', 2], ['xyz', 1]] },
    { name: 'k beyond every length', terms: ['', 'a', 'abcdef'], query: 'x', k: 10, expected: [['', 1], ['a', 1], ['abcdef', 6]] },
    { name: 'accents', terms: ['cafe', 'café', 'naive', 'naïve'], query: 'café', k: 1, expected: [['cafe', 1], ['café', 0]] },
    { name: 'decomposed accent is two units', terms: ['cafe\u0301', 'café'], query: 'café', k: 1, expected: [['café', 0]] },
    { name: 'decomposed accent, k 2', terms: ['cafe\u0301', 'café'], query: 'café', k: 2, expected: [['cafe\u0301', 2], ['café', 0]] },
    { name: 'CJK', terms: ['日本', '日本語', '中文'], query: '日本', k: 1, expected: [['日本', 0], ['日本語', 1]] },
    // '🚀' is \ud83d\ude80 and '🚁' \ud83d\ude81: they differ in one code unit.
    { name: 'astral: shared high surrogate', terms: ['a', '🚀', '🚁', '😀a'], query: '🚀', k: 1, expected: [['🚀', 0], ['🚁', 1]] },
    { name: 'astral: two units each', terms: ['a', 'ab', '🚀', '🚀🚀'], query: 'a', k: 2, expected: [['a', 0], ['ab', 1], ['🚀', 2]] },
    { name: 'astral: empty query', terms: ['🚀', 'é'], query: '', k: 1, expected: [['é', 1]] },
    { name: 'lone surrogate', terms: ['\ud83d', '🚀'], query: '\ude80', k: 1, expected: [['\ud83d', 1], ['🚀', 1]] },
    { name: 'extreme code units', terms: ['\u0000', '\u0000a', '\uffff'], query: 'a', k: 1, expected: [['\u0000', 1], ['\u0000a', 1], ['\uffff', 1]] },
  ];

  for (const { name, terms, query, k, expected } of cases) {
    it(name, () => {
      const sorted = dictionary(terms);
      expect(fuzzy(sorted, query, k)).toEqual(expected);
      expect(fuzzy(sorted, query, k)).toEqual(reference(mapOf(sorted), query, k));
    });
  }

  it('matches a long query against long terms within the band', () => {
    const long = 'x'.repeat(1000);
    const sorted = dictionary([long, `${long}y`, `y${long}`, `${long.slice(1)}zz`, long.slice(3)]);
    expect(fuzzy(sorted, long, 2)).toEqual([[long, 0], [`${long}y`, 1], [`${long.slice(1)}zz`, 2], [`y${long}`, 1]]);
    expect(fuzzy(sorted, long, 3)).toEqual(reference(mapOf(sorted), long, 3));
  });

  it('rejects a maxDistance that is not a non-negative integer', () => {
    for (const k of [-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => fuzzyMatch(['a'], 'a', k, () => {})).toThrow(RangeError);
    }
  });
});

describe('agrees with SearchableMap', () => {
  const alphabets = [
    ['a', 'b'],
    ['a', 'b', 'c', 'd'],
    ['a', 'b', 'é', '🚀', '🚁', '\ud83d', '\u0000', '\uffff'],
  ];

  it('on random dictionaries over small alphabets (fast-check)', () => {
    const input = fc.constantFrom(...alphabets).chain((alphabet) => {
      const word = fc.string({ unit: fc.constantFrom(...alphabet), maxLength: 9 });
      return fc.record({
        terms: fc.array(word, { minLength: 0, maxLength: 3000, size: 'max' }),
        queries: fc.array(fc.string({ unit: fc.constantFrom(...alphabet), maxLength: 12 }), { minLength: 1, maxLength: 12 }),
      });
    });
    fc.assert(
      fc.property(input, ({ terms, queries }) => {
        const sorted = dictionary(terms);
        const map = mapOf(sorted);
        sorted.forEach((term, i) => expect(findTerm(sorted, term)).toBe(i));
        for (const query of queries) expectSameAsMiniSearch(sorted, map, query, [0, 1, 2, 3]);
      }),
      { numRuns: 40 },
    );
  });

  it('on the vocabulary of a generated vault', () => {
    const sorted = words(generateVault(7, 600).map((note) => note.text));
    expect(sorted.length).toBeGreaterThan(5000);
    const map = mapOf(sorted);
    for (const query of nearQueries(sorted, 400, 1)) expectSameAsMiniSearch(sorted, map, query, [0, 1, 2, 3]);
  });

  it.skipIf(!existsSync(benchVault))('on the vocabulary of the benchmark vault', () => {
    const texts = readdirSync(benchVault, { recursive: true, encoding: 'utf8' })
      .filter((file) => file.endsWith('.md'))
      .map((file) => readFileSync(join(benchVault, file), 'utf8'));
    const sorted = words(texts);
    const map = mapOf(sorted);
    for (const query of nearQueries(sorted, 300, 2)) expectSameAsMiniSearch(sorted, map, query, [1, 2]);
  });
});
