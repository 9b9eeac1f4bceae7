/** The Bases expression evaluator, table-driven: parse errors, operators, properties, functions, filter groups. */
import { describe, expect, it } from 'vitest';
import {
  addDuration,
  checkFilter,
  evalFilter,
  evaluate,
  ExprError,
  formatDateValue,
  parseDate,
  parseExpr,
  toJson,
  type Env,
  type FileValue,
} from '../../src/tasks/expr.js';

const NOW = Date.UTC(2026, 10, 22, 10, 30); // 2026-11-22 10:30 wall clock

const file: FileValue = {
  kind: 'file',
  path: 'Projects/Garden/Plan.md',
  size: 1234,
  mtime: Date.UTC(2026, 10, 20, 8, 0),
  ctime: Date.UTC(2026, 0, 5, 9, 0),
  tags: ['project/garden', 'Outdoor'],
  links: [
    { target: 'Reading list', resolved: 'Notes/Reading list.md' },
    { target: 'Nowhere', resolved: null },
  ],
  properties: { status: 'active', priority: 2, due: '2026-11-25', owners: ['ana', 'Sam'] },
};

const env: Env = {
  now: NOW,
  file,
  note: { status: 'active', priority: 2, due: '2026-11-25', owners: ['ana', 'Sam'], 'my prop': 'x y', price: 4.5, empty: '', nested: { a: { b: 3 } } },
  objects: {
    task: {
      status: 'x',
      text: 'Buy bulbs',
      due: parseDate('2026-11-25'),
      done: parseDate('2026-11-21'),
      checked: true,
      cancelled: false,
      line: 12,
    },
  },
  formulas: { double: 'priority * 2', quad: 'formula.double * 2', label: 'if(priority > 1, "high", "low")', loop: 'formula.loop + 1' },
};

const ev = (src: string) => toJson(evaluate(src, env));

