/**
 * Concrete expected facts for small inputs. Every case runs through BOTH the
 * fast extractor and the remark reference.
 */
import { describe, expect, it } from 'vitest';
import { extractFacts } from '../../src/markdown/extract.js';
import { referenceFacts } from './reference-extractor.js';
import type { NoteFacts } from '../../src/markdown/facts.js';

const impls = [
  ['fast', extractFacts],
  ['reference', referenceFacts],
] as const;

function both(text: string, path = 'notes/My Note.md'): NoteFacts {
  const a = extractFacts(text, path);
  expect(a).toEqual(referenceFacts(text, path));
  return a;
}
const tags = (t: string) => both(t).tagOccurrences.map((o) => o.tag);
const links = (t: string) =>
  both(t).links.map((l) => ({ kind: l.kind, embed: l.embed, target: l.target, heading: l.heading, blockId: l.blockId, alias: l.alias }));

describe('titles', () => {
  it.each([
    ['---\ntitle: From FM\n---\n# H1', 'From FM', 'frontmatter'],
    ['---\ntitle: 2024\n---\n', '2024', 'frontmatter'],
    ['# First H1\n# Second', 'First H1', 'heading'],
    ['## Only H2\ntext', 'My Note', 'filename'],
    ['Setext Title\n===', 'Setext Title', 'heading'],
    ['#\n# Real', 'Real', 'heading'],
    ['```\n# not a heading\n```', 'My Note', 'filename'],
    ['---\ntitle: ""\n---\n# Fallback', 'Fallback', 'heading'],
  ])('%j → %s (%s)', (text, title, source) => {
    const f = both(text);
    expect(f.title).toBe(title);
    expect(f.titleSource).toBe(source);
  });
  it('file name without extension, from the last path segment', () => {
    expect(both('x', 'a/b.c/my.file.md').title).toBe('my.file');
    expect(both('x', 'README').title).toBe('README');
  });
});

describe('frontmatter', () => {
  it('parses YAML with `yaml`, keeps unknown keys, records the exact range', () => {
    const text = '---\nid: abc\nextra: {a: [1, 2]}\ndate: 2024-01-02\n---\nbody';
    const f = both(text);
    expect(f.frontmatter).toEqual({ id: 'abc', extra: { a: [1, 2] }, date: '2024-01-02' });
    expect(f.frontmatterRange).toEqual({ start: 0, end: text.indexOf('body') });
    expect(f.id).toBe('abc');
    expect(f.frontmatterError).toBeNull();
  });
  it.each([
    ['---\n---\nx', {}, null],
    ['---\n[unclosed\n---\n', null, 'error'],
    ['---\n- a\n- b\n---\n', null, 'frontmatter is not a YAML mapping'],
    ['---\na: 1\n', null, null],
    ['x\n---\na: 1\n---\n', null, null],
  ])('%j', (text, fm, err) => {
    const f = both(text);
    expect(f.frontmatter).toEqual(fm);
    if (err === 'error') expect(typeof f.frontmatterError).toBe('string');
    else expect(f.frontmatterError).toBe(err);
  });
  it('handles BOM and CRLF; offsets index the text as given', () => {
    const text = '\ufeff---\r\ntags: a\r\n---\r\n#b';
    const f = both(text);
    expect(f.frontmatterRange).toEqual({ start: 1, end: text.indexOf('#b') });
    expect(f.tags).toEqual(['a', 'b']);
    expect(f.tagOccurrences[0]).toEqual({ tag: 'b', line: 4, column: 1, offset: text.indexOf('#b') });
  });
  it('invalid YAML never throws and keeps the range', () => {
    const f = both('---\na: b: c\n---\n');
    expect(f.frontmatter).toBeNull();
    expect(f.frontmatterError).toMatch(/./);
    expect(f.frontmatterRange).toEqual({ start: 0, end: 16 });
  });
  it('aliases, id and tags forms', () => {
    expect(both('---\naliases: [A, B, A]\nalias: C\n---\n').aliases).toEqual(['A', 'B', 'C']);
    expect(both('---\naliases: "x, y"\n---\n').aliases).toEqual(['x', 'y']);
    expect(both('---\nid: 42\n---\n').id).toBeNull();
    expect(both('---\ntags: "one, #two three"\n---\n').frontmatterTags).toEqual(['one', 'two', 'three']);
    // unquoted, YAML reads ` #two three` as a comment
    expect(both('---\ntags: one, #two three\n---\n').frontmatterTags).toEqual(['one']);
    expect(both('---\ntags: [a, "#B", A, 123, bad tag]\ntag: c\n---\n').frontmatterTags).toEqual(['a', 'B', 'c']);
  });
});

