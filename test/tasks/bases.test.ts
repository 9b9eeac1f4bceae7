/**
 * Obsidian Bases evaluation, table-driven: the expression features file
 * bases use (list methods with `value`/`index`/`acc`, `this`, backlinks and
 * embeds, property ids), the bounds on work, the static checks, the rule
 * telling a file base from a task view, and the row pipeline.
 */
import { describe, expect, it } from 'vitest';
import { checkSummaries, columnsOf, evaluateRows, groupsOf, rowsKindOf } from '../../src/tasks/base-rows.js';
import {
  BudgetError,
  checkExpr,
  checkFormulas,
  evaluate,
  ExprError,
  MAX_EXPR_LENGTH,
  parseDate,
  propertyValue,
  relativeTime,
  toJson,
  type Env,
  type FileValue,
} from '../../src/tasks/expr.js';

const NOW = Date.UTC(2026, 10, 22, 10, 30);

const file: FileValue = {
  kind: 'file',
  path: 'Books/Dune.md',
  size: 2048,
  mtime: Date.UTC(2026, 10, 20, 8, 0),
  ctime: Date.UTC(2026, 0, 5, 9, 0),
  tags: ['book', 'sf/classic'],
  links: [
    { target: 'Herbert', resolved: 'People/Herbert.md' },
    { target: 'cover.png', resolved: 'Books/cover.png', embed: true },
  ],
  properties: { author: 'Frank Herbert', rating: 5 },
};

const baseFile: FileValue = { kind: 'file', path: 'Views/Books.base', size: 300, mtime: NOW, ctime: NOW, tags: [], links: [], properties: {} };

const note = {
  author: 'Frank Herbert',
  rating: 5,
  genres: ['SF', 'classic', 'desert'],
  scores: [3, 1, 2],
  'date read': '2026-03-04',
  meta: { pages: 412, isbn: 'x' },
  value: 'the note property called value',
};

const formulas: Record<string, string> = {
  stars: '"★".repeat(rating)',
  pages: 'meta.pages',
  perStar: '(formula.pages / rating).round(1)',
  usesValue: 'value',
};
// f0 = 1, fN = formula.f(N-1) + formula.f(N-1): 2^30 evaluations without the per-row memo.
formulas.f0 = '1';
for (let i = 1; i <= 30; i++) formulas[`f${i}`] = `formula.f${i - 1} + formula.f${i - 1}`;

const envOf = (): Env => ({
  now: NOW,
  file,
  note,
  formulas,
  memo: new Map(),
  self: baseFile,
  backlinks: (p) => (p === 'Books/Dune.md' ? ['Reading/2026.md', 'People/Herbert.md'] : []),
});
const ev = (src: string) => toJson(evaluate(src, envOf()));

