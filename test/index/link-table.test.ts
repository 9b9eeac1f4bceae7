import { describe, expect, it } from 'vitest';
import { LinkTable, NumsSink } from '../../src/index/link-table.js';
import type { Link } from '../../src/markdown/facts.js';
import { extractFacts } from '../../src/markdown/extract.js';
import { generateVault } from '../helpers/generate-vault.js';

const link = (over: Partial<Link>): Link => ({
  kind: 'wikilink',
  embed: false,
  target: 'Note',
  heading: null,
  blockId: null,
  alias: null,
  line: 0,
  column: 0,
  start: 0,
  end: 8,
  ...over,
});

describe('LinkTable', () => {
  it('gives back every link exactly, key order included, for every note of a generated vault', () => {
    let total = 0;
    for (const { path, text } of generateVault(5, 200)) {
      const links = extractFacts(text, path).links;
      const table = LinkTable.of(links);
      expect(table.length).toBe(links.length);
      expect(table.toArray()).toEqual(links);
      expect(JSON.stringify(table)).toBe(JSON.stringify(links));
      links.forEach((l, i) => {
        expect([table.target(i), table.kind(i), table.embed(i), table.line(i), table.column(i)]).toEqual([l.target, l.kind, l.embed, l.line, l.column]);
        expect([table.heading(i), table.blockId(i), table.alias(i)]).toEqual([l.heading, l.blockId, l.alias]);
      });
      total += links.length;
    }
    expect(total).toBeGreaterThan(1000);
  });

  it('keeps headings, block ids and aliases only where some link has one', () => {
    const plain = [link({ target: 'A' }), link({ target: 'B', kind: 'markdown', embed: true, line: 3, column: 7, start: 40, end: 52 })];
    expect(LinkTable.of(plain).toArray()).toEqual(plain);
    const mixed = [link({ target: 'A' }), link({ target: 'B', heading: 'H#2', blockId: null, alias: 'b' }), link({ target: '', blockId: 'x1' })];
    const t = LinkTable.of(mixed);
    expect(t.toArray()).toEqual(mixed);
    expect([t.heading(0), t.alias(1), t.blockId(2), t.target(2)]).toEqual([null, 'b', 'x1', '']);
    expect(LinkTable.of([]).length).toBe(0);
  });

  it('crosses threads as columns: the integers of many notes in one array, each table a view of it', () => {
    const strings: string[] = [];
    const ref = (s: string | null) => (s === null ? null : strings.includes(s) ? strings.indexOf(s) : strings.push(s) - 1);
    const notes = [...generateVault(11, 60)].map(({ path, text }) => extractFacts(text, path).links);
    notes.push([], [link({ target: 'A', heading: 'H', alias: 'a' }), link({ target: '', blockId: 'b' })]);
    const sink = new NumsSink();
    const stringSinks = { targets: new NumsSink(), extras: new NumsSink() };
    const rows = notes.map((l) => LinkTable.of(l).toColumns(ref, sink, stringSinks));
    const nums = sink.take();
    const cols = { targets: stringSinks.targets.take(), extras: stringSinks.extras.take() };
    expect(nums.length).toBe(notes.reduce((n, l) => n + l.length * 5, 0));
    notes.forEach((l, k) => expect(LinkTable.fromColumns(rows[k], nums, strings, cols).toArray()).toEqual(l));
    expect(sink.take().length).toBe(0);
    const last = rows.at(-1) as [number, number, null, [number, number]];
    for (const bad of [
      [last[0], last[1] + 1, last[2], last[3]],
      [nums.length, last[1], last[2], last[3]],
      [last[0], last[1], [0], last[3]],
      [last[0], last[1], last[2], [last[3][0], last[3][1] - 1]],
      [last[0], last[1], last[2], [cols.extras.length, last[3][1]]],
      [last[0], last[1], last[2], last[3]].slice(0, 3),
      'x',
    ]) {
      expect(() => LinkTable.fromColumns(bad, nums, strings, cols)).toThrow(TypeError);
    }
  });
});
