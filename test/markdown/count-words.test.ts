import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { countWords } from '../../src/markdown/common.js';

/** The definition: maximal runs of non-whitespace that hold a letter or a number. */
const reference = (s: string) => s.split(/\s+/u).filter((run) => /[\p{L}\p{N}]/u.test(run)).length;

describe('countWords', () => {
  it.each([
    ['', 0],
    ['one', 1],
    ['  two words  ', 2],
    ['— – …', 0],
    ['café naïve', 2],
    ['日本語 テキスト', 2],
    ['a\u00a0b\u2003c\u3000d', 4],
    ['😀 🎉x', 1],
    ['𝟙𝟚 (math digits)', 3],
    ['lone \ud83d high', 2],
    ['#tag [[link]] `code`', 3],
  ])('%j has %i words', (text, n) => {
    expect(countWords(text)).toBe(n);
    expect(reference(text)).toBe(n);
  });

  it('agrees with the definition on every code point, alone and between words', () => {
    for (let cp = 0; cp < 0x110000; cp += cp < 0x30000 ? 1 : 97) {
      const ch = String.fromCodePoint(cp);
      for (const text of [ch, `a${ch}b`, `${ch} x`]) expect(countWords(text), `U+${cp.toString(16)} in ${JSON.stringify(text)}`).toBe(reference(text));
    }
  });

  it('agrees with the definition on random text, and counts a range of it', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 60 }), fc.nat(60), fc.nat(60), (text, a, b) => {
        expect(countWords(text)).toBe(reference(text));
        const [from, to] = [Math.min(a, b, text.length), Math.min(Math.max(a, b), text.length)];
        expect(countWords(text, from, to)).toBe(countWords(text.slice(from, to)));
      }),
      { numRuns: 3000 },
    );
  });
});
