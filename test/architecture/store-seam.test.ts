/**
 * The sidecar store is reached through named operations only (docs/store.md):
 * the table modules in src/store/ and an area's own `*-store.ts` module are
 * the only code that opens a transaction or reads the raw snapshot. Anything
 * else that does would tie that area to lowdb's arrays and bypass the seam a
 * PostgreSQL store plugs into.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const src = path.resolve(import.meta.dirname, '../../src');
/** `store.transact(` or `store.snapshot(`, however the store is reached (`ctx.services.store`, `this.store`). */
const RAW_ACCESS = /\bstore\s*\.\s*(transact|snapshot)\s*\(/;

const allowed = (rel: string) => rel.startsWith('store/') || rel.endsWith('-store.ts');

function offenders(): string[] {
  const out: string[] = [];
  for (const entry of fs.readdirSync(src, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !entry.name.endsWith('.ts')) continue;
    const file = path.join(entry.parentPath, entry.name);
    const rel = path.relative(src, file).split(path.sep).join('/');
    if (allowed(rel)) continue;
    fs.readFileSync(file, 'utf8')
      .split('\n')
      .forEach((line, i) => {
        if (RAW_ACCESS.test(line)) out.push(`src/${rel}:${i + 1}: ${line.trim()}`);
      });
  }
  return out;
}

describe('the store seam', () => {
  it('no code outside the store modules opens a transaction or reads the raw snapshot', () => {
    expect(offenders(), 'use the named operations of src/store/*.ts (or add one there) instead').toEqual([]);
  });

  it('the check sees the ways areas reach the store', () => {
    expect(RAW_ACCESS.test('const x = ctx.services.store.snapshot().users;')).toBe(true);
    expect(RAW_ACCESS.test('await this.store.transact((d) => d);')).toBe(true);
    expect(RAW_ACCESS.test('this.doc.transact(() => 1);')).toBe(false);
  });
});
