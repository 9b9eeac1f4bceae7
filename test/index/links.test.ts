import { describe, expect, it } from 'vitest';
import { exactCandidates, normalizePath, nameKeyOfPath } from '../../src/index/links.js';
import { addFile, addNote, homeWith } from './helpers.js';
import { HomeIndex } from '../../src/index/home-index.js';

const HOME: Array<string | [string, string]> = [
  'Home.md',
  'Projects/Alpha.md',
  'Archive/Projects/Alpha.md',
  'Archive/Old/Beta.md',
  'x/Gamma.md',
  'yy/Gamma.md',
  'b/Delta.md',
  'a/Delta.md',
  'Notes/Sibling.md',
  'Notes/Sub/Deep.md',
  'Meeting Notes.md',
  'My.Note.md',
  'Z/Nick.md',
  ['Aliased.md', '---\naliases: [Nickname, "Other Name", Nick]\n---\nbody\n'],
  ['Zed/Second.md', '---\naliases: [nickname]\n---\n'],
  'assets/image.png',
  'Notes/Sub/image.png',
  'assets/Diagram.canvas',
  'docs/report.pdf',
  'bin/tool',
  'Plan',
  'Plan.md',
];

type Case = [name: string, from: string, target: string, kind: 'wikilink' | 'markdown', expected: string | null];

const CASES: Case[] = [
  ['exact path with .md', 'Home.md', 'Projects/Alpha.md', 'wikilink', 'Projects/Alpha.md'],
  ['exact path without .md', 'Home.md', 'Projects/Alpha', 'wikilink', 'Projects/Alpha.md'],
  ['exact nested path beats the shorter name match', 'Home.md', 'Archive/Projects/Alpha', 'wikilink', 'Archive/Projects/Alpha.md'],
  ['leading slash is Home-absolute', 'Notes/Sibling.md', '/Projects/Alpha', 'markdown', 'Projects/Alpha.md'],
  ['bare name: shortest path wins', 'Home.md', 'Alpha', 'wikilink', 'Projects/Alpha.md'],
  ['bare name ignores case', 'Home.md', 'aLPHA', 'wikilink', 'Projects/Alpha.md'],
  ['path in other case: name match with folders', 'Home.md', 'projects/alpha.md', 'wikilink', 'Projects/Alpha.md'],
  ['partial path matches a suffix', 'Home.md', 'Old/Beta', 'wikilink', 'Archive/Old/Beta.md'],
  ['partial path ignores case', 'Home.md', 'old/BETA', 'wikilink', 'Archive/Old/Beta.md'],
  ['partial path must match whole segments', 'Home.md', 'ld/Beta', 'wikilink', null],
  ['shortest path among same names', 'Home.md', 'Gamma', 'wikilink', 'x/Gamma.md'],
  ['equal length: alphabetical', 'Home.md', 'Delta', 'wikilink', 'a/Delta.md'],
  ['alias', 'Home.md', 'Other Name', 'wikilink', 'Aliased.md'],
  ['alias ignores case; shortest note with it', 'Home.md', 'NICKNAME', 'wikilink', 'Aliased.md'],
  ['a file name beats an alias', 'Home.md', 'Nick', 'wikilink', 'Z/Nick.md'],
  ['attachment by full name', 'Home.md', 'image.png', 'wikilink', 'assets/image.png'],
  ['attachment name ignores case', 'Home.md', 'IMAGE.PNG', 'wikilink', 'assets/image.png'],
  ['attachment by path', 'Home.md', 'Notes/Sub/image.png', 'wikilink', 'Notes/Sub/image.png'],
  ['attachment needs its extension', 'Home.md', 'image', 'wikilink', null],
  ['canvas', 'Home.md', 'Diagram.canvas', 'wikilink', 'assets/Diagram.canvas'],
  ['pdf, other case', 'Home.md', 'REPORT.PDF', 'wikilink', 'docs/report.pdf'],
  ['file without extension', 'Home.md', 'tool', 'wikilink', 'bin/tool'],
  ['no extension: the note before a same-named file', 'Home.md', 'Plan', 'wikilink', 'Plan.md'],
  ['dotted note name', 'Home.md', 'My.Note', 'wikilink', 'My.Note.md'],
  ['markdown: relative with ../', 'Notes/Sub/Deep.md', '../Sibling.md', 'markdown', 'Notes/Sibling.md'],
  ['markdown: relative into a subfolder', 'Notes/Sibling.md', 'Sub/Deep.md', 'markdown', 'Notes/Sub/Deep.md'],
  ['markdown: relative without .md', 'Notes/Sibling.md', 'Sub/Deep', 'markdown', 'Notes/Sub/Deep.md'],
  ['markdown: ./ prefix', 'Notes/Sibling.md', './Sub/Deep.md', 'markdown', 'Notes/Sub/Deep.md'],
  ['markdown: Home-root path when not relative', 'Notes/Sibling.md', 'Projects/Alpha.md', 'markdown', 'Projects/Alpha.md'],
  ['markdown: relative beats root for the same name', 'Notes/Sub/Deep.md', 'image.png', 'markdown', 'Notes/Sub/image.png'],
  ['markdown image ../ to attachments', 'Notes/Sibling.md', '../assets/image.png', 'markdown', 'assets/image.png'],
  ['markdown: decoded spaces', 'Home.md', 'Meeting Notes.md', 'markdown', 'Meeting Notes.md'],
  ['markdown: ../ above the root falls back to the name', 'Home.md', '../Old/Beta.md', 'markdown', 'Archive/Old/Beta.md'],
  ['wikilink with explicit ../ is relative', 'Notes/Sub/Deep.md', '../Sibling', 'wikilink', 'Notes/Sibling.md'],
  ['wikilink without ./ is not relative (root, then name)', 'Notes/Sibling.md', 'Sub/Deep', 'wikilink', 'Notes/Sub/Deep.md'],
  ['same-note link', 'Notes/Sibling.md', '', 'wikilink', 'Notes/Sibling.md'],
  ['same-note markdown link', 'Notes/Sibling.md', '', 'markdown', 'Notes/Sibling.md'],
  ['unresolved name', 'Home.md', 'Nowhere', 'wikilink', null],
  ['folder link does not resolve', 'Home.md', 'Projects/', 'wikilink', null],
  ['.. as last segment does not resolve', 'Home.md', 'Projects/..', 'wikilink', null],
  ['an .md target only matches notes', 'Home.md', 'tool.md', 'wikilink', null],
];

