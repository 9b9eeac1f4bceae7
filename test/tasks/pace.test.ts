/**
 * The parts that keep a heavy view from holding the event loop
 * (docs/bases.md "Responsiveness"): the paced sort, the pacer's deadline,
 * and the step allowance of one row.
 */
import { describe, expect, it } from 'vitest';
import { evaluateRows, pacedSort } from '../../src/tasks/base-rows.js';
import { ROW_MAX_STEPS, type Env } from '../../src/tasks/expr.js';
import { Pacer } from '../../src/tasks/pace.js';

const NOW = Date.UTC(2026, 10, 25);

/** A pacer whose slices are always over: it pauses at every check. */
const eager = () => new Pacer('The test', 60_000, 0);

describe('pacedSort', () => {
  const byKey = (a: { k: number }, b: { k: number }) => a.k - b.k;
  it.each([0, 1, 7, 1024, 1025, 5000, 20_000])('sorts %i items stably, as the built-in sort does', async (n) => {
    const items = Array.from({ length: n }, (_, i) => ({ k: (i * 7919) % 97, i }));
    const sorted = await pacedSort(items, byKey, eager());
    expect(sorted).toEqual(items.slice().sort(byKey));
    expect(items[0]?.i ?? 0).toBe(0); // the input is left as it was
  });

  it('lets other callbacks run while it sorts many items', async () => {
    let ran = false;
    setImmediate(() => (ran = true));
    const items = Array.from({ length: 5000 }, (_, i) => (i * 31) % 5000);
    const sorted = await pacedSort(items, (a, b) => a - b, eager());
    expect(ran).toBe(true);
    expect(sorted).toEqual(Array.from({ length: 5000 }, (_, i) => i));
  });
});

describe('the pacer', () => {
  it('stops a request past its deadline with 503 request_too_slow', async () => {
    const p = new Pacer('The view', 0, 0);
    const until = performance.now() + 2;
    while (performance.now() < until);
    expect(p.due()).toBe(true);
    await expect(p.pause()).rejects.toMatchObject({ status: 503, code: 'service_unavailable', details: { reason: 'request_too_slow' } });
  });

  it('stops a view evaluation past its deadline, not only the pause', async () => {
    const rows = Array.from({ length: 50 }, (_, i) => ({ row: i, env: { now: NOW, file: null, note: { n: i } } as Env }));
    await expect(evaluateRows(rows, {}, { filters: 'n >= 0' }, { offset: 0, limit: 10 }, NOW, new Pacer('The view', 0, 0))).rejects.toMatchObject({
      status: 503,
    });
  });
});

describe('one row has a step allowance over all its evaluations', () => {
  // About 60,000 steps each: under the per-evaluation limit (100,000), four of them are over the row's.
  const statement = '"x".repeat(20000).split("").map(value + value).length > 0';
  const rows = () => [{ row: 1, env: { now: NOW, file: null, note: {}, row: { left: ROW_MAX_STEPS } } as Env }];

  it('lets a row with a few costly statements through', async () => {
    const r = await evaluateRows(rows(), { filters: [statement, statement, statement] }, {}, { offset: 0, limit: 10 });
    expect(r.total).toBe(1);
  });

  it('fails the view when the statements of one row need more than the allowance in all', async () => {
    await expect(evaluateRows(rows(), { filters: [statement, statement, statement, statement] }, {}, { offset: 0, limit: 10 })).rejects.toThrow(
      new RegExp(`row needs more than ${ROW_MAX_STEPS} steps`),
    );
  });

  it('makes an order cell past the allowance null, as any failing cell', async () => {
    const r = await evaluateRows(rows(), { filters: [statement, statement, statement] }, { order: [statement.replace(' > 0', '')] }, { offset: 0, limit: 10 });
    expect(r.items[0]!.values).toEqual({ [statement.replace(' > 0', '')]: null });
  });
});

describe('a summary expression runs without a pause', () => {
  const many = Array.from({ length: 30000 }, (_, i) => ({ row: i, env: { now: NOW, file: null, note: { n: 1 } } as Env }));
  const summarise = (expr: string) => evaluateRows(many, { summaries: { s: expr } }, { summaries: { n: 's' } }, { offset: 0, limit: 1 });

  it('so its allowance grows with the rows only up to what one row may take: past it, the summary is null', async () => {
    // About 4 steps a row: 120,000 in all, over the per-evaluation limit, within the row's.
    expect((await summarise('values.map(value * 2).sum()')).summaries).toEqual({ n: 60000 });
    // About 10 steps a row: 300,000, which 20 steps a row would allow but one pause-less step must not take.
    expect((await summarise('values.map(value * 2 + 1 + 1 + 1).sum()')).summaries).toEqual({ n: null });
  });
});
