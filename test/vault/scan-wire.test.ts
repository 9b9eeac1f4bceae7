/**
 * The scan threads' wire format (src/vault/scan-wire.ts): a note's head
 * crosses decoded, its rest as bytes the index parses when first read
 * (HomeIndex.upsertScanned). Facts read lazily equal the extracted ones,
 * key order included, but for tag positions (never sent: the index keeps
 * none), across batches whose string tables, link columns and rest bytes
 * each start afresh; an index of scanned notes saves the very snapshot an
 * index of the extracted facts saves.
 */
import { describe, expect, it } from 'vitest';
import { HomeIndex } from '../../src/index/home-index.js';
import { LinkColumnsWriter, LinkTable, NumsSink } from '../../src/index/link-table.js';
import { undecodedRest } from '../../src/index/records.js';
import { decodeRest } from '../../src/index/snapshot.js';
import { extractFacts } from '../../src/markdown/extract.js';
import { decodeBatch, WireEncoder, type WireBatch } from '../../src/vault/scan-wire.js';
import { generateVault } from '../helpers/generate-vault.js';

const EDGES: Array<[string, string]> = [
  ['edge/fm.md', '---\ntitle: T\nn: 3\nlist: [a, {b: c}]\nnested: {x: [1, 2]}\ntags: [Alpha, beta]\nid: fm-id\naliases: [Eff Em, eff em]\n---\n# H\n- [x] done ^d1\n- [-] gone [due:: 2024-01-02]\n  - [ ] sub\n'],
  ['edge/bad.md', '---\n: : bad\n---\nbody #tag'],
  ['edge/empty.md', ''],
  ['edge/links.md', '[[a#H|x]] [[a#^b]] ![[c]] [m](d.md#e) [n](f%20g.md) [[a]] #t #T text ^blk\n\n| [[x\\|y]] | #z |\n|---|---|\n'],
  ['edge/unicode.md', '# Ünïcödé 日本\n[[Ψ Notes|año]] #日本 #emoji🚀 [[Ψ Notes]] "quoted" \\ back\u2028sep'],
  ['edge/dates.md', '---\ncreated: 2021-03-04\ndate: 2020-01-01T10:00:00Z\nempty:\nnum: -0\nbig: 1e400\n---\ntext ^only'],
  ['edge/tasks.md', '- [ ] a ^ta\n  - [/] b [due:: 2025-05-05] ^tb\n- [X] c\n\n## Two\ntext ^blk2\n'],
];

const statOf = (i: number) => ({ size: 100 + i, mtimeMs: 1_700_000_000_000 + i * 1000, ctimeMs: 1_700_000_000_000 + i * 1000, etag: `etag-${i}`, birthtimeMs: 1_600_000_000_000 + i });

function scanned(notes: Array<[string, string]>) {
  const enc = new WireEncoder();
  const batches: WireBatch[] = [];
  notes.forEach(([path, text], i) => {
    enc.add(path, `etag-${i}`, extractFacts(text, path));
    if (i % 32 === 31) batches.push(enc.take());
  });
  enc.add('gone.md', null, null);
  enc.add('same.md', 'etag-same', null);
  batches.push(enc.take());
  return batches.flatMap((b) => decodeBatch(b));
}

