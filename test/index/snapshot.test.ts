import { describe, expect, it } from 'vitest';
import { HomeIndex, IndexSnapshotError, INDEX_SNAPSHOT_VERSION } from '../../src/index/home-index.js';
import { decodeFacts, encodeFacts, StringTable } from '../../src/index/snapshot.js';
import { extractFacts } from '../../src/markdown/extract.js';
import { generateVault } from '../helpers/generate-vault.js';
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
    const lines = snap.trimEnd().split('\n');
    expect(JSON.parse(lines[0]!)).toEqual({ format: 'quire-home-index', version: INDEX_SNAPSHOT_VERSION });
    expect(lines.filter((l) => !l.startsWith('["s"'))).toHaveLength(1 + idx.noteCount + idx.fileCount);
    const back = HomeIndex.fromSnapshot(snap, { mode: 'lazy' });
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
      const table = new StringTable();
      const encoded = JSON.stringify(encodeFacts(facts, table));
      const strings = JSON.parse(table.takeLine() ?? '["s"]').slice(1) as string[];
      const back = decodeFacts(path, JSON.parse(encoded), strings);
      expect({ ...back, links: back.links.toArray() }).toEqual(facts);
      expect(JSON.stringify(back)).toBe(JSON.stringify(facts));
    }
  });

  it('is written a line at a time from the live index', () => {
    const idx = sample();
    const it = idx.snapshotLines();
    const first = it.next().value as string;
    // A change between lines: the lines produced later carry it, each line consistent in itself.
    addNote(idx, 'Ideas/Inbox.md', 'changed inbox #late');
    const rest = [...it];
    const back = HomeIndex.fromSnapshot([first, ...rest].join('\n'), { mode: 'lazy' });
    expect(back.noteByPath('Ideas/Inbox.md')!.tags).toEqual(['late']);
  });

  it.each([
    ['an unknown version', (s: string) => s.replace(/"version":\d+/, '"version":999'), 'index_snapshot_version'],
    ['another format', (s: string) => s.replace('quire-home-index', 'x'), 'index_snapshot_invalid'],
    ['a malformed note', (s: string) => s + '["n","a.md",[1,2,"e",null,null],[1,2]]\n', 'index_snapshot_invalid'],
    ['a string number out of range', (s: string) => s + '["n","z.md",[1,2,"e",null,null],[null,null,null,"z","filename",null,[],[],[],[],[],[],[0,99999,null,null,null,1,1,0,5],[],0]]\n', 'index_snapshot_invalid'],
    ['a truncated line', (s: string) => s.slice(0, s.length - 40), 'index_snapshot_invalid'],
    ['not a snapshot', () => 'null', 'index_snapshot_invalid'],
  ])('throws IndexSnapshotError on %s', (_name, mutate, reason) => {
    const snap = sample().toSnapshot();
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
