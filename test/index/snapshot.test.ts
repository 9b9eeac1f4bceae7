import os from 'node:os';
import { describe, expect, it } from 'vitest';
import { HomeIndex, IndexSnapshotError, INDEX_SNAPSHOT_VERSION } from '../../src/index/home-index.js';
import { decodeFacts, encodeFacts, snapshotTail, splitSnapshot, StringTable } from '../../src/index/snapshot.js';
import { NumsSink } from '../../src/index/link-table.js';
import { extractFacts } from '../../src/markdown/extract.js';
import { generateVault } from '../helpers/generate-vault.js';
import { undecodedRest } from '../../src/index/records.js';
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

/** The snapshot with its text changed by `f` (its integers kept, the byte counts made right). */
function withText(snap: Buffer, f: (text: string) => string): Buffer {
  const parts = splitSnapshot(snap);
  const text = f(parts.bytes.toString());
  return Buffer.concat([Buffer.from(text), snapshotTail(Buffer.byteLength(text), parts.nums, parts.strings, parts.resolutions)]);
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
    counts: [idx.noteCount, idx.fileCount],
  };
}

describe('snapshot', () => {
  it('round-trips through its text: every query answers the same', () => {
    const idx = sample();
    const before = queries(idx);
    const snap = idx.toSnapshot();
    const parts = splitSnapshot(snap);
    const lines = parts.bytes.toString().trimEnd().split('\n');
    expect(JSON.parse(lines[0]!)).toEqual({ format: 'quire-home-index', version: INDEX_SNAPSHOT_VERSION, byteOrder: os.endianness() });
    expect(lines.filter((l) => !l.startsWith('["s"'))).toHaveLength(1 + idx.noteCount + idx.fileCount);
    // The queries above resolved every link: the resolutions are stored, one per link.
    expect(parts.resolutions!.length * 5).toBe(parts.nums.length);
    const back = HomeIndex.fromSnapshot(snap, { mode: 'lazy' });
    expect(back.pendingWork().notes).toBe(0);
    expect(queries(back)).toEqual(before);
    // And it keeps working incrementally.
    addNote(back, 'Reading List.md', 'list');
    addNote(idx, 'Reading List.md', 'list');
    expect(queries(back)).toEqual(queries(idx));
  });

  it('keeps every fact exactly: decoded facts equal the extracted ones, key order included', () => {
    const texts = generateVault(11, 300).map((n) => [n.path, n.text] as const);
    texts.push(['edge/fm.md', '---\ntitle: T\nn: 3\nlist: [a, {b: c}]\nnested: {x: [1, 2]}\n---\n# H\n- [x] done ^d1\n- [-] gone [due:: 2024-01-02]\n  - [ ] sub\n']);
    texts.push(['edge/bad.md', '---\n: : bad\n---\nbody']);
    for (const [path, text] of texts) {
      const facts = extractFacts(text, path);
      // As the scan threads send them: the links' integers and strings' numbers in typed arrays.
      const table = new StringTable();
      const nums = new NumsSink();
      const sinks = { targets: new NumsSink(), extras: new NumsSink() };
      const encoded = JSON.stringify(encodeFacts(facts, table, { nums, strings: sinks }));
      const strings = JSON.parse(table.takeLine() ?? '["s"]').slice(1) as string[];
      const back = decodeFacts(path, JSON.parse(encoded), strings, { nums: nums.take(), strings: { targets: sinks.targets.take(), extras: sinks.extras.take() } });
      expect({ ...back, links: back.links.toArray() }).toEqual(facts);
      expect(JSON.stringify(back)).toBe(JSON.stringify(facts));
    }
  });

  it('keeps every fact exactly through a snapshot: the facts of a note, decoded when first read, equal the indexed ones, key order included', () => {
    const idx = new HomeIndex({ mode: 'lazy' });
    for (const n of generateVault(11, 300)) addNote(idx, n.path, n.text);
    addNote(idx, 'edge/fm.md', '---\ntitle: T\nn: 3\nlist: [a, {b: c}]\nnested: {x: [1, 2]}\n---\n# H\n- [x] done ^d1\n- [-] gone [due:: 2024-01-02]\n  - [ ] sub\n');
    addNote(idx, 'edge/bad.md', '---\n: : bad\n---\nbody');
    const back = HomeIndex.fromSnapshot(idx.toSnapshot(), { mode: 'lazy' });
    expect(back.noteCount).toBe(idx.noteCount);
    for (const n of idx.notes()) {
      const facts = back.noteByPath(n.path)!.facts;
      expect({ ...facts, links: facts.links.toArray() }).toEqual({ ...n.facts, links: n.facts.links.toArray() });
      expect(JSON.stringify(facts)).toBe(JSON.stringify(n.facts));
    }
  });

  it('writes a warm index whose notes were never read as the very snapshot it was read from, decoding none of them', () => {
    const idx = sample();
    idx.flush();
    const snap = idx.toSnapshot();
    const back = HomeIndex.fromSnapshot(snap, { mode: 'lazy' });
    expect(back.toSnapshot().equals(snap)).toBe(true);
    expect([...back.notes()].every((n) => undecodedRest(n) !== null)).toBe(true);
    // One read decodes that note alone; the next snapshot writes its facts anew, the same bytes.
    expect(back.noteByPath('Home.md')!.title).toBe('Home');
    expect([...back.notes()].filter((n) => undecodedRest(n) === null).map((n) => n.path)).toEqual(['Home.md']);
    expect(back.toSnapshot().equals(snap)).toBe(true);
  });

  it('is written a line at a time from the live index; a write meanwhile leaves the links to be resolved again', () => {
    const idx = sample();
    idx.flush();
    const w = idx.snapshotWriter();
    const first = w.lines.next().value as string;
    // A change between lines: the lines produced later carry it, each line consistent in itself.
    addNote(idx, 'Ideas/Inbox.md', 'changed inbox #late [[Reading List]]');
    addNote(idx, 'Reading List.md', 'new');
    const text = [first, ...w.lines].join('\n') + '\n';
    const snap = Buffer.concat([Buffer.from(text), w.tail()]);
    expect(splitSnapshot(snap).resolutions).toBeNull();
    const back = HomeIndex.fromSnapshot(snap, { mode: 'lazy' });
    expect(back.noteByPath('Ideas/Inbox.md')!.tags).toEqual(['late']);
    expect(back.pendingWork().notes).toBe(back.noteCount);
    expect(back.outgoing('Ideas/Inbox.md').map((l) => l.resolved)).toEqual([null]);
  });

  it('stores no resolutions while links wait to be resolved', () => {
    const idx = sample(); // lazy: nothing resolved yet
    expect(splitSnapshot(idx.toSnapshot()).resolutions).toBeNull();
  });

  const text = (f: (s: string) => string) => (snap: Buffer) => withText(snap, f);
  const bytes = (f: (s: string) => string) => (snap: Buffer) => Buffer.from(f(snap.toString('latin1')), 'latin1');
  const rest = '[null,null,null,"z","filename",[],[],[],[],0]';
  const note = (links: string, r = rest) => `["n","z.md",[1,2,"e",null,null],null,"p0123456789abcdef",null,[],[],[],[],${links}]\t${r}\n`;
  it('reads a note line of its own shape (the one the cases below break)', () => {
    const idx = sample();
    idx.flush();
    const back = HomeIndex.fromSnapshot(text((s) => s + note('[0,0,null,null]'))(idx.toSnapshot()), { mode: 'lazy' });
    expect(back.noteByPath('z.md')!.id).toBe('p0123456789abcdef');
    expect(back.noteByPath('z.md')!.title).toBe('z');
  });

  it('checks the rest of a note line only when it is first read, and throws IndexSnapshotError then', () => {
    const idx = sample();
    idx.flush();
    const back = HomeIndex.fromSnapshot(text((s) => s + note('[0,0,null,null]', '[1,2]'))(idx.toSnapshot()), { mode: 'lazy' });
    expect(back.noteByPath('z.md')!.path).toBe('z.md');
    expect(() => back.noteByPath('z.md')!.title).toThrow(IndexSnapshotError);
  });

  it.each([
    ['an unknown version', bytes((s) => s.replace(/"version":\d+/, '"version":999')), 'index_snapshot_version'],
    ['the previous version (facts in one tuple)', () => Buffer.from(`{"format":"quire-home-index","version":${INDEX_SNAPSHOT_VERSION - 1},"byteOrder":"LE"}\n["f","a.png",[1,2,"",null,null]]\n`), 'index_snapshot_version'],
    ['another format', bytes((s) => s.replace('quire-home-index', 'x')), 'index_snapshot_invalid'],
    ['the other byte order (a data folder copied across machines)', bytes((s) => s.replace(/"byteOrder":"(LE|BE)"/, (_m, o) => `"byteOrder":"${o === 'LE' ? 'BE' : 'LE'}"`)), 'index_snapshot_byte_order'],
    ['a malformed note', text((s) => s + '["n","a.md",[1,2,"e",null,null],[1,2],null,"p0123456789abcdef"]\n'), 'index_snapshot_invalid'],
    ['a note of the previous shape (facts in one tuple)', text((s) => s + `["n","z.md",[1,2,"e",null,null],[null,null,null,"z","filename",null,[],[],[],[],[],[],[0,0,null,null],[],0],null,"p0123456789abcdef"]\n`), 'index_snapshot_invalid'],
    ['a note without its rest', text((s) => s + note('[0,0,null,null]').replace(/\t.*/, '')), 'index_snapshot_invalid'],
    ['a note whose rest is not an array', text((s) => s + note('[0,0,null,null]', '{}')), 'index_snapshot_invalid'],
    ['a file line with a rest', text((s) => s + '["f","b.png",[1,2,"",null,null]]\t[]\n'), 'index_snapshot_invalid'],
    ['a tag number out of range', text((s) => s + note('[0,0,null,null]').replace(',[],[],[],[0,0', ',[],[99999],[],[],[0,0')), 'index_snapshot_invalid'],
    ['a path named twice', text((s) => s + note('[0,0,null,null]') + note('[0,0,null,null]')), 'index_snapshot_invalid'],
    ['a malformed derived id', text((s) => s + note('[0,0,null,null]').replace('"p0123456789abcdef"', '"x"')), 'index_snapshot_invalid'],
    ['a target number out of range', (snap: Buffer) => corruptTarget(snap, 99999), 'index_snapshot_invalid'],
    ['a target in the text (not this format)', text((s) => s + note('[0,1,[0],null]')), 'index_snapshot_invalid'],
    ['links beyond the integers', text((s) => s + note('[99999990,1,null,null]')), 'index_snapshot_invalid'],
    ['links not on a link boundary', text((s) => s + note('[3,1,null,null]')), 'index_snapshot_invalid'],
    ['extras beyond the integers', text((s) => s + note('[0,1,null,[99999990,3]]')), 'index_snapshot_invalid'],
    ['extras in the text (not this format)', text((s) => s + note('[0,1,null,[null,null,null]]')), 'index_snapshot_invalid'],
    ['a truncated line', text((s) => s.slice(0, s.length - 40)), 'index_snapshot_invalid'],
    ['a truncated file', (snap: Buffer) => snap.subarray(0, snap.length - 3), 'index_snapshot_invalid'],
    ['a resolution out of range', (snap: Buffer) => corruptResolution(snap, 1e6), 'index_snapshot_invalid'],
    ['a resolution below -1', (snap: Buffer) => corruptResolution(snap, -7), 'index_snapshot_invalid'],
    ['not a snapshot', () => Buffer.from('null'), 'index_snapshot_invalid'],
  ])('throws IndexSnapshotError on %s', (_name, mutate, reason) => {
    const idx = sample();
    idx.flush();
    const snap = idx.toSnapshot();
    let err: unknown;
    try {
      HomeIndex.fromSnapshot(mutate(snap));
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(IndexSnapshotError);
    expect((err as IndexSnapshotError).details).toEqual({ reason });
  });
});

/** The snapshot with its first link's target number set to `n`. */
function corruptTarget(snap: Buffer, n: number): Buffer {
  const parts = splitSnapshot(snap);
  const targets = Int32Array.from(parts.strings.targets);
  targets[0] = n;
  const strings = { ...parts.strings, targets };
  return Buffer.concat([parts.bytes, snapshotTail(parts.bytes.length, parts.nums, strings, parts.resolutions)]);
}

/** The snapshot with its first resolution that names a path set to `n`. */
function corruptResolution(snap: Buffer, n: number): Buffer {
  const parts = splitSnapshot(snap);
  const res = Int32Array.from(parts.resolutions!);
  res[res.findIndex((r) => r >= 0)] = n;
  return Buffer.concat([parts.bytes, snapshotTail(parts.bytes.length, parts.nums, parts.strings, res)]);
}

/**
 * A warm start: an index restored from a snapshot (its links' resolutions
 * stored) and then given what changed in the folder while no index was
 * open, as the vault's scan does. It must answer exactly as an index built
 * from the folder as it now is, whatever changed.
 */
describe('snapshot: resolutions kept across changes made while closed', () => {
  const base: Record<string, string> = {
    'Home.md': '---\naliases: [Start]\n---\n[[Project Alpha]] [[Reading List]] [[Inbox]] ![[café.png]] [[#Top]] #hub',
    'Projects/Project Alpha.md': 'alpha [[Start]] [[Home]] [[Ideas/Inbox]] [x](../Home.md) #hub/alpha',
    'Ideas/Inbox.md': 'inbox [[Project Alpha#Goals]] [[Nowhere]] [[Later]]',
    'deep/a/Inbox.md': 'a second Inbox [[Start|the start]]',
    'Later.md': 'later [[Home]]',
    'assets/café.png': '',
  };
  type Change = Record<string, string | null>;
  const changes: Array<[string, Change]> = [
    ['nothing changed', {}],
    ['a new note makes an unresolved link resolve', { 'Reading List.md': 'list' }],
    ['a new note answers a name other links already resolve (shorter path wins)', { 'Inbox.md': 'top inbox' }],
    ['a linked note is deleted: its links fall back or go unresolved', { 'Ideas/Inbox.md': null }],
    ['a note is renamed', { 'Later.md': null, 'Archive/Later.md': 'later [[Home]]' }],
    ['an alias moves to another note', { 'Home.md': '[[Project Alpha]] #hub', 'Later.md': '---\naliases: [start]\n---\nlater' }],
    ['a note gains a title alias that an unresolved link names', { 'Later.md': '---\naliases: [Nowhere]\n---\nlater [[Home]]' }],
    ['a linked file is deleted, another added', { 'assets/café.png': null, 'Nowhere.pdf': '' }],
    ['the links of a note are edited', { 'Projects/Project Alpha.md': 'alpha [[Later]] [[Reading List]] #new' }],
  ];

  function build(files: Record<string, string>): HomeIndex {
    const idx = new HomeIndex({ mode: 'lazy' });
    for (const [p, t] of Object.entries(files)) {
      if (p.endsWith('.md')) addNote(idx, p, t);
      else addFile(idx, p);
    }
    return idx;
  }

  it.each(changes)('%s', (_name, change) => {
    const before = build(base);
    before.flush();
    const snap = before.toSnapshot();
    expect(splitSnapshot(snap).resolutions).not.toBeNull();
    const warm = HomeIndex.fromSnapshot(snap, { mode: 'lazy' });
    const after: Record<string, string> = { ...base };
    for (const [p, t] of Object.entries(change)) {
      if (t === null) {
        delete after[p];
        warm.remove(p);
      } else {
        after[p] = t;
        if (p.endsWith('.md')) addNote(warm, p, t);
        else addFile(warm, p);
      }
    }
    expect(linkState(warm)).toEqual(linkState(build(after)));
    // Facts left undecoded through the change (records.ts, restoredEntry) read as a cold index's do.
    expect(queries(warm)).toEqual(queries(build(after)));
  });

  it('answers the same before its links are registered by key and after', () => {
    const before = build(base);
    before.flush();
    const warm = HomeIndex.fromSnapshot(before.toSnapshot(), { mode: 'lazy' });
    expect(linkState(warm)).toEqual(linkState(before));
    warm.flush(); // registers them
    addNote(warm, 'Reading List.md', 'list');
    addNote(before, 'Reading List.md', 'list');
    warm.remove('Ideas/Inbox.md');
    before.remove('Ideas/Inbox.md');
    expect(linkState(warm)).toEqual(linkState(before));
  });
});