describe('expressions evaluate', () => {
  const cases: Array<[string, unknown]> = [
    // literals and arithmetic
    ['1', 1],
    ['1 + 2 * 3', 7],
    ['(1 + 2) * 3', 9],
    ['10 / 4', 2.5],
    ['10 % 4', 2],
    ['-3 + 1', -2],
    ['1 / 0', null],
    ['"a" + "b"', 'ab'],
    ["'it\\'s'", "it's"],
    ['"n: " + 2', 'n: 2'],
    ['true', true],
    ['null', null],
    // comparisons
    ['2 > 1', true],
    ['2 < 1', false],
    ['2 >= 2', true],
    ['2 <= 1', false],
    ['2 == 2', true],
    ['2 != 2', false],
    ['"a" == "a"', true],
    ['"a" != "b"', true],
    ['"a" < "b"', true],
    ['1 == "1"', false],
    ['null == null', true],
    ['missing == null', true],
    ['missing > 1', false],
    ['missing < 1', false],
    // boolean operators
    ['true && false', false],
    ['true || false', true],
    ['!true', false],
    ['!missing', true],
    ['!(1 > 2) && 3 > 2', true],
    ['1 > 2 || 2 > 1 && 3 > 2', true],
    // note properties
    ['status', 'active'],
    ['note.status', 'active'],
    ['note["my prop"]', 'x y'],
    ['status == "active"', true],
    ['status != "done"', true],
    ['priority > 1', true],
    ['priority + 1', 3],
    ['price * 2', 9],
    ['owners[0]', 'ana'],
    ['owners[-1]', 'Sam'],
    ['owners.length', 2],
    ['nested.a.b', 3],
    ['nested["a"]["b"]', 3],
    ['empty.isEmpty()', true],
    ['status.isEmpty()', false],
    ['missing.isEmpty()', true],
    // dates
    ['due > "2026-11-24"', true], // two strings: compared as text
    ['due > "2026-11-3"', false], // ... so a date() is needed for dates written differently
    ['date(due) > date("2026-11-24")', true],
    ['date(due) == "2026-11-25"', true],
    ['date(due) < today()', false],
    ['today()', '2026-11-22'],
    ['now()', '2026-11-22T10:30:00'],
    ['today() + "3d"', '2026-11-25'],
    ['today() + "1 week"', '2026-11-29'],
    ['today() - "1M"', '2026-10-22'],
    ['today() + "1y"', '2027-11-22'],
    ['now() + "2h"', '2026-11-22T12:30:00'],
    ['now() - "30m"', '2026-11-22T10:00:00'],
    ['(today() + "1d") - today()', 86_400_000],
    ['date("2026-12-01").month', 12],
    ['date("2026-12-01").year', 2026],
    ['date("2026-12-01 14:05").hour', 14],
    ['date("2026-12-01").format("DD/MM/YYYY")', '01/12/2026'],
    ['now().date()', '2026-11-22'],
    ['now().time()', '10:30:00'],
    ['date("not a date")', null],
    // task object
    ['task.status', 'x'],
    ['task.status == "x"', true],
    ['task.checked', true],
    ['task.due == "2026-11-25"', true],
    ['task.due < today() + "7d"', true],
    ['task.due > today()', true],
    ['task.done < today()', true],
    ['task.done', '2026-11-21'],
    ['task.line', 12],
    ['task.text.contains("bulb")', true],
    ['task.text.lower()', 'buy bulbs'],
    // file properties and functions
    ['file.name', 'Plan.md'],
    ['file.basename', 'Plan'],
    ['file.ext', 'md'],
    ['file.ext == "md"', true],
    ['file.folder', 'Projects/Garden'],
    ['file.path', 'Projects/Garden/Plan.md'],
    ['file.size > 1000', true],
    ['file.mtime > now() - "1 week"', true],
    ['file.ctime > now() - "1 week"', false],
    ['file.hasTag("project")', true],
    ['file.hasTag("#project/garden")', true],
    ['file.hasTag("proj")', false],
    ['file.hasTag("outdoor")', true],
    ['file.hasTag("x", "outdoor")', true],
    ['file.inFolder("Projects")', true],
    ['file.inFolder("Projects/Garden")', true],
    ['file.inFolder("projects/")', true],
    ['file.inFolder("Proj")', false],
    ['file.hasLink("Reading list")', true],
    ['file.hasLink("Notes/Reading list.md")', true],
    ['file.hasLink("[[Reading list]]")', true],
    ['file.hasLink("Nowhere")', true],
    ['file.hasLink("Elsewhere")', false],
    ['file.hasProperty("priority")', true],
    ['file.hasProperty("nope")', false],
    ['file.tags.contains("Outdoor")', true],
    ['file.links.length', 2],
    ['file == "Projects/Garden/Plan"', true],
    // strings and lists
    ['"Hello".startsWith("He")', true],
    ['"Hello".endsWith("lo")', true],
    ['"Hello".containsAny("x", "ll")', true],
    ['"Hello".containsAll("H", "x")', false],
    ['"a,b".split(",")', ['a', 'b']],
    ['" x ".trim()', 'x'],
    ['"hello world".title()', 'Hello World'],
    ['owners.contains("sam")', true],
    ['owners.containsAll("ana", "Sam")', true],
    ['owners.containsAny("bob")', false],
    ['owners.join("+")', 'ana+Sam'],
    ['list(status)', ['active']],
    ['list(owners).length', 2],
    ['number("42") + 1', 43],
    ['min(3, 1, 2)', 1],
    ['max(3, 1, 2)', 3],
    ['(3.14159).round(2)', 3.14],
    ['(2.5).toFixed(2)', '2.50'],
    ['(-2).abs()', 2],
    ['priority.isTruthy()', true],
    ['priority.toString()', '2'],
    ['priority.isType("number")', true],
    ['if(priority > 5, "big")', null],
    ['if(priority > 1, "big", "small")', 'big'],
    // formulas
    ['formula.double', 4],
    ['formula.quad', 8],
    ['formula.label', 'high'],
    ['formula.unknown', null],
    ['missing.contains("x")', null],
  ];
  it.each(cases)('%s → %j', (src, expected) => {
    expect(ev(src)).toEqual(expected);
  });
});

