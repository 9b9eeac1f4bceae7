import os from 'node:os';
import { describe, expect, it } from 'vitest';
import { derivedId, HomeIndex, IndexSnapshotError, INDEX_SNAPSHOT_VERSION } from '../../src/index/home-index.js';
import { snapshotTail, splitSnapshot, type SnapshotParts } from '../../src/index/snapshot.js';
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

/** A snapshot's parts as plain values, to change in a test. */
interface Editable {
  text: string;
  strings: string[];
  files: number;
  notes: number;
  floats: number[];
  rows: number[];
  refs: number[];
  nums: number[];
  targets: number[];
  extras: number[];
  resolutions: number[] | null;
}

/** The snapshot with its parts changed by `f`, written again (the counts made right). */
function edited(snap: Buffer, f: (p: Editable) => void): Buffer {
  const parts: SnapshotParts = splitSnapshot(snap);
  const p: Editable = {
    text: parts.bytes.toString(),
    strings: [...parts.strings],
    files: parts.files,
    notes: parts.notes,
    floats: [...parts.floats],
    rows: [...parts.rows],
    refs: [...parts.refs],
    nums: [...parts.nums],
    targets: [...parts.linkStrings.targets],
    extras: [...parts.linkStrings.extras],
    resolutions: parts.resolutions && [...parts.resolutions],
  };
  f(p);
  const tail = snapshotTail(Buffer.byteLength(p.text), {
    strings: p.strings,
    files: p.files,
    notes: p.notes,
    floats: Float64Array.from(p.floats),
    rows: Int32Array.from(p.rows),
    refs: Int32Array.from(p.refs),
    nums: Int32Array.from(p.nums),
    linkStrings: { targets: Int32Array.from(p.targets), extras: Int32Array.from(p.extras) },
    resolutions: p.resolutions && Int32Array.from(p.resolutions),
  });
  return Buffer.concat([Buffer.from(p.text), tail]);
}

/** Adds a note row (no links, no resolutions then) with `rest` as its rest; `row` changes its integers (18, snapshot.ts ROW). */
function addRow(p: Editable, opts: { path?: string; rest?: string; derived?: string; row?: (r: number[]) => void } = {}): void {
  const str = (s: string) => p.strings.push(s) - 1;
  const start = Buffer.byteLength(p.text);
  const rest = opts.rest ?? '[null,null,null,"z","filename",[],[],[],[],0]';
  p.text += rest + '\n';
  const row = [str(opts.path ?? 'z.md'), str('e'), str(opts.derived ?? 'p0123456789abcdef'), -1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, -1, 0, start, start + Buffer.byteLength(rest)];
  opts.row?.(row);
  p.rows.push(...row);
  p.floats.push(1, 2, NaN, NaN, NaN);
  p.notes++;
  p.resolutions = null;
}

