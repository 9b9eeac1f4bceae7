import { describe, expect, it } from 'vitest';
import { derivedId, HomeIndex } from '../../src/index/home-index.js';
import { fieldsOf } from '../../src/index/fulltext/document.js';
import type { PartialIndex } from '../../src/index/fulltext/full-text.js';
import { TermPostings } from '../../src/index/fulltext/postings.js';
import { extractFacts } from '../../src/markdown/extract.js';
import { addFile, addNote, homeWith, stat } from './helpers.js';

describe('notes and files', () => {
  it('keeps entries, stats and counts; remove forgets', async () => {
    const text = '---\ntitle: Custom\naliases: [A1]\ntags: [x]\ncreated: 2024-01-02\n---\n# Heading\nsome words here #y\n';
    const idx = new HomeIndex({ mode: 'lazy' });
    idx.upsertNote('n/Note.md', extractFacts(text, 'n/Note.md'), { size: 99, mtimeMs: 5000, etag: 'abc', birthtimeMs: 10 }, text);
    addFile(idx, 'a/pic.png');
    const n = idx.noteByPath('n/Note.md')!;
    expect(n).toMatchObject({
      path: 'n/Note.md',
      title: 'Custom',
      aliases: ['A1'],
      tags: ['x', 'y'],
      etag: 'abc',
      size: 99,
      mtimeMs: 5000,
      updated: 5000,
      created: Date.parse('2024-01-02'),
      id: derivedId('n/Note.md'),
    });
    expect(n.headings.map((h) => h.text)).toEqual(['Heading']);
    expect(n.wordCount).toBeGreaterThan(0);
    expect(n.facts.path).toBe('n/Note.md');
    expect(idx.fileByPath('a/pic.png')).toEqual({ path: 'a/pic.png', etag: 'f9', size: 10, mtimeMs: 1_700_000_000_000 });
    expect(idx.statOf('n/Note.md')).toEqual({ size: 99, mtimeMs: 5000, etag: 'abc', birthtimeMs: 10 });
    expect([idx.noteCount, idx.fileCount, idx.has('a/pic.png'), idx.has('n/Note.md'), idx.has('x')]).toEqual([1, 1, true, true, false]);
    expect([...idx.notes()].map((e) => e.path)).toEqual(['n/Note.md']);
    expect([...idx.files()].map((e) => e.path)).toEqual(['a/pic.png']);
    idx.remove('n/Note.md');
    idx.remove('a/pic.png');
    idx.remove('never/was.md');
    expect([idx.noteCount, idx.fileCount, idx.statOf('n/Note.md')]).toEqual([0, 0, undefined]);
  });

  it.each([
    ['created', 'created: 2023-05-06T07:08:09Z', {}, Date.parse('2023-05-06T07:08:09Z')],
    ['date when no created', 'date: 2022-01-01', {}, Date.parse('2022-01-01')],
    ['birthtime when unparseable', 'created: someday', { birthtimeMs: 42 }, 42],
    ['mtime when no birthtime', 'x: 1', {}, 7000],
    ['mtime when birthtime is 0', 'x: 1', { birthtimeMs: 0 }, 7000],
  ])('created: %s', (_n, fm, extra, want) => {
    const text = `---\n${fm}\n---\nbody\n`;
    const idx = new HomeIndex({ mode: 'lazy' });
    idx.upsertNote('a.md', extractFacts(text, 'a.md'), { size: 1, mtimeMs: 7000, etag: 'e', ...extra }, text);
    expect(idx.noteByPath('a.md')!.created).toBe(want);
  });

  it('a re-stamp with the same facts only records the new stat', async () => {
    const idx = homeWith([['a.md', '[[b]] #t'], 'b.md']);
    const facts = idx.noteByPath('a.md')!.facts;
    idx.upsertNote('a.md', facts, { size: 5, mtimeMs: 99, etag: 'same' }, null);
    expect(idx.noteByPath('a.md')).toMatchObject({ mtimeMs: 99, updated: 99, etag: 'same', size: 5 });
    expect(idx.statOf('a.md')).toEqual({ size: 5, mtimeMs: 99, etag: 'same' });
    expect(idx.backlinks('b.md').map((b) => b.from)).toEqual(['a.md']);
    expect((await idx.search('t')).map((h) => h.path)).toEqual(['a.md']);
  });
});

