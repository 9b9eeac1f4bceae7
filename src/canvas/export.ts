/**
 * Canvas export for `export_canvas` / `shared_canvas_export`: an Excalidraw
 * scene to SVG (hand-drawn strokes from roughjs's generator, seeded by each
 * element's `seed`, so the same scene always gives the same bytes), SVG to
 * PNG through resvg, and the byte chunking both routes use. No DOM, no file
 * system. See docs/canvas.md, "Export".
 */
import { createRequire } from 'node:module';
import type { RoughGenerator } from 'roughjs/bin/generator.js';
import type { Drawable, Options } from 'roughjs/bin/core.js';
import { CanvasInputError, type ExcalidrawElement, type ExcalidrawScene } from './types.js';
import { normalizeScene } from './excalidraw-file.js';

/** Space around the drawing, as Excalidraw's export default. */
export const EXPORT_PADDING = 10;
/** Longest PNG side; a larger export is scaled down to fit (see renderPng). */
export const MAX_PNG_SIDE = 16384;
/** Most pixels in one PNG (32 Mi px, 128 MiB of RGBA while rendering); a larger export is scaled down to fit. */
export const MAX_PNG_PIXELS = 32 * 1024 * 1024;
export const MAX_PNG_SCALE = 8;
/** Largest chunk `chunk` hands out, as the spec's `limit` maximum. */
export const MAX_CHUNK = 524288;
/**
 * Largest width or height a shape is drawn at, in scene units: roughjs's
 * ellipse takes steps growing with its size (1e12 wide: 11 s and 200 MB of SVG).
 */
export const SHAPE_MAX = 100_000;
/** Most hachure, zigzag or cross-hatch lines in one shape's fill; a larger shape gets a wider gap. */
export const FILL_MAX_LINES = 1000;
/** Most dots or dashes in one shape's `dots` / `dashed` fill (each is a rough ellipse or line; 60,000 took 5 s). */
export const FILL_MAX_MARKS = 2000;

/**
 * roughjs and resvg are loaded at the first export (on the export worker),
 * not by every module that imports this one (the server, for `chunk`):
 * docs/performance.md, "Start-up".
 */
const require = createRequire(import.meta.url);
type RoughStatic = { generator(config?: unknown): RoughGenerator };
let generatorOnce: RoughGenerator | null = null;
function roughGenerator(): RoughGenerator {
  // roughjs ships CommonJS with an ESM-shaped .d.ts.
  generatorOnce ??= (require('roughjs') as RoughStatic).generator();
  return generatorOnce;
}

// ---------------------------------------------------------------------------
// small helpers

const num = (v: unknown, fallback = 0): number => (typeof v === 'number' && Number.isFinite(v) ? v : fallback);
const str = (v: unknown, fallback: string): string => (typeof v === 'string' && v !== '' ? v : fallback);
/** Numbers in the SVG: at most 2 decimals, no `-0`. */
const n2 = (v: number): string => {
  const r = Math.round(v * 100) / 100;
  return Object.is(r, -0) ? '0' : String(r);
};