describe('expressions file bases use', () => {
  const cases: Array<[string, unknown]> = [
    // list literals and list methods binding value / index / acc
    ['[1, 2, 3]', [1, 2, 3]],
    ['[]', []],
    ['[1, 2][1]', 2],
    ['[1, 2, 3].filter(value > 1)', [2, 3]],
    ['genres.filter(value.lower() == "sf")', ['SF']],
    ['genres.map(value.upper())', ['SF', 'CLASSIC', 'DESERT']],
    ['genres.map(index)', [0, 1, 2]],
    ['scores.reduce(acc + value, 0)', 6],
    ['scores.reduce(if(value > acc, value, acc), 0)', 3],
    ['scores.map(value * 2).filter(value > 2)', [6, 4]],
    ['genres.map(genres.map(value).length)', [3, 3, 3]],
    ['genres.filter(value.startsWith("d")).length', 1],
    ['scores.sort()', [1, 2, 3]],
    ['scores.slice(1)', [1, 2]],
    ['genres.slice(0, 2).join(" / ")', 'SF / classic'],
    ['[[1, 2], [3]].flat()', [1, 2, 3]],
    // outside a list method, value is the note property
    ['value', 'the note property called value'],
    ['genres.map(formula.usesValue)', ['the note property called value', 'the note property called value', 'the note property called value']],
    // objects and strings
    ['meta.keys()', ['pages', 'isbn']],
    ['meta.values()', [412, 'x']],
    ['"ab".repeat(3)', 'ababab'],
    ['"a,b,c".split(",", 2)', ['a', 'b']],
    ['escapeHTML("<b>Tom & \'Jerry\'</b>")', '&#60;b&#62;Tom &#38; &#39;Jerry&#39;&#60;/b&#62;'],
    ['random() >= 0 && random() < 1', true],
    ['note["date read"]', '2026-03-04'],
    ['date(note["date read"]).year', 2026],
    // a known method on the wrong type is null, like a missing property
    ['rating.lower()', null],
    ['genres.toFixed(2)', null],
    // file properties and functions
    ['file.name', 'Dune.md'],
    ['file.basename', 'Dune'],
    ['file.folder', 'Books'],
    ['file.ext', 'md'],
    ['file.size > 1000', true],
    ['file.tags', ['book', 'sf/classic']],
    ['file.hasTag("sf")', true],
    ['file.hasTag("classic")', false],
    ['file.links', ['People/Herbert.md', 'Books/cover.png']],
    ['file.embeds', ['Books/cover.png']],
    ['file.backlinks', ['Reading/2026.md', 'People/Herbert.md']],
    ['file.backlinks.length', 2],
    ['file.hasLink("Herbert")', true],
    ['file.hasProperty("rating")', true],
    ['file.mtime > now() - "1 week"', true],
    ['file.ctime > now() - "1 week"', false],
    ['file.mtime.format("YYYY-MM-DD")', '2026-11-20'],
    ['file.mtime.relative()', '2 days ago'],
    ['(now() + "3M").relative()', 'in 3 months'],
    // this: the base file
    ['this.file.name', 'Books.base'],
    ['this.path', 'Views/Books.base'],
    ['file.inFolder(this.file.folder)', false],
    ['file.hasLink(this.file)', false],
    ['file.hasLink(file("People/Herbert.md"))', true],
    ['file.backlinks.contains(file("Reading/2026.md"))', true],
    // formulas
    ['formula.stars', '★★★★★'],
    ['formula.perStar', 82.4],
    ['formula.f30', 2 ** 30],
  ];
  it.each(cases)('%s → %j', (src, expected) => {
    expect(ev(src)).toEqual(expected);
  });

  it('reads `this` as the row file when no base file is given (task views)', () => {
    expect(toJson(evaluate('this.name', { now: NOW, file, note }))).toBe('Dune.md');
  });
});

describe('work is bounded', () => {
  it('refuses an expression longer than the limit', () => {
    const long = '1 + '.repeat(MAX_EXPR_LENGTH / 4) + '1';
    expect(() => evaluate(long, envOf())).toThrow(ExprError);
    expect(() => evaluate(long, envOf())).toThrow(/longer than 2000 characters/);
  });

  it('stops an evaluation that needs too many steps', () => {
    expect(() => evaluate('"x".repeat(60000).split("").map(value + value).length', envOf())).toThrow(/more than 100000 steps/);
    expect(() => evaluate('"x".repeat(200000)', envOf())).toThrow(/longer than 100000 characters/);
  });

  it('charges list methods per element, and dedupes in linear time', () => {
    expect(() => evaluate('"x".repeat(60000).split("").containsAll("a", "b")', envOf())).toThrow(/more than 100000 steps/);
    expect(ev('"x".repeat(60000).split("").containsAll("x")')).toBe(true);
    expect(ev('"x".repeat(40000).split("").map(index).unique().length')).toBe(40000);
  });

  it('gives a summary expression a budget that grows with the rows', async () => {
    const many = Array.from({ length: 30000 }, (_, i) => ({ row: i, env: { now: NOW, file: null, note: { n: 1 } } as Env }));
    const r = await evaluateRows(many, { summaries: { twice: 'values.map(value * 2).sum()' } }, { summaries: { n: 'twice' } }, { offset: 0, limit: 1 });
    expect(r.summaries).toEqual({ n: 60000 });
  });

  it('stops the whole view, not one cell, when the request budget shared by its rows is spent', async () => {
    const budget = { left: 5000 };
    const rows = () => Array.from({ length: 1000 }, (_, i) => ({ row: i, env: { now: NOW, file: null, note: { n: i }, budget } as Env }));
    await expect(evaluateRows(rows(), { filters: '[n, n, n].map(value + 1).length == 3' }, {}, { offset: 0, limit: 10 })).rejects.toThrow(BudgetError);
    budget.left = 5000;
    await expect(evaluateRows(rows(), {}, { order: ['[n, n, n].map(value + 1)'] }, { offset: 0, limit: 1000 })).rejects.toThrow(/too much work in all/);
    budget.left = 5000;
    expect((await evaluateRows(rows(), {}, { order: ['n'] }, { offset: 0, limit: 1000 })).items).toHaveLength(1000);
  });

  it('evaluates each formula once per row, so doubling chains stay cheap', () => {
    // Without the memo the same formula costs over a billion steps and is stopped.
    expect(() => evaluate('formula.f30', { ...envOf(), memo: undefined })).toThrow(/steps/);
  });
});

