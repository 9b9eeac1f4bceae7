import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { addRef, dropRefs, forEachRef, type Refs } from '../../src/index/link-refs.js';

type Src = { name: string };

/** The links `refs` holds, as sorted "name:index" strings. */
const contents = (refs: Refs<Src> | undefined) => {
  const out: string[] = [];
  if (refs !== undefined) forEachRef(refs, (s, i) => out.push(`${s.name}:${i}`));
  return out.sort();
};

describe('link refs', () => {
  it('hold each source`s links, drop them all at once, and say when none are left', () => {
    const a = { name: 'a' };
    const b = { name: 'b' };
    let refs = addRef(undefined, a, 0);
    refs = addRef(refs, a, 3);
    refs = addRef(refs, b, 1);
    expect(contents(refs)).toEqual(['a:0', 'a:3', 'b:1']);
    expect(dropRefs(refs, a)).toBe(false);
    expect(contents(refs)).toEqual(['b:1']);
    expect(dropRefs(refs, a)).toBe(false);
    expect(dropRefs(refs, b)).toBe(true);
  });

  it('keep the same contents as a plain list through any sequence, past the size where sources are indexed', () => {
    const sources = Array.from({ length: 1500 }, (_, k) => ({ name: `s${k}` }));
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.nat(1499), fc.integer({ min: 0, max: 3 }), fc.boolean()), { minLength: 2000, maxLength: 3000 }),
        fc.array(fc.tuple(fc.nat(1499), fc.integer({ min: 0, max: 3 }), fc.nat(9).map((n) => n < 8)), { minLength: 2000, maxLength: 3000 }),
        (growing, shrinking) => {
          // Grows past the indexed size, then mostly drops, so holes pile up and are compacted.
          const ops = [...sources.map((_, k): [number, number, boolean] => [k, 1, false]), ...growing, ...shrinking];
          let refs: Refs<Src> | undefined;
          const expected = new Map<Src, number[]>();
          for (const [k, links, drop] of ops) {
            const src = sources[k]!;
            // A source's links are dropped before it adds them again, and added together.
            if (expected.has(src) && refs !== undefined) {
              if (dropRefs(refs, src)) refs = undefined;
              expected.delete(src);
            }
            if (drop) continue;
            const idx = Array.from({ length: links + 1 }, (_, j) => j * 2 + (k % 2));
            for (const i of idx) refs = addRef(refs, src, i);
            expected.set(src, idx);
          }
          const want = [...expected].flatMap(([s, idx]) => idx.map((i) => `${s.name}:${i}`)).sort();
          expect(contents(refs)).toEqual(want);
        },
      ),
      { numRuns: 30 },
    );
  });

  it('past the indexed size, keep a source whose links come in two goes whole, and drop all of them', () => {
    const sources = Array.from({ length: 1100 }, (_, k) => ({ name: `s${k}` }));
    let refs: Refs<Src> | undefined;
    for (const s of sources) refs = addRef(refs, s, 0);
    const late = sources[3]!;
    refs = addRef(refs!, late, 7);
    expect(contents(refs).filter((x) => x.startsWith('s3:'))).toEqual(['s3:0', 's3:7']);
    expect(contents(refs)).toHaveLength(1101);
    expect(dropRefs(refs, late)).toBe(false);
    expect(contents(refs).some((x) => x.startsWith('s3:'))).toBe(false);
    for (const s of sources) if (s !== late) dropRefs(refs, s);
    expect(contents(refs)).toEqual([]);
  });
});
