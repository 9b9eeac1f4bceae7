/**
 * `fileNameFor`: the file name a title gets. Table-style: safe characters,
 * never hidden or dot-led, never our temp marker, at most 200 UTF-8 bytes cut
 * at a grapheme boundary, and linear in the title (a megabyte title).
 */
import { describe, expect, it } from 'vitest';
import { FILE_NAME_MAX_BYTES, fileNameFor } from '../../src/notes/notes.js';
import { isIgnoredPath } from '../../src/vault/ignore.js';

const bytes = (s: string) => Buffer.byteLength(s, 'utf8');
const wellFormed = (s: string) => Buffer.from(s, 'utf8').toString('utf8') === s;
const graphemes = (s: string) => [...new Intl.Segmenter(undefined, { granularity: 'grapheme' }).segment(s)].map((g) => g.segment);

describe('fileNameFor', () => {
  it.each([
    ['Meeting notes', 'Meeting notes'],
    ['  padded  ', 'padded'],
    ['a/b\\c:d*e?f"g<h>i|j', 'a b c d e f g h i j'],
    ['#tag [[link]] ^block', 'tag link block'],
    ['tabs\tand\nnewlines\r\nhere', 'tabs and newlines here'],
    ['many     spaces', 'many spaces'],
    ['../../../tmp/evil', 'tmp evil'],
    ['..', 'Untitled'],
    ['.', 'Untitled'],
    ['...', 'Untitled'],
    [' . . ', 'Untitled'],
    ['', 'Untitled'],
    ['////', 'Untitled'],
    ['\u0000\u0001\u007f', 'Untitled'],
    ['.hidden', 'hidden'],
    ['. .env', 'env'],
    ['.../x', 'x'],
    ['trailing dots...', 'trailing dots'],
    ['v1.2 notes', 'v1.2 notes'],
    ['x.quire-tmp-y', 'xquire-tmp-y'],
    ['..quire-tmp-', 'quire-tmp-'],
    ['a..quire-tmp-b', 'aquire-tmp-b'],
    ['Café', 'Café'],
    ['日本語のノート', '日本語のノート'],
    ['🎉 party', '🎉 party'],
    ['👩‍👩‍👧‍👦', '👩‍👩‍👧‍👦'],
  ])('%j -> %j', (title, name) => {
    expect(fileNameFor(title)).toBe(name);
  });

  it('never yields a hidden, empty, dot or temp name', () => {
    for (const t of ['..', '.', '. . .', '.quire-tmp-1', '\u200b', ' \t ', '../..', '#', '[[]]', '.git', '.obsidian']) {
      const name = fileNameFor(t);
      expect(name.length).toBeGreaterThan(0);
      expect(name.startsWith('.')).toBe(false);
      expect(name.startsWith(' ')).toBe(false);
      expect(isIgnoredPath(`Notes/${name}.md`)).toBe(false);
    }
  });

  it.each([
    ['ASCII', 'a'.repeat(500)],
    ['two-byte letters', 'é'.repeat(500)],
    ['three-byte CJK', '語'.repeat(500)],
    ['four-byte emoji', '😀'.repeat(500)],
    ['ZWJ family emoji', '👩‍👩‍👧‍👦'.repeat(50)],
    ['flags', '🇫🇷'.repeat(100)],
    ['combining marks', 'e\u0301\u0302'.repeat(200)],
    ['a mix', 'Résumé 😀 語 e\u0301 👩‍👩‍👧‍👦 '.repeat(40)],
  ])('cuts %s to at most 200 bytes at a grapheme boundary', (_, title) => {
    const name = fileNameFor(title);
    expect(bytes(name)).toBeLessThanOrEqual(FILE_NAME_MAX_BYTES);
    expect(bytes(name)).toBeGreaterThan(FILE_NAME_MAX_BYTES - 30);
    // Every grapheme of the name is a whole grapheme of the title (no half emoji, no mark without its letter).
    const whole = new Set(graphemes(title));
    for (const g of graphemes(name)) expect(whole.has(g) || g === ' ').toBe(true);
    expect(name).toSatisfy(wellFormed);
  });

  it('answers a megabyte title at once, from its first characters', () => {
    const started = Date.now();
    expect(fileNameFor('word '.repeat(200_000))).toBe('word '.repeat(40).trim());
    expect(fileNameFor(' '.repeat(1 << 20) + 'late')).toBe('late');
    expect(fileNameFor('.'.repeat(1 << 20))).toBe('Untitled');
    expect(fileNameFor('😀'.repeat(1 << 19))).toBe('😀'.repeat(50));
    expect(fileNameFor('\ud83d'.repeat(1 << 20))).toSatisfy(wellFormed);
    // Generous "does not hang" bound: the quadratic version took minutes for 64,000 characters.
    expect(Date.now() - started).toBeLessThan(5000);
  });
});
