/**
 * Opaque list cursors. A cursor carries the sort key of the last item seen
 * (keyset pagination), so pages stay stable while the Home changes: an item
 * added or removed before the cursor never shifts what comes after it.
 */
import { AppError } from './errors.js';

export function encodeCursor(key: unknown[]): string {
  return Buffer.from(JSON.stringify(key), 'utf8').toString('base64url');
}

export function decodeCursor(cursor: string | undefined | null, field = 'query.cursor'): unknown[] | null {
  if (cursor === undefined || cursor === null || cursor === '') return null;
  try {
    const v = JSON.parse(Buffer.from(String(cursor), 'base64url').toString('utf8')) as unknown;
    if (Array.isArray(v)) return v;
  } catch {
    // fall through
  }
  throw new AppError('bad_request', 'cursor is not one this server issued; pass next_cursor back unchanged', {
    details: { field },
  });
}

/** Compares two sort keys element by element (numbers numerically, strings by code point). */
export function compareKeys(a: unknown[], b: unknown[]): number {
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const x = a[i] as string | number | null | undefined;
    const y = b[i] as string | number | null | undefined;
    if (x === y) continue;
    if (x === undefined || x === null) return -1;
    if (y === undefined || y === null) return 1;
    if (typeof x === 'number' && typeof y === 'number') return x - y;
    return String(x) < String(y) ? -1 : 1;
  }
  return 0;
}

/**
 * One page of `items` ordered by `keyOf`, after `cursor`. Returns the spec's
 * list shape. `limit` is clamped to 1..max.
 */
export function pageByKey<T>(
  items: T[],
  keyOf: (item: T) => unknown[],
  opts: { cursor?: string | null; limit?: number; defaultLimit?: number; max?: number; descending?: boolean },
): { items: T[]; next_cursor: string | null } {
  const limit = Math.max(1, Math.min(opts.limit ?? opts.defaultLimit ?? 50, opts.max ?? 500));
  const dir = opts.descending ? -1 : 1;
  const keyed = items.map((item) => ({ item, key: keyOf(item) }));
  keyed.sort((a, b) => dir * compareKeys(a.key, b.key));
  const after = decodeCursor(opts.cursor);
  const start = after ? keyed.findIndex((k) => dir * compareKeys(k.key, after) > 0) : 0;
  const from = start < 0 ? keyed.length : start;
  const page = keyed.slice(from, from + limit);
  const more = from + limit < keyed.length;
  return { items: page.map((k) => k.item), next_cursor: more ? encodeCursor(page[page.length - 1]!.key) : null };
}
