/**
 * The frontmatter fast path (src/markdown/simple-yaml.ts) must return exactly
 * what the `yaml` package returns, or `undefined`: on a table of tricky
 * cases, on generated documents (well-formed and mangled), on the Obsidian
 * Help vault (when the shared corpora are present) and on the generated
 * vault. It must also accept most ordinary frontmatter, or it is useless.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { parseDocument } from 'yaml';
import { parseSimpleYaml, readSimpleFrontmatter } from '../../src/markdown/simple-yaml.js';
import { parseFrontmatterWithPackage, parseFrontmatterYaml } from '../../src/markdown/common.js';
import { YAML_MAX_CHARS } from '../../src/markdown/yaml-limits.js';
import { generateNote } from '../helpers/generate-vault.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const corpus = join(root, '../shared/corpora/obsidian-help-en');

/** What the `yaml` package makes of `raw`, as parseFrontmatterYaml used to call it. */
function viaYaml(raw: string): { errors: number; value: unknown } {
  const doc = parseDocument(raw, { prettyErrors: false });
  try {
    return { errors: doc.errors.length, value: doc.toJS({ maxAliasCount: 100 }) };
  } catch {
    // e.g. an alias to an anchor that is defined later
    return { errors: 1, value: undefined };
  }
}

/**
 * The fast path's promise: its answer, when it gives one, is the package's. Returns whether
 * parseSimpleYaml answered (readSimpleFrontmatter, which also answers for empty blocks and a
 * flow sequence left open, is held to parseFrontmatterYaml's answer from the package).
 */
function agrees(raw: string): boolean {
  const read = readSimpleFrontmatter(raw);
  if (read !== undefined) {
    const slow = parseFrontmatterWithPackage(raw);
    expect(read, JSON.stringify(raw)).toStrictEqual(slow);
    if (read.data !== null) expect(Object.keys(read.data), JSON.stringify(raw)).toEqual(Object.keys(slow.data!));
  }
  const fast = parseSimpleYaml(raw);
  if (fast === undefined) return false;
  const slow = viaYaml(raw);
  expect(slow.errors, JSON.stringify(raw)).toBe(0);
  expect(fast, JSON.stringify(raw)).toStrictEqual(slow.value);
  expect(Object.keys(fast), JSON.stringify(raw)).toEqual(Object.keys(slow.value as object));
  return true;
}

const long = 'word '.repeat(2000).trim();