describe('link resolution', () => {
  const idx = homeWith(HOME);
  it.each(CASES)('%s', (_name, from, target, kind, expected) => {
    expect(idx.resolve(from, { target, kind })).toBe(expected);
  });

  it('unresolved links are kept with their source and line', async () => {
    const i = homeWith(['A.md', ['B.md', 'x\n[[Nowhere]] and [[A]]\n[m](gone.md)\n']]);
    expect(i.unresolved()).toEqual([
      { from: 'B.md', target: 'Nowhere', line: 2 },
      { from: 'B.md', target: 'gone.md', line: 3 },
    ]);
    expect(i.outgoing('B.md').map((l) => l.resolved)).toEqual([null, 'A.md', null]);
  });

  it('outgoing keeps heading, block id, alias, embed and line; same-note links resolve to the note', async () => {
    const i = homeWith(['T.md', ['S.md', 'See [[T#Part|shown]]\n![[T#^blk]]\n[[#Local]]\n']]);
    const out = i.outgoing('S.md');
    expect(out.map(({ target, heading, blockId, alias, embed, line, resolved }) => ({ target, heading, blockId, alias, embed, line, resolved }))).toEqual([
      { target: 'T', heading: 'Part', blockId: null, alias: 'shown', embed: false, line: 1, resolved: 'T.md' },
      { target: 'T', heading: null, blockId: 'blk', alias: null, embed: true, line: 2, resolved: 'T.md' },
      { target: '', heading: 'Local', blockId: null, alias: null, embed: false, line: 3, resolved: 'S.md' },
    ]);
    // [[#Local]] is not a backlink of S itself; [[S]] would be.
    expect(i.backlinks('S.md')).toEqual([]);
  });
});

