/**
 * Canvas input limits, table-style: element count, nesting and points,
 * answered as CanvasInputError naming the field; hostile frontmatter of a
 * hand-written canvas; merges that compared one large element with every
 * tie; fills and sizes that made one shape take seconds to draw.
 */
import { describe, expect, it } from 'vitest';
import { blankScene, DRAWING_MAX_CHARS, normalizeScene, parseCanvasNote, renderCanvasNote, replaceScene, sceneJson } from '../../src/canvas/excalidraw-file.js';
import { renderSvg } from '../../src/canvas/export.js';
import { ELEMENTS_MAX, mergeElements, POINTS_MAX, validateElements, VALUE_MAX_DEPTH } from '../../src/canvas/merge.js';
import { renderNoteOffThread } from '../../src/canvas/render.js';
import { CanvasInputError, CanvasNoteError, type ExcalidrawElement } from '../../src/canvas/types.js';
import { el } from './fixtures.js';

const nested = (depth: number): unknown => {
  let v: unknown = 1;
  for (let i = 0; i < depth; i++) v = [v];
  return v;
};
const many = (n: number) => Array.from({ length: n }, (_, i) => ({ id: `e${i}`, version: 1, versionNonce: 1 }));

function inputError(fn: () => unknown): CanvasInputError {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(CanvasInputError);
    return e as CanvasInputError;
  }
  throw new Error('expected a CanvasInputError');
}

describe('element limits', () => {
  it.each([
    ['20,001 elements', () => validateElements(many(ELEMENTS_MAX + 1), 'body.elements'), { field: 'body.elements', reason: 'too_many', max: '20000' }],
    [
      'an element nested 33 deep',
      () => validateElements([{ id: 'a', version: 1, versionNonce: 1 }, { id: 'b', version: 1, versionNonce: 1, customData: nested(VALUE_MAX_DEPTH) }], 'body.elements'),
      { field: 'body.elements', reason: 'too_deep', index: '1', max: '32' },
    ],
    [
      'an element nested 100,000 deep',
      () => validateElements([{ id: 'a', version: 1, versionNonce: 1, customData: nested(100_000) }], 'body.elements'),
      { field: 'body.elements', reason: 'too_deep', index: '0' },
    ],
    [
      'a line of 10,001 points',
      () => validateElements([{ id: 'a', version: 1, versionNonce: 1, points: Array.from({ length: POINTS_MAX + 1 }, (_, i) => [i, 0]) }], 'body.elements'),
      { field: 'body.elements', reason: 'too_many', index: '0', max: '10000' },
    ],
    ['appState nested 5,000 deep', () => normalizeScene({ ...blankScene(), appState: { x: nested(5000) } }), { field: 'scene.appState', reason: 'too_deep' }],
    ['files nested 5,000 deep', () => normalizeScene({ ...blankScene(), files: { x: nested(5000) } }), { field: 'scene.files', reason: 'too_deep' }],
    ['another scene key nested 5,000 deep', () => normalizeScene({ ...blankScene(), extra: nested(5000) }), { field: 'scene', reason: 'too_deep' }],
    ['a merge that would pass 20,000 elements', () => mergeElements(many(15_000), many(20_000).map((e) => ({ ...e, id: `n${e.id}` }))), { field: 'elements', reason: 'too_many' }],
  ])('refuses %s', (_, fn, details) => {
    expect(inputError(fn).details).toMatchObject(details);
  });

  it.each([
    ['20,000 elements', () => validateElements(many(ELEMENTS_MAX))],
    ['an element nested 31 deep inside a field', () => validateElements([{ id: 'a', version: 1, versionNonce: 1, customData: nested(VALUE_MAX_DEPTH - 1) }])],
    ['a line of 10,000 points', () => validateElements([{ id: 'a', version: 1, versionNonce: 1, points: Array.from({ length: POINTS_MAX }, (_, i) => [i, 0]) }])],
  ])('takes %s', (_, fn) => {
    expect(fn).not.toThrow();
  });

  it('serialises each element at most once in a merge, however many ties it meets', () => {
    let reads = 0;
    const big: ExcalidrawElement = { id: 'a', version: 1, versionNonce: 1, type: 'rectangle' };
    // A getter counts how often JSON.stringify walks the element; `aa` sorts first, so this element stays the winner.
    Object.defineProperty(big, 'aa', { enumerable: true, get: () => (reads++, 'a') });
    const ties = Array.from({ length: 1000 }, (_, i) => ({ id: 'a', version: 1, versionNonce: 1, type: 'rectangle', zz: i }));
    const merged = mergeElements([big], ties);
    // Once by the depth check, once for its canonical JSON (1,001 times before).
    expect(reads).toBe(2);
    expect(merged).toHaveLength(1);
    expect(merged[0]).toBe(big);
  });
});