describe('inline tags', () => {
  it.each<[string, string[]]>([
    ['#tag', ['tag']],
    ['a #b c', ['b']],
    ['#a/b/c #a-b_c', ['a/b/c', 'a-b_c']],
    ['#123 #1a #2024-05', ['1a', '2024-05']],
    ['a#b http://x/#frag', []],
    ['(#p) "#q" #r, #s.', ['r', 's']],
    ['#a#b', ['a']],
    ['`#code` ``#two``', []],
    ['\\#escaped', []],
    ['# Heading #h', ['h']],
    ['#NoSpace heading', ['NoSpace']],
    ['x <!-- #c --> #d', ['d']],
    ['<!-- #c --> #d', []],
    ['[[Note#heading]] [[a #b]]', []],
    ['[text #t](x.md)', []],
    ['$$x #m$$ #n', ['n']],
    ['#café #日本語 #🚀 #emoji🚀', ['café', '日本語', '🚀', 'emoji🚀']],
    ['```\n#fenced\n```\n    #indented', []],
    ['| #cell |\n| - |\n|#edge|', ['cell', 'edge']],
    ['> #quoted', ['quoted']],
  ])('%j → %j', (text, expected) => {
    expect(tags(text)).toEqual(expected);
  });
  it('reports positions and deduplicates case-insensitively, keeping the first spelling', () => {
    const f = both('---\ntags: [Project]\n---\nx #project #Todo\n#TODO');
    expect(f.tags).toEqual(['Project', 'Todo']);
    expect(f.tagOccurrences).toEqual([
      { tag: 'project', line: 4, column: 3, offset: 26 },
      { tag: 'Todo', line: 4, column: 12, offset: 35 },
      { tag: 'TODO', line: 5, column: 1, offset: 41 },
    ]);
  });
  it('deduplicates non-ASCII tags case-insensitively too', () => {
    expect(both('#ABC #abc #Ünï #ünÏ #x').tags).toEqual(['ABC', 'Ünï', 'x']);
  });
});

describe('links and embeds', () => {
  it.each([
    ['[[Note]]', { kind: 'wikilink', embed: false, target: 'Note', heading: null, blockId: null, alias: null }],
    ['[[Note|Shown]]', { kind: 'wikilink', embed: false, target: 'Note', heading: null, blockId: null, alias: 'Shown' }],
    ['[[Note#Head#Sub]]', { kind: 'wikilink', embed: false, target: 'Note', heading: 'Head#Sub', blockId: null, alias: null }],
    ['[[Note#^blk]]', { kind: 'wikilink', embed: false, target: 'Note', heading: null, blockId: 'blk', alias: null }],
    ['[[#Local]]', { kind: 'wikilink', embed: false, target: '', heading: 'Local', blockId: null, alias: null }],
    ['![[pic.png]]', { kind: 'wikilink', embed: true, target: 'pic.png', heading: null, blockId: null, alias: null }],
    ['| [[N\\|A]] |\n| - |', { kind: 'wikilink', embed: false, target: 'N', heading: null, blockId: null, alias: 'A' }],
    ['[t](My%20Note.md#Sec)', { kind: 'markdown', embed: false, target: 'My Note.md', heading: 'Sec', blockId: null, alias: 't' }],
    ['[t](<My Note.md>)', { kind: 'markdown', embed: false, target: 'My Note.md', heading: null, blockId: null, alias: 't' }],
    ['![alt](img/a.png "T")', { kind: 'markdown', embed: true, target: 'img/a.png', heading: null, blockId: null, alias: 'alt' }],
    ['[t](#^b)', { kind: 'markdown', embed: false, target: '', heading: null, blockId: 'b', alias: 't' }],
  ])('%j', (text, expected) => {
    expect(links(text)).toEqual([expected]);
  });
  it.each([
    '[t](https://x.y/a.md)', '[t](mailto:a@b.c)', '[t](obsidian://x)', '[t](//h/x.md)', '[t]()',
    '`[[code]]`', '```\n[[fenced]]\n```', '    [[indented]]', '\\[[escaped]]', '[[]]', '[[ ]]', '<!-- [[c]] -->',
  ])('%j is no link', (text) => {
    expect(links(text)).toEqual([]);
  });
  it('reports line, column and source range', () => {
    const f = both('a\n  x ![[E|b]] [m](n.md)');
    expect(f.links.map((l) => [l.line, l.column, l.start, l.end])).toEqual([
      [2, 5, 6, 14],
      [2, 14, 15, 24],
    ]);
  });
});

