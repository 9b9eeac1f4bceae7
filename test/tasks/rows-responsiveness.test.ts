/**
 * One heavy `.base` rows request over a large Home must not stall the
 * server: while it runs, other requests are answered (docs/bases.md
 * "Responsiveness"). A Home of 5,000 notes written on disk, a hand-written
 * base whose formula walks a few hundred list elements per row.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInstance, type TestInstance } from '../helpers/instance.js';
import { eventually } from '../helpers/wait.js';

const N = 5000;
/** "Does not hang" bound for a tiny request sent while the heavy one runs; unpaced, they wait for all of it (seconds). */
const ANSWER_WITHIN_MS = 250;

let inst: TestInstance;
let user: { id: string; token: string };
let home: string;

const api = (method: string, route: string) => inst.api(method, route, { token: user.token });

const HEAVY_BASE = `# Written by hand: every row's filter runs a formula over ~300 characters.
filters:
  and:
    - 'file.ext == "md"'
    - 'formula.letters.length > 0'
formulas:
  letters: 'file.basename.repeat(40).split("").map(value.upper()).filter(value != "N").join("")'
views:
  - type: table
    name: Top rated
    filters: 'rating >= 50'
    order: [file.basename, rating]
    sort:
      - property: rating
        direction: DESC
      - property: file.name
        direction: ASC
    summaries:
      rating: Average
`;

beforeAll(async () => {
  inst = await startInstance();
  user = await inst.user('rhea', 'member');
  home = path.join(inst.dataDir, 'homes', 'rhea');
  for (let i = 0; i < N; i++) {
    const dir = path.join(home, `Box ${i % 20}`);
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, `Note ${i}.md`), `---\nrating: ${i % 100}\n---\n# Note ${i}\n\n- [ ] Task ${i}\n`);
  }
  fs.mkdirSync(path.join(home, 'Views'), { recursive: true });
  fs.writeFileSync(path.join(home, 'Views', 'Heavy.base'), HEAVY_BASE);
  // Wait until the index has every note (the tasks list counts them).
  await eventually(async () => {
    const r = await api('GET', `/api/v1/notes/tasks?cursor=${N - 1}&limit=1`);
    return r.status === 200 && r.body.items.length === 1 && r.body.next_cursor === null;
  }, 120_000, 250);
}, 180_000);
afterAll(() => inst.close());

describe('a heavy rows request over a large Home', () => {
  it('lets other requests through while it runs, and still answers the right rows', async () => {
    const views = await api('GET', '/api/v1/notes/tasks/views');
    const id = views.body.items.find((v: { path: string }) => v.path === 'Views/Heavy.base').id;

    let done = false;
    const heavy = api('GET', `/api/v1/notes/tasks/views/${id}/rows?limit=10`).finally(() => (done = true));
    const slowest: number[] = [];
    // Let the heavy request start evaluating before probing.
    await new Promise((r) => setTimeout(r, 50));
    while (!done) {
      const t0 = performance.now();
      const info = await fetch(inst.url + '/api/v1/system/info');
      await info.text();
      expect(info.status).toBe(200);
      slowest.push(performance.now() - t0);
    }
    const r = await heavy;
    expect(r.status, r.text).toBe(200);
    // Several answers came in while it ran, none of them held up behind it.
    expect(slowest.length).toBeGreaterThan(1);
    expect(Math.max(...slowest)).toBeLessThan(ANSWER_WITHIN_MS);

    // Ratings 50..99: half the notes; rating 99 first, by name as people read it.
    expect(r.body.total).toBe(N / 2);
    expect(r.body.items.map((i: { values: Record<string, unknown> }) => i.values['file.basename'])).toEqual(
      Array.from({ length: 10 }, (_, k) => `Note ${99 + 100 * k}`),
    );
    expect(r.body.items.every((i: { values: Record<string, unknown> }) => i.values.rating === 99)).toBe(true);
    expect(r.body.summaries).toEqual({ rating: 74.5 });
    expect(r.body.next_cursor).toBe(10);
  }, 60_000);

  it('pages the tasks of the whole Home by path then line, counting the notes before the page', async () => {
    // Paths sort as text: "Box 0/Note 0.md", "Box 0/Note 100.md", ... ("Box 0" holds i ≡ 0 mod 20).
    const byPath = Array.from({ length: N }, (_, i) => `Box ${i % 20}/Note ${i}.md`).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    const r = await api('GET', '/api/v1/notes/tasks?cursor=2500&limit=3');
    expect(r.status).toBe(200);
    expect(r.body.items.map((t: { path: string }) => t.path)).toEqual(byPath.slice(2500, 2503));
    expect(r.body.items[0]).toMatchObject({ kind: 'inline', line: 6, text: `Task ${byPath[2500]!.match(/Note (\d+)/)![1]}` });
    expect(r.body.next_cursor).toBe(2503);
    const last = await api('GET', `/api/v1/notes/tasks?cursor=${N - 2}&limit=5`);
    expect(last.body.items.map((t: { path: string }) => t.path)).toEqual(byPath.slice(N - 2));
    expect(last.body.next_cursor).toBeNull();
  });

  it('refuses, at its first row, a base whose filters need too much work for one row', async () => {
    const statement = `'"x".repeat(20000).split("").map(value + value).length > 0'`;
    fs.writeFileSync(path.join(home, 'Views', 'Hostile.base'), `filters:\n  and:\n${`    - ${statement}\n`.repeat(40)}views:\n  - name: All\n`);
    const id = await eventually(async () => (await api('GET', '/api/v1/notes/tasks/views')).body.items.find((v: { path: string }) => v.path === 'Views/Hostile.base')?.id, 10_000);
    const r = await api('GET', `/api/v1/notes/tasks/views/${id}/rows`);
    expect(r.status).toBe(400);
    expect(r.body.error.details.reason).toBe('invalid_expression');
    expect(r.body.error.message).toMatch(/row needs more than 200000 steps/);
  });

  it('does not read a .base file larger than 64 KiB, and refuses to write one', async () => {
    const filler = Array.from({ length: 2000 }, (_, i) => `    - 'file.name != "n${i}-${'x'.repeat(20)}"'`).join('\n');
    fs.writeFileSync(path.join(home, 'Views', 'Huge.base'), `filters:\n  and:\n${filler}\nviews:\n  - name: All\n`);
    const huge = await eventually(async () => (await api('GET', '/api/v1/notes/tasks/views')).body.items.find((v: { path: string }) => v.path === 'Views/Huge.base'), 10_000);
    expect(huge).toMatchObject({ base: null, rows: null });
    expect(huge.error).toMatch(/larger than 64 KiB/);
    const r = await api('GET', `/api/v1/notes/tasks/views/${huge.id}/rows`);
    expect(r.status).toBe(409);
    expect(r.body.error.details.reason).toBe('invalid_base');

    const created = await inst.api('POST', '/api/v1/notes/tasks/views', {
      token: user.token,
      body: { view: { name: 'Too big', filters: { and: Array.from({ length: 2000 }, (_, i) => `file.name != "n${i}-${'x'.repeat(20)}"`) } } },
    });
    expect(created.status, created.text).toBe(400);
    expect(created.body.error.message).toMatch(/larger than 64 KiB/);
    expect(fs.existsSync(path.join(home, 'Views', 'Too big.base'))).toBe(false);
  });
});
