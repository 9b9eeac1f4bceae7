/** notes_list paging: every sort order, both directions, each note exactly once; pages stay stable across changes. */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { noteList } from '../../src/notes/note-list.js';
import { listNotes as listPage } from '../../src/notes/notes.js';

const listNotes = (...args: Parameters<typeof listPage>) => noteList(listPage(...args));
import type { Scope } from '../../src/notes/access.js';
import { Vault } from '../../src/vault/vault.js';
import { tempDir } from '../helpers/instance.js';

let vault: Vault;
let scope: Scope;

beforeAll(async () => {
  const root = tempDir();
  fs.mkdirSync(path.join(root, 'Notes'));
  fs.mkdirSync(path.join(root, 'Other'));
  for (let i = 0; i < 23; i++) {
    const folder = i % 3 === 0 ? 'Other' : 'Notes';
    fs.writeFileSync(path.join(root, folder, `n${i}.md`), `---\ncreated: 2026-01-${String((i * 7) % 28 + 1).padStart(2, '0')}\n---\n# ${['b', 'A', 'c'][i % 3]} note ${i}\n`);
  }
  vault = new Vault({ root, cacheFile: null, watch: false });
  await vault.ready;
  scope = { vault, index: vault.index, quotaBytes: 0, prefix: null };
});
afterAll(() => vault.close());

function pageAll(q: { sort?: string; recent?: boolean; path?: string }, limit: number): string[] {
  const out: string[] = [];
  let cursor: string | undefined;
  for (let guard = 0; guard < 100; guard++) {
    const page = listNotes(scope, { ...q, limit, cursor });
    out.push(...page.items.map((n) => n.path));
    if (!page.next_cursor) return out;
    cursor = page.next_cursor;
  }
  throw new Error('paging did not end');
}

describe('notes_list paging', () => {
  const cases: Array<[string, { sort?: string; recent?: boolean; path?: string }]> = [
    ['title', { sort: 'title' }],
    ['-title', { sort: '-title' }],
    ['created', { sort: 'created' }],
    ['-created', { sort: '-created' }],
    ['updated', { sort: 'updated' }],
    ['-updated', { sort: '-updated' }],
    ['recent', { recent: true }],
    ['title under Other/', { sort: 'title', path: 'Other/' }],
    ['-title under Notes/', { sort: '-title', path: 'Notes/' }],
  ];
  it.each(cases)('%s: pages of 1, 4 and 50 give the same full list', (_name, q) => {
    const whole = pageAll(q, 500);
    const expectedCount = q.path ? whole.length : 23;
    expect(whole).toHaveLength(expectedCount);
    expect(new Set(whole).size).toBe(whole.length);
    for (const limit of [1, 4, 50]) expect(pageAll(q, limit)).toEqual(whole);
  });

  it('orders titles ignoring case, descending exactly reversed', () => {
    const up = pageAll({ sort: 'title' }, 500);
    expect(pageAll({ sort: '-title' }, 500)).toEqual([...up].reverse());
    const titles = up.map((p) => vault.index.noteByPath(p)!.title.toLowerCase());
    expect([...titles].sort()).toEqual(titles);
  });

  it('keeps a cursor valid when notes before it are added or removed', async () => {
    const first = listNotes(scope, { sort: 'title', limit: 5 });
    const rest = pageAll({ sort: 'title' }, 500).slice(5);
    await vault.home.write('Notes/0000.md', '# 0 first of all\n', { ifNoneMatch: '*' });
    await vault.home.delete(first.items[0]!.path, {});
    const next = listNotes(scope, { sort: 'title', limit: 500, cursor: first.next_cursor! });
    expect(next.items.map((n) => n.path)).toEqual(rest);
  });
});