describe('ids', () => {
  it('derivedId is short, URL-safe, stable and path-specific', async () => {
    const id = derivedId('Folder/Some note.md');
    expect(id).toMatch(/^p[0-9a-f]{16}$/);
    expect(derivedId('Folder/Some note.md')).toBe(id);
    expect(derivedId('Folder/Some note 2.md')).not.toBe(id);
  });

  it('frontmatter id, else derived; lookups both ways', async () => {
    const idx = homeWith([['a.md', '---\nid: "  my-id "\n---\n'], 'b.md']);
    expect(idx.noteById('my-id')?.path).toBe('a.md');
    expect(idx.noteById(derivedId('b.md'))?.path).toBe('b.md');
    expect(idx.noteById(derivedId('a.md'))).toBeUndefined(); // a.md goes by its frontmatter id
    expect(idx.noteById('nope')).toBeUndefined();
  });

  it('duplicate frontmatter ids: the first path in sort order keeps it, the others get derived ids', async () => {
    const dup = '---\nid: same\n---\n';
    const idx = homeWith([['b/copy.md', dup], ['a/orig.md', dup], ['c.md', dup]]);
    expect(idx.noteById('same')?.path).toBe('a/orig.md');
    expect(idx.noteByPath('b/copy.md')!.id).toBe(derivedId('b/copy.md'));
    expect(idx.noteById(derivedId('b/copy.md'))?.path).toBe('b/copy.md');
    idx.remove('a/orig.md');
    expect(idx.noteById('same')?.path).toBe('b/copy.md');
    expect(idx.noteById(derivedId('b/copy.md'))).toBeUndefined();
    addNote(idx, 'a/orig.md', dup);
    expect(idx.noteById('same')?.path).toBe('a/orig.md');
    expect(idx.noteByPath('b/copy.md')!.id).toBe(derivedId('b/copy.md'));
    addNote(idx, 'a/orig.md', '---\nid: changed\n---\n');
    expect(idx.noteById('same')?.path).toBe('b/copy.md');
    expect(idx.noteById('changed')?.path).toBe('a/orig.md');
  });
});