describe('property ids in order, sort and groupBy', () => {
  const env: Env = { ...envOf(), note: { ...note, 'my prop': 'spaced' }, objects: { task: { status: 'x', due: parseDate('2026-11-25') } } };
  const cases: Array<[string, unknown]> = [
    ['file.name', 'Dune.md'],
    ['file.backlinks', ['Reading/2026.md', 'People/Herbert.md']],
    ['note.author', 'Frank Herbert'],
    ['author', 'Frank Herbert'],
    ['my prop', 'spaced'],
    ['note.my prop', 'spaced'],
    ['note.date read', '2026-03-04'],
    ['formula.stars', '★★★★★'],
    ['task.status', 'x'],
    ['task.due', '2026-11-25'],
    ['missing', null],
    // anything else is an expression
    ['rating * 2', 10],
    ['file.name.lower()', 'dune.md'],
  ];
  it.each(cases)('%s → %j', (id, expected) => {
    expect(toJson(propertyValue(id, env))).toEqual(expected);
  });
});

describe('static checks when a base is read', () => {
  const bad: Array<[string, RegExp]> = [
    ['frobnicate(1)', /Unknown function frobnicate/],
    ['file.name.frobnicate()', /Unknown method frobnicate/],
    ['if(a, eval("x"))', /Unknown function eval/],
    ['[1].map(value.nope())', /Unknown method nope/],
    ['a ==', /end of expression/],
  ];
  it.each(bad)('%j is refused', (src, msg) => {
    expect(() => checkExpr(src, 'filters')).toThrow(msg);
    expect(() => checkExpr(src, 'filters')).toThrow(/^filters: /);
  });

  it('accepts the documented functions and methods', () => {
    for (const src of ['file.hasTag("a") && file.inFolder("b") || file.hasLink("c")', 'date(x).format("YYYY")', 'list(x).unique().sort().join(",")', 'if(now() > today(), number("1"), max(1, 2))']) {
      expect(() => checkExpr(src, 'f')).not.toThrow();
    }
  });

  it('finds formula cycles, naming the path', () => {
    expect(() => checkFormulas({ a: 'formula.b + 1', b: 'formula.c', c: 'formula.a' })).toThrow(/formula "a" refers to itself \(a → b → c → a\)/);
    expect(() => checkFormulas({ a: 'formula["a"]' })).toThrow(/refers to itself/);
    expect(() => checkFormulas({ a: 'formula.b', b: 'formula.missing + 1', c: 'formula.a' })).not.toThrow();
    expect(() => checkFormulas({ a: 'nope(1)' })).toThrow(/formulas\.a: Unknown function nope/);
    expect(() => checkFormulas({ a: ['x'] })).toThrow(/expression string/);
    expect(() => checkFormulas(['x'])).toThrow(/mapping/);
  });
});