/** [source, expected mapping] — also checked against the `yaml` package. */
const ACCEPTED: Array<[string, Record<string, unknown>]> = [
  ['a: b', { a: 'b' }],
  ['title: My note', { title: 'My note' }],
  ['a:', { a: null }],
  ['a:   ', { a: null }],
  ['a: # just a comment', { a: null }],
  ['a: ~', { a: null }],
  ['a: null', { a: null }],
  ['a: Null', { a: null }],
  ['a: NULL', { a: null }],
  ['a: nULL', { a: 'nULL' }],
  ['a: true', { a: true }],
  ['a: True', { a: true }],
  ['a: TRUE', { a: true }],
  ['a: tRUE', { a: 'tRUE' }],
  ['a: false', { a: false }],
  ['a: FALSE', { a: false }],
  ['a: yes', { a: 'yes' }],
  ['a: no', { a: 'no' }],
  ['a: on', { a: 'on' }],
  ['a: off', { a: 'off' }],
  ['a: y', { a: 'y' }],
  ['a: 0x1A', { a: 26 }],
  ['a: 0X1A', { a: '0X1A' }],
  ['a: 0o17', { a: 15 }],
  ['a: 0o18', { a: '0o18' }],
  ['a: 0b101', { a: '0b101' }],
  ['a: 1_000', { a: '1_000' }],
  ['a: .5', { a: 0.5 }],
  ['a: 5.', { a: 5 }],
  ['a: 1.50', { a: 1.5 }],
  ['a: -.inf', { a: -Infinity }],
  ['a: .Inf', { a: Infinity }],
  ['a: +.INF', { a: Infinity }],
  ['a: .NaN', { a: NaN }],
  ['a: .nan', { a: NaN }],
  ['a: nan', { a: 'nan' }],
  ['a: -.nan', { a: '-.nan' }],
  ['a: 1e3', { a: 1000 }],
  ['a: 1E-2', { a: 0.01 }],
  ['a: .5e2', { a: 50 }],
  ['a: e3', { a: 'e3' }],
  ['a: +1', { a: 1 }],
  ['a: -0', { a: -0 }],
  ['a: +0', { a: 0 }],
  ['a: 007', { a: 7 }],
  ['a: 08', { a: 8 }],
  ['a: 12345678901234567890', { a: 12345678901234567000 }],
  ['a: 12:30', { a: '12:30' }],
  ['a: 2024-05-17', { a: '2024-05-17' }],
  ['a: 2024-05-17T10:00:00Z', { a: '2024-05-17T10:00:00Z' }],
  ['a: 1,000', { a: '1,000' }],
  ['a: value # c', { a: 'value' }],
  ['a: value#notcomment', { a: 'value#notcomment' }],
  ['a: value   ', { a: 'value' }],
  ['a:    value', { a: 'value' }],
  ['a: http://x.org/p?q=1#frag', { a: 'http://x.org/p?q=1#frag' }],
  ['a: x:y', { a: 'x:y' }],
  ['a: -x', { a: '-x' }],
  ['a: ---', { a: '---' }],
  ['a: x, y', { a: 'x, y' }],
  ['a: x[1]{2}', { a: 'x[1]{2}' }],
  ["a: it's", { a: "it's" }],
  ["a: 'it''s'", { a: "it's" }],
  ["a: 'x # y' # z", { a: 'x # y' }],
  ["a: ''", { a: '' }],
  ['a: "double"', { a: 'double' }],
  ['a: ""', { a: '' }],
  ['a: "a\\"b"', { a: 'a"b' }],
  ['a: "tab\\tnl\\nbs\\\\sl\\/"', { a: 'tab\tnl\nbs\\sl/' }],
  ['a: "\\x41\\u00e9\\U0001F680"', { a: 'Aé🚀' }],
  ['a: "true"', { a: 'true' }],
  ["a: '12'", { a: '12' }],
  ['a: "  spaced  "', { a: '  spaced  ' }],
  ['key : v', { key: 'v' }],
  ['my key: v', { 'my key': 'v' }],
  ["it's: v", { "it's": 'v' }],
  ['toString: v', { toString: 'v' }],
  ['日本語: 中文', { 日本語: '中文' }],
  ['emoji🚀: 🚀 launch', { 'emoji🚀': '🚀 launch' }],
  ['café: naïve', { café: 'naïve' }],
  ['k\u00a0: \u00a0v', { 'k\u00a0': '\u00a0v' }],
  [`a: ${long}`, { a: long }],
  ['tags: [a, b/c, "d e"]', { tags: ['a', 'b/c', 'd e'] }],
  ['tags: []', { tags: [] }],
  ['tags: [ ]', { tags: [] }],
  ['tags: [a,]', { tags: ['a'] }],
  ['tags: [ a b  , c ]', { tags: ['a b', 'c'] }],
  ['tags: [1, true, ~, x]', { tags: [1, true, null, 'x'] }],
  ['tags: [http://x.org, a:b]', { tags: ['http://x.org', 'a:b'] }],
  ['tags: [a#b] # c', { tags: ['a#b'] }],
  ["tags: ['x, y', \"z]\"]", { tags: ['x, y', 'z]'] }],
  ['tags:\n  - a\n  - b', { tags: ['a', 'b'] }],
  ['tags:\n- a\n- b\nnext: 1', { tags: ['a', 'b'], next: 1 }],
  ['tags:\n    - a\n    - b\nnext: 1', { tags: ['a', 'b'], next: 1 }],
  ['tags:\n  -\n  - # c\n  - x # d\n  - "q"', { tags: [null, null, 'x', 'q'] }],
  ['tags:\n  - [a, b]', { tags: [['a', 'b']] }],
  ['tags: # c\n\n  # d\n  - a\n\n  - b\n# e\nx: 1', { tags: ['a', 'b'], x: 1 }],
  ['# c\n\na: 1\n  # indented comment\nb: 2\n', { a: 1, b: 2 }],
  ['a: x\r\nb: [1]\r\nc:\r\n  - d\r\n', { a: 'x', b: [1], c: ['d'] }],
  ['z: 1\na: 2\nm: 3', { z: 1, a: 2, m: 3 }],
];

