/**
 * Element merge for `canvas_elements_event` (docs/canvas.md, "Merge rule").
 *
 * For every id the winner is the element with the higher `version`; equal
 * versions keep the lower `versionNonce` (Excalidraw's own rule); an exact tie
 * on both keeps the element whose canonical JSON sorts first, so the choice
 * never depends on argument order. Deleted elements (`isDeleted: true`) are
 * ordinary elements here: they win or lose by the same rule and are never
 * dropped, so a deletion reaches every client as a tombstone.
 *
 * Order: when every resulting element carries Excalidraw's fractional
 * `index` (a string), the result is sorted by `index`, then by `id` — a
 * function of the set alone, so merge is commutative as a full array.
 * Otherwise (older scenes without `index`) the result keeps `current`'s order
 * and appends new ids in `incoming` order; that is commutative as a set of
 * elements and associative as an array.
 *
 * Pure: inputs are validated and never mutated; the result holds the winning
 * element objects themselves (no copies).
 */
import { CanvasInputError, type ExcalidrawElement } from './types.js';

function describe(v: unknown): string {
  if (v === undefined) return 'missing';
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'string') return JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}…` : v);
  if (typeof v === 'object') return 'an object';
  return String(v);
}

/** Most elements in one array: a request's, a stored scene's, and a merge's result. */
export const ELEMENTS_MAX = 20_000;
/**
 * Deepest nesting inside one element, `appState` or `files` (an element's own
 * fields are depth 1; Excalidraw's deepest, `points`, is 2). JSON.parse reads
 * any depth, but JSON.stringify recurses: a value nested a few thousand deep
 * overflows the stack when the scene is written or compared.
 */
export const VALUE_MAX_DEPTH = 32;
/** Most points of one line, arrow or freedraw element (a long freedraw stroke has a few thousand). */
export const POINTS_MAX = 10_000;

/** CanvasInputError when `value` nests deeper than VALUE_MAX_DEPTH. Iterative, stops at the first excess. */
export function checkDepth(value: unknown, field: string, index?: number): void {
  const stack: Array<[unknown, number]> = [[value, 0]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    if (depth >= VALUE_MAX_DEPTH) {
      throw new CanvasInputError(field, `${field}${index !== undefined ? `[${index}]` : ''} nests more than ${VALUE_MAX_DEPTH} levels deep`, index, {
        reason: 'too_deep',
        max: VALUE_MAX_DEPTH,
      });
    }
    for (const child of Array.isArray(v) ? v : Object.values(v)) if (child !== null && typeof child === 'object') stack.push([child, depth + 1]);
  }
}

/** CanvasInputError when an array of elements holds more than ELEMENTS_MAX. */
export function checkElementCount(count: number, field: string, what = `${field} holds`): void {
  if (count > ELEMENTS_MAX) {
    throw new CanvasInputError(field, `${what} ${count} elements; the most a canvas may hold is ${ELEMENTS_MAX}`, undefined, {
      reason: 'too_many',
      max: ELEMENTS_MAX,
    });
  }
}

/**
 * Checks that `elements` is an array of `{ id: string (non-empty), version:
 * integer >= 0, versionNonce: integer }` objects, with `isDeleted` a boolean
 * and `index` a string or null when present. Throws CanvasInputError naming
 * `field[i]` and carrying the index.
 */
export function validateElements(elements: unknown, field = 'elements'): asserts elements is ExcalidrawElement[] {
  if (!Array.isArray(elements)) throw new CanvasInputError(field, `${field} must be an array of elements`);
  checkElementCount(elements.length, field);
  elements.forEach((el: unknown, i) => {
    const at = `${field}[${i}]`;
    if (typeof el !== 'object' || el === null || Array.isArray(el)) {
      throw new CanvasInputError(field, `${at} must be an element object, got ${describe(el)}`, i);
    }
    const e = el as Record<string, unknown>;
    if (typeof e['id'] !== 'string' || e['id'] === '') {
      throw new CanvasInputError(field, `${at}.id must be a non-empty string, got ${describe(e['id'])}`, i);
    }
    const version = e['version'];
    if (typeof version !== 'number' || !Number.isSafeInteger(version) || version < 0) {
      throw new CanvasInputError(field, `${at}.version must be an integer >= 0, got ${describe(version)}`, i);
    }
    const nonce = e['versionNonce'];
    if (typeof nonce !== 'number' || !Number.isSafeInteger(nonce)) {
      throw new CanvasInputError(field, `${at}.versionNonce must be an integer, got ${describe(nonce)}`, i);
    }
    if (e['isDeleted'] !== undefined && typeof e['isDeleted'] !== 'boolean') {
      throw new CanvasInputError(field, `${at}.isDeleted must be a boolean when present, got ${describe(e['isDeleted'])}`, i);
    }
    if (e['index'] !== undefined && e['index'] !== null && typeof e['index'] !== 'string') {
      throw new CanvasInputError(field, `${at}.index must be a string or null when present, got ${describe(e['index'])}`, i);
    }
    const points = e['points'];
    if (Array.isArray(points) && points.length > POINTS_MAX) {
      throw new CanvasInputError(field, `${at}.points holds ${points.length} points; the most is ${POINTS_MAX}`, i, { reason: 'too_many', max: POINTS_MAX });
    }
    checkDepth(el, field, i);
  });
}

const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** JSON with object keys sorted at every level: equal iff the two values are equal as JSON. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => {
    if (v === null || typeof v !== 'object' || Array.isArray(v)) return v;
    const sorted: Record<string, unknown> = {};
    for (const k of Object.keys(v).sort(cmp)) sorted[k] = (v as Record<string, unknown>)[k];
    return sorted;
  });
}

/**
 * The winner of two versions of the same element. Symmetric: pick(a, b) === pick(b, a) up to JSON equality.
 * `canonical` may cache each element's canonical JSON: a merge compares one element with every tie.
 */
export function pickWinner(a: ExcalidrawElement, b: ExcalidrawElement, canonical: (el: ExcalidrawElement) => string = canonicalJson): ExcalidrawElement {
  if (a.version !== b.version) return a.version > b.version ? a : b;
  if (a.versionNonce !== b.versionNonce) return a.versionNonce < b.versionNonce ? a : b;
  if (a === b) return a;
  return cmp(canonical(a), canonical(b)) <= 0 ? a : b;
}

/**
 * Merges the elements a client sends (`incoming`, the request's `elements`)
 * into the stored ones (`current`). Both are validated; errors name
 * `current[i]` or `elements[i]`.
 */
export function mergeElements(current: unknown, incoming: unknown): ExcalidrawElement[] {
  validateElements(current, 'current');
  validateElements(incoming, 'elements');
  const winners = new Map<string, ExcalidrawElement>();
  const order: string[] = [];
  // Each element is serialised at most once: a large element tied with many copies would otherwise be serialised once per copy.
  const seen = new Map<ExcalidrawElement, string>();
  const canonical = (el: ExcalidrawElement): string => {
    let json = seen.get(el);
    if (json === undefined) seen.set(el, (json = canonicalJson(el)));
    return json;
  };
  for (const el of [...current, ...incoming]) {
    const prev = winners.get(el.id);
    if (prev === undefined) {
      winners.set(el.id, el);
      order.push(el.id);
    } else {
      winners.set(el.id, pickWinner(prev, el, canonical));
    }
  }
  checkElementCount(order.length, 'elements', 'merging these elements would give the canvas');
  const result = order.map((id) => winners.get(id)!);
  if (result.every((el) => typeof el.index === 'string')) {
    result.sort((a, b) => cmp(a.index as string, b.index as string) || cmp(a.id, b.id));
  }
  return result;
}