describe('percent-escapes in Markdown link destinations', () => {
  // ASCII escapes are decoded by hand, the rest by decodeURIComponent; a malformed one keeps the destination as written.
  it.each<[string, [string, string | null]]>([
    ['[t](a%20b.md)', ['a b.md', null]],
    ['[t](a%2.md)', ['a%2.md', null]],
    ['[t](a%zz.md)', ['a%zz.md', null]],
    ['[t](a.md%)', ['a.md%', null]],
    ['[t](G%C3%B6del.md)', ['Gödel.md', null]],
    ['[t](a%20%C3.md)', ['a%20%C3.md', null]],
    ['[t](a%2523.md)', ['a%23.md', null]],
    ['[t](a%23b.md)', ['a#b.md', null]],
    ['[t](a%41%62.md#H%20i)', ['aAb.md', 'H i']],
  ])('%j → %j', (text, [target, heading]) => {
    expect(links(text).map((l) => [l.target, l.heading])).toEqual([[target, heading]]);
  });
});

describe('headings and block ids', () => {
  it('headings with level, raw text and line', () => {
    expect(both('# A *b* #c\n\n## D ##\n\nE\nF\n---\n####### no').headings).toEqual([
      { level: 1, text: 'A *b* #c', line: 1 },
      { level: 2, text: 'D', line: 3 },
      { level: 2, text: 'E F', line: 5 },
    ]);
  });
  it.each<[string, string[]]>([
    ['Para ^p1', ['p1']],
    ['Two\nlines ^p2', ['p2']],
    ['Not ^mid\nend', []],
    ['- item ^i-1', ['i-1']],
    ['| a |\n| - |\n\n^tbl', ['tbl']],
    ['bad ^bad_id', []],
    ['glued^x', []],
    ['`code ^c`', []],
    ['# Heading ^h', []],
  ])('%j → %j', (text, ids) => {
    expect(both(text).blocks.map((b) => b.id)).toEqual(ids);
  });
});

describe('text hidden by code spans, HTML, links and math', () => {
  // The phrasing scanner reads a masked view of each paragraph; these pin its edges.
  it.each<[string, { tags: string[]; links: Array<[string, boolean, number]>; blocks: string[] }]>([
    ['`c`#a #b', { tags: ['b'], links: [], blocks: [] }],
    ['$$ `$$` $$ #m', { tags: ['m'], links: [], blocks: [] }],
    ['<b>#x</b> #y', { tags: ['y'], links: [], blocks: [] }],
    ['[l](a.md)#t #u', { tags: ['u'], links: [['a.md', false, 0]], blocks: [] }],
    ['`\\`[[c]] `x`![[e]] [[a`x`]] $$ [[m]] $$ [[n]]', { tags: [], links: [['c', false, 3], ['e', true, 12], ['n', false, 40]], blocks: [] }],
    ['[[a]]`[[b]]` [[c]]', { tags: [], links: [['a', false, 0], ['c', false, 13]], blocks: [] }],
    ['a `x` ^id', { tags: [], links: [], blocks: ['id'] }],
    ['a `x`^id', { tags: [], links: [], blocks: [] }],
    ['a $$ ^m $$', { tags: [], links: [], blocks: [] }],
    ['x [l](a.md) ^b', { tags: [], links: [['a.md', false, 2]], blocks: ['b'] }],
    ['x <i>^c</i>', { tags: [], links: [], blocks: [] }],
  ])('%j', (text, expected) => {
    const f = both(text, 'n.md');
    expect({
      tags: f.tagOccurrences.map((o) => o.tag),
      links: f.links.map((l) => [l.target, l.embed, l.start]),
      blocks: f.blocks.map((b) => b.id),
    }).toEqual(expected);
  });
});

