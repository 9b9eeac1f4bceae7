import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { CACHE_SIZE, TOKEN_SEPARATORS, queryTerms, tokenizeCounted, tokenizeInto } from '../../../src/index/fulltext/tokenize.js';
import { generateNote } from '../../helpers/generate-vault.js';

/**
 * The tokenizer must give exactly what a split at TOKEN_SEPARATORS gives:
 * the same terms in the same order, and MiniSearch's field length (distinct
 * raw tokens, the empty one included).
 */
function reference(text: string): { terms: string[]; fieldLength: number } {
  const tokens = text.split(TOKEN_SEPARATORS);
  const terms: string[] = [];
  for (const t of tokens) {
    const l = t.toLowerCase();
    if (l) terms.push(l);
  }
  return { terms, fieldLength: new Set(tokens).size };
}

function fast(text: string): { terms: string[]; fieldLength: number } {
  const terms: string[] = [];
  const fieldLength = tokenizeInto(text, terms);
  return { terms, fieldLength };
}

const CASES: Array<[string, string]> = [
  ['empty', ''],
  ['one separator', ','],
  ['only separators', ' ,.;\n\r|^~=+<>`$ '],
  ['leading separators', '  hello world'],
  ['trailing separator', 'a,'],
  ['both ends', '(a)'],
  ['tabs are not separators', 'a\tb \t c\t'],
  ['other control chars', 'a\u0000b\u0007c\u001bd\u007fe\u0085f'],
  ['wikilink alias', '[[Note|label]]'],
  ['wikilink heading', '[[Books/Gödel, Escher, Bach#Next steps|alias]]'],
  ['nested tag', '#tag/nested and #Tag/Nested'],
  ['block id', 'text ^block-id'],
  ['highlight', '==mark=='],
  ['strikethrough', '~~x~~'],
  ['inline code', '`npm i` and ``a`b``'],
  ['math', '$e^{i\\pi}+1=0$ and $$x$$'],
  ['url', 'see https://example.com/Ελληνικά?q=1&r=2#frag (here)'],
  ['markdown link', '[idea](Project%20Alpha.md)'],
  ['symbols that are not separators', 'a*b a#b a@b a&b a/b a\\b a_b a%b'],
  ['emoji', '🚀 launch 🚀🚀 #emoji🚀 👩‍👩‍👧 ❤️'],
  ['cjk', '日本語の文章、句読点。中文，标点！'],
  ['combining marks', 'cafe\u0301 Cafe\u0301 e\u0301\u0301'],
  ['turkish dotted I', 'İstanbul İİ i̇'],
  ['german sharp s', 'Straße STRASSE straße ẞ'],
  ['greek final sigma', 'ΣΑΣ Σ ΟΔΟΣ. ΣΣ σς'],
  ['greek', 'Ελληνικά ελληνικά ΕΛΛΗΝΙΚΆ'],
  ['cyrillic', 'Русский русский'],
  ['nbsp and other Z', 'a\u00a0b\u2003c\u2028d\u2029e\u3000f\u202fg\u205fh'],
  ['astral punctuation', 'a\u{10100}b \u{10100} x\u{1e95e}y'],
  ['astral letters, cased', '𐐀𐐁 𐐨 Deseret𐐀'],
  ['lone high surrogate', 'a\ud800 b \ud800'],
  ['lone low surrogate', '\udc00a b\udc00'],
  ['reversed pair', '\udc00\ud800'],
  ['high before separator pair', '\ud800\ud800\udd00x'],
  ['lone surrogate before separator', 'x\ud83d, y'],
  ['mixed case duplicates', 'Note note NOTE nOTE note Note'],
  ['long words', 'internationalization Internationalization INTERNATIONALIZATION internationalization'],
  ['length 12, 13, 14', 'abcdefghijkl abcdefghijklm abcdefghijklmn ABCDEFGHIJKL ABCDEFGHIJKLM'],
  ['long non-ascii', 'ελληνικάελληνικά ΕΛΛΗΝΙΚΆΕΛΛΗΝΙΚΆ naïveténaïveté'],
  ['numbers and versions', 'v2.0 2024-05-17 50% 1,000.5 a.k.a. e.g.'],
  ['frontmatter', '---\ntags: [a, B]\nrating: 3\n---\n# Title\n'],
];

