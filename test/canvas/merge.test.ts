import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { canonicalJson, mergeElements, pickWinner } from '../../src/canvas/merge.js';
import { CanvasInputError, type ExcalidrawElement } from '../../src/canvas/types.js';
import { AppError } from '../../src/core/errors.js';

// Small domains so ids collide and version/nonce ties happen often.
const ID = fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f');
const base = {
  id: ID,
  version: fc.integer({ min: 0, max: 3 }),
  versionNonce: fc.integer({ min: -2, max: 2 }),
  isDeleted: fc.boolean(),
  x: fc.integer({ min: 0, max: 2 }),
  type: fc.constantFrom('rectangle', 'text'),
};
/** Elements without Excalidraw's fractional `index` (older scenes). */
const plainElement = fc.record(base) as fc.Arbitrary<ExcalidrawElement>;
/** Elements that all carry an `index`. */
const indexedElement = fc.record({ ...base, index: fc.constantFrom('a0', 'a1', 'a2', 'Zz', 'a0V') }) as fc.Arbitrary<ExcalidrawElement>;

const arrays = (el: fc.Arbitrary<ExcalidrawElement>) => fc.array(el, { maxLength: 12 });
const both = fc.oneof(
  fc.tuple(arrays(plainElement), arrays(plainElement), arrays(plainElement)),
  fc.tuple(arrays(indexedElement), arrays(indexedElement), arrays(indexedElement)),
);

const byId = (els: ExcalidrawElement[]) => new Map(els.map((e) => [e.id, canonicalJson(e)]));
const asSet = (els: ExcalidrawElement[]) => [...byId(els).entries()].sort(([a], [b]) => (a < b ? -1 : 1));
const json = (els: ExcalidrawElement[]) => els.map(canonicalJson);

/** The rule, written out independently: highest version, then lowest nonce, then smallest canonical JSON. */
function expectedWinner(versions: ExcalidrawElement[]): ExcalidrawElement {
  return [...versions].sort(
    (p, q) =>
      q.version - p.version ||
      p.versionNonce - q.versionNonce ||
      (canonicalJson(p) < canonicalJson(q) ? -1 : canonicalJson(p) > canonicalJson(q) ? 1 : 0),
  )[0]!;
}