function queries(idx: HomeIndex) {
  return {
    ...linkState(idx),
    // Links as the records they stand for: a restored LinkTable names its strings from the snapshot's shared table.
    notes: [...idx.notes()].map((n) => ({ ...n, facts: { ...n.facts, links: n.facts.links.toArray() } })).sort((a, b) => (a.path < b.path ? -1 : 1)),
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
    // A line per note (its rest); each file and note a row.
    expect(lines).toHaveLength(1 + idx.noteCount);
    expect([parts.files, parts.notes]).toEqual([idx.fileCount, idx.noteCount]);
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

  const bytes = (f: (s: string) => string) => (snap: Buffer) => Buffer.from(f(snap.toString('latin1')), 'latin1');
  const edit = (f: (p: Editable) => void) => (snap: Buffer) => edited(snap, f);
  const row = (f: (r: number[]) => void) => edit((p) => addRow(p, { row: f }));
  it('reads a note row of its own shape (the one the cases below break)', () => {
    const idx = sample();
    idx.flush();
    const back = HomeIndex.fromSnapshot(edit((p) => addRow(p))(idx.toSnapshot()), { mode: 'lazy' });
    expect(back.noteByPath('z.md')!.id).toBe('p0123456789abcdef');
    expect(back.noteByPath('z.md')!.title).toBe('z');
  });

  it('checks the rest of a note only when it is first read, and throws IndexSnapshotError then', () => {
    const idx = sample();
    idx.flush();
    const back = HomeIndex.fromSnapshot(edit((p) => addRow(p, { rest: '[1,2]' }))(idx.toSnapshot()), { mode: 'lazy' });
    expect(back.noteByPath('z.md')!.path).toBe('z.md');
    expect(() => back.noteByPath('z.md')!.title).toThrow(IndexSnapshotError);
  });

  it.each([
    ['an unknown version', bytes((s) => s.replace(/"version":\d+/, '"version":999')), 'index_snapshot_version'],
    ['the previous version (a JSON head per note line)', () => Buffer.from(`{"format":"quire-home-index","version":${INDEX_SNAPSHOT_VERSION - 1},"byteOrder":"LE"}\n["f","a.png",[1,2,"",null,null]]\n`), 'index_snapshot_version'],
    ['another format', bytes((s) => s.replace('quire-home-index', 'x')), 'index_snapshot_invalid'],
    ['the other byte order (a data folder copied across machines)', bytes((s) => s.replace(/"byteOrder":"(LE|BE)"/, (_m, o) => `"byteOrder":"${o === 'LE' ? 'BE' : 'LE'}"`)), 'index_snapshot_byte_order'],
    ['an etag number out of range', row((r) => (r[1] = 99999)), 'index_snapshot_invalid'],
    ['an id number out of range', row((r) => (r[3] = 99999)), 'index_snapshot_invalid'],
    ['counts that do not match the file', edit((p) => p.notes++), 'index_snapshot_invalid'],
    ['a note without its rest', row((r) => (r[17] = r[16]!)), 'index_snapshot_invalid'],
    ['a rest beyond the text', row((r) => (r[17] = r[17]! + 1000)), 'index_snapshot_invalid'],
    ['a rest in the header', row((r) => ((r[16] = 0), (r[17] = 2))), 'index_snapshot_invalid'],
    ['a note whose rest is not an array', edit((p) => addRow(p, { rest: '{}' })), 'index_snapshot_invalid'],
    ['a tag number out of range', edit((p) => (addRow(p, { row: (r) => ((r[6] = p.refs.length), (r[7] = 1)) }), p.refs.push(99999))), 'index_snapshot_invalid'],
    ['aliases beyond the string numbers', row((r) => ((r[4] = 0), (r[5] = 99999))), 'index_snapshot_invalid'],
    ['a negative range', row((r) => ((r[8] = -1), (r[9] = 1))), 'index_snapshot_invalid'],
    ['a path named twice', edit((p) => (addRow(p), addRow(p))), 'index_snapshot_invalid'],
    ['a malformed derived id', edit((p) => addRow(p, { derived: 'x' })), 'index_snapshot_invalid'],
    ['a target number out of range', edit((p) => (p.targets[0] = 99999)), 'index_snapshot_invalid'],
    ['links beyond the integers', row((r) => ((r[12] = 99999990), (r[13] = 1))), 'index_snapshot_invalid'],
    ['links not on a link boundary', row((r) => ((r[12] = 3), (r[13] = 1))), 'index_snapshot_invalid'],
    ['a negative link count', row((r) => ((r[12] = 0), (r[13] = -1))), 'index_snapshot_invalid'],
    ['extras beyond the integers', row((r) => ((r[13] = 1), (r[14] = 99999990), (r[15] = 3))), 'index_snapshot_invalid'],
    ['extras not a whole slot', row((r) => ((r[13] = 1), (r[14] = 0), (r[15] = 2))), 'index_snapshot_invalid'],
    ['strings whose lengths are not those written', bytes((s) => s.replaceAll('caf\u00c3\u00a9', 'cafxx')), 'index_snapshot_invalid'],
    ['a truncated text', edit((p) => (p.text = p.text.slice(0, p.text.length - 40))), 'index_snapshot_invalid'],
    ['a truncated file', (snap: Buffer) => snap.subarray(0, snap.length - 4), 'index_snapshot_invalid'],
    ['a resolution out of range', edit((p) => (p.resolutions![p.resolutions!.findIndex((r) => r >= 0)] = 1e6)), 'index_snapshot_invalid'],
    ['a resolution below -1', edit((p) => (p.resolutions![p.resolutions!.findIndex((r) => r >= 0)] = -7)), 'index_snapshot_invalid'],
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

  /** Makes `change` in `idx` (null: removed) and returns `files` as it then stands. */
  function applyChange(idx: HomeIndex, files: Record<string, string>, change: Change): Record<string, string> {
    const after: Record<string, string> = { ...files };
    for (const [p, t] of Object.entries(change)) {
      if (t === null) {
        delete after[p];
        idx.remove(p);
      } else {
        after[p] = t;
        if (p.endsWith('.md')) addNote(idx, p, t);
        else addFile(idx, p);
      }
    }
    return after;
  }

  it.each(changes)('%s', (_name, change) => {
    const before = build(base);
    before.flush();
    const snap = before.toSnapshot();
    expect(splitSnapshot(snap).resolutions).not.toBeNull();
    const warm = HomeIndex.fromSnapshot(snap, { mode: 'lazy' });
    const after = applyChange(warm, base, change);
    expect(linkState(warm)).toEqual(linkState(build(after)));
    // Facts left undecoded through the change (records.ts, restoredEntry) read as a cold index's do.
    expect(queries(warm)).toEqual(queries(build(after)));
  });

  // A warm start applies the stored resolutions after it is ready, in slices of the deferred work (link-graph.ts, `restoring`).
  it.each(changes)('applies the stored resolutions in slices after start; %s between two slices answers like a cold index', async (_name, change) => {
    const many: Record<string, string> = { ...base };
    for (const n of generateVault(5, 200)) many[n.path] = n.text;
    const before = build(many);
    before.flush();
    const warm = HomeIndex.fromSnapshot(before.toSnapshot(), { mode: 'background', sliceMs: 0, idleMs: 0 });
    const total = warm.noteCount;
    expect(warm.pendingWork().restoring).toBe(total);
    warm.holdBackground();
    warm.releaseBackground();
    for (let turns = 0; warm.pendingWork().restoring === total && turns < 1000; turns++) await new Promise((resolve) => setImmediate(resolve));
    // Some applied, some not: the change lands between two slices.
    expect(warm.pendingWork().restoring).toBeGreaterThan(0);
    expect(warm.pendingWork().restoring).toBeLessThan(total);
    const after = applyChange(warm, many, change);
    // A change applies the rest first (its effects on other notes' links need them all).
    if (Object.keys(change).length > 0) expect(warm.pendingWork().restoring).toBe(0);
    expect(linkState(warm)).toEqual(linkState(build(after)));
    expect(queries(warm)).toEqual(queries(build(after)));
  });

  // A backlinks or outgoing question while they wait applies only the notes it reads (link-graph.ts, `applyRestoredOf`);
  // the slices then apply the rest in path order around them, inserting where those notes already are.
  it.each(changes)('questions before and between the slices apply only the notes they read; %s after answers like a cold index', async (_name, change) => {
    const many: Record<string, string> = { ...base };
    // Every 7th note also links to Mid.md (86 of 600: cached Backlinks, not a hub).
    generateVault(5, 600).forEach((n, i) => (many[n.path] = i % 7 === 0 ? `${n.text}\n[[Mid]] and [[Mid#x]]\n` : n.text));
    many['Mid.md'] = 'mid';
    const before = build(many);
    before.flush();
    const paths = Object.keys(many).sort();
    const counts = paths.map((p) => before.backlinkCount(p));
    // Cached Backlinks (64 sources or more) must stay parallel to sources as the slices insert around them; a hub
    // read by most notes is applied whole instead (`restoreSourcesOf`).
    const hub = paths[counts.indexOf(Math.max(...counts))]!;
    const mid = 'Mid.md';
    expect(before.backlinkCount(mid)).toBeGreaterThanOrEqual(64);
    const warm = HomeIndex.fromSnapshot(before.toSnapshot(), { mode: 'background', sliceMs: 0, idleMs: 0 });
    const total = warm.noteCount;
    const ask = (ps: string[]) => {
      for (const p of ps) {
        expect(warm.backlinks(p), p).toEqual(before.backlinks(p));
        expect(warm.backlinkCount(p), p).toBe(before.backlinkCount(p));
        expect(warm.outgoing(p), p).toEqual(before.outgoing(p));
      }
    };
    ask([paths[150]!, mid, 'Nowhere.md', paths[400]!]);
    // Not applied in turn yet: every note still waits for its place in the other targets' sources.
    expect(warm.pendingWork().restoring).toBe(total);
    warm.holdBackground();
    warm.releaseBackground();
    for (let turns = 0; warm.pendingWork().restoring === total && turns < 1000; turns++) await new Promise((resolve) => setImmediate(resolve));
    expect(warm.pendingWork().restoring).toBeGreaterThan(0);
    ask([paths[3]!, paths[599]!, mid]);
    expect(warm.pendingWork().restoring).toBeGreaterThan(0);
    ask([hub]);
    const after = applyChange(warm, many, change);
    expect(linkState(warm)).toEqual(linkState(build(after)));
    expect(queries(warm)).toEqual(queries(build(after)));
  });

  it('a question asked before the stored resolutions are applied applies those it reads, and answers like the index they were saved from', () => {
    const before = build(base);
    before.flush();
    const warm = HomeIndex.fromSnapshot(before.toSnapshot(), { mode: 'lazy' });
    expect(warm.pendingWork().restoring).toBe(warm.noteCount);
    // The name, alias and derived-id maps are made at the first question that needs them (link-graph.ts `byName_`, ids.ts).
    for (const target of ['Start', 'inbox', 'café.png', 'Nowhere', 'Later']) {
      expect(warm.resolve('x/new.md', { target, kind: 'wikilink' }), target).toBe(before.resolve('x/new.md', { target, kind: 'wikilink' }));
    }
    expect(warm.noteById(derivedId('Later.md'))?.path).toBe('Later.md');
    expect(warm.backlinks('Home.md')).toEqual(before.backlinks('Home.md'));
    // Home.md is linked from all notes but one here: applied whole (`restoreSourcesOf`).
    expect(warm.pendingWork().restoring).toBe(0);
    expect(linkState(warm)).toEqual(linkState(before));
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
