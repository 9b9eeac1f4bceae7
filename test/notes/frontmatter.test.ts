/** Frontmatter edits change only the edited key's text; everything else keeps its bytes. */
import { describe, expect, it } from 'vitest';
import { extractFacts } from '../../src/markdown/extract.js';
import { editFrontmatter } from '../../src/notes/frontmatter.js';

const edit = (text: string, changes: Record<string, unknown>) => {
  const f = extractFacts(text, 'n.md');
  return editFrontmatter(text, f.frontmatterRange, changes, { frontmatterError: f.frontmatterError });
};

describe('editFrontmatter', () => {
  const cases: Array<[string, string, Record<string, unknown>, string]> = [
    ['sets an existing flow list', '---\ntags: [a]\naliases: [ X ]\n---\nbody', { tags: ['a', 'b'] }, '---\ntags: [a, b]\naliases: [ X ]\n---\nbody'],
    ['replaces a block list as a block list', '---\ntags:\n  - a\n  - b\ntitle: T # keep\n---\n', { tags: ['c', 'd'] }, '---\ntags:\n  - c\n  - d\ntitle: T # keep\n---\n'],
    ['keeps an unindented block list unindented', '---\ntags:\n- a\nx: 1\n---\n', { tags: ['b', 'c'] }, '---\ntags:\n- b\n- c\nx: 1\n---\n'],
    ['keeps a four-space block list', '---\naliases:\n    - A\n---\n', { aliases: ['B'] }, '---\naliases:\n    - B\n---\n'],
    ['keeps a flow list flow', '---\ntags: [a, b]\naliases:\n  - X\n---\n', { tags: ['c'] }, '---\ntags: [c]\naliases:\n  - X\n---\n'],
    ['writes a new list in the style of the file', '---\naliases:\n  - X\n---\n', { tags: ['t', 'u'] }, '---\naliases:\n  - X\ntags:\n  - t\n  - u\n---\n'],
    ['writes a new list in the flow style of the file', '---\naliases: [X]\n---\n', { tags: ['t'] }, '---\naliases: [X]\ntags: [t]\n---\n'],
    ['turns a scalar into a list in the style of the file', '---\ntags: one\ncssclasses:\n  - wide\n---\n', { tags: ['a', 'b'] }, '---\ntags:\n  - a\n  - b\ncssclasses:\n  - wide\n---\n'],
    ['keeps the block style with CRLF', '---\r\ntags:\r\n  - a\r\n---\r\n', { tags: ['b'] }, '---\r\ntags:\r\n  - b\r\n---\r\n'],
    ['appends a new key', '---\ntitle: T\n---\nx', { id: 'abc' }, '---\ntitle: T\nid: abc\n---\nx'],
    ['removes a key and its lines', '---\na: 1\ntags:\n  - x\nb: 2\n---\n', { tags: null }, '---\na: 1\nb: 2\n---\n'],
    ['adds frontmatter where there was none', '# Hi\n', { id: 'n1', tags: ['t'] }, '---\nid: n1\ntags: [t]\n---\n# Hi\n'],
    ['keeps CRLF line endings', '---\r\ntitle: A\r\n---\r\nbody\r\n', { title: 'B' }, '---\r\ntitle: B\r\n---\r\nbody\r\n'],
    ['keeps a BOM first', '\uFEFFtext', { id: 'x' }, '\uFEFF---\nid: x\n---\ntext'],
    ['quotes values that need it', '---\ntitle: a\n---\n', { title: 'Trip: Rome' }, '---\ntitle: "Trip: Rome"\n---\n'],
    ['leaves untouched keys with comments alone', '---\n# comment\nkeep:   "spaced"\ntitle: a\n---\n', { title: 'b' }, '---\n# comment\nkeep:   "spaced"\ntitle: b\n---\n'],
    ['no-op when nothing changes', '---\na: 1\n---\n', { b: undefined }, '---\na: 1\n---\n'],
    ['empty frontmatter gets the key', '---\n---\nbody', { id: 'q' }, '---\nid: q\n---\nbody'],
  ];
  it.each(cases)('%s', (_name, input, changes, expected) => {
    expect(edit(input, changes)).toBe(expected);
  });

  it('refuses to edit invalid YAML', () => {
    expect(() => edit('---\na: [\n---\n', { id: 'x' })).toThrow(/not valid YAML/);
  });

  it('edits a long flat frontmatter, and never writes one too large to read back', () => {
    const tags = Array.from({ length: 1000 }, (_, i) => `t${i}-${'x'.repeat(190)}`);
    const big = edit('---\ntitle: T\n---\n', { tags });
    expect(big.length).toBeGreaterThan(190_000);
    expect(extractFacts(big, 'n.md').frontmatterTags).toEqual(tags);
    expect(edit(big, { tags: tags.slice(0, 10) })).toContain('tags: [t0-');
    const nested = Array.from({ length: 400 }, (_, i) => ({ n: i, text: 'y'.repeat(100) }));
    expect(() => edit('---\ntitle: T\n---\n', { rows: nested })).toThrow(/would be \d+ characters long/);
  });

  it('refuses to edit frontmatter nested past the reading limit, without a crash', () => {
    const deep = `---\na: ${'['.repeat(5000)}${']'.repeat(5000)}\nb: 1\n---\nbody\n`;
    expect(() => edit(deep, { b: 2 })).toThrow(/nested more than 100 levels/);
    // Even when the caller did not pass the parse error along.
    const f = extractFacts(deep, 'n.md');
    expect(() => editFrontmatter(deep, f.frontmatterRange, { b: 2 })).toThrow(/not valid YAML/);
  });
});