describe('files or tasks', () => {
  const cases: Array<[string, Record<string, unknown>, 'files' | 'tasks' | null]> = [
    ['an empty base', {}, 'files'],
    ['Obsidian filters on files and properties', { filters: { and: ['file.hasTag("book")', 'status != "done"'] }, views: [{ type: 'table', order: ['file.name', 'rating'] }] }, 'files'],
    ['a bare task property (File Task frontmatter) is a note property', { filters: 'task == true || type == "task"' }, 'files'],
    ['a global filter on task.status', { filters: { and: ['task.status != "x"'] } }, 'tasks'],
    ['a formula reading task.due', { formulas: { late: 'task.due < today()' } }, 'tasks'],
    ['a view filter nested in not', { views: [{ filters: { not: ['task.checked'] } }] }, 'tasks'],
    ['an order column', { views: [{ order: ['file.name', 'task.text'] }] }, 'tasks'],
    ['a sort property', { views: [{ sort: [{ property: 'task.due', direction: 'ASC' }] }] }, 'tasks'],
    ['a groupBy property', { views: [{ groupBy: { property: 'task.status' } }] }, 'tasks'],
    ['a properties key', { properties: { 'task.text': { displayName: 'Task' } } }, 'tasks'],
    ['task["due"]', { filters: 'task["due"] != null' }, 'tasks'],
    ['a top-level id (written by Quire)', { id: 'my-view', views: [{ name: 'All' }] }, 'tasks'],
    ['rows: files wins over task fields', { rows: 'files', filters: 'task.status == "x"' }, 'files'],
    ['rows: tasks wins over no task fields', { rows: 'tasks', filters: 'file.hasTag("x")' }, 'tasks'],
    ['rows: files wins over an id', { id: 'x', rows: 'files' }, 'files'],
    ['another rows value is an error', { rows: 'notes' }, null],
    ['a syntax error does not decide', { filters: 'task.status ==' }, 'files'],
  ];
  it.each(cases)('%s', (_name, doc, expected) => {
    expect(rowsKindOf(doc)).toBe(expected);
  });
});

describe('the row pipeline', () => {
  type R = { name: string; rating: number | null; shelf: string };
  const data: R[] = [
    { name: 'a', rating: 3, shelf: 'sf' },
    { name: 'b', rating: null, shelf: 'sf' },
    { name: 'c', rating: 5, shelf: 'crime' },
    { name: 'd', rating: 1, shelf: 'sf' },
    { name: 'e', rating: 4, shelf: 'crime' },
  ];
  const input = () => data.map((r) => ({ row: r, env: { now: NOW, file: null, note: r as Record<string, unknown>, memo: new Map() } as Env }));
  const names = (items: Array<{ row: R }>) => items.map((i) => i.row.name);
  const page = { offset: 0, limit: 100 };

  const cases: Array<[string, Record<string, unknown>, Record<string, unknown>, string[]]> = [
    ['no filters keep input order', {}, {}, ['a', 'b', 'c', 'd', 'e']],
    ['global AND view filters', { filters: 'shelf == "sf"' }, { filters: 'rating > 1' }, ['a']],
    ['sort ASC, nulls last', {}, { sort: [{ property: 'rating', direction: 'ASC' }] }, ['d', 'a', 'e', 'c', 'b']],
    ['sort DESC, nulls still last', {}, { sort: [{ property: 'rating', direction: 'DESC' }] }, ['c', 'e', 'a', 'd', 'b']],
    ['two sort keys', {}, { sort: [{ property: 'shelf' }, { property: 'name', direction: 'DESC' }] }, ['e', 'c', 'd', 'b', 'a']],
    ['limit after sort', {}, { sort: [{ property: 'rating', direction: 'DESC' }], limit: 2 }, ['c', 'e']],
  ];
  it.each(cases)('%s', async (_name, base, view, expected) => {
    expect(names((await evaluateRows(input(), base, view, page)).items)).toEqual(expected);
  });

  it('counts matches before the limit, pages after it, and groups a page', async () => {
    const view = { groupBy: { property: 'shelf', direction: 'DESC' }, sort: [{ property: 'name' }], order: ['name', 'rating'], limit: 4 };
    const r = await evaluateRows(input(), {}, view, { offset: 1, limit: 2 });
    expect(r.total).toBe(5);
    expect(names(r.items)).toEqual(['b', 'd']);
    expect(r.next_cursor).toBe(3);
    expect(r.items[0]).toMatchObject({ values: { name: 'b', rating: null }, group: 'sf' });
    const last = await evaluateRows(input(), {}, view, { offset: 3, limit: 2 });
    expect(names(last.items)).toEqual(['c']);
    expect(last.next_cursor).toBeNull();
    expect(groupsOf([{ group: 'sf' }, { group: 'sf' }, { group: 'crime' }]).map((g) => [g.key, g.items.length])).toEqual([['sf', 2], ['crime', 1]]);
  });

  it('makes a cell that fails null, but a failing filter fails the view', async () => {
    const r = await evaluateRows(input(), {}, { order: ['"x".repeat(200000)', 'name'] }, page);
    expect(r.items[0]!.values).toEqual({ '"x".repeat(200000)': null, name: 'a' });
    await expect(evaluateRows(input(), { filters: '"x".repeat(200000) != ""' }, {}, page)).rejects.toThrow(ExprError);
  });

  it('names columns from properties.displayName', () => {
    const doc = { properties: { 'file.name': { displayName: 'Title' }, rating: { displayName: 'Stars' }, 'note.shelf': { displayName: 'Shelf' } } };
    expect(columnsOf(doc, ['file.name', 'note.rating', 'shelf', 'formula.x'])).toEqual([
      { id: 'file.name', name: 'Title' },
      { id: 'note.rating', name: 'Stars' },
      { id: 'shelf', name: 'Shelf' },
      { id: 'formula.x', name: 'formula.x' },
    ]);
  });
});

