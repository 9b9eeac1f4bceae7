import { describe, expect, it } from 'vitest';
import { Resvg } from '@resvg/resvg-js';
import { MAX_CHUNK, chunk, renderPng, renderSvg, renderSvgWithSize } from '../../src/canvas/export.js';
import { blankScene } from '../../src/canvas/excalidraw-file.js';
import { CanvasInputError, type ExcalidrawScene } from '../../src/canvas/types.js';
import { el, sampleScene } from './fixtures.js';

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
const pngSize = (png: Buffer) => ({ width: png.readUInt32BE(16), height: png.readUInt32BE(20) });

/**
 * A small XML well-formedness check: one root, balanced and properly nested
 * tags, quoted attributes without raw `<` or `&`, no stray `<`/`&` in text.
 */
function assertWellFormedXml(xml: string): void {
  const stack: string[] = [];
  let roots = 0;
  const token = /<!--[\s\S]*?-->|<(\/?)([A-Za-z][\w:.-]*)((?:\s+[\w:.-]+\s*=\s*(?:"[^"<]*"|'[^'<]*'))*)\s*(\/?)>|([^<]+)/gy;
  let pos = 0;
  while (pos < xml.length) {
    token.lastIndex = pos;
    const m = token.exec(xml);
    if (!m) throw new Error(`not well-formed at ${pos}: ${JSON.stringify(xml.slice(pos, pos + 40))}`);
    pos = token.lastIndex;
    const [, close, name, attrs, selfClose, text] = m;
    if (text !== undefined) {
      if (stack.length === 0 && text.trim() !== '') throw new Error('text outside the root');
      if (/&(?!(amp|lt|gt|quot|apos|#\d+|#x[0-9a-f]+);)/i.test(text)) throw new Error(`raw & in text: ${text.slice(0, 40)}`);
      continue;
    }
    if (name === undefined) continue; // comment
    if (attrs && /&(?!(amp|lt|gt|quot|apos|#\d+|#x[0-9a-f]+);)/i.test(attrs)) throw new Error(`raw & in attributes of <${name}>`);
    if (close) {
      if (stack.pop() !== name) throw new Error(`</${name}> does not close the open tag`);
    } else if (!selfClose) {
      if (stack.length === 0) roots++;
      stack.push(name);
    } else if (stack.length === 0) roots++;
  }
  if (stack.length !== 0) throw new Error(`unclosed: ${stack.join(', ')}`);
  if (roots !== 1) throw new Error(`${roots} root elements`);
}

const countGroups = (svg: string) => (svg.match(/<g data-element-id=/g) ?? []).length;

describe('renderSvg', () => {
  it('is well-formed XML that resvg parses', () => {
    const svg = renderSvg(sampleScene());
    assertWellFormedXml(svg);
    const r = new Resvg(svg);
    expect(r.width).toBeGreaterThan(0);
  });

  it('draws one group per non-deleted element, in scene order, skipping deleted ones', () => {
    const scene = sampleScene();
    const svg = renderSvg(scene);
    const live = scene.elements.filter((e) => !e.isDeleted);
    expect(countGroups(svg)).toBe(live.length);
    const ids = [...svg.matchAll(/<g data-element-id="([^"]+)" data-type="([^"]+)"/g)].map((m) => `${m[2]}:${m[1]}`);
    expect(ids).toEqual(live.map((e) => `${e.type}:${e.id}`));
    expect(svg).not.toContain('dele0001');
    for (const type of ['rectangle', 'ellipse', 'diamond', 'line', 'arrow', 'freedraw', 'text']) {
      expect(svg).toContain(`data-type="${type}"`);
    }
  });

  it('is deterministic', () => {
    expect(renderSvg(sampleScene())).toBe(renderSvg(sampleScene()));
    expect(renderSvg(structuredClone(sampleScene()))).toBe(renderSvg(sampleScene()));
  });

  it('seeds the hand-drawn strokes from element.seed', () => {
    const a = blankScene();
    a.elements = [el('rectangle', { id: 'r', seed: 1 })];
    const b = blankScene();
    b.elements = [el('rectangle', { id: 'r', seed: 2 })];
    expect(renderSvg(a)).not.toBe(renderSvg(b));
    const noSeed = blankScene();
    noSeed.elements = [el('rectangle', { id: 'r', seed: undefined })];
    expect(renderSvg(noSeed)).toBe(renderSvg(structuredClone(noSeed)));
  });

  it('honours colours, fill styles, stroke width and style, opacity and angle', () => {
    const svg = renderSvg(sampleScene());
    const group = (id: string) => svg.slice(svg.indexOf(`data-element-id="${id}"`), svg.indexOf('</g>', svg.indexOf(`data-element-id="${id}"`)));
    // hachure: fill drawn as strokes in the fill colour
    expect(group('rect0001')).toMatch(/stroke="#a5d8ff" stroke-width="1" fill="none"/);
    // solid: a filled path
    expect(group('elli0001')).toMatch(/stroke="none" fill="#ffc9c9"/);
    expect(group('elli0001')).toContain('opacity="0.6"');
    expect(group('diam0001')).toContain('stroke="#2f9e44"');
    expect(group('diam0001')).toContain('stroke-dasharray="8 10"');
    expect(group('rota0001')).toMatch(/transform="translate\(260 300\) rotate\(30 60 20\)"/);
    // arrowheads: the curved arrow has a filled dot and a filled triangle in its stroke colour
    expect((group('arro0002').match(/fill="#e03131"/g) ?? []).length).toBeGreaterThanOrEqual(2);
    expect(group('line0001')).toContain('#ffec99');
    expect(svg).toContain('<rect x="-4" y="-4" width="578" height="387" fill="#fffce8"/>');
  });

  it('escapes text and ids', () => {
    const scene = blankScene();
    scene.elements = [
      el('text', { id: 'a"<&>', text: 'x < y & "z"\u0001', fontFamily: 3, textAlign: 'center' }),
    ];
    const svg = renderSvg(scene);
    assertWellFormedXml(svg);
    expect(svg).toContain('data-element-id="a&quot;&lt;&amp;&gt;"');
    expect(svg).toContain('>x &lt; y &amp; &quot;z&quot;</text>');
    expect(svg).toContain('text-anchor="middle"');
    expect(svg).toContain('monospace');
  });

  it('fits the viewBox to the elements plus padding', () => {
    const scene = blankScene();
    scene.elements = [el('rectangle', { x: 100, y: 50, width: 200, height: 100, roughness: 0, strokeWidth: 2 })];
    const { svg, size } = renderSvgWithSize(scene);
    // stroke margin 2 (= 2/2 + 0*2 + 1) and padding 10 on each side
    expect(size).toEqual({ width: 224, height: 124 });
    expect(svg).toContain('viewBox="88 38 224 124"');
  });

  it('uses the background colour, or none when exportBackground is false', () => {
    const scene = blankScene();
    scene.appState = { viewBackgroundColor: '#123456' };
    expect(renderSvg(scene)).toContain('fill="#123456"');
    scene.appState = { viewBackgroundColor: '#123456', exportBackground: false };
    expect(renderSvg(scene)).not.toContain('<rect');
    scene.appState = { viewBackgroundColor: 'transparent' };
    expect(renderSvg(scene)).not.toContain('<rect');
  });

  it('renders an empty scene as a small blank image', () => {
    const { svg, size } = renderSvgWithSize(blankScene());
    expect(size).toEqual({ width: 20, height: 20 });
    expect(countGroups(svg)).toBe(0);
    assertWellFormedXml(svg);
    const onlyDeleted: ExcalidrawScene = { ...blankScene(), elements: [el('ellipse', { isDeleted: true, x: 999 })] };
    expect(renderSvg(onlyDeleted)).toBe(renderSvg(blankScene()));
  });

  it('draws placeholders for linked content and skips unknown types', () => {
    const scene = blankScene();
    scene.elements = [el('image', { fileId: 'f1' }), el('frame', { name: 'Frame 1' }), el('mystery')];
    const svg = renderSvg(scene);
    expect(countGroups(svg)).toBe(2);
    expect(svg).toContain('stroke-dasharray="6 4"');
    expect(svg).toContain('>Frame 1</text>');
  });

  it('rejects what is not a scene', () => {
    expect(() => renderSvg(null)).toThrow(CanvasInputError);
    expect(() => renderSvg({ elements: [{}] })).toThrow(/scene.elements\[0\]\.id/);
  });
});

describe('renderPng', () => {
  it('starts with the PNG signature and has the SVG size', () => {
    const png = renderPng(sampleScene());
    expect(png.subarray(0, 8).equals(PNG_SIGNATURE)).toBe(true);
    const { size } = renderSvgWithSize(sampleScene());
    expect(pngSize(png)).toEqual(size);
  });

  it('scales', () => {
    const { size } = renderSvgWithSize(sampleScene());
    for (const scale of [2, 0.5, 1.5]) {
      const png = renderPng(sampleScene(), { scale });
      expect(pngSize(png)).toEqual({ width: Math.round(size.width * scale), height: Math.round(size.height * scale) });
    }
  });

  it('is deterministic', () => {
    expect(renderPng(sampleScene()).equals(renderPng(sampleScene()))).toBe(true);
  });

  it('renders an empty scene as a small blank image', () => {
    const png = renderPng(blankScene());
    expect(png.subarray(0, 8).equals(PNG_SIGNATURE)).toBe(true);
    expect(pngSize(png)).toEqual({ width: 20, height: 20 });
  });

  it('shrinks a huge drawing to the maximum side', () => {
    const scene = blankScene();
    scene.elements = [el('rectangle', { x: 0, y: 0, width: 40000, height: 10, roughness: 0 })];
    const png = renderPng(scene, { scale: 2 });
    expect(pngSize(png).width).toBeLessThanOrEqual(16384);
    const square = blankScene();
    square.elements = [el('rectangle', { x: 0, y: 0, width: 12000, height: 12000, roughness: 0 })];
    const { width, height } = pngSize(renderPng(square, { scale: 1 }));
    expect(width * height).toBeLessThanOrEqual(32 * 1024 * 1024);
    expect(width).toBeGreaterThan(5000);
  });

  it('validates the scale', () => {
    for (const scale of [0, -1, 9, Number.NaN, Infinity, '2' as never]) {
      expect(() => renderPng(blankScene(), { scale })).toThrow(CanvasInputError);
    }
  });
});

describe('chunk', () => {
  const bytes = Buffer.from(Array.from({ length: 1000 }, (_, i) => i % 251));

  it('walks the bytes with next_offset', () => {
    const parts: Buffer[] = [];
    let offset: number | null = 0;
    let calls = 0;
    while (offset !== null) {
      const c = chunk(bytes, offset, 300);
      expect(c.total).toBe(1000);
      expect(c.offset).toBe(offset);
      parts.push(c.bytes);
      offset = c.next_offset;
      calls++;
    }
    expect(calls).toBe(4);
    expect(Buffer.concat(parts).equals(bytes)).toBe(true);
  });

  it('defaults to offset 0 and the maximum limit', () => {
    const c = chunk(bytes);
    expect(c).toMatchObject({ offset: 0, total: 1000, next_offset: null });
    expect(c.bytes.length).toBe(1000);
    const big = Buffer.alloc(MAX_CHUNK + 5);
    expect(chunk(big).next_offset).toBe(MAX_CHUNK);
    expect(chunk(big, MAX_CHUNK).bytes.length).toBe(5);
  });

  it('returns the last partial chunk with next_offset null', () => {
    expect(chunk(bytes, 999, 10)).toMatchObject({ offset: 999, total: 1000, next_offset: null });
    expect(chunk(bytes, 999, 10).bytes.length).toBe(1);
    expect(chunk(bytes, 990, 10).next_offset).toBeNull();
  });

  it('accepts offset 0 on empty bytes', () => {
    expect(chunk(Buffer.alloc(0), 0, 10)).toMatchObject({ offset: 0, total: 0, next_offset: null });
  });

  it('works on a Uint8Array view with a byteOffset', () => {
    const view = new Uint8Array(bytes.buffer, bytes.byteOffset + 10, 20);
    expect([...chunk(view, 5, 3).bytes]).toEqual([...view.subarray(5, 8)]);
  });

  const bad: Array<[string, number, number, RegExp]> = [
    ['limit 0', 0, 0, /limit must be an integer from 1 to 524288, got 0/],
    ['limit too big', 0, MAX_CHUNK + 1, /limit must be an integer from 1 to 524288/],
    ['fractional limit', 0, 1.5, /limit/],
    ['negative offset', -1, 10, /offset must be an integer >= 0, got -1/],
    ['fractional offset', 0.5, 10, /offset must be an integer >= 0/],
    ['offset at the end', 1000, 10, /offset 1000 is past the end: the export has 1000 bytes, so offsets run from 0 to 999/],
    ['offset past the end', 5000, 10, /offset 5000 is past the end/],
  ];
  it.each(bad)('rejects %s', (_name, offset, limit, message) => {
    expect(() => chunk(bytes, offset, limit)).toThrow(CanvasInputError);
    expect(() => chunk(bytes, offset, limit)).toThrow(message);
  });

  it('rejects offset past the end of empty bytes and non-bytes', () => {
    expect(() => chunk(Buffer.alloc(0), 1, 10)).toThrow(/past the end/);
    expect(() => chunk('abc' as never, 0, 10)).toThrow(/bytes must be a Buffer/);
  });
});