/** Legal YAML the fast path leaves to the package, and YAML errors. */
const DECLINED: string[] = [
  '',
  '# only a comment',
  'a: [a, [b]]',
  'a:\n  - - x',
  'a: - - x',
  'a: b: c',
  'a: x:',
  'a: 1\na: 2',
  '__proto__: 1',
  '<<: x',
  'a: &x 1\nb: *x',
  'a: !!str 1',
  'a: |\n  text',
  'a: >\n  text',
  'a: {b: 1}',
  'a: "multi\n  line"',
  "a: 'multi\n  line'",
  'a: plain\n  continued',
  'a: [x,\n  y]',
  'a: "x\\\n  y"',
  'a: "bad \\q escape"',
  'a:\tx',
  'a: x\ty',
  'a: x\rb: y',
  '---\na: 1',
  'a: 1\n...',
  '? a\n: b',
  '  a: 1\n  b: 2',
  'a:\n  b: 1',
  'a:\n  - x\n  c',
  'a:\n  - x\n - y',
  'a:\n  - x\n- y',
  'a:\n  - x\n    y',
  'a:b: c',
  '"quoted key": v',
  '1: one',
  'true: yes',
  '~: nothing',
  '-a: 1',
  'a #b: c',
  'a: [a, , b]',
  'a: [,]',
  'a: [a: b]',
  'a: [x:]',
  'a: [a, b # c]',
  'a: ["x":y]',
  'a: [x] y',
  'a: [x]#c',
  "a: 'x'#c",
  'a: "x" y',
  'a: %x',
  'a: @x',
  'a: `x`',
  'a: ?x',
  'a: :x',
  'a: -',
  'just a scalar',
  '- a\n- b',
  '\ufeffa: 1',
  'a: x\u0085',
  'a: x\u2028y',
  `${'k'.repeat(1100)}: v`,
];

describe('parseSimpleYaml: table', () => {
  it('has enough cases', () => {
    expect(ACCEPTED.length + DECLINED.length).toBeGreaterThanOrEqual(80);
  });

  for (const [raw, expected] of ACCEPTED) {
    it(`reads ${JSON.stringify(raw).slice(0, 70)}`, () => {
      const slow = viaYaml(raw);
      expect(slow.errors).toBe(0);
      expect(slow.value).toStrictEqual(expected);
      const fast = parseSimpleYaml(raw);
      expect(fast).toStrictEqual(expected);
      expect(Object.keys(fast!)).toEqual(Object.keys(expected));
    });
  }

  for (const raw of DECLINED) {
    it(`declines ${JSON.stringify(raw).slice(0, 70)}`, () => {
      expect(parseSimpleYaml(raw)).toBeUndefined();
    });
  }

  /** The package's message for a flow sequence left open (spelled out: the test checks the source's copy). */
  const UNCLOSED = 'Flow sequence in block collection must be sufficiently indented and end with a ]';
  /** [source, what readSimpleFrontmatter answers without the package]; each checked against the package. */
  const READ: Array<[string, { data: Record<string, unknown> | null; error: string | null } | undefined]> = [
    ['', { data: {}, error: null }],
    ['   ', { data: {}, error: null }],
    ['# only a comment', { data: {}, error: null }],
    ['\n# c\n  # d\n\n', { data: {}, error: null }],
    ['\r\n# c\r\n', { data: {}, error: null }],
    ['a: 1', { data: { a: 1 }, error: null }],
    ['broken: [unclosed', { data: null, error: UNCLOSED }],
    ['a: 1\nbroken: [unclosed', { data: null, error: UNCLOSED }],
    ['a: 1\r\nbroken: [unclosed\r\n', { data: null, error: UNCLOSED }],
    ['tags: [a, "b c", \'d\'', { data: null, error: UNCLOSED }],
    ['tags: [a,', { data: null, error: UNCLOSED }],
    ['tags: [a, ', { data: null, error: UNCLOSED }],
    ['tags: [', { data: null, error: UNCLOSED }],
    ['tags: [a  \n\n   \n', { data: null, error: UNCLOSED }],
    ['tags:\n  - x\nb: [y', { data: null, error: UNCLOSED }],
    // what follows an open sequence may be read into it: left to the package
    ['tags: [a\nb: 1', undefined],
    ['tags: [a\n  b]', undefined],
    ['tags: [a\n# c', undefined],
    ['tags: [a # c', undefined],
    ['tags: [a: b', undefined],
    ['tags: [a, [b]', undefined],
    ['tags: [- a', undefined],
    ['tags: ["open', undefined],
    ['tags:\n  - [a', undefined],
    ['a: 1\na: [b', undefined],
    // refused by the package's text budget before parsing, with another error
    [`tags: [${'x'.repeat(YAML_MAX_CHARS)}`, undefined],
    [`tags: ['${'['.repeat(500)}'`, undefined],
  ];

  for (const [raw, expected] of READ) {
    it(`reads the frontmatter ${JSON.stringify(raw).slice(0, 60)} ${expected === undefined ? 'with the package' : 'without it'}`, () => {
      expect(readSimpleFrontmatter(raw)).toStrictEqual(expected);
      expect(parseFrontmatterYaml(raw)).toStrictEqual(parseFrontmatterWithPackage(raw));
      if (expected !== undefined) expect(parseFrontmatterWithPackage(raw)).toStrictEqual(expected);
    });
  }

  it('leaves declined input to the yaml package in parseFrontmatterYaml', () => {
    expect(parseFrontmatterYaml('a: [a, [b]]')).toEqual({ data: { a: ['a', ['b']] }, error: null });
    expect(parseFrontmatterYaml('')).toEqual({ data: {}, error: null });
    expect(parseFrontmatterYaml('- a')).toEqual({ data: null, error: 'frontmatter is not a YAML mapping' });
    const broken = 'a: 1\nbroken: [unclosed';
    expect(parseFrontmatterYaml(broken)).toEqual({ data: null, error: parseDocument(broken, { prettyErrors: false }).errors[0]!.message });
  });
});

