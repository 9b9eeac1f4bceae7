import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { toOutcome } from '../../src/actions/reply.js';
import { CACHED_MIN_ITEMS } from '../../src/notes/answer-cache.js';
import type { Scope } from '../../src/notes/access.js';
import { backlinksOf } from '../../src/notes/notes.js';
import { addNote, homeWith } from '../index/helpers.js';

/** A hub with `n` notes linking to it (in two folders), plus a note with one backlink. */
function hub(n: number) {
  const files: Array<[string, string]> = [['a/Hub.md', '# Hub\n'], ['a/Lone.md', '# Lone\n']];
  for (let i = 0; i < n; i++) files.push([`${i % 2 ? 'a' : 'b'}/n${i}.md`, `# Source ${i}\nSee [[Hub]] and [[Hub#Top|the top]].\n`]);
  files.push(['b/only.md', '[[Lone]]\n']);
  return homeWith(files);
}
// The index is built in memory; the prefix check resolves paths under the Home's root, an empty folder here.
const root = fs.mkdtempSync(path.join(os.tmpdir(), 'quire-answer-cache-'));
const scopeOf = (index: ReturnType<typeof hub>, prefix: string | null = null) =>
  ({ index, prefix, quotaBytes: 0, vault: { home: { root } } }) as unknown as Scope;
const answer = (scope: Scope, path: string) => toOutcome(backlinksOf(scope, path));

describe('large answers kept until the Home changes', () => {
  it('answers a hub from the same bytes while nothing changes, exactly the JSON of its body', () => {
    const idx = hub(CACHED_MIN_ITEMS + 6);
    const first = answer(scopeOf(idx), 'a/Hub.md');
    expect((first.body as { items: unknown[] }).items).toHaveLength(CACHED_MIN_ITEMS + 6);
    expect(first.json!().toString('utf8')).toBe(JSON.stringify(first.body));
    const again = answer(scopeOf(idx), 'a/Hub.md');
    expect(again.json!()).toBe(first.json!());
    expect(again.body).toBe(first.body);
  });

  it('builds the answer again after any change to the index', () => {
    const idx = hub(CACHED_MIN_ITEMS + 6);
    const before = answer(scopeOf(idx), 'a/Hub.md');
    addNote(idx, 'a/n1.md', '# Renamed source\n[[Hub]]\n');
    const after = answer(scopeOf(idx), 'a/Hub.md');
    expect(after.json!()).not.toBe(before.json!());
    const item = (after.body as { items: Array<{ path: string; title: string; occurrences: unknown[] }> }).items.find((b) => b.path === 'a/n1.md');
    expect(item).toMatchObject({ title: 'Renamed source' });
    expect(item!.occurrences).toHaveLength(1);
    expect(after.json!().toString('utf8')).toBe(JSON.stringify(after.body));
    idx.remove('a/n3.md');
    expect((answer(scopeOf(idx), 'a/Hub.md').body as { items: unknown[] }).items).toHaveLength(CACHED_MIN_ITEMS + 5);
  });

  it('keeps answers apart by Home prefix, and does not keep small ones', () => {
    const idx = hub(CACHED_MIN_ITEMS * 2 + 2);
    const whole = answer(scopeOf(idx), 'a/Hub.md');
    const onlyA = answer(scopeOf(idx, 'a/'), 'a/Hub.md');
    expect((onlyA.body as { items: Array<{ path: string }> }).items.every((b) => b.path.startsWith('a/'))).toBe(true);
    expect((whole.body as { items: unknown[] }).items.length).toBe(CACHED_MIN_ITEMS * 2 + 2);
    expect(answer(scopeOf(idx), 'a/Hub.md').json!()).toBe(whole.json!());
    expect(answer(scopeOf(idx, 'a/'), 'a/Hub.md').json!()).toBe(onlyA.json!());
    const small = answer(scopeOf(idx), 'a/Lone.md');
    expect(small.json).toBeUndefined();
    expect(small.body).toEqual({ items: [{ path: 'b/only.md', id: expect.any(String), title: 'only', occurrences: [expect.objectContaining({ line: 1 })] }], next_cursor: null });
  });
});