describe('text sorts as people read it', () => {
  it('ignores case and orders numbers by value', async () => {
    const rows = ['note 10', 'Note 2', 'apple', 'Banana'].map((name) => ({ row: name, env: { now: NOW, file: null, note: { name } } as Env }));
    const r = await evaluateRows(rows, {}, { sort: [{ property: 'name' }] }, { offset: 0, limit: 10 });
    expect(r.items.map((i) => i.row)).toEqual(['apple', 'Banana', 'Note 2', 'note 10']);
  });
});

describe('date.relative() words time as Obsidian (moment) does', () => {
  const S = 1000;
  const M = 60 * S;
  const H = 60 * M;
  const D = 24 * H;
  const cases: Array<[number, string]> = [
    [0, 'a few seconds ago'],
    [-30 * S, 'a few seconds ago'],
    [60 * S, 'in a minute'],
    [-5 * M, '5 minutes ago'],
    [-3 * H, '3 hours ago'],
    [-30 * H, 'a day ago'],
    [3 * D, 'in 3 days'],
    [-30 * D, 'a month ago'],
    [-100 * D, '3 months ago'],
    [-400 * D, 'a year ago'],
    [-800 * D, '2 years ago'],
  ];
  it.each(cases)('%i ms → %s', (delta, text) => {
    expect(relativeTime(delta)).toBe(text);
  });
});

describe('summaries', () => {
  const data = [
    { rating: 3, shelf: 'sf', read: true, on: '2026-01-05' },
    { rating: null, shelf: 'sf', read: false, on: null },
    { rating: 5, shelf: 'crime', read: true, on: '2026-03-01' },
    { rating: 1, shelf: 'SF', read: null, on: '2025-12-31' },
    { rating: 4, shelf: '', read: true, on: null },
  ];
  const input = () =>
    data.map((r, i) => ({ row: i, env: { now: NOW, file: null, note: r as Record<string, unknown>, formulas: { day: 'date(on)' } } as Env }));
  const base = { summaries: { top: 'values.filter(value != null).sort().reverse()[0]', avg1: 'values.mean().round(1)', broken: '"x".repeat(200000)' } };
  const cases: Array<[string, string, unknown]> = [
    ['rating', 'Average', 3.25],
    ['rating', 'average', 3.25],
    ['rating', 'Sum', 13],
    ['rating', 'Min', 1],
    ['rating', 'Max', 5],
    ['rating', 'Range', 4],
    ['rating', 'Median', 3.5],
    ['rating', 'Stddev', Math.sqrt(2.1875)],
    ['rating', 'Empty', 1],
    ['rating', 'Filled', 4],
    ['shelf', 'Unique', 3], // sf (twice), crime, SF; the empty one is not counted
    ['read', 'Checked', 3],
    ['read', 'Unchecked', 1],
    ['formula.day', 'Earliest', '2025-12-31'],
    ['formula.day', 'Latest', '2026-03-01'],
    ['formula.day', 'Range', Date.UTC(2026, 2, 1) - Date.UTC(2025, 11, 31)],
    ['shelf', 'Average', null],
    ['rating', 'top', 5],
    ['rating', 'avg1', 3.3],
    ['rating', 'broken', null],
  ];
  it.each(cases)('%s: %s → %j', async (prop, name, expected) => {
    const r = await evaluateRows(input(), base, { summaries: { [prop]: name } }, { offset: 0, limit: 1 }, NOW);
    expect(r.summaries).toEqual({ [prop]: expected });
  });

  it('summarises the rows after the view limit, over all pages; null without summaries', async () => {
    const view = { sort: [{ property: 'rating', direction: 'DESC' }], limit: 2, summaries: { rating: 'Sum' } };
    expect((await evaluateRows(input(), {}, view, { offset: 0, limit: 1 })).summaries).toEqual({ rating: 9 });
    expect((await evaluateRows(input(), {}, {}, { offset: 0, limit: 1 })).summaries).toBeNull();
  });

  it('refuses unknown summary names and bad custom summaries', () => {
    expect(() => checkSummaries(base, { summaries: { rating: 'Average', shelf: 'top' } })).not.toThrow();
    expect(() => checkSummaries(base, { summaries: { rating: 'Mode' } })).toThrow(/unknown summary "Mode"/);
    expect(() => checkSummaries({ summaries: { bad: 'values.nope()' } }, { summaries: { rating: 'bad' } })).toThrow(/Unknown method nope/);
    expect(() => checkSummaries({}, { summaries: ['Average'] })).toThrow(/mapping/);
  });
});