// ------------------------------------------------------------ generated input

const NICE_KEYS = ['title', 'tags', 'aliases', 'id', 'created', 'rating', 'publish', 'cssclasses', 'my key', '日本', 'emoji🚀', 'k-1', 'a_b', 'Key.Name', 'x'];
const NICE_WORDS = ['note', 'Project Alpha', 'b/c', 'café', '日本語', '🚀', 'a.k.a.', 'x-1', 'v2.0', '50%', 'e.g.', 'area/health', 'well-known', 'Home'];
/** Scalars whose type or validity the core schema decides. */
const TRICKY = [
  'yes', 'no', 'on', 'off', 'y', 'n', 'null', 'Null', 'NULL', 'nULL', '~', 'true', 'True', 'TRUE', 'tRUE', 'false',
  '0x1A', '0X1A', '0x', '0o17', '0o8', '0b101', '1_000', '.5', '5.', '-.5', '+.5', '-.inf', '.Inf', '+.INF', '.NaN',
  '.nan', '.NAN', 'nan', 'inf', '1e3', '1E3', '1e+3', '-1e-3', '.5e2', '1.e2', 'e3', '+1', '-0', '+0', '007', '08',
  '0.0', '1.50', '12:30', '1:20:30', '2024-05-17', '2024-05-17T10:00:00Z', '0x1g', '1,000', '1 000',
  '12345678901234567890', '-', '--', '---', '...', '.', '+', '-x', '?x', ':x', 'x:', 'a:b', 'a: b', 'x#y', 'x #y',
  '#x', '@x', '`x`', '%x', '!x', '&x', '*x', '|', '>', '[x]', '{x}', 'x]', 'x}', 'x,y', "it's", '"q"', 'a\\b',
  'x\u00a0y', '\u00a0', 'x\ty', 'x\u0085', '<<', '__proto__', '-1', '+x', '~x', 'null x',
];
const NASTY_CHARS = [
  'a', 'b', 'Z', '0', '1', '9', ' ', ' ', ':', '#', '-', '.', "'", '"', '\\', ',', '[', ']', '{', '}', '?', '!', '&', '*',
  '|', '>', '%', '@', '`', '~', '_', '/', '\t', '\u00a0', 'é', '日', '🚀', '\ud800', '\r', '\n', '+', 'e', 'x', 'n', '<',
];
const DQ_PIECES = ['a', ' ', "'", '#', ':', '\\"', '\\\\', '\\n', '\\t', '\\/', '\\ ', '\\0', '\\e', '\\_', '\\N', '\\x41', '\\u00e9', '\\U0001F680', '\\ud83d', '\\q', '\\x4', '\\U00110000', '日'];

