/**
 * The scan threads' wire format (src/vault/scan-wire.ts): facts decoded on
 * the main thread equal the extracted ones, key order included, but for tag
 * positions (never sent: the index keeps none), across batches whose string
 * tables and link columns each start afresh.
 */
import { describe, expect, it } from 'vitest';
import { LinkColumnsWriter, LinkTable, NumsSink } from '../../src/index/link-table.js';
import { extractFacts } from '../../src/markdown/extract.js';
import { decodeBatch, WireEncoder, type WireBatch } from '../../src/vault/scan-wire.js';
import { generateVault } from '../helpers/generate-vault.js';

const EDGES: Array<[string, string]> = [
  ['edge/fm.md', '---\ntitle: T\nn: 3\nlist: [a, {b: c}]\nnested: {x: [1, 2]}\ntags: [Alpha, beta]\n---\n# H\n- [x] done ^d1\n- [-] gone [due:: 2024-01-02]\n  - [ ] sub\n'],
  ['edge/bad.md', '---\n: : bad\n---\nbody #tag'],
  ['edge/empty.md', ''],
  ['edge/links.md', '[[a#H|x]] [[a#^b]] ![[c]] [m](d.md#e) [n](f%20g.md) [[a]] #t #T text ^blk\n\n| [[x\\|y]] | #z |\n|---|---|\n'],
  ['edge/unicode.md', '# Ünïcödé 日本\n[[Ψ Notes|año]] #日本 #emoji🚀 [[Ψ Notes]]'],
];

describe('scan thread wire format', () => {
  it('decodes every fact exactly as extracted (tag positions aside), key order included, batch after batch', () => {
    const notes: Array<[string, string]> = [...generateVault(11, 300).map((n) => [n.path, n.text] as [string, string]), ...EDGES];
    const enc = new WireEncoder();
    const batches: WireBatch[] = [];
    const expected: unknown[] = [];
    notes.forEach(([path, text], i) => {
      const facts = extractFacts(text, path);
      enc.add(path, `etag-${i}`, facts);
      expected.push([path, `etag-${i}`, JSON.stringify({ ...facts, tagOccurrences: [] })]);
      if (i % 32 === 31) batches.push(enc.take());
    });
    enc.add('gone.md', null, null);
    enc.add('same.md', 'etag-same', null);
    expected.push(['gone.md', null, null], ['same.md', 'etag-same', null]);
    batches.push(enc.take());
    const rows = batches.flatMap((b) => decodeBatch(b));
    expect(rows.map(([path, etag, facts]) => [path, etag, facts === null ? null : JSON.stringify(facts)])).toEqual(expected);
    for (const [, , facts] of rows) if (facts !== null) expect(facts.links).toBeInstanceOf(LinkTable);
  });

  it('writes a batch of links as LinkTable.toColumns does', () => {
    const links = EDGES.flatMap(([path, text]) => [extractFacts(text, path).links]);
    links.push([]);
    const refs = new Map<string, number>();
    const table: string[] = [];
    const ref = (s: string | null) => (s === null ? null : (refs.get(s) ?? (refs.set(s, table.length), table.push(s) - 1)));
    const writer = new LinkColumnsWriter();
    const rows = links.map((ls) => writer.write(ls, (s) => ref(s)!));
    const written = writer.take();
    const nums = new NumsSink();
    const sinks = { targets: new NumsSink(), extras: new NumsSink() };
    const viaTable = links.map((ls) => LinkTable.of(ls).toColumns(ref, nums, sinks));
    expect(rows).toEqual(viaTable);
    expect(written).toEqual({ nums: nums.take(), strings: { targets: sinks.targets.take(), extras: sinks.extras.take() } });
    rows.forEach((row, i) => expect(LinkTable.fromColumns(row, written.nums, table, written.strings).toArray()).toEqual(links[i]));
  });

  it('grows its columns past their first size', () => {
    const many = extractFacts(Array.from({ length: 5000 }, (_, i) => `[[n${i}#h|a${i}]]`).join(' '), 'big.md');
    const enc = new WireEncoder();
    enc.add('big.md', 'e', many);
    const facts = decodeBatch(enc.take())[0]![2];
    expect(facts!.links.length).toBe(5000);
    expect(JSON.stringify(facts)).toBe(JSON.stringify({ ...many, tagOccurrences: [] }));
  });

  it('rejects a malformed batch with a TypeError', () => {
    const ok = (() => {
      const enc = new WireEncoder();
      enc.add('a.md', 'e', extractFacts('[[b]] #t', 'a.md'));
      return enc.take();
    })();
    const bad = (json: string): WireBatch => ({ ...ok, json });
    const [strings, rows] = JSON.parse(ok.json) as [string[], unknown[][]];
    const facts = rows[0]![2] as unknown[];
    for (const b of [
      bad('{}'),
      bad(JSON.stringify([strings, [['a.md', 'e']]])),
      bad(JSON.stringify([[1], rows])),
      bad(JSON.stringify([strings, [['a.md', 'e', facts.slice(1)]]])),
      bad(JSON.stringify([strings, [['a.md', 'e', facts.map((x, i) => (i === 2 ? [99] : x))]]])),
      bad(JSON.stringify([[], rows])),
    ]) {
      expect(() => decodeBatch(b)).toThrow(TypeError);
    }
  });
});