describe('drawing size', () => {
  const huge = el('text', { text: 'x'.repeat(DRAWING_MAX_CHARS) });
  it('refuses to read a drawing of more than 16 Mi characters of JSON', () => {
    const text = renderCanvasNote({ title: 'Big', id: 'b', scene: { elements: [el('text', { text: 'small' })] } }).replace('"small"', JSON.stringify(huge.text));
    let error: unknown;
    try {
      parseCanvasNote(text);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(CanvasNoteError);
    expect((error as CanvasNoteError).reason).toBe('invalid_scene');
    expect((error as Error).message).toMatch(/the most Quire reads is 16777216/);
  });

  it('refuses to write one', () => {
    const note = renderCanvasNote({ title: 'Big', id: 'b' });
    expect(inputError(() => replaceScene(note, { ...blankScene(), elements: [huge] })).details).toMatchObject({ field: 'scene', reason: 'too_large', max: String(DRAWING_MAX_CHARS) });
  });
});

describe('a hand-written canvas with hostile frontmatter', () => {
  const drawing = renderCanvasNote({ title: 'T', id: 'x' }).replace(/^---[\s\S]*?\n---\n/, '');
  const blockNest = (n: number) => {
    let s = 'excalidraw-plugin: parsed\nk:\n';
    for (let i = 0; i < n; i++) s += ' '.repeat(i + 1) + '- \n';
    return s;
  };
  const aliasChain = (n: number) => {
    let s = 'excalidraw-plugin: parsed\na0: &a0 [x]\n';
    for (let i = 1; i < n; i++) s += `a${i}: &a${i} [*a${i - 1}]\n`;
    return s;
  };
  it.each([
    ['flow nesting 20,000 deep', `excalidraw-plugin: parsed\nx: ${'['.repeat(20_000)}${']'.repeat(20_000)}\n`],
    ['block nesting 3,000 deep', blockNest(3000)],
    ['a chain of 20,000 aliases', aliasChain(20_000)],
    ['a chain of 1,000 aliases', aliasChain(1000)],
  ])('is not a canvas, said at once, for %s', (_, yaml) => {
    let error: unknown;
    try {
      parseCanvasNote(`---\n${yaml}---\n${drawing}`);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(CanvasNoteError);
    expect((error as CanvasNoteError).reason).toBe('not_canvas');
    expect((error as Error).message).toMatch(/nested more than 100|more than 100 aliases|longer than/);
  });

  it('still reads the plugin frontmatter of a real drawing', () => {
    expect(parseCanvasNote(renderCanvasNote({ title: 'Board', id: 'n1', tags: ['a'] })).frontmatter).toMatchObject({ 'excalidraw-plugin': 'parsed', title: 'Board' });
  });
});

describe('drawing cost bounded per shape', () => {
  const scene = (e: ExcalidrawElement) => ({ ...blankScene(), elements: [e] });
  it.each([
    ['a hachure fill 1,000,000 wide', el('rectangle', { width: 1e6, height: 1e6, backgroundColor: '#ff0000', fillStyle: 'hachure' })],
    ['a hachure fill with a hair-thin stroke', el('rectangle', { width: 1000, height: 1000, strokeWidth: 0.001, backgroundColor: '#ff0000', fillStyle: 'hachure' })],
    ['a dotted fill 10,000 wide', el('rectangle', { width: 1e4, height: 1e4, backgroundColor: '#ff0000', fillStyle: 'dots' })],
    ['a dashed fill 100,000 wide', el('ellipse', { width: 1e5, height: 1e5, backgroundColor: '#ff0000', fillStyle: 'dashed' })],
    ['an ellipse 1e12 wide', el('ellipse', { width: 1e12, height: 1e12 })],
  ])('draws %s in under 2 MB of SVG', (_, e) => {
    expect(renderSvg(scene(e)).length).toBeLessThan(2_000_000);
  });

  it('draws a text of 200,000 lines without a width', () => {
    expect(renderSvg(scene(el('text', { text: 'a\n'.repeat(200_000), width: 0, height: 0 })))).toMatch(/^<svg/);
  });

  it('keeps the fill of an ordinary shape as it was', () => {
    const shape = el('rectangle', { backgroundColor: '#ff0000', fillStyle: 'hachure' });
    expect(renderSvg(scene(shape))).toBe(renderSvg(scene({ ...shape })));
    expect(sceneJson(normalizeScene(scene(shape)))).toContain('"hachure"');
  });
});

describe('renderNoteOffThread', () => {
  const note = (elements: unknown[]) => renderCanvasNote({ title: 'T', id: 't', scene: { elements } });
  it('renders on a worker thread, the same bytes as on this one', async () => {
    const elements = [el('ellipse', { backgroundColor: '#00ff00', fillStyle: 'cross-hatch' })];
    expect((await renderNoteOffThread(note(elements), 'svg')).toString('utf8')).toBe(renderSvg({ ...blankScene(), elements }));
  }, 30_000);

  it('ends a render that passes its time limit with 400 too_complex', async () => {
    const heavy = Array.from({ length: 5000 }, (_, i) => el('rectangle', { x: i, backgroundColor: '#f00', fillStyle: 'hachure' }));
    await expect(renderNoteOffThread(note(heavy), 'png', 50)).rejects.toMatchObject({ status: 400, details: { reason: 'too_complex' } });
  }, 30_000);

  it('answers 503 with Retry-After when 2 render and 8 wait', async () => {
    const heavy = note(Array.from({ length: 5000 }, (_, i) => el('rectangle', { x: i, backgroundColor: '#f00', fillStyle: 'hachure' })));
    const queued = Array.from({ length: 10 }, () => renderNoteOffThread(heavy, 'png', 200).catch((e: unknown) => e));
    await expect(renderNoteOffThread(heavy, 'png', 200)).rejects.toMatchObject({ status: 503, headers: { 'retry-after': '10' } });
    for (const r of await Promise.all(queued)) expect(r).toMatchObject({ status: 400, details: { reason: 'too_complex' } });
  }, 60_000);

  it('answers a note that is not a readable canvas with its 400', async () => {
    await expect(renderNoteOffThread('# Just a note\n', 'svg')).rejects.toMatchObject({ status: 400, details: { reason: 'not_canvas' } });
    const broken = note([el('rectangle')]).replace('"version": 1,', '"version": -1,');
    await expect(renderNoteOffThread(broken, 'svg')).rejects.toMatchObject({ status: 400, details: { reason: 'invalid_scene' } });
  }, 30_000);
});