const nastyText = fc.array(fc.constantFrom(...NASTY_CHARS), { maxLength: 8 }).map((cs) => cs.join(''));
/** The tricky scalars that are valid plain scalars anywhere in block or flow context. */
const PLAIN_TRICKY = TRICKY.filter((t) => !/[:#\t\u0085[\]{},'"`@%!&*|>?]|^[-.~<_]/.test(t) || /^[-+.~]?[0-9a-zA-Z.]+$/.test(t));

function scalar(nasty: boolean): fc.Arbitrary<string> {
  const plain = nasty ? fc.oneof(fc.constantFrom(...NICE_WORDS), fc.constantFrom(...TRICKY), nastyText) : fc.constantFrom(...NICE_WORDS, ...PLAIN_TRICKY);
  const quotable = nasty
    ? fc.oneof(fc.constantFrom(...NICE_WORDS), fc.constantFrom(...TRICKY), nastyText)
    : fc.oneof(fc.constantFrom(...NICE_WORDS), fc.constantFrom(...TRICKY.filter((t) => !/[\t\u0085]/.test(t))));
  return fc.oneof(
    { weight: 4, arbitrary: plain },
    { weight: 2, arbitrary: quotable.map((t) => `'${t.replace(/'/g, "''")}'`) },
    { weight: nasty ? 1 : 0, arbitrary: nastyText.map((t) => `'${t}'`) },
    { weight: 2, arbitrary: fc.array(fc.constantFrom(...(nasty ? DQ_PIECES : DQ_PIECES.filter((p) => !/\\(q|x4|U0011)/.test(p)))), { maxLength: 6 }).map((p) => `"${p.join('')}"`) },
    { weight: nasty ? 1 : 0, arbitrary: fc.constantFrom('[x]', '{a: 1}', '', '[]') },
  );
}

function flowSeq(item: fc.Arbitrary<string>): fc.Arbitrary<string> {
  return fc
    .tuple(fc.array(fc.tuple(fc.constantFrom('', ' ', '  '), item, fc.constantFrom('', ' ')), { maxLength: 5 }), fc.constantFrom(',', ', ', ' , '), fc.boolean())
    .map(([items, sep, trailing]) => `[${items.map(([a, v, b]) => a + v + b).join(sep)}${trailing && items.length > 0 ? ',' : ''}]`);
}

const COMMENTS = ['', '', '', ' # c', '  #c: d', '#c', ' #'];

/** A block sequence below its key: `-` lines at one indentation, with comments and blank lines. */
function blockSeq(item: fc.Arbitrary<string>, nasty: boolean): fc.Arbitrary<string> {
  const line = fc.oneof(
    { weight: 6, arbitrary: fc.tuple(item, fc.constantFrom(...(nasty ? COMMENTS : ['', ' # c']))).map(([v, c]) => `- ${v}${c}`) },
    { weight: 1, arbitrary: item.map((v) => `-   ${v}`) },
    { weight: 1, arbitrary: fc.constantFrom('-', '- ', '- # c', '', '   ', '# c', '   # c') },
    { weight: nasty ? 1 : 0, arbitrary: fc.constantFrom(' - x', '-x', '  more', '- - x', '- k: v', '\t- x') },
  );
  return fc
    .tuple(fc.constantFrom(0, 2, 2, 4), fc.array(line, { minLength: 1, maxLength: 4 }))
    .map(([indent, lines]) => lines.map((l) => (l === '' ? l : ' '.repeat(indent) + l)).join('\n'));
}

function doc(nasty: boolean): fc.Arbitrary<string> {
  const key = nasty
    ? fc.oneof(
        { weight: 30, arbitrary: fc.constantFrom(...NICE_KEYS) },
        { weight: 10, arbitrary: fc.oneof(nastyText, fc.constantFrom(...TRICKY)) },
        // around the 1024-character limit on implicit keys
        { weight: 1, arbitrary: fc.integer({ min: 995, max: 1030 }).map((n) => 'k'.repeat(n)) },
      )
    : fc.constantFrom(...NICE_KEYS);
  const item = scalar(nasty);
  const value = fc.oneof(
    { weight: 5, arbitrary: item.map((v) => ` ${v}`) },
    { weight: 2, arbitrary: flowSeq(item).map((v) => ` ${v}`) },
    { weight: 2, arbitrary: blockSeq(nasty ? fc.oneof(item, flowSeq(item)) : item, nasty).map((v) => `\n${v}`) },
    { weight: 1, arbitrary: fc.constantFrom('', ' ', ' # c') },
  );
  const entry = fc
    .tuple(key, fc.constantFrom('', '', '', ' '), value, fc.constantFrom(...(nasty ? COMMENTS : ['', '', ' # c'])))
    .map(([k, sp, v, c]) => ({ key: k, line: v.startsWith('\n') || v.trim() === '' || v.includes('#') ? `${k}${sp}:${v}` : `${k}${sp}:${v}${c}` }));
  const extra = fc
    .constantFrom('', '   ', '# comment', '  # indented', ...(nasty ? ['---', '...', ' x: 1', '- y', '? k', '%YAML 1.2', 'a', '\t'] : []))
    .map((line) => ({ key: line, line }));
  // duplicate keys are a YAML error: only nasty documents have them
  const lines = fc.oneof({ weight: 6, arbitrary: entry }, { weight: 1, arbitrary: extra });
  const body = nasty
    ? fc.array(lines, { minLength: 1, maxLength: 7 })
    : fc.uniqueArray(lines, { minLength: 1, maxLength: 7, selector: (l) => l.key });
  return fc
    .tuple(body, fc.constantFrom('\n', '\n', '\r\n', ...(nasty ? ['\r'] : [])), fc.boolean())
    .map(([ls, eol, trailing]) => (ls.map((l) => l.line).join('\n') + (trailing ? '\n' : '')).replace(/\n/g, eol));
}

/** A well-formed document with one to three characters inserted, deleted or replaced. */
const mangled = fc
  .tuple(doc(false), fc.array(fc.tuple(fc.nat(), fc.constantFrom(...NASTY_CHARS, ''), fc.boolean()), { minLength: 1, maxLength: 3 }))
  .map(([d, edits]) => {
    let s = d;
    for (const [at, ch, replace] of edits) {
      const i = at % (s.length + 1);
      s = s.slice(0, i) + ch + s.slice(replace ? i + 1 : i);
    }
    return s;
  });

/** Short strings over YAML's punctuation, to reach structures no grammar above thought of. */
const soup = fc
  .array(fc.constantFrom('a', 'b', '1', ' ', ' ', ':', ': ', '-', '- ', '\n', '\n', '\n  ', '#', ' #', "'", '"', '[', ']', ',', '\\', '0', '.', 'e', '~', '?', '{', '\r\n'), { maxLength: 24 })
  .map((cs) => cs.join(''));

/** A well-formed document whose last line (then maybe blank ones) opens a flow sequence and never closes it. */
const leftOpen = fc
  .tuple(doc(false), fc.constantFrom(...NICE_KEYS), flowSeq(scalar(false)), fc.nat(), fc.constantFrom('', '\n', '\n  \n', '  '))
  .map(([d, key, seq, cut, tail]) => `${d.replace(/\r?\n$/, '')}\nzz${key}: ${seq.slice(0, 1 + (cut % seq.length))}${tail}`);

describe('parseSimpleYaml: generated documents', () => {
  it('agrees with the yaml package on documents that leave a flow sequence open', () => {
    let answered = 0;
    fc.assert(
      fc.property(leftOpen, (raw) => {
        agrees(raw);
        if (readSimpleFrontmatter(raw)?.error) answered++;
      }),
      { numRuns: 5000, seed: 2525 },
    );
    expect(answered).toBeGreaterThan(1000);
  });

  it('agrees with the yaml package on well-formed frontmatter and accepts most of it', () => {
    let accepted = 0;
    let mappings = 0;
    fc.assert(
      fc.property(doc(false), (raw) => {
        const slow = viaYaml(raw);
        // documents of only comments are null, which the fast path leaves to the package
        if (slow.errors === 0 && slow.value !== null) mappings++;
        if (agrees(raw)) accepted++;
      }),
      { numRuns: 3000, seed: 4242 },
    );
    expect(mappings).toBeGreaterThan(2000);
    expect(accepted / mappings).toBeGreaterThanOrEqual(0.9);
  });

  it('agrees with the yaml package on nasty frontmatter', () => {
    let accepted = 0;
    fc.assert(
      fc.property(doc(true), (raw) => {
        if (agrees(raw)) accepted++;
      }),
      { numRuns: 20000, seed: 1717 },
    );
    // the property only means something if the fast path answers some of these
    expect(accepted).toBeGreaterThan(250);
  });

  it('agrees with the yaml package on mangled frontmatter', () => {
    let accepted = 0;
    fc.assert(
      fc.property(mangled, (raw) => {
        if (agrees(raw)) accepted++;
      }),
      { numRuns: 20000, seed: 99 },
    );
    expect(accepted).toBeGreaterThan(500);
  });

  it('agrees with the yaml package on punctuation soup', () => {
    let accepted = 0;
    fc.assert(
      fc.property(soup, (raw) => {
        if (agrees(raw)) accepted++;
      }),
      { numRuns: 100000, seed: 5 },
    );
    expect(accepted).toBeGreaterThan(500);
  });
});

// --------------------------------------------------------------- real vaults

/** The YAML between the fences, sliced as src/markdown/extract.ts does, or null. */
function frontmatterOf(text: string): string | null {
  const m = /^\uFEFF?---[ \t]*(\r\n|\r|\n)/.exec(text);
  if (!m) return null;
  const lines = text.slice(m[0].length).split(/(?<=\r\n|\r(?!\n)|\n)/);
  let raw = '';
  for (const line of lines) {
    if (/^---[ \t]*(\r\n|\r|\n)?$/.test(line)) return raw.replace(/(\r\n|\r|\n)$/, '');
    raw += line;
  }
  return null;
}

function markdownFiles(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) markdownFiles(p, out);
    else if (name.endsWith('.md')) out.push(p);
  }
  return out;
}