describe('tasks', () => {
  it('every status, checked and cancelled', () => {
    const f = both('- [ ] a\n- [x] b\n- [X] c\n- [-] d\n- [/] e\n- [>] f\n* [?] g\n+ [!] h\n1. [<] i\n2) [ ] j');
    expect(f.tasks.map((t) => [t.status, t.checked, t.cancelled, t.text])).toEqual([
      [' ', false, false, 'a'],
      ['x', true, false, 'b'],
      ['X', true, false, 'c'],
      ['-', false, true, 'd'],
      ['/', false, false, 'e'],
      ['>', false, false, 'f'],
      ['?', false, false, 'g'],
      ['!', false, false, 'h'],
      ['<', false, false, 'i'],
      [' ', false, false, 'j'],
    ]);
  });
  it.each<[string, string | null]>([
    ['- [ ] pay 📅 2024-02-29', '2024-02-29'],
    ['- [ ] pay 📅2024-03-01', '2024-03-01'],
    ['- [ ] pay [due:: 2025-01-31]', '2025-01-31'],
    ['- [ ] pay due:2025-12-01', '2025-12-01'],
    ['- [ ] pay 📅 2023-02-29', null],
    ['- [ ] pay xdue:2025-12-01', null],
    ['- [ ] b due:2024-01-01 📅 2024-05-05', '2024-01-01'],
  ])('%j → due %j', (text, due) => {
    expect(both(text).tasks[0]!.due).toBe(due);
  });
  it('block id, nesting depth and parent task', () => {
    const f = both('- [ ] a ^t1\n  - plain\n    - [x] b\n- [ ] c\n\t- [ ] d');
    expect(f.tasks.map((t) => [t.line, t.text, t.blockId, t.depth, t.parentTaskLine])).toEqual([
      [1, 'a', 't1', 0, null],
      [3, 'b', null, 2, 1],
      [4, 'c', null, 0, null],
      [5, 'd', null, 1, 4],
    ]);
  });
  it.each(['-     [ ] indented code', '```\n- [ ] fenced\n```', '- [ ]x', '- [xx] two', 'text [ ] no item', '- [x](a.md)'])(
    '%j is no task',
    (text) => {
      expect(both(text).tasks).toEqual([]);
    },
  );
  it('tasks in callouts count', () => {
    expect(both('> [!todo]\n> - [ ] inside').tasks.map((t) => t.text)).toEqual(['inside']);
  });
});