describe('tags', () => {
  const idx = homeWith([
    ['one.md', '---\ntags: [Project/Alpha]\n---\n#todo #area/health/sleep\n'],
    ['two.md', '#project/alpha #project/beta #TODO\n'],
    ['three.md', '#project #Area/Work\n'],
    ['four.md', 'no tags'],
  ]);

  it('counts notes per tag path, nested tags count toward parents once per note', async () => {
    expect(idx.tags()).toEqual([
      { tag: 'Area', count: 2, direct: 0 }, // 'area' once, 'Area' once: tie → smallest
      { tag: 'area/health', count: 1, direct: 0 },
      { tag: 'area/health/sleep', count: 1, direct: 1 },
      { tag: 'Area/Work', count: 1, direct: 1 },
      { tag: 'project', count: 3, direct: 1 },
      { tag: 'Project/Alpha', count: 2, direct: 2 },
      { tag: 'project/beta', count: 1, direct: 1 },
      { tag: 'TODO', count: 2, direct: 2 },
    ]);
  });

  it('display spelling: the most used, ties to the smallest', async () => {
    // project/alpha: "Project/Alpha" once, "project/alpha" once: a tie, and 'P' < 'p'.
    const t = new Map(idx.tags().map((x) => [x.tag.toLowerCase(), x.tag]));
    expect(t.get('project/alpha')).toBe('Project/Alpha');
    expect(t.get('todo')).toBe('TODO');
    expect(t.get('project')).toBe('project'); // 'project' used by three notes, 'Project' by one
  });

  it('notesWithTag: nested by default, exact on request, case-insensitive, # optional', async () => {
    const paths = (tag: string, nested?: boolean) => idx.notesWithTag(tag, nested === undefined ? {} : { nested }).map((n) => n.path);
    expect(paths('PROJECT')).toEqual(['one.md', 'three.md', 'two.md']);
    expect(paths('#project', false)).toEqual(['three.md']);
    expect(paths('area')).toEqual(['one.md', 'three.md']);
    expect(paths('area', false)).toEqual([]);
    expect(paths('nothing')).toEqual([]);
  });

  it('adds tags as deferred work: every tag query sees all writes, pending or not', async () => {
    const i = homeWith([['a.md', '#x/y'], ['b.md', '#x']]);
    expect(i.pendingWork().tags).toBe(2);
    expect(i.notesWithTag('x').map((n) => n.path)).toEqual(['a.md', 'b.md']);
    expect(i.pendingWork().tags).toBe(0);
    // Written twice, removed, and written after a flush: only the last state counts.
    addNote(i, 'c.md', '#w');
    addNote(i, 'c.md', '#x/q');
    addNote(i, 'd.md', '#x');
    i.remove('d.md');
    addNote(i, 'a.md', '#v');
    expect(i.pendingWork().tags).toBe(2);
    expect(i.tags()).toEqual([
      { tag: 'v', count: 1, direct: 1 },
      { tag: 'x', count: 2, direct: 1 },
      { tag: 'x/q', count: 1, direct: 1 },
    ]);
    addNote(i, 'e.md', '#v');
    expect(i.notesWithTag('V').map((n) => n.path)).toEqual(['a.md', 'e.md']);
  });

  it('background work waits while held (a Vault opening a Home), then runs on its own', async () => {
    const i = new HomeIndex({ mode: 'background', idleMs: 5, sliceMs: 5 });
    i.holdBackground();
    addNote(i, 'a.md', '#x [[b]]');
    addNote(i, 'b.md', '#y');
    await new Promise((r) => setTimeout(r, 40));
    expect(i.pendingWork()).toEqual({ notes: 2, keys: 0, tags: 2, restoring: 0 });
    i.releaseBackground();
    const until = Date.now() + 2000;
    while (i.pendingWork().notes + i.pendingWork().tags > 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 5));
    expect(i.pendingWork()).toEqual({ notes: 0, keys: 0, tags: 0, restoring: 0 });
    expect(i.backlinkCount('b.md')).toBe(1);
  });

  it('whenIdle resolves once held background work has run after release, and at once when there is none', async () => {
    const i = new HomeIndex({ mode: 'background', idleMs: 5, sliceMs: 5 });
    await i.whenIdle();
    i.holdBackground();
    addNote(i, 'a.md', '#x [[b]]');
    addNote(i, 'b.md', '#y');
    let idle = false;
    const waiting = i.whenIdle().then(() => (idle = true));
    await new Promise((r) => setTimeout(r, 40));
    expect(idle).toBe(false);
    i.releaseBackground();
    await waiting;
    expect(i.pendingWork()).toEqual({ notes: 0, keys: 0, tags: 0, restoring: 0 });
  });

  it("a search waits for the full text scan workers send after the facts, then answers from it", async () => {
    const i = new HomeIndex({ mode: 'background', idleMs: 5, sliceMs: 5 });
    const notes: Array<[string, string]> = [
      ['a.md', '# Alpha\npelicans fly [[b]]'],
      ['b.md', '# Beta\nherons wade'],
    ];
    // What a scan worker sends: facts (the note is "fed") and, at the end, its postings.
    const postings = new TermPostings(false);
    const lengths: number[] = [];
    notes.forEach(([path, text], k) => {
      const facts = extractFacts(text, path);
      i.upsertNote(path, facts, stat(text), null, true);
      postings.add(k, fieldsOf(path, facts, text), lengths, k * 4);
    });
    let arrive!: (parts: PartialIndex[]) => void;
    i.fullText.expectPartials(new Promise((resolve) => (arrive = resolve)));
    let answered = false;
    const search = i.search('pelicans').then((hits) => ((answered = true), hits));
    await new Promise((r) => setTimeout(r, 30));
    expect(answered).toBe(false);
    arrive([{ paths: notes.map(([p]) => p), etags: notes.map(([, t]) => stat(t).etag), lengths: Int32Array.from(lengths), segment: postings.toSegment() }]);
    expect((await search).map((h) => h.path)).toEqual(['a.md']);
    expect((await i.search('herons')).map((h) => h.path)).toEqual(['b.md']);
  });

  it('whenIdle also resolves when a read did the deferred work first', async () => {
    const i = new HomeIndex({ mode: 'background', idleMs: 5, sliceMs: 5 });
    i.holdBackground();
    addNote(i, 'a.md', '#x [[b]]');
    addNote(i, 'b.md', '#y');
    const waiting = i.whenIdle();
    expect(i.backlinkCount('b.md')).toBe(1);
    expect(i.tags().map((t) => t.tag)).toEqual(['x', 'y']);
    i.releaseBackground();
    await waiting;
  });

  it('updates and removals adjust counts', async () => {
    const i = homeWith([['a.md', '#x/y'], ['b.md', '#x']]);
    addNote(i, 'a.md', '#z');
    expect(i.tags()).toEqual([
      { tag: 'x', count: 1, direct: 1 },
      { tag: 'z', count: 1, direct: 1 },
    ]);
    i.remove('b.md');
    expect(i.tags()).toEqual([{ tag: 'z', count: 1, direct: 1 }]);
  });
});

