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