describe('lines met rarely', () => {
  // Branches the extractor's common lines must give type feedback to (block-syntax.ts processLine's
  // `lazy`, listItemStart's checkbox, the phrasing scan's openers): rewritten for that, same facts.
  it.each<[string, { tags: string[]; words: number; blocks: string[] }]>([
    ['- item\nlazy #t1', { tags: ['t1'], words: 3, blocks: [] }],
    ['> quote\nlazy #t1 ^b1', { tags: ['t1'], words: 4, blocks: ['b1'] }],
    ['- a\n  - b\nlazy\n\n#t1', { tags: ['t1'], words: 4, blocks: [] }],
    // a complete tag alone on a lazy line starts an HTML block inside the open containers
    ['> quote\n<span>\n> #t1', { tags: [], words: 3, blocks: [] }],
    ['- item\n<span class="x">\n  #t1', { tags: [], words: 4, blocks: [] }],
    ['> a\n> > b\n<i>\n> > #t1', { tags: [], words: 4, blocks: [] }],
    ['> q\n<span>\n#t1', { tags: ['t1'], words: 3, blocks: [] }],
    ['- item\n    <span>\n#t1', { tags: ['t1'], words: 3, blocks: [] }],
    ['- item\n<span> text #t1', { tags: ['t1'], words: 4, blocks: [] }],
  ])('%j', (text, want) => {
    const f = both(text);
    expect(f.tagOccurrences.map((o) => o.tag)).toEqual(want.tags);
    expect(f.wordCount).toBe(want.words);
    expect(f.blocks.map((b) => b.id)).toEqual(want.blocks);
  });
  it.each<[string, string[]]>([
    ['- [ ]\ttab', ['tab']],
    ['- [x]\t\ttabs', ['tabs']],
    ['- [ ] space\n- [ ]\ttab', ['space', 'tab']],
    ['- [ ]\n- [ ]x', ['']],
  ])('%j: tasks', (text, want) => {
    expect(both(text).tasks.map((t) => t.text)).toEqual(want);
  });
  it.each<[string, Array<[boolean, string]>]>([
    ['![a](x.png) [b](y.md)', [[true, 'x.png'], [false, 'y.md']]],
    ['[![i](img.png)](t.md)', [[false, 't.md'], [true, 'img.png']]],
    ['! [a](x.md) ![b](y.png)', [[false, 'x.md'], [true, 'y.png']]],
    ['![no close [c](z.md)', [[false, 'z.md']]],
    ['![a ![b](i.png)](j.png)', [[true, 'j.png']]],
    // a lazy line stays in its paragraph: a link may span it
    ['> [a\nb](x.md)', [[false, 'x.md']]],
    ['- ![a\nb](x.png)', [[true, 'x.png']]],
  ])('%j: image and link openers', (text, want) => {
    expect(both(text).links.map((l) => [l.embed, l.target])).toEqual(want);
  });
});

describe('tasks in items with several blocks', () => {
  // Only an item's first paragraph makes it a task (the block scanner tells paragraphs apart by serial).
  it.each<[string, Array<[number, string, string, string | null, number | null]>]>([
    ['- [ ] one\n\n  second para\n\n  third ^b', [[1, ' ', 'one', null, null]]],
    ['- [ ] a\n  > quoted\n- [x] b\n\n  more', [[1, ' ', 'a', null, null], [3, 'x', 'b', null, null]]],
    ['- [ ] t\n  | a |\n  | - |', [[1, ' ', 't', null, null]]],
    ['- [ ] h\n  ===', []],
    ['1. [ ] x\n   - [ ] y\n\n     p\n   z', [[1, ' ', 'x', null, null], [2, ' ', 'y', null, 1]]],
  ])('%j', (text, expected) => {
    expect(both(text).tasks.map((k) => [k.line, k.status, k.text, k.blockId, k.parentTaskLine])).toEqual(expected);
  });
});

describe('word count', () => {
  it.each<[string, number]>([
    ['', 0],
    ['one two  three', 3],
    ['---\ntitle: not counted\n---\nbody words', 2],
    ['# Title here', 2],
    ['- [x] task text\n1. item', 3],
    ['```\ncode words\n```\nafter', 1],
    ['    indented code\n\npara', 1],
    ['a — b !!! --- 42 x/y', 4],
    ['[[Link|two words]] [t](u.md)', 3],
    ['café 日本語 🚀', 2],
    ['| a | b |\n| --- | --- |\n| 1 | 2 |', 4],
    ['`inline code` counts', 3],
  ])('%j → %d', (text, n) => {
    expect(both(text).wordCount).toBe(n);
  });
});

describe('both implementations', () => {
  it.each(impls)('%s never throws on odd input', (_name, fn) => {
    for (const t of ['\r', '\r\r\n', '\ufeff', '---', '---\n', '[', '![', '`', '<', '\t\t\t- [', '|', '> '.repeat(50)]) {
      expect(() => fn(t, 'x.md')).not.toThrow();
    }
  });
});