describe('parseSimpleYaml: real and generated vaults', () => {
  it('slices frontmatter like the extractor', () => {
    expect(frontmatterOf('---\na: 1\nb: 2\n---\nbody')).toBe('a: 1\nb: 2');
    expect(frontmatterOf('---\r\na: 1\r\n---\r\n')).toBe('a: 1');
    expect(frontmatterOf('---\n---\n')).toBe('');
    expect(frontmatterOf('---\na: 1\n')).toBeNull();
  });

  const hasCorpus = existsSync(corpus);
  (hasCorpus ? it : it.skip)(
    hasCorpus
      ? 'agrees on every frontmatter block of the Obsidian Help vault (shared corpora)'
      : 'on the Obsidian Help vault — skipped: the shared corpora (../shared/corpora/obsidian-help-en) are absent',
    () => {
      let blocks = 0;
      let accepted = 0;
      for (const f of markdownFiles(corpus)) {
        const raw = frontmatterOf(readFileSync(f, 'utf8'));
        if (raw === null) continue;
        blocks++;
        if (agrees(raw)) accepted++;
      }
      expect(blocks).toBeGreaterThan(100);
      expect(accepted / blocks).toBeGreaterThanOrEqual(0.9);
    },
  );

  it('agrees on the frontmatter of 3,000 generated notes and accepts every valid mapping', () => {
    let accepted = 0;
    let mappings = 0;
    for (let i = 0; i < 3000; i++) {
      const raw = frontmatterOf(generateNote(2024, i, { sections: 1 }));
      if (raw === null) continue;
      const slow = viaYaml(raw);
      // the generator also writes empty blocks and `broken: [unclosed`
      if (slow.errors === 0 && slow.value !== null) mappings++;
      if (agrees(raw)) accepted++;
    }
    expect(mappings).toBeGreaterThan(1500);
    expect(accepted).toBe(mappings);
  });
});