describe('syntax errors are ExprErrors with a position', () => {
  const bad: Array<[string, RegExp]> = [
    ['', /Empty/],
    ['1 +', /end of expression/],
    ['(1 + 2', /Expected "\)"/],
    ['"open', /Unterminated string/],
    ['a ==', /end of expression/],
    ['1 2', /after the expression/],
    ['a @ b', /Unexpected character "@"/],
    ['file.', /Expected a name/],
    ['owners[0', /Expected "\]"/],
    ['f(1,)', /Unexpected "\)"/],
    ['1 == 2 == 3', /after the expression/],
    ['('.repeat(100) + '1' + ')'.repeat(100), /nested too deeply/],
  ];
  it.each(bad)('%j', (src, msg) => {
    expect(() => parseExpr(src)).toThrow(ExprError);
    expect(() => parseExpr(src)).toThrow(msg);
  });

  it('rejects unknown functions and self-referencing formulas at evaluation', () => {
    expect(() => evaluate('eval("1")', env)).toThrow(/Unknown function eval/);
    expect(() => evaluate('status.frobnicate()', env)).toThrow(/Unknown method frobnicate/);
    expect(() => evaluate('formula.loop', env)).toThrow(/refers to itself/);
  });

  it('never reaches JavaScript globals', () => {
    expect(ev('constructor')).toBeNull();
    expect(ev('note.constructor')).toBeNull();
    expect(ev('status.constructor')).toBeNull();
    expect(ev('nested.__proto__')).toBeNull();
    expect(ev('formula.constructor')).toBeNull();
    expect(ev('task.constructor')).toBeNull();
    expect(ev('file.constructor')).toBeNull();
  });
});

describe('filter groups', () => {
  const cases: Array<[string, unknown, boolean]> = [
    ['no filter', undefined, true],
    ['a statement', 'priority > 1', true],
    ['a false statement', 'priority > 5', false],
    ['and: all true', { and: ['priority > 1', 'file.hasTag("project")'] }, true],
    ['and: one false', { and: ['priority > 1', 'file.hasTag("book")'] }, false],
    ['and: empty', { and: [] }, true],
    ['or: one true', { or: ['priority > 5', 'file.inFolder("Projects")'] }, true],
    ['or: none true', { or: ['priority > 5', 'file.inFolder("Archive")'] }, false],
    ['or: empty', { or: [] }, false],
    ['not: none true', { not: ['file.hasTag("book")', 'file.inFolder("Archive")'] }, true],
    ['not: one true', { not: ['file.hasTag("book")', 'file.inFolder("Projects")'] }, false],
    ['nested', { or: ['file.hasTag("tag")', { and: ['file.hasTag("project")', 'file.hasLink("Reading list")'] }] }, true],
    ['nested not inside and', { and: ['status != "done"', { not: ['task.status == "-"'] }] }, true],
    ['the docs example', { or: ['file.hasTag("tag")', { and: ['file.hasTag("book")', 'file.hasLink("Textbook")'] }, { not: ['file.hasTag("book")', 'file.inFolder("Required Reading")'] }] }, true],
    ['a list is an and', ['priority > 1', 'priority < 3'], true],
  ];
  it.each(cases)('%s', (_name, filter, expected) => {
    expect(evalFilter(filter, env)).toBe(expected);
  });

  it('checkFilter names the bad statement', () => {
    expect(() => checkFilter({ and: ['priority > 1', { or: ['a ==='] }] })).toThrow(/filters\.and\[1\]\.or\[0\]/);
    expect(() => checkFilter({ both: [] })).toThrow(/exactly one of/);
    expect(() => checkFilter({ and: [], or: [] })).toThrow(/exactly one of/);
    expect(() => checkFilter(42)).toThrow(/statement string/);
    expect(() => checkFilter({ and: ['a > 1', { not: ['file.hasTag("x")'] }] })).not.toThrow();
  });
});

describe('dates and durations', () => {
  const base = parseDate('2026-01-31')!;
  const cases: Array<[string, string | null]> = [
    ['1d', '2026-02-01'],
    ['1 day', '2026-02-01'],
    ['2 weeks', '2026-02-14'],
    ['1M', '2026-03-03'], // JavaScript month overflow, like moment's add() would clamp: documented
    ['1y', '2027-01-31'],
    ['1d 1d', '2026-02-02'],
    ['-1d', '2026-01-30'],
    ['3 parsecs', null],
    ['', null],
  ];
  it.each(cases)('2026-01-31 + %j', (d, expected) => {
    const r = addDuration(base, d);
    expect(r === null ? null : formatDateValue(r)).toBe(expected);
  });

  it('parses dates and rejects impossible ones', () => {
    expect(parseDate('2026-02-30')).toBeNull();
    expect(parseDate('2026-13-01')).toBeNull();
    expect(formatDateValue(parseDate('2026-02-03T04:05:06Z')!)).toBe('2026-02-03T04:05:06');
    expect(parseDate('2026-02-03')!.time).toBe(false);
  });
});