describe('mergeElements properties', () => {
  it('is commutative as a set of elements', () => {
    fc.assert(
      fc.property(both, ([a, b]) => {
        expect(asSet(mergeElements(a, b))).toEqual(asSet(mergeElements(b, a)));
      }),
      { numRuns: 500 },
    );
  });

  it('is commutative as a full array when every element has an index', () => {
    fc.assert(
      fc.property(arrays(indexedElement), arrays(indexedElement), (a, b) => {
        expect(json(mergeElements(a, b))).toEqual(json(mergeElements(b, a)));
      }),
      { numRuns: 500 },
    );
  });

  it('is associative as a full array', () => {
    fc.assert(
      fc.property(both, ([a, b, c]) => {
        expect(json(mergeElements(mergeElements(a, b), c))).toEqual(json(mergeElements(a, mergeElements(b, c))));
      }),
      { numRuns: 500 },
    );
  });

  it('is idempotent: merge(m, m) = m for any merge result m, and merge(a, a) = merge(a, [])', () => {
    fc.assert(
      fc.property(both, ([a, b]) => {
        const m = mergeElements(a, b);
        expect(json(mergeElements(m, m))).toEqual(json(m));
        expect(json(mergeElements(m, []))).toEqual(json(m));
        expect(json(mergeElements([], m))).toEqual(json(m));
        expect(json(mergeElements(a, a))).toEqual(json(mergeElements(a, [])));
      }),
      { numRuns: 500 },
    );
  });

  it('merge(a, a) = a for a scene with unique ids', () => {
    fc.assert(
      fc.property(fc.uniqueArray(plainElement, { selector: (e) => e.id, maxLength: 6 }), (a) => {
        expect(mergeElements(a, a)).toEqual(a);
      }),
    );
  });

  it('keeps every id and picks the winner by the rule', () => {
    fc.assert(
      fc.property(both, ([a, b]) => {
        const merged = mergeElements(a, b);
        const ids = new Set([...a, ...b].map((e) => e.id));
        expect(new Set(merged.map((e) => e.id))).toEqual(ids);
        expect(merged.length).toBe(ids.size);
        for (const e of merged) {
          const winner = expectedWinner([...a, ...b].filter((x) => x.id === e.id));
          expect(canonicalJson(e)).toBe(canonicalJson(winner));
        }
      }),
      { numRuns: 500 },
    );
  });

  it('keeps tombstones: a deleted element is never dropped, and stays deleted against older versions', () => {
    fc.assert(
      fc.property(arrays(plainElement), plainElement, (others, t) => {
        const tomb = { ...t, isDeleted: true, version: t.version + 10 };
        for (const merged of [mergeElements([tomb], others), mergeElements(others, [tomb])]) {
          const got = merged.find((e) => e.id === tomb.id);
          expect(got).toBeDefined();
          expect(got!.isDeleted).toBe(true);
        }
        // every deleted winner is still present
        const m = mergeElements(others, [tomb]);
        for (const id of new Set(others.map((e) => e.id))) expect(m.some((e) => e.id === id)).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it('does not mutate its inputs', () => {
    fc.assert(
      fc.property(both, ([a, b]) => {
        const before = JSON.stringify([a, b]);
        mergeElements(a, b);
        expect(JSON.stringify([a, b])).toBe(before);
      }),
    );
  });
});

describe('mergeElements examples', () => {
  const e = (id: string, version: number, versionNonce: number, extra: Partial<ExcalidrawElement> = {}): ExcalidrawElement => ({
    id,
    type: 'rectangle',
    version,
    versionNonce,
    isDeleted: false,
    ...extra,
  });

  it('higher version wins', () => {
    expect(mergeElements([e('a', 1, 5)], [e('a', 2, 9)])).toEqual([e('a', 2, 9)]);
    expect(mergeElements([e('a', 3, 5)], [e('a', 2, 1)])).toEqual([e('a', 3, 5)]);
  });

  it('equal versions keep the lower versionNonce', () => {
    expect(mergeElements([e('a', 2, 7)], [e('a', 2, 3)])).toEqual([e('a', 2, 3)]);
    expect(mergeElements([e('a', 2, 3)], [e('a', 2, 7)])).toEqual([e('a', 2, 3)]);
    expect(mergeElements([e('a', 2, 3)], [e('a', 2, -8)])).toEqual([e('a', 2, -8)]);
  });

  it('an exact version/nonce tie picks the same element whatever the order', () => {
    const p = e('a', 2, 3, { x: 1 });
    const q = e('a', 2, 3, { x: 2 });
    expect(pickWinner(p, q)).toBe(pickWinner(q, p));
    expect(mergeElements([p], [q])).toEqual(mergeElements([q], [p]));
  });

  it('a deletion with a higher version becomes a tombstone that stays', () => {
    const merged = mergeElements([e('a', 1, 1), e('b', 1, 1)], [e('a', 2, 4, { isDeleted: true })]);
    expect(merged).toEqual([e('a', 2, 4, { isDeleted: true }), e('b', 1, 1)]);
    // a stale client re-sending the old version does not bring it back
    expect(mergeElements(merged, [e('a', 1, 1)])).toEqual(merged);
    // a restore (higher version, isDeleted false) does
    expect(mergeElements(merged, [e('a', 3, 0)])[0]).toEqual(e('a', 3, 0));
  });

  it('keeps the current order and appends new ids in incoming order (no index)', () => {
    const merged = mergeElements([e('c', 1, 1), e('a', 1, 1)], [e('z', 1, 1), e('a', 2, 1), e('b', 1, 1)]);
    expect(merged.map((x) => x.id)).toEqual(['c', 'a', 'z', 'b']);
  });

  it('sorts by fractional index, then id, when every element has one', () => {
    const merged = mergeElements(
      [e('c', 1, 1, { index: 'a2' }), e('a', 1, 1, { index: 'a0' })],
      [e('b', 1, 1, { index: 'a1' }), e('d', 1, 1, { index: 'a1' })],
    );
    expect(merged.map((x) => x.id)).toEqual(['a', 'b', 'd', 'c']);
  });

  it('collapses duplicate ids inside one array', () => {
    expect(mergeElements([e('a', 1, 1), e('a', 4, 1)], [])).toEqual([e('a', 4, 1)]);
  });

  it('keeps unknown element fields as they came', () => {
    const rich = e('a', 5, 1, { points: [[0, 0], [1, 1]], customData: { k: 'v' } });
    expect(mergeElements([], [rich])[0]).toBe(rich);
  });

  const invalid: Array<[string, unknown, unknown, RegExp, number | undefined]> = [
    ['elements not an array', [], { id: 'a' }, /elements must be an array/, undefined],
    ['current not an array', null, [], /current must be an array/, undefined],
    ['element not an object', [], [e('a', 1, 1), 'x'], /elements\[1\] must be an element object/, 1],
    ['missing id', [], [{ version: 1, versionNonce: 1 }], /elements\[0\]\.id must be a non-empty string/, 0],
    ['empty id', [], [{ id: '', version: 1, versionNonce: 1 }], /elements\[0\]\.id/, 0],
    ['negative version', [], [e('a', 1, 1), e('b', -1, 1)], /elements\[1\]\.version must be an integer >= 0, got -1/, 1],
    ['fractional version', [], [e('a', 1.5, 1)], /version must be an integer >= 0, got 1\.5/, 0],
    ['string version', [], [{ id: 'a', version: '2', versionNonce: 1 }], /version must be an integer >= 0, got "2"/, 0],
    ['missing nonce', [], [{ id: 'a', version: 2 }], /versionNonce must be an integer, got missing/, 0],
    ['fractional nonce', [], [e('a', 1, 0.5)], /versionNonce must be an integer/, 0],
    ['bad isDeleted', [], [e('a', 1, 1, { isDeleted: 'yes' as never })], /isDeleted must be a boolean/, 0],
    ['bad index', [], [e('a', 1, 1, { index: 3 as never })], /index must be a string or null/, 0],
    ['bad current element', [e('a', 1, 1), e('b', 1, 1), {}], [], /current\[2\]\.id/, 2],
  ];
  it.each(invalid)('rejects %s', (_name, current, incoming, message, index) => {
    let caught: unknown;
    try {
      mergeElements(current, incoming);
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(CanvasInputError);
    expect(caught).toBeInstanceOf(AppError);
    expect((caught as CanvasInputError).status).toBe(400);
    expect((caught as Error).message).toMatch(message);
    expect((caught as CanvasInputError).index).toBe(index);
    if (index !== undefined) expect((caught as CanvasInputError).details?.['index']).toBe(String(index));
  });
});