describe('path helpers', () => {
  it.each([
    ['a/b', 'a/b'],
    ['./a/./b', 'a/b'],
    ['a//b/', 'a/b'],
    ['a/../b', 'b'],
    ['../a', null],
    ['.', null],
  ])('normalizePath(%j) = %j', (p, want) => expect(normalizePath(p)).toBe(want));

  it.each([
    ['Folder/Note.md', 'note'],
    ['Note.MD', 'note'],
    ['assets/Pic.PNG', 'pic.png'],
    ['x.excalidraw.md', 'x.excalidraw'],
    // Cut before lowercasing: the sigma ends the name, as in the link [[ΑΣ]] (lowercased whole, `ΑΣ.md` gives `ασ.md`).
    ['Λ/ΑΣ.md', 'ας'],
  ])('nameKeyOfPath(%j) = %j', (p, want) => expect(nameKeyOfPath(p)).toBe(want));

  it('exact candidates: relative first for Markdown links, .md first without an extension', async () => {
    expect(exactCandidates('n/s.md', 'x/Plan', 'markdown')).toEqual(['n/x/Plan.md', 'n/x/Plan', 'x/Plan.md', 'x/Plan']);
    expect(exactCandidates('n/s.md', 'pic.png', 'wikilink')).toEqual(['pic.png', 'pic.png.md']);
    expect(exactCandidates('n/s.md', 'Note.md', 'wikilink')).toEqual(['Note.md']);
    expect(exactCandidates('n/s.md', 'dir/', 'wikilink')).toEqual([]);
  });
});