describe("the syntax page's example base", () => {
  // The complete example of help.obsidian.md/bases/syntax, as YAML would parse it.
  const doc = {
    filters: { or: ['file.hasTag("tag")', { and: ['file.hasTag("book")', 'file.hasLink("Textbook")'] }, { not: ['file.hasTag("book")', 'file.inFolder("Required Reading")'] }] },
    formulas: { formatted_price: 'if(price, price.toFixed(2) + " dollars")', ppu: '(price / age).toFixed(2)' },
    properties: { status: { displayName: 'Status' }, 'formula.formatted_price': { displayName: 'Price' }, 'file.ext': { displayName: 'Extension' } },
    summaries: { customAverage: 'values.mean().round(3)' },
    views: [
      {
        type: 'table',
        name: 'My table',
        limit: 10,
        groupBy: { property: 'note.age', direction: 'DESC' },
        filters: { and: ['status != "done"', { or: ['formula.ppu > 5', 'price > 2.1'] }] },
        order: ['file.name', 'file.ext', 'note.age', 'formula.ppu', 'formula.formatted_price'],
        summaries: { 'formula.ppu': 'Average', 'note.age': 'customAverage' },
      },
    ],
  };
  const fileOf = (p: string, tags: string[]): FileValue => ({ kind: 'file', path: p, size: 1, mtime: NOW, ctime: NOW, tags, links: [], properties: {} });
  const rows = [
    { f: fileOf('Shop/Pen.md', ['tag']), note: { price: 12.5, age: 2, status: 'open' } },
    { f: fileOf('Shop/Cup.md', []), note: { price: 3, age: 3, status: 'open' } },
    { f: fileOf('Shop/Old.md', ['tag']), note: { price: 9, age: 3, status: 'done' } },
    { f: fileOf('Required Reading/Book.md', ['book']), note: { price: 30, age: 1, status: 'open' } },
  ].map((r) => ({ row: r.f.path, env: { now: NOW, file: r.f, note: r.note, formulas: doc.formulas as Record<string, string>, memo: new Map() } as Env }));

  it('is a file base, passes the checks, and evaluates', async () => {
    expect(rowsKindOf(doc)).toBe('files');
    const view = doc.views[0]!;
    expect(() => checkSummaries(doc, view)).not.toThrow();
    expect(() => checkFormulas(doc.formulas)).not.toThrow();
    const r = await evaluateRows(rows, doc, view, { offset: 0, limit: 10 }, NOW);
    // Cup has no tag (the not group keeps it), Old is done, Book is a book in Required Reading.
    expect(r.items.map((i) => i.row)).toEqual(['Shop/Cup.md', 'Shop/Pen.md']);
    expect(r.items.map((i) => i.group)).toEqual([3, 2]);
    expect(r.items[1]!.values).toEqual({ 'file.name': 'Pen.md', 'file.ext': 'md', 'note.age': 2, 'formula.ppu': '6.25', 'formula.formatted_price': '12.50 dollars' });
    // toFixed makes ppu text: Average has no numbers to average.
    expect(r.summaries).toEqual({ 'formula.ppu': null, 'note.age': 2.5 });
    expect(columnsOf(doc, view.order).map((c) => c.name)).toEqual(['file.name', 'Extension', 'note.age', 'formula.ppu', 'Price']);
  });
});