/** Characters XML 1.0 forbids are dropped; markup characters are escaped. */
export function escapeXml(s: string): string {
  return s
    .replace(/[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/g, '')
    .replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&apos;');
}

const isTransparent = (c: string): boolean => c === 'transparent' || c === '' || /^#[0-9a-f]{6}00$/i.test(c) || /^#[0-9a-f]{3}0$/i.test(c);

/** FNV-1a of the id: a stable non-zero seed for elements without one. */
function seedOf(el: ExcalidrawElement): number {
  const s = el['seed'];
  if (typeof s === 'number' && Number.isSafeInteger(s) && s !== 0) return Math.abs(s) % 2147483647 || 1;
  let h = 0x811c9dc5;
  for (let i = 0; i < el.id.length; i++) {
    h ^= el.id.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return (h % 2147483646) + 1;
}

type Pt = [number, number];

function pointsOf(el: ExcalidrawElement): Pt[] {
  const raw = el['points'];
  if (!Array.isArray(raw)) return [];
  const out: Pt[] = [];
  for (const p of raw) {
    if (Array.isArray(p) && typeof p[0] === 'number' && typeof p[1] === 'number' && Number.isFinite(p[0]) && Number.isFinite(p[1])) {
      out.push([p[0], p[1]]);
    }
  }
  return out;
}

// ---------------------------------------------------------------------------
// rough options (after Excalidraw's generateRoughOptions)

/** A width or height as drawn: at most SHAPE_MAX. */
const extent = (v: unknown): number => Math.min(Math.abs(num(v)), SHAPE_MAX);

/**
 * The fill's line gap: the element's, widened so the fill has at most
 * FILL_MAX_LINES lines (FILL_MAX_MARKS dots or dashes). A fill's cost grows
 * with the shape's size over the gap, and the gap with the stroke width:
 * a large shape or a hair-thin stroke would otherwise take seconds.
 */
function fillGap(style: string, w: number, h: number, gap: number): number {
  if (style === 'solid') return gap;
  if (style === 'dots' || style === 'dashed') return Math.max(gap, Math.sqrt((w * h) / FILL_MAX_MARKS));
  return Math.max(gap, Math.hypot(w, h) / FILL_MAX_LINES);
}

/** `box`: the size the shape is drawn at, when not its `width` × `height` (lines: their points' box). */
function roughOptions(el: ExcalidrawElement, fill: boolean, box?: { w: number; h: number }): Options {
  const strokeWidth = num(el['strokeWidth'], 2);
  const strokeStyle = str(el['strokeStyle'], 'solid');
  const w = box?.w ?? extent(el['width']);
  const h = box?.h ?? extent(el['height']);
  const linear = el.type === 'line' || el.type === 'arrow';
  let roughness = num(el['roughness'], 1);
  const maxSize = Math.max(w, h);
  const minSize = Math.min(w, h);
  if (!((minSize >= 20 && maxSize >= 50) || minSize >= 15 || (linear && maxSize >= 50))) {
    roughness = Math.min(roughness / (maxSize < 10 ? 3 : 2), 2.5);
  }
  const o: Options = {
    seed: seedOf(el),
    roughness,
    stroke: str(el['strokeColor'], '#1e1e1e'),
    strokeWidth: strokeStyle !== 'solid' ? strokeWidth + 0.5 : strokeWidth,
    fillWeight: strokeWidth / 2,
    hachureGap: strokeWidth * 4,
    disableMultiStroke: strokeStyle !== 'solid',
    preserveVertices: num(el['roughness'], 1) < 2,
    fixedDecimalPlaceDigits: 2,
  };
  const bg = str(el['backgroundColor'], 'transparent');
  if (fill && !isTransparent(bg)) {
    o.fill = bg;
    o.fillStyle = str(el['fillStyle'], 'hachure');
    o.hachureGap = fillGap(o.fillStyle, w, h, o.hachureGap!);
  }
  return o;
}

function dashArray(el: ExcalidrawElement): string | null {
  const sw = num(el['strokeWidth'], 2);
  const style = el['strokeStyle'];
  if (style === 'dashed') return `8 ${n2(8 + sw)}`;
  if (style === 'dotted') return `1.5 ${n2(6 + sw)}`;
  return null;
}

/** A rough drawable as `<path>`s; dashes apply to outlines only, never to hachure. */
function drawableToSvg(d: Drawable, dash: string | null): string {
  const o = d.options;
  let out = '';
  for (const set of d.sets) {
    const path = roughGenerator().opsToPath(set, 2);
    if (set.type === 'path') {
      out += `<path d="${path}" stroke="${escapeXml(o.stroke)}" stroke-width="${n2(o.strokeWidth)}" fill="none"${
        dash ? ` stroke-dasharray="${dash}"` : ''
      }/>`;
    } else if (set.type === 'fillPath') {
      out += `<path d="${path}" stroke="none" fill="${escapeXml(o.fill ?? 'none')}"/>`;
    } else {
      // fillSketch: hachure / cross-hatch / zigzag lines in the fill colour
      const weight = o.fillWeight < 0 ? o.strokeWidth / 2 : o.fillWeight;
      out += `<path d="${path}" stroke="${escapeXml(o.fill ?? 'none')}" stroke-width="${n2(weight)}" fill="none"/>`;
    }
  }
  return out;
}

// ---------------------------------------------------------------------------
// shapes

function cornerRadius(size: number, el: ExcalidrawElement): number {
  const r = el['roundness'] as { type?: unknown; value?: unknown } | null | undefined;
  if (!r || typeof r !== 'object') return 0;
  if (r.type === 3) {
    const fixed = num(r.value, 32);
    return size <= fixed / 0.25 ? size * 0.25 : fixed;
  }
  return size * 0.25;
}

function arrowhead(kind: string, tip: Pt, from: Pt, el: ExcalidrawElement, opts: Options): Drawable[] {
  const dx = tip[0] - from[0];
  const dy = tip[1] - from[1];
  const len = Math.hypot(dx, dy);
  if (len === 0) return [];
  const ux = dx / len;
  const uy = dy / len;
  const base = kind === 'arrow' || kind === 'triangle' || kind === 'triangle_outline' ? 30 : kind === 'bar' ? 15 : 15;
  const size = Math.min(base, len / 2);
  const wing = (deg: number): Pt => {
    const a = (deg * Math.PI) / 180;
    const cos = Math.cos(a);
    const sin = Math.sin(a);
    return [tip[0] - size * (ux * cos - uy * sin), tip[1] - size * (uy * cos + ux * sin)];
  };
  const stroke = str(el['strokeColor'], '#1e1e1e');
  const solid: Options = { ...opts, fill: stroke, fillStyle: 'solid' };
  const hollow: Options = { ...opts, fill: undefined };
  switch (kind) {
    case 'bar': {
      const half = size / 2;
      return [roughGenerator().line(tip[0] - uy * half, tip[1] + ux * half, tip[0] + uy * half, tip[1] - ux * half, hollow)];
    }
    case 'dot':
    case 'circle':
    case 'circle_outline': {
      const c: Pt = [tip[0] - (ux * size) / 2, tip[1] - (uy * size) / 2];
      return [roughGenerator().circle(c[0], c[1], size, kind === 'circle_outline' ? hollow : solid)];
    }
    case 'triangle':
    case 'triangle_outline':
      return [roughGenerator().polygon([tip, wing(25), wing(-25)], kind === 'triangle' ? solid : hollow)];
    case 'diamond':
    case 'diamond_outline': {
      const back: Pt = [tip[0] - ux * size, tip[1] - uy * size];
      const mid: Pt = [tip[0] - (ux * size) / 2, tip[1] - (uy * size) / 2];
      const side: Pt = [-uy * (size / 4), ux * (size / 4)];
      return [
        roughGenerator().polygon(
          [tip, [mid[0] + side[0], mid[1] + side[1]], back, [mid[0] - side[0], mid[1] - side[1]]],
          kind === 'diamond' ? solid : hollow,
        ),
      ];
    }
    default: {
      const a = wing(20);
      const b = wing(-20);
      return [roughGenerator().line(tip[0], tip[1], a[0], a[1], hollow), roughGenerator().line(tip[0], tip[1], b[0], b[1], hollow)];
    }
  }
}

/** The last point before `points[i]` that differs from it (for a direction). */
function neighbour(points: Pt[], i: number, step: 1 | -1): Pt | null {
  const p = points[i]!;
  for (let j = i + step; j >= 0 && j < points.length; j += step) {
    const q = points[j]!;
    if (q[0] !== p[0] || q[1] !== p[1]) return q;
  }
  return null;
}

function freedrawPath(points: Pt[]): string {
  if (points.length === 1) {
    const [x, y] = points[0]!;
    return `M${n2(x)} ${n2(y)}L${n2(x + 0.01)} ${n2(y)}`;
  }
  let d = `M${n2(points[0]![0])} ${n2(points[0]![1])}`;
  for (let i = 1; i < points.length - 1; i++) {
    const [x, y] = points[i]!;
    const [nx, ny] = points[i + 1]!;
    d += `Q${n2(x)} ${n2(y)} ${n2((x + nx) / 2)} ${n2((y + ny) / 2)}`;
  }
  const last = points[points.length - 1]!;
  return `${d}L${n2(last[0])} ${n2(last[1])}`;
}

const FONT_STACKS: Record<number, string> = {
  1: "Virgil, Excalifont, 'Comic Sans MS', 'Segoe Print', cursive",
  2: 'Helvetica, Arial, Liberation Sans, DejaVu Sans, sans-serif',
  3: "Cascadia, 'Cascadia Code', Consolas, 'DejaVu Sans Mono', monospace",
  4: 'sans-serif',
  5: "Excalifont, Virgil, 'Comic Sans MS', cursive",
  6: 'Nunito, Helvetica, Arial, DejaVu Sans, sans-serif',
  7: "'Lilita One', Impact, 'DejaVu Sans', sans-serif",
  8: "'Comic Shanns', 'Cascadia Code', 'DejaVu Sans Mono', monospace",
  9: "'Liberation Sans', Arial, 'DejaVu Sans', sans-serif",
  10: "Assistant, Arial, 'DejaVu Sans', sans-serif",
};

function textLines(el: ExcalidrawElement): string[] {
  const t = [el['text'], el['originalText']].find((v) => typeof v === 'string');
  return (typeof t === 'string' ? t : '').replace(/\r\n?/g, '\n').split('\n');
}

function textSize(el: ExcalidrawElement): { w: number; h: number } {
  const fontSize = num(el['fontSize'], 20);
  const lines = textLines(el);
  const lh = fontSize * num(el['lineHeight'], 1.25);
  // A loop, not Math.max(...): a text of a few hundred thousand lines would overflow the stack as arguments.
  const w = num(el['width'], 0) || lines.reduce((m, l) => Math.max(m, l.length), 0) * fontSize * 0.6;
  const h = num(el['height'], 0) || lines.length * lh;
  return { w: Math.abs(w), h: Math.abs(h) };
}

function textSvg(el: ExcalidrawElement, w: number): string {
  const fontSize = num(el['fontSize'], 20);
  const lh = fontSize * num(el['lineHeight'], 1.25);
  const family = FONT_STACKS[num(el['fontFamily'], 1)] ?? FONT_STACKS[1]!;
  const align = el['textAlign'];
  const [x, anchor] = align === 'center' ? [w / 2, 'middle'] : align === 'right' ? [w, 'end'] : [0, 'start'];
  const color = escapeXml(str(el['strokeColor'], '#1e1e1e'));
  let out = '';
  textLines(el).forEach((line, i) => {
    const y = i * lh + (lh - fontSize) / 2 + fontSize * 0.8;
    out += `<text x="${n2(x)}" y="${n2(y)}" font-family="${escapeXml(family)}" font-size="${n2(fontSize)}" fill="${color}" text-anchor="${anchor}" xml:space="preserve">${escapeXml(line)}</text>`;
  });
  return out;
}

// ---------------------------------------------------------------------------
// one element

interface Rendered {
  svg: string;
  /** Axis-aligned bounds in scene coordinates, stroke included. */
  bounds: [number, number, number, number];
}

const PLACEHOLDER_TYPES = new Set(['image', 'embeddable', 'iframe']);
const FRAME_TYPES = new Set(['frame', 'magicframe']);
/** Element types renderSvg draws; anything else is skipped. */
export const RENDERED_TYPES = [
  'rectangle',
  'ellipse',
  'diamond',
  'line',
  'arrow',
  'freedraw',
  'text',
  ...PLACEHOLDER_TYPES,
  ...FRAME_TYPES,
] as const;

function renderElement(el: ExcalidrawElement): Rendered | null {
  const type = el.type ?? '';
  const x = num(el['x']);
  const y = num(el['y']);
  const strokeWidth = num(el['strokeWidth'], 2);
  let w = extent(el['width']);
  let h = extent(el['height']);
  let local: [number, number, number, number] = [0, 0, w, h];
  let body = '';
  const dash = dashArray(el);

  if (type === 'rectangle') {
    const opts = roughOptions(el, true);
    const r = cornerRadius(Math.min(w, h), el);
    const d =
      r > 0
        ? roughGenerator().path(
            `M ${r} 0 L ${w - r} 0 Q ${w} 0, ${w} ${r} L ${w} ${h - r} Q ${w} ${h}, ${w - r} ${h} L ${r} ${h} Q 0 ${h}, 0 ${h - r} L 0 ${r} Q 0 0, ${r} 0`,
            opts,
          )
        : roughGenerator().rectangle(0, 0, w, h, opts);
    body = drawableToSvg(d, dash);
  } else if (type === 'ellipse') {
    body = drawableToSvg(roughGenerator().ellipse(w / 2, h / 2, w, h, { ...roughOptions(el, true), curveFitting: 1 }), dash);
  } else if (type === 'diamond') {
    const pts: Pt[] = [
      [w / 2, 0],
      [w, h / 2],
      [w / 2, h],
      [0, h / 2],
    ];
    body = drawableToSvg(roughGenerator().polygon(pts, roughOptions(el, true)), dash);
  } else if (type === 'line' || type === 'arrow') {
    const pts = pointsOf(el);
    if (pts.length === 0) return null;
    const closed =
      type === 'line' && pts.length > 2 && (el['polygon'] === true || Math.hypot(pts[0]![0] - pts.at(-1)![0], pts[0]![1] - pts.at(-1)![1]) < 1);
    const xs = pts.map((p) => p[0]);
    const ys = pts.map((p) => p[1]);
    const box = { w: Math.min(Math.max(...xs) - Math.min(...xs), SHAPE_MAX), h: Math.min(Math.max(...ys) - Math.min(...ys), SHAPE_MAX) };
    const opts = roughOptions(el, closed, box);
    const rounded = el['roundness'] !== null && el['roundness'] !== undefined && pts.length > 2;
    let d: Drawable;
    if (pts.length === 1) d = roughGenerator().linearPath([pts[0]!, pts[0]!], opts);
    else if (closed) d = roughGenerator().polygon(pts, opts);
    else if (rounded) d = roughGenerator().curve(pts, opts);
    else d = roughGenerator().linearPath(pts, opts);
    body = drawableToSvg(d, dash);
    if (type === 'arrow' && pts.length > 1) {
      const headOpts: Options = { ...roughOptions(el, false), disableMultiStroke: true };
      const endHead = el['endArrowhead'] === undefined ? 'arrow' : el['endArrowhead'];
      const startHead = el['startArrowhead'];
      if (typeof endHead === 'string') {
        const from = neighbour(pts, pts.length - 1, -1);
        if (from) for (const a of arrowhead(endHead, pts.at(-1)!, from, el, headOpts)) body += drawableToSvg(a, null);
      }
      if (typeof startHead === 'string') {
        const from = neighbour(pts, 0, 1);
        if (from) for (const a of arrowhead(startHead, pts[0]!, from, el, headOpts)) body += drawableToSvg(a, null);
      }
    }
    const head = type === 'arrow' ? 16 : 0;
    local = [Math.min(...xs) - head, Math.min(...ys) - head, Math.max(...xs) + head, Math.max(...ys) + head];
    w = Math.max(...xs) - Math.min(...xs);
    h = Math.max(...ys) - Math.min(...ys);
  } else if (type === 'freedraw') {
    const pts = pointsOf(el);
    if (pts.length === 0) return null;
    const color = escapeXml(str(el['strokeColor'], '#1e1e1e'));
    const width = Math.max(1, strokeWidth * 2);
    body = `<path d="${freedrawPath(pts)}" stroke="${color}" stroke-width="${n2(width)}" fill="none" stroke-linecap="round" stroke-linejoin="round"/>`;
    const xs = pts.map((p) => p[0]);
    const ys = pts.map((p) => p[1]);
    local = [Math.min(...xs), Math.min(...ys), Math.max(...xs), Math.max(...ys)];
  } else if (type === 'text') {
    ({ w, h } = textSize(el));
    local = [0, 0, w, h];
    body = textSvg(el, w);
  } else if (PLACEHOLDER_TYPES.has(type)) {
    // Linked content (images, embeds) is not part of the scene JSON: a placeholder box.
    body = `<rect x="0" y="0" width="${n2(w)}" height="${n2(h)}" fill="#f1f3f5" stroke="#adb5bd" stroke-width="1" stroke-dasharray="6 4"/>`;
  } else if (FRAME_TYPES.has(type)) {
    body = `<rect x="0" y="0" width="${n2(w)}" height="${n2(h)}" rx="8" fill="none" stroke="#bbbbbb" stroke-width="1"/>`;
    const name = el['name'];
    if (typeof name === 'string' && name !== '') {
      body += `<text x="0" y="-6" font-family="${escapeXml(FONT_STACKS[2]!)}" font-size="14" fill="#868e96" xml:space="preserve">${escapeXml(name)}</text>`;
      local = [0, -22, w, h];
    }
  } else {
    return null;
  }

  // Rotation about the element's centre, as Excalidraw does (angle in radians, clockwise).
  const angle = num(el['angle']);
  const cx = (local[0] + local[2]) / 2;
  const cy = (local[1] + local[3]) / 2;
  const centre: Pt = type === 'line' || type === 'arrow' || type === 'freedraw' ? [cx, cy] : [w / 2, h / 2];
  const pad = strokeWidth / 2 + num(el['roughness'], 1) * 2 + 1;
  const corners: Pt[] = [
    [local[0] - pad, local[1] - pad],
    [local[2] + pad, local[1] - pad],
    [local[2] + pad, local[3] + pad],
    [local[0] - pad, local[3] + pad],
  ];
  const cos = Math.cos(angle);
  const sin = Math.sin(angle);
  const world = corners.map(([px, py]): Pt => {
    const rx = px - centre[0];
    const ry = py - centre[1];
    return [x + centre[0] + rx * cos - ry * sin, y + centre[1] + rx * sin + ry * cos];
  });
  const bounds: Rendered['bounds'] = [
    Math.min(...world.map((p) => p[0])),
    Math.min(...world.map((p) => p[1])),
    Math.max(...world.map((p) => p[0])),
    Math.max(...world.map((p) => p[1])),
  ];

  let transform = `translate(${n2(x)} ${n2(y)})`;
  if (angle !== 0) transform += ` rotate(${n2((angle * 180) / Math.PI)} ${n2(centre[0])} ${n2(centre[1])})`;
  const opacity = Math.min(100, Math.max(0, num(el['opacity'], 100)));
  const op = opacity < 100 ? ` opacity="${n2(opacity / 100)}"` : '';
  const svg = `<g data-element-id="${escapeXml(el.id)}" data-type="${escapeXml(type)}" transform="${transform}"${op}>${body}</g>`;
  return { svg, bounds };
}

// ---------------------------------------------------------------------------
// public API

export interface SvgSize {
  width: number;
  height: number;
}

/** Renders `scene` and reports the SVG's pixel size (integers). */
export function renderSvgWithSize(scene: unknown): { svg: string; size: SvgSize } {
  const s: ExcalidrawScene = normalizeScene(scene);
  const parts: string[] = [];
  let minX = Infinity;
  let minY = Infinity;
  let maxX = -Infinity;
  let maxY = -Infinity;
  for (const el of s.elements) {
    if (el.isDeleted === true) continue;
    const r = renderElement(el);
    if (!r) continue;
    parts.push(r.svg);
    minX = Math.min(minX, r.bounds[0]);
    minY = Math.min(minY, r.bounds[1]);
    maxX = Math.max(maxX, r.bounds[2]);
    maxY = Math.max(maxY, r.bounds[3]);
  }
  if (parts.length === 0) {
    minX = minY = maxX = maxY = 0;
  }
  const vx = Math.floor(minX - EXPORT_PADDING);
  const vy = Math.floor(minY - EXPORT_PADDING);
  const width = Math.max(1, Math.ceil(maxX + EXPORT_PADDING) - vx);
  const height = Math.max(1, Math.ceil(maxY + EXPORT_PADDING) - vy);

  const app = s.appState;
  const bgColor = str(app['viewBackgroundColor'], '#ffffff');
  const background =
    app['exportBackground'] === false || isTransparent(bgColor)
      ? ''
      : `<rect x="${vx}" y="${vy}" width="${width}" height="${height}" fill="${escapeXml(bgColor)}"/>`;
  const svg =
    `<svg xmlns="http://www.w3.org/2000/svg" version="1.1" width="${width}" height="${height}" viewBox="${vx} ${vy} ${width} ${height}">` +
    `<!-- exported by Quire from an Excalidraw scene -->` +
    background +
    parts.join('') +
    `</svg>\n`;
  return { svg, size: { width, height } };
}

/**
 * The scene as a standalone SVG document: one `<g data-element-id>` per drawn
 * element (deleted elements and unknown types skipped), in scene order, a
 * viewBox fitted to the elements plus EXPORT_PADDING, and a background rect in
 * `appState.viewBackgroundColor` unless `appState.exportBackground` is false.
 * Deterministic: the same scene gives the same string.
 */
export function renderSvg(scene: unknown): string {
  return renderSvgWithSize(scene).svg;
}

export interface RenderPngOptions {
  /** Pixels per scene unit; default 1, at most MAX_PNG_SCALE. */
  scale?: number;
}

/**
 * The scene as PNG bytes (resvg, system fonts). The image is
 * `round(svgWidth * scale)` × `round(svgHeight * scale)` pixels; when that
 * would exceed MAX_PNG_SIDE on either side or MAX_PNG_PIXELS in all, the
 * scale is lowered to fit.
 */
export function renderPng(scene: unknown, options: RenderPngOptions = {}): Buffer {
  const scale = options.scale ?? 1;
  if (typeof scale !== 'number' || !Number.isFinite(scale) || scale <= 0 || scale > MAX_PNG_SCALE) {
    throw new CanvasInputError('scale', `scale must be a number > 0 and <= ${MAX_PNG_SCALE}, got ${String(scale)}`);
  }
  const { svg, size } = renderSvgWithSize(scene);
  let fit = Math.min(
    scale,
    MAX_PNG_SIDE / size.width,
    MAX_PNG_SIDE / size.height,
    Math.sqrt(MAX_PNG_PIXELS / (size.width * size.height)),
  );
  // resvg rounds each side; step down until the rounded image fits too
  while (
    fit < scale &&
    (Math.round(size.width * fit) > MAX_PNG_SIDE ||
      Math.round(size.height * fit) > MAX_PNG_SIDE ||
      Math.round(size.width * fit) * Math.round(size.height * fit) > MAX_PNG_PIXELS)
  ) {
    fit *= 0.999;
  }
  const { Resvg } = require('@resvg/resvg-js') as typeof import('@resvg/resvg-js');
  const resvg = new Resvg(svg, {
    fitTo: fit === 1 ? { mode: 'original' } : { mode: 'zoom', value: fit },
    font: { loadSystemFonts: true, defaultFontFamily: 'DejaVu Sans' },
  });
  return resvg.render().asPng();
}

export interface Chunk {
  bytes: Buffer;
  offset: number;
  total: number;
  next_offset: number | null;
}

/**
 * One slice of an export for the `offset` / `limit` query parameters.
 * `offset` must be an integer >= 0 and inside the bytes (0 is allowed for an
 * empty export); `limit` an integer 1..524288 (default 524288).
 * `next_offset` is null on the last chunk. The returned bytes are a view of
 * the input, not a copy.
 */
export function chunk(bytes: Uint8Array, offset: number = 0, limit: number = MAX_CHUNK): Chunk {
  if (!(bytes instanceof Uint8Array)) throw new CanvasInputError('bytes', 'bytes must be a Buffer or Uint8Array');
  if (typeof offset !== 'number' || !Number.isSafeInteger(offset) || offset < 0) {
    throw new CanvasInputError('offset', `offset must be an integer >= 0, got ${String(offset)}`);
  }
  if (typeof limit !== 'number' || !Number.isSafeInteger(limit) || limit < 1 || limit > MAX_CHUNK) {
    throw new CanvasInputError('limit', `limit must be an integer from 1 to ${MAX_CHUNK}, got ${String(limit)}`);
  }
  const total = bytes.length;
  if (offset >= total && !(offset === 0 && total === 0)) {
    throw new CanvasInputError(
      'offset',
      `offset ${offset} is past the end: the export has ${total} bytes, so offsets run from 0 to ${Math.max(0, total - 1)}`,
    );
  }
  const end = Math.min(total, offset + limit);
  const slice = Buffer.from(bytes.buffer, bytes.byteOffset + offset, end - offset);
  return { bytes: slice, offset, total, next_offset: end < total ? end : null };
}