describe('incremental backlinks', () => {
  const sorted = (idx: HomeIndex, p: string) => idx.backlinks(p).map((b) => b.from);

  it('a new note with a shorter path steals resolution; removing it falls back', async () => {
    const idx = homeWith(['deep/er/Alpha.md', ['S.md', '[[Alpha]] and [[Alpha#H]]\n'], ['T.md', '[[deep/er/Alpha]]\n']]);
    expect(sorted(idx, 'deep/er/Alpha.md')).toEqual(['S.md', 'T.md']);
    addNote(idx, 'd/Alpha.md', '# Alpha');
    expect(sorted(idx, 'deep/er/Alpha.md')).toEqual(['T.md']);
    expect(idx.backlinks('d/Alpha.md')).toEqual([
      {
        from: 'S.md',
        occurrences: [
          { kind: 'wikilink', line: 1, column: 1, embed: false, heading: null, blockId: null, alias: null },
          { kind: 'wikilink', line: 1, column: 15, embed: false, heading: 'H', blockId: null, alias: null },
        ],
      },
    ]);
    idx.remove('d/Alpha.md');
    expect(sorted(idx, 'deep/er/Alpha.md')).toEqual(['S.md', 'T.md']);
    expect(idx.backlinks('d/Alpha.md')).toEqual([]);
  });

  it('an unresolved link resolves when its target appears, and back', async () => {
    const idx = homeWith([['S.md', '![[pic.png]] [[Later]]\n']]);
    expect(idx.unresolved().map((u) => u.target)).toEqual(['pic.png', 'Later']);
    addFile(idx, 'img/pic.png');
    addNote(idx, 'notes/later.md');
    expect(idx.unresolved()).toEqual([]);
    expect(idx.backlinks('img/pic.png')[0]!.occurrences[0]!.embed).toBe(true);
    expect(sorted(idx, 'notes/later.md')).toEqual(['S.md']);
    idx.remove('img/pic.png');
    expect(idx.unresolved().map((u) => u.target)).toEqual(['pic.png']);
  });

  it('aliases: gaining one resolves links, losing it unresolves them, a real name wins', async () => {
    const idx = homeWith([['S.md', '[[Nickname]]\n'], ['N.md', 'no alias\n']]);
    expect(idx.unresolved()).toHaveLength(1);
    addNote(idx, 'N.md', '---\naliases: [NICKNAME]\n---\n');
    expect(sorted(idx, 'N.md')).toEqual(['S.md']);
    addNote(idx, 'long/path/nickname.md');
    expect(sorted(idx, 'N.md')).toEqual([]);
    expect(sorted(idx, 'long/path/nickname.md')).toEqual(['S.md']);
    idx.remove('long/path/nickname.md');
    expect(sorted(idx, 'N.md')).toEqual(['S.md']);
    addNote(idx, 'N.md', '---\naliases: [other]\n---\n');
    expect(sorted(idx, 'N.md')).toEqual([]);
    expect(idx.unresolved()).toEqual([{ from: 'S.md', target: 'Nickname', line: 1 }]);
    idx.remove('N.md');
    expect(idx.unresolved()).toHaveLength(1);
  });

  it('rename = remove + upsert keeps a frontmatter id; links by name follow', async () => {
    const text = '---\nid: note-1\n---\n# Moving\n';
    const idx = homeWith([['old/Moving.md', text], ['S.md', '[[Moving]]\n']]);
    expect(idx.noteById('note-1')?.path).toBe('old/Moving.md');
    idx.remove('old/Moving.md');
    expect(idx.noteById('note-1')).toBeUndefined();
    addNote(idx, 'new/Moving.md', text);
    expect(idx.noteById('note-1')?.path).toBe('new/Moving.md');
    expect(sorted(idx, 'new/Moving.md')).toEqual(['S.md']);
    expect(idx.backlinks('old/Moving.md')).toEqual([]);
  });

  it('editing a source updates its occurrences; backlinks stay sorted by source path', async () => {
    const idx = homeWith(['T.md', ['c.md', '[[T]]'], ['a.md', '[[T]]'], ['b.md', 'none']]);
    expect(sorted(idx, 'T.md')).toEqual(['a.md', 'c.md']);
    addNote(idx, 'b.md', '[[T]]\n\n[[T|again]]');
    expect(sorted(idx, 'T.md')).toEqual(['a.md', 'b.md', 'c.md']);
    expect(idx.backlinks('T.md')[1]!.occurrences.map((o) => [o.line, o.alias])).toEqual([
      [1, null],
      [3, 'again'],
    ]);
    addNote(idx, 'a.md', 'gone');
    expect(sorted(idx, 'T.md')).toEqual(['b.md', 'c.md']);
    expect(idx.backlinkCount('T.md')).toBe(2);
  });

  it('a path switching between note and file keeps resolving', async () => {
    const idx = homeWith([['S.md', '[[thing.md]] [[thing]]']]);
    addFile(idx, 'thing'); // a file without extension
    expect(idx.outgoing('S.md').map((l) => l.resolved)).toEqual([null, 'thing']);
    addNote(idx, 'thing.md');
    expect(idx.outgoing('S.md').map((l) => l.resolved)).toEqual(['thing.md', 'thing.md']);
    idx.remove('thing.md');
    idx.upsertFile('thing.md', { size: 1, mtimeMs: 1, etag: 'x' }); // odd, but allowed
    expect(idx.noteByPath('thing.md')).toBeUndefined();
    expect(idx.outgoing('S.md').map((l) => l.resolved)).toEqual(['thing.md', 'thing.md']);
  });

  it('a note named with a final sigma finds the links written before it', async () => {
    const idx = homeWith([['S.md', '[[ΑΣ]] [[x/ας]]\n']]);
    expect(idx.unresolved()).toHaveLength(2);
    addNote(idx, 'x/ΑΣ.md');
    expect(idx.outgoing('S.md').map((l) => l.resolved)).toEqual(['x/ΑΣ.md', 'x/ΑΣ.md']);
    expect(sorted(idx, 'x/ΑΣ.md')).toEqual(['S.md']);
  });

  it('self links: [[Self]] is a backlink, [[#Heading]] is not', async () => {
    const idx = homeWith([['Self.md', '# H\n[[Self]] [[#H]]\n']]);
    expect(idx.backlinks('Self.md').map((b) => [b.from, b.occurrences.length])).toEqual([['Self.md', 1]]);
  });

  it('every indexing mode gives the same answers', async () => {
    const files: Array<[string, string]> = [
      ['A.md', '[[B]] [[C]]'],
      ['B.md', '---\naliases: [Bee]\n---\n[[A]] [[Bee]]'],
      ['sub/C.md', '[[A#x]]'],
    ];
    const answers = [];
    for (const mode of ['sync', 'lazy', 'background'] as const) {
      const idx = new HomeIndex({ mode });
      for (const [p, t] of files) addNote(idx, p, t);
      if (mode === 'background') await new Promise((r) => setTimeout(r, 80));
      answers.push([idx.backlinks('A.md'), idx.backlinks('B.md'), idx.unresolved(), (await idx.search('bee')).map((h) => h.path)]);
    }
    expect(answers[1]).toEqual(answers[0]);
    expect(answers[2]).toEqual(answers[0]);
  });
});