describe('tasks and blocks', () => {
  const idx = homeWith([
    ['b.md', '- [ ] first 📅 2024-05-01 ^t1\n  - [x] child\n- [-] dropped\n\nPara ^p1\n'],
    ['a.md', '- [/] doing ^t1\n'],
    ['c.md', 'no tasks'],
  ]);

  it('tasks() yields every task with its note', async () => {
    const all = [...idx.tasks()].sort((x, y) => (x.path < y.path ? -1 : x.path > y.path ? 1 : x.line - y.line));
    expect(all.map((t) => [t.path, t.line, t.status, t.checked, t.cancelled, t.text, t.blockId, t.due, t.depth, t.parentTaskLine])).toEqual([
      ['a.md', 1, '/', false, false, 'doing', 't1', null, 0, null],
      ['b.md', 1, ' ', false, false, 'first 📅 2024-05-01', 't1', '2024-05-01', 0, null],
      ['b.md', 2, 'x', true, false, 'child', null, null, 1, 1],
      ['b.md', 3, '-', false, true, 'dropped', null, null, 0, null],
    ]);
    expect(all[0]!.noteId).toBe(idx.noteByPath('a.md')!.id);
  });

  it('block ids are unique per note: first by path, or all', async () => {
    expect(idx.taskByBlockId('t1')?.path).toBe('a.md');
    expect(idx.tasksByBlockId('t1').map((t) => t.path)).toEqual(['a.md', 'b.md']);
    expect(idx.taskByBlockId('p1')).toBeUndefined();
    expect(idx.taskByBlockId('none')).toBeUndefined();
    expect(idx.blockOwner('t1')).toEqual([
      { path: 'a.md', line: 1 },
      { path: 'b.md', line: 1 },
    ]);
    expect(idx.blockOwner('p1')).toEqual([{ path: 'b.md', line: 5 }]);
    expect(idx.blocks('b.md').map((b) => b.id)).toEqual(['t1', 'p1']);
    expect(idx.blocks('missing.md')).toEqual([]);
  });

  it('removal drops the note from the block indexes', async () => {
    const i = homeWith([['a.md', '- [ ] x ^k'], ['b.md', '- [ ] y ^k']]);
    i.remove('a.md');
    expect(i.taskByBlockId('k')?.path).toBe('b.md');
    expect(i.blockOwner('k')).toEqual([{ path: 'b.md', line: 1 }]);
    addNote(i, 'b.md', 'no more');
    expect(i.tasksByBlockId('k')).toEqual([]);
  });
});

describe('stat helper', () => {
  it('gives different etags for different texts', async () => {
    expect(stat('a').etag).not.toBe(stat('b').etag);
  });
});
