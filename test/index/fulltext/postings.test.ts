import { describe, expect, it } from 'vitest';
import { FIELD_BITS, mergeSegments, TermPostings, type Segment } from '../../../src/index/fulltext/postings.js';

/** A segment as readable rows: term, field, [doc, tf] pairs. */
function rows(s: Segment): Array<[string, number, number[]]> {
  const out: Array<[string, number, number[]]> = [];
  s.terms.forEach((term, t) => {
    for (let f = 0; f < 4; f++) {
      const pairs: number[] = [];
      for (let i = s.starts[t * 4 + f]!; i < s.starts[t * 4 + f + 1]!; i++) pairs.push(s.docs[i]!, s.tfs[i]!);
      if (pairs.length > 0) out.push([term, f, pairs]);
    }
  });
  return out;
}

const build = (docs: Array<[number, [string, string, string, string]]>, linked = true) => {
  const p = new TermPostings(linked);
  const lengths: number[] = [];
  for (const [doc, fields] of docs) p.add(doc, fields, lengths, lengths.length);
  return { p, lengths };
};

describe('TermPostings', () => {
  it('counts each term once per document and field, with its frequency, terms sorted', () => {
    const { p, lengths } = build([
      [0, ['Apple pie', 'apple apple banana', 'fruit', '']],
      [2, ['Banana', 'Cherry apple', '', 'fruit']],
    ]);
    expect(lengths).toEqual([2, 2, 1, 1, 1, 2, 1, 1]); // distinct raw tokens; an empty field has the empty token
    expect(rows(p.toSegment())).toEqual([
      ['apple', 0, [0, 1]],
      ['apple', 1, [0, 2, 2, 1]],
      ['banana', 0, [2, 1]],
      ['banana', 1, [0, 1]],
      ['cherry', 1, [2, 1]],
      ['fruit', 2, [0, 1]],
      ['fruit', 3, [2, 1]],
      ['pie', 0, [0, 1]],
    ]);
    expect(p.size).toBe(9);
  });

  it('numbers terms right when other tokenizing evicts the tokenizer cache between documents', () => {
    // TermPostings remembers the term number of each tokenizer cache entry; another index
    // tokenizing other words in between (as the live index and a scan do) replaces entries.
    const words = Array.from({ length: 40_000 }, (_, i) => `w${i.toString(36)}`);
    const docs: Array<[number, [string, string, string, string]]> = Array.from({ length: 30 }, (_, d) => [
      d,
      [`Title ${d}`, words.filter((_, i) => i % 30 === d || i % 7 === 0).join(' '), `tag${d % 3}`, ''],
    ]);
    const viaAdd = new TermPostings(false);
    const other = new TermPostings(false);
    const lengths: number[] = [];
    docs.forEach(([doc, fields], k) => {
      viaAdd.add(doc, fields, lengths, lengths.length);
      const shifted = words.map((w) => w.toUpperCase() + 'x').slice(k * 1000, k * 1000 + 20_000);
      other.add(doc, ['', shifted.join(' '), '', ''], []);
    });
    const viaPostings = new TermPostings(false);
    for (const [doc, fields] of docs) {
      fields.forEach((text, f) => {
        const tf = new Map<string, number>();
        for (const t of text.split(/[\s,]+/).filter(Boolean)) tf.set(t.toLowerCase(), (tf.get(t.toLowerCase()) ?? 0) + 1);
        for (const [t, n] of tf) viaPostings.addPosting(t, (doc << FIELD_BITS) | f, n);
      });
    }
    const got = rows(viaAdd.toSegment()).map((r) => JSON.stringify(r));
    const want = rows(viaPostings.toSegment()).map((r) => JSON.stringify(r));
    expect(got.length).toBe(want.length);
    expect(got.filter((r, i) => r !== want[i]).slice(0, 3)).toEqual([]);
  });

  it('refuses documents out of order', () => {
    const { p } = build([[5, ['a', '', '', '']]]);
    expect(() => p.add(5, ['b', '', '', ''], [])).toThrow(/after 5/);
  });

  it('walks, finds and lists a term`s postings, and rebuilds from that list', () => {
    const docs: Array<[number, [string, string, string, string]]> = [];
    for (let d = 0; d < 3000; d++) docs.push([d * 3, [`t${d % 7}`, `w${d % 11} W${d % 11} common`, d % 2 ? 'odd' : 'even', '']]);
    const { p } = build(docs);
    const common = p.termId('common');
    const seen: number[] = [];
    p.forEach(common, (key) => seen.push(key >>> FIELD_BITS));
    expect(seen).toEqual(docs.map(([d]) => d));
    expect(p.has(common, (9 << FIELD_BITS) | 1)).toBe(true);
    expect(p.has(common, (9 << FIELD_BITS) | 0)).toBe(false);
    expect(p.termId('absent')).toBe(-1);
    // Without chains (a scan worker's), the same segment, and no walking.
    const { p: unlinked } = build(docs, false);
    expect(rows(unlinked.toSegment())).toEqual(rows(p.toSegment()));
    expect(unlinked.size).toBe(p.size);
    expect(() => unlinked.forEach(common, () => {})).toThrow(/segment/);
    expect(() => unlinked.has(common, 1)).toThrow(/segment/);
    const again = new TermPostings();
    for (const [term, pairs] of p.toPairs()) for (let i = 0; i < pairs.length; i += 2) again.addPosting(term, pairs[i]!, pairs[i + 1]!);
    expect(rows(again.toSegment())).toEqual(rows(p.toSegment()));
  });
});

describe('mergeSegments', () => {
  it('maps documents, drops removed ones and terms left without postings, keeps runs ascending', () => {
    const a = build([
      [0, ['alpha', 'shared', '', '']],
      [1, ['beta', 'shared', '', '']],
      [2, ['gone', '', '', '']],
    ]).p.toSegment();
    const b = build([
      [0, ['', 'shared delta', '', '']],
      [1, ['alpha', '', '', '']],
    ]).p.toSegment();
    const merged = mergeSegments([
      { segment: a, docMap: Int32Array.from([0, 1, -1]) },
      { segment: b, docMap: Int32Array.from([2, 3]) },
    ]);
    expect(rows(merged)).toEqual([
      ['alpha', 0, [0, 1, 3, 1]],
      ['beta', 0, [1, 1]],
      ['delta', 1, [2, 1]],
      ['shared', 1, [0, 1, 1, 1, 2, 1]],
    ]);
    expect(merged.starts.length).toBe(4 * 4 + 1);
  });
});
