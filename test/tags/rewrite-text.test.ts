/** Renaming a tag inside one note: only the tag's characters change, code is never touched. */
import { describe, expect, it } from 'vitest';
import { extractFacts } from '../../src/markdown/extract.js';
import { renameInText } from '../../src/tags/rewrite-text.js';

const rename = (text: string, from = 'a', to = 'x') => renameInText(text, 'n.md', from, to);

describe('renameInText', () => {
  const cases: Array<[string, string, string | null]> = [
    ['inline tag', 'see #a here\n', 'see #x here\n'],
    ['nested tags follow their parent', '#a/b and #a/b/c and #ab\n', '#x/b and #x/b/c and #ab\n'],
    ['case-insensitive match, new spelling written', '#A and #a/B\n', '#x and #x/B\n'],
    ['code spans and fences are left alone', '`#a` #a\n```\n#a\n```\n', '`#a` #x\n```\n#a\n```\n'],
    ['flow list in frontmatter keeps its style', '---\ntags: [a, "b", a/c]\ntitle: T # note\n---\nbody #a\n', '---\ntags: [x, "b", x/c]\ntitle: T # note\n---\nbody #x\n'],
    ['block list keeps its style and quotes', "---\ntags:\n  - 'a'\n  - b\n---\n", "---\ntags:\n  - 'x'\n  - b\n---\n"],
    ['comma and space string', '---\ntags: a, b a/z\n---\n', '---\ntags: x, b x/z\n---\n'],
    ['a YAML comment is not a tag', '---\ntags: a, b #a\n---\n', '---\ntags: x, b #a\n---\n'],
    ['CRLF kept', '---\r\ntags: [a]\r\n---\r\nline #a\r\n', '---\r\ntags: [x]\r\n---\r\nline #x\r\n'],
    ['no use: null', 'nothing #ab `#a`\n', null],
  ];
  it.each(cases)('%s', (_n, input, expected) => {
    const r = rename(input);
    expect(r?.text ?? null).toBe(expected);
  });

  it('reports line numbers with the line before and after', () => {
    const r = rename('---\ntags: [a]\n---\nfirst\nsecond #a and #a/b\n')!;
    expect(r.changes).toEqual([
      { line: 2, before: 'tags: [a]', after: 'tags: [x]' },
      { line: 5, before: 'second #a and #a/b', after: 'second #x and #x/b' },
    ]);
    expect(r.occurrences).toBe(3);
  });

  it('a rename that would list a tag twice rewrites the list without the duplicate', () => {
    const r = rename('---\ntags: [a, x]\n---\n')!;
    expect(extractFacts(r.text, 'n.md').frontmatterTags).toEqual(['x']);
    expect(r.text).toBe('---\ntags: [x]\n---\n');
  });

  it('renames a nested tag itself', () => {
    expect(renameInText('#a/b/c #a/bc #a\n', 'n.md', 'a/b', 'q')!.text).toBe('#q/c #a/bc #a\n');
  });
});