describe('tokenizeInto', () => {
  it.each(CASES)('%s', (_name, text) => {
    const expected = reference(text);
    expect(fast(text)).toEqual(expected);
    // Again, with the tokens now cached.
    expect(fast(text)).toEqual(expected);
  });

  it('counts the field length as MiniSearch does', () => {
    expect(tokenizeInto('Note note', [])).toBe(2); // distinct before lowercasing
    expect(tokenizeInto('note note', [])).toBe(1);
    expect(tokenizeInto('a,', [])).toBe(2); // 'a' and the empty token after ','
    expect(tokenizeInto(',a,', [])).toBe(2);
    expect(tokenizeInto('', [])).toBe(1);
  });

  it('appends to the array it is given', () => {
    const out = ['kept'];
    expect(tokenizeInto('A b', out)).toBe(2);
    expect(out).toEqual(['kept', 'a', 'b']);
  });

  it('matches the reference on generated notes', () => {
    for (let i = 0; i < 200; i++) {
      const text = generateNote(3, i);
      expect(fast(text), `note ${i}`).toEqual(reference(text));
    }
  });

  it('classifies every code point as the regex does', () => {
    // Each code point alone between spaces, then all of them in a row (where
    // case conversion sees its neighbours: a run of code points that are each
    // their own lowercase must be its own lowercase).
    const all = Array.from({ length: 0x110000 }, (_, cp) => String.fromCodePoint(cp));
    for (const text of [all.join(' '), all.join('')]) {
      const got = fast(text);
      const expected = reference(text);
      expect(got.fieldLength).toBe(expected.fieldLength);
      expect(got.terms.length).toBe(expected.terms.length);
      // toEqual on a million terms is slow: find the first difference instead.
      const at = got.terms.findIndex((t, i) => t !== expected.terms[i]);
      expect(at === -1 ? null : { at, got: got.terms[at], expected: expected.terms[at] }).toBeNull();
    }
  });

  it('counts distinct tokens right when a field has more of them than the cache holds', () => {
    // 60k distinct words, then again in another order and case: entries
    // met in this call are replaced and their words met again.
    const words = Array.from({ length: 60_000 }, (_, i) => `w${i.toString(36)}`);
    const text = [...words, ...[...words].reverse().map((w, i) => (i % 3 === 0 ? w.toUpperCase() : w)), ...words.slice(0, 1000)].join(' ');
    const expected = reference(text);
    expect(fast(text)).toEqual(expected);
    expect(fast(text)).toEqual(expected);
  });

  describe('equals the reference on arbitrary strings', () => {
    const runs = { numRuns: 3000 };
    const check = (text: string) => {
      expect(fast(text)).toEqual(reference(text));
    };

    it('code points', () => {
      fc.assert(fc.property(fc.string({ unit: 'binary', maxLength: 40 }), check), runs);
    });

    it('graphemes', () => {
      fc.assert(fc.property(fc.string({ unit: 'grapheme', maxLength: 40 }), check), runs);
    });

    it('UTF-16 code units, lone surrogates included', () => {
      const unit = fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c));
      fc.assert(fc.property(fc.string({ unit, maxLength: 40 }), check), runs);
    });

    it('a small alphabet rich in separators, case and surrogates', () => {
      const unit = fc.constantFrom(
        'a', 'b', 'A', 'B', 'é', 'É', 'İ', 'ß', 'Σ', 'σ', 'ς', '𐐀', '𐐨', '🚀', '日', '\u0301',
        ' ', ',', '.', '|', '^', '~', '=', '+', '<', '>', '`', '$', '\n', '\r', '\t', '#', '/', '-', '_',
        '\u00a0', '\u3000', '\u{10100}', '\ud800', '\udc00', '\ud83d',
        'abcdefghijkl', 'Abcdefghijklm', 'abcdefghijklmn',
      );
      fc.assert(fc.property(fc.string({ unit, maxLength: 30 }), check), runs);
    });
  });
});

