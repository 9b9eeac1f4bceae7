import { describe, expect, it } from 'vitest';
import { applyEdits, diffText, merge3 } from '../../src/collab/text-diff.js';

describe('diffText', () => {
  const cases: Array<[string, string, string]> = [
    ['same', 'abc', 'abc'],
    ['insert in the middle', 'hello world', 'hello brave world'],
    ['delete', 'hello brave world', 'hello world'],
    ['from empty', '', 'new text\n'],
    ['to empty', 'old text\n', ''],
    ['two separate line edits', 'a\nb\nc\nd\ne\n', 'A\nb\nc\nD\ne\n'],
    ['lines moved', 'one\ntwo\nthree\n', 'three\none\ntwo\n'],
    ['emoji kept whole', 'x😀y', 'x😃y'],
    ['no newline at the end', 'a\nb', 'a\nb\nc'],
  ];
  it.each(cases)('%s', (_name, a, b) => {
    expect(applyEdits(a, diffText(a, b))).toBe(b);
  });

  it('keeps separate changes separate (a middle line untouched is not rewritten)', () => {
    const edits = diffText('a\nb\nc\nd\ne\n', 'A\nb\nc\nD\ne\n');
    expect(edits).toEqual([
      { pos: 0, del: 1, ins: 'A' },
      { pos: 6, del: 1, ins: 'D' },
    ]);
  });

  it('compares whole lines even where the changed text starts mid-line', () => {
    const a = 'ann\nbob 1\ncat 1\nbob 2\nann 2\n';
    const b = 'ann 1\ncat 1\nann 2\n';
    expect(diffText(a, b).map((e) => [a.slice(e.pos, e.pos + e.del), e.ins])).toEqual([['\nbob', ''], ['bob 2\n', '']]);
  });

  it('never splits a surrogate pair', () => {
    for (const e of diffText('x😀y', 'x😃y')) {
      expect(e.ins.length % 2 === 0 || e.ins === '').toBe(true);
      expect(e.del).toBe(2);
    }
  });
});

describe('merge3', () => {
  const cases: Array<[string, string, string, string, string]> = [
    ['only ours changed', 'base\n', 'base ours\n', 'base\n', 'base ours\n'],
    ['only theirs changed', 'base\n', 'base\n', 'base theirs\n', 'base theirs\n'],
    ['different lines', 'a\nb\nc\n', 'a typed\nb\nc\n', 'a\nb\nc vim\n', 'a typed\nb\nc vim\n'],
    ['same change once', 'a\n', 'a!\n', 'a!\n', 'a!\n'],
    ['both inserted at one place: ours then theirs', 'ab', 'aXb', 'aYb', 'aXYb'],
    ['theirs is a prefix of ours (written before a crash)', 'ab', 'aXYb', 'aXb', 'aXYb'],
    ['ours deleted a region theirs edited: their text stays', 'one two three', 'one three', 'one TWO three', 'one TWO three'],
  ];
  it.each(cases)('%s', (_name, base, ours, theirs, want) => {
    expect(merge3(base, ours, theirs)).toBe(want);
  });
});