describe('scan thread wire format', () => {
  const notes: Array<[string, string]> = [...generateVault(11, 300).map((n) => [n.path, n.text] as [string, string]), ...EDGES];

  it('sends each note\'s head decoded, and its rest as the bytes a snapshot holds, batch after batch', () => {
    const rows = scanned(notes);
    expect(rows.slice(-2)).toEqual([['gone.md', null, null], ['same.md', 'etag-same', null]]);
    rows.slice(0, -2).forEach(([path, etag, note], i) => {
      const facts = extractFacts(notes[i]![1], path);
      expect([path, etag]).toEqual([notes[i]![0], `etag-${i}`]);
      expect(note!.links).toBeInstanceOf(LinkTable);
      expect([note!.id, note!.aliases, note!.tags, note!.blockIds, note!.taskBlockIds, note!.links.toArray()]).toEqual([
        facts.id,
        facts.aliases,
        facts.tags,
        facts.blocks.map((b) => b.id),
        facts.tasks.flatMap((t) => (t.blockId === null ? [] : [t.blockId])),
        facts.links,
      ]);
      expect(JSON.stringify(decodeRest(path, note!))).toBe(JSON.stringify({ ...facts, tagOccurrences: [] }));
    });
  });

  it('gives an index whose notes read, lazily, every fact as extracted (key order included), and whose snapshot is the one extracted facts give', () => {
    const lazy = new HomeIndex({ mode: 'lazy' });
    const eager = new HomeIndex({ mode: 'lazy' });
    scanned(notes).forEach(([path, , note], i) => {
      if (note === null) return;
      lazy.upsertScanned(path, note, statOf(i));
      eager.upsertNote(path, extractFacts(notes[i]![1], path), statOf(i), notes[i]![1]);
    });
    lazy.flush();
    eager.flush();
    // Nothing read a rest while the notes went in and their links and tags were settled.
    expect([...lazy.notes()].every((n) => undecodedRest(n) !== null)).toBe(true);
    expect(lazy.toSnapshot().equals(eager.toSnapshot())).toBe(true);
    const read = [...lazy.notes()];
    read.forEach((n, i) => {
      const facts = extractFacts(notes[i]![1], n.path);
      expect(JSON.stringify(n.facts)).toBe(JSON.stringify({ ...facts, tagOccurrences: [] }));
      expect(n.facts.links).toBeInstanceOf(LinkTable);
      expect(JSON.stringify(n)).toBe(JSON.stringify(eager.noteByPath(n.path)));
    });
    expect([...lazy.notes()].every((n) => undecodedRest(n) === null)).toBe(true);
    expect(lazy.toSnapshot().equals(eager.toSnapshot())).toBe(true);
    for (const p of ['edge/fm.md', 'edge/tasks.md', 'edge/links.md']) {
      expect(lazy.outgoing(p)).toEqual(eager.outgoing(p));
      expect(lazy.blocks(p)).toEqual(eager.blocks(p));
    }
    expect(lazy.noteById('fm-id')?.path).toBe('edge/fm.md');
    expect(lazy.tags()).toEqual(eager.tags());
    expect([...lazy.tasks()]).toEqual([...eager.tasks()]);
  });

  it('replaces a note or a file already at the path', () => {
    const idx = new HomeIndex({ mode: 'lazy' });
    idx.upsertNote('a.md', extractFacts('old [[x]] #old', 'a.md'), statOf(0), 'old');
    idx.upsertFile('b.md', statOf(1));
    const enc = new WireEncoder();
    enc.add('a.md', 'etag-2', extractFacts('new [[y]] #new', 'a.md'));
    enc.add('b.md', 'etag-3', extractFacts('# B', 'b.md'));
    const rows = decodeBatch(enc.take());
    idx.upsertScanned('a.md', rows[0]![2]!, statOf(2));
    idx.upsertScanned('b.md', rows[1]![2]!, statOf(3));
    idx.flush();
    expect(idx.noteByPath('a.md')!.tags).toEqual(['new']);
    expect(idx.outgoing('a.md').map((l) => l.target)).toEqual(['y']);
    expect(idx.notesWithTag('old')).toEqual([]);
    expect(idx.fileByPath('b.md')).toBeUndefined();
    expect(idx.noteByPath('b.md')!.title).toBe('B');
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

  it('grows its columns and rest bytes past their first size', () => {
    const many = extractFacts(Array.from({ length: 5000 }, (_, i) => `[[n${i}#h|a${i}]]`).join(' ') + '\n' + Array.from({ length: 3000 }, (_, i) => `# Heading ${i} ü日`).join('\n'), 'big.md');
    const enc = new WireEncoder();
    enc.add('big.md', 'e', many);
    const note = decodeBatch(enc.take())[0]![2]!;
    expect(note.links.length).toBe(5000);
    expect(JSON.stringify(decodeRest('big.md', note))).toBe(JSON.stringify({ ...many, tagOccurrences: [] }));
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
      bad(JSON.stringify([strings, [['a.md', 'e', facts.map((x, i) => (i === 7 ? 9999 : x))]]])),
      bad(JSON.stringify([strings, [['a.md', 'e', facts.map((x, i) => (i === 6 ? 1 : x))]]])),
      { ...ok, rests: new Uint8Array(0) },
    ]) {
      expect(() => decodeBatch(b)).toThrow(TypeError);
    }
  });
});