describe('tokenizeCounted', () => {
  /** Occurrences per term, in order of first occurrence, and the field length. */
  const tally = (terms: string[], counts?: number[]) => {
    const m = new Map<string, number>();
    terms.forEach((t, i) => m.set(t, (m.get(t) ?? 0) + (counts ? counts[i]! : 1)));
    return [...m];
  };
  const counted = (text: string) => {
    const terms: string[] = [];
    const counts: number[] = [];
    const slots: number[] = [];
    const fieldLength = tokenizeCounted(text, terms, counts, slots);
    expect(counts.length).toBe(terms.length);
    expect(slots.length).toBe(terms.length);
    for (const e of slots) expect(e >= -1 && e < CACHE_SIZE).toBe(true);
    return { tally: tally(terms, counts), fieldLength };
  };
  const expected = (text: string) => {
    const r = reference(text);
    return { tally: tally(r.terms), fieldLength: r.fieldLength };
  };

  it.each(CASES)('%s', (_name, text) => {
    expect(counted(text)).toEqual(expected(text));
    expect(counted(text)).toEqual(expected(text));
  });

  it('gives each cached term once per call, with its count', () => {
    const terms: string[] = [];
    const counts: number[] = [];
    tokenizeCounted('apple pear apple apple pear fig', terms, counts, []);
    expect([terms, counts]).toEqual([['apple', 'pear', 'fig'], [3, 2, 1]]);
  });

  it('names the cache entry of each short term, the same in every call, and none for a long one', () => {
    const first = { terms: [] as string[], slots: [] as number[] };
    const second = { terms: [] as string[], slots: [] as number[] };
    tokenizeCounted('Apple pear extraordinarily', first.terms, [], first.slots);
    tokenizeCounted('pear, then apple', second.terms, [], second.slots);
    expect(first.terms).toEqual(['apple', 'pear', 'extraordinarily']);
    const [apple, pear, long] = first.slots;
    expect(long).toBe(-1);
    expect(apple).not.toBe(pear);
    expect(second.slots[second.terms.indexOf('pear')]).toBe(pear);
    // `apple` is another raw token than `Apple`, so it has its own entry, whose term is the same.
    expect(second.slots[second.terms.indexOf('apple')]).toBeGreaterThanOrEqual(0);
  });

  it('counts right when a field has more distinct words than the cache holds', () => {
    const words = Array.from({ length: 60_000 }, (_, i) => `w${i.toString(36)}`);
    const text = [...words, ...[...words].reverse().map((w, i) => (i % 3 === 0 ? w.toUpperCase() : w)), ...words.slice(0, 1000)].join(' ');
    expect(counted(text)).toEqual(expected(text));
  });

  it('from an offset, equals the reference on the text from there (a body after its frontmatter)', () => {
    const from = (text: string, at: number) => {
      const terms: string[] = [];
      const counts: number[] = [];
      const fieldLength = tokenizeCounted(text, terms, counts, [], at);
      return { tally: tally(terms, counts), fieldLength };
    };
    const note = generateNote(5, 3);
    const fmEnd = note.indexOf('---\n', 4) + 4;
    expect(fmEnd).toBeGreaterThan(4);
    expect(from(note, fmEnd)).toEqual(expected(note.slice(fmEnd)));
    expect(from('head, tail', 10)).toEqual(expected(''));
    const unit = fc.constantFrom('a', 'A', 'é', 'Σ', '🚀', ' ', ',', '\n', 'abcdefghijklmn');
    fc.assert(fc.property(fc.string({ unit, maxLength: 30 }), fc.nat(40), (text, k) => {
      const at = Math.min(k, text.length);
      expect(from(text, at)).toEqual(expected(text.slice(at)));
    }), { numRuns: 2000 });
  });

  it('equals the reference on generated notes and arbitrary strings', () => {
    for (let i = 0; i < 100; i++) expect(counted(generateNote(5, i))).toEqual(expected(generateNote(5, i)));
    const unit = fc.constantFrom('a', 'b', 'A', 'B', 'é', 'É', 'Σ', 'ς', '🚀', ' ', ',', '|', '\n', '\t', 'abcdefghijklmn', 'Abcdefghijklmn');
    fc.assert(fc.property(fc.string({ unit, maxLength: 30 }), (text) => {
      expect(counted(text)).toEqual(expected(text));
    }), { numRuns: 3000 });
    fc.assert(fc.property(fc.string({ unit: 'binary', maxLength: 40 }), (text) => {
      expect(counted(text)).toEqual(expected(text));
    }), { numRuns: 2000 });
  });
});

describe('queryTerms', () => {
  it.each(CASES)('%s', (_name, text) => {
    expect(queryTerms(text)).toEqual(reference(text).terms);
  });

  it('equals the reference terms on arbitrary strings', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 40 }), (text) => {
        expect(queryTerms(text)).toEqual(reference(text).terms);
      }),
      { numRuns: 2000 },
    );
  });
});

describe('long terms', () => {
  // A term that is a V8 slice of its text keeps the whole text alive.
  // Strings cannot be weakly referenced, so the test looks at the heap: a
  // text of 10M code units is built at run time (a literal would be kept by
  // the code), only its long terms are kept, and the heap must not have
  // grown by the text once it is collected. The long tokens are of every
  // kind: ASCII lowercase (copied), ASCII cased (lowercased), non-ASCII
  // lowercase (copied) and non-ASCII cased (lowercased), in a text of
  // one-byte (Latin-1) and of two-byte characters.
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  const LATIN1 = ['internationalization', 'Internationalization', 'naïvetécafébar', 'naïvetéNAÏVETÉ'];
  const longWords = (twoByte: boolean) => (twoByte ? [...LATIN1, 'ελληνικάελληνικά', 'ΕΛΛΗΝΙΚΆΕΛΛΗΝΙΚΆ'] : LATIN1);

  // The text lives in this function's frame only: a frame that is still
  // running keeps its temporaries alive.
  const keepFromText = (keep: (text: string) => string[], twoByte: boolean): string[] =>
    keep([...longWords(twoByte), ' '.repeat(10_000_000)].join(' '));

  function retained(keep: (text: string) => string[], twoByte: boolean): { bytes: number; kept: string[] } {
    gc();
    const before = process.memoryUsage().heapUsed;
    const kept = keepFromText(keep, twoByte);
    gc();
    return { bytes: process.memoryUsage().heapUsed - before, kept };
  }

  it.each([false, true])('are not slices of their text (two-byte text: %s)', (twoByte) => {
    const terms = retained((text) => queryTerms(text).filter((t) => t.length >= 13), twoByte);
    expect(terms.kept).toEqual(longWords(twoByte).map((w) => w.toLowerCase()));
    expect(terms.bytes).toBeLessThan(2_000_000);
    // The control: slices do keep their text, so the measure can tell.
    const slices = retained((text) => [text.slice(0, 20)], twoByte);
    expect(slices.bytes).toBeGreaterThan(9_000_000);
  });
});
