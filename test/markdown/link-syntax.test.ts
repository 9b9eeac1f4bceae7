/**
 * The link syntax entry points (src/markdown/link-syntax.ts), table-style,
 * against the CommonMark rules they implement. The extractor's facts for
 * whole notes are checked in extract.test.ts and equivalence.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { definitionLines, linkLabelLength, normalizeLabel, parseLinkTail } from '../../src/markdown/link-syntax.js';

describe('parseLinkTail: the `(dest "title")` after `]`', () => {
  it.each([
    ['](a.md)', { end: 7, url: 'a.md' }],
    ['](<my note.md>)', { end: 15, url: 'my note.md' }],
    ['](a.md "t")', { end: 11, url: 'a.md' }],
    ["](a%20b.md 't')", { end: 15, url: 'a%20b.md' }],
    ['](a.md (t))', { end: 11, url: 'a.md' }],
    ['](a(b)c.md)', { end: 11, url: 'a(b)c.md' }],
    ['](\\(x\\).md)', { end: 11, url: '(x).md' }],
    ['](&amp;.md)', { end: 11, url: '&.md' }],
    [']()', { end: 3, url: '' }],
    ['](a.md', null],
    ['](a b)', null],
    ['](<a\nb>)', null],
    ['](a.md "t" x)', null],
  ])('%j → %j', (text, tail) => {
    expect(parseLinkTail(text, 2)).toEqual(tail);
  });
});

describe('reference labels', () => {
  it.each([
    ['Foo  Bar', 'FOO BAR'],
    [' a\tb\n c ', 'A B C'],
    ['Straße', 'STRASSE'],
    ['ẞ', 'SS'],
  ])('normalizeLabel(%j) = %j', (label, key) => {
    expect(normalizeLabel(label)).toBe(key);
  });

  it.each([
    ['[ab]x', 4],
    ['[a\\]b]', 6],
    ['[]', 2],
    ['[a[b]', 0],
    ['[ab', 0],
  ])('linkLabelLength(%j) = %d', (text, length) => {
    expect(linkLabelLength(text, 0)).toBe(length);
  });
});

describe('definitionLines: link reference definitions opening a paragraph', () => {
  it.each([
    ['[a]: b.md', 1, ['A']],
    ['[a]: b.md\n[c]: <d e.md> "t"\ntext', 2, ['A', 'C']],
    ['[a]:\nb.md', 2, ['A']],
    ['[a]: b.md "t" x', 0, []],
    ['[]: x', 0, []],
    ['[a] b', 0, []],
    ['[a]: <b\n', 0, []],
    ['text [a]: b', 0, []],
  ])('%j: %d lines, labels %j', (text, lines, labels) => {
    const found = new Set<string>();
    expect(definitionLines(text, found)).toBe(lines);
    expect([...found]).toEqual(labels);
  });
});
