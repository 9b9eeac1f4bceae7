import { describe, expect, it } from 'vitest';
import * as Y from 'yjs';
import { authorKey, authorOfKey, parseAuthor } from '../../src/collab/authors.js';
import { compactPoints, DAY_MS, replay, type Point } from '../../src/collab/history.js';
import { pagePoints } from '../../src/collab/points.js';
import { planUndo } from '../../src/collab/undo.js';

describe('authors', () => {
  it.each([
    [{ user: 'ann' }, 'user:ann'],
    [{ user: 'ann', installation: 'laptop' }, 'installation:ann/laptop'],
    [{ guest: 'g1', link: 'abc' }, 'guest:abc/g1'],
    [{ installation: 'disk' }, 'installation:disk'],
  ])('%j <-> %s', (author, key) => {
    expect(authorKey(parseAuthor(author, 'body.author'))).toBe(key);
    expect(authorOfKey(key)).toEqual(author);
  });

  it.each([[{}], [{ user: '' }], [{ user: 'a', guest: 'b' }], [{ installation: 'laptop' }], [{ guest: 'g' }]])('refuses %j', (raw) => {
    expect(() => parseAuthor(raw as Record<string, unknown>, 'body.author')).toThrow(/body.author/);
  });
});

/** Points made by typing into one document as the given authors. */
function history(steps: Array<[string, (t: Y.Text) => void, number?]>): Point[] {
  const doc = new Y.Doc();
  const out: Point[] = [];
  let n = 0;
  for (const [a, fn, t] of steps) {
    const sv = Y.encodeStateVector(doc);
    fn(doc.getText('content'));
    out.push({ n: ++n, t: t ?? Date.now(), a, u: Buffer.from(Y.encodeStateAsUpdate(doc, sv)).toString('base64') });
  }
  return out;
}

describe('compaction', () => {
  it('keeps the last day point by point and merges older points per hour and author; the text is the same', () => {
    const now = Date.UTC(2026, 0, 10, 12);
    const old = now - 2 * DAY_MS;
    const points = history([
      ['user:ann', (t) => t.insert(0, 'a'), old],
      ['user:bob', (t) => t.insert(1, 'b'), old + 1000],
      ['user:ann', (t) => t.insert(2, 'c'), old + 2000],
      ['user:ann', (t) => t.insert(3, 'd'), old + 3 * 3600_000],
      ['user:ann', (t) => t.insert(4, 'e'), now - 1000],
      ['user:ann', (t) => t.insert(5, 'f'), now - 500],
    ]);
    const compacted = compactPoints(points, now);
    expect(compacted.map((p) => [p.n, p.a])).toEqual([
      [2, 'user:bob'],
      [3, 'user:ann'],
      [4, 'user:ann'],
      [5, 'user:ann'],
      [6, 'user:ann'],
    ]);
    expect(replay(compacted).getText('content').toString()).toBe('abcdef');
  });
});

describe('paging points', () => {
  const pts = Array.from({ length: 10 }, (_, i) => ({ n: i + 1, t: i, a: 'user:ann', u: '' }));
  it.each([
    [{ limit: 3 }, [1, 2, 3], true],
    [{ after: 8 }, [9, 10], false],
    [{ before: 5, limit: 2 }, [3, 4], true],
    [{ after: 2, before: 6 }, [3, 4, 5], false],
  ])('%j', (q, want, more) => {
    const page = pagePoints(pts, q);
    expect(page.points.map((p) => p.point)).toEqual(want);
    expect(page.has_more).toBe(more);
  });
  it('an overflowing limit is a 400 asking for less', () => {
    expect(() => pagePoints(pts, { limit: 5000 })).toThrow(/smaller limit/);
  });
});

describe('per-author undo', () => {
  const points = history([
    ['installation:disk', (t) => t.insert(0, 'Start.\n')],
    ['user:ann', (t) => t.insert(7, 'Ann one.\n')],
    ['user:bob', (t) => t.insert(0, 'Bob top.\n')],
    ['user:cat', (t) => t.insert(t.length, 'Cat end.\n')],
    ['user:ann', (t) => t.insert(t.length, 'Ann two.\n')],
    ['user:bob', (t) => t.delete(0, 4)],
  ]);
  const text = () => replay(points).getText('content').toString();

  it('reverses only the chosen author in the range and keeps everyone else', () => {
    expect(text()).toBe('top.\nStart.\nAnn one.\nCat end.\nAnn two.\n');
    const plan = planUndo(points, 'user:ann', 1, 6);
    expect(plan.points).toEqual([2, 5]);
    expect(plan.textAfter).toBe('top.\nStart.\nCat end.\n');
    expect(plan.conflicts).toEqual([]);
    const doc = replay(points);
    Y.applyUpdate(doc, plan.update!);
    expect(doc.getText('content').toString()).toBe(plan.textAfter);
  });

  it('an inclusive range leaves the author\'s other points alone; a deletion is undone too', () => {
    expect(planUndo(points, 'user:ann', 5, 5).textAfter).toBe('top.\nStart.\nAnn one.\nCat end.\n');
    expect(planUndo(points, 'user:bob', 6, 6).textAfter).toBe('Bob top.\nStart.\nAnn one.\nCat end.\nAnn two.\n');
    expect(planUndo(points, 'user:cat', 1, 3).update).toBeNull();
  });

  it('reports text of the author that others deleted or typed inside', () => {
    const pts = history([
      ['user:ann', (t) => t.insert(0, 'hello world')],
      ['user:bob', (t) => t.delete(0, 6)],
      ['user:cat', (t) => t.insert(2, 'XX')],
    ]);
    const plan = planUndo(pts, 'user:ann', 1, 1);
    expect(plan.conflicts).toEqual([
      { kind: 'deleted_by_other', point: 2, author: { user: 'bob' }, text: 'hello ' },
      { kind: 'typed_inside', point: 3, author: { user: 'cat' }, text: 'XX' },
    ]);
    expect(plan.textAfter).toBe('XX');
  });
});
