/**
 * fast-check arbitraries derived from an action's TypeBox (JSON Schema)
 * declarations: values the schema accepts, shaped by the field's name where
 * that helps a request get past validation into the handler (paths, ids,
 * dates, tags), and values it must refuse (wrong types, sizes, missing and
 * unknown fields, deep nesting).
 */
import fc from 'fast-check';
import type { AnyAction } from '../../src/actions/registry.js';
import { PATH_FIELDS, type Parts } from './inputs.js';

type Json = any;

/** Values the running Home holds, so generated inputs can name real things. */
export interface Pools {
  paths: string[];
  noteIds: string[];
  blockIds: string[];
  taskIds: string[];
  tags: string[];
  userIds: string[];
}

/** No generated request may reach beyond loopback: every URL-like field gets one of these. */
const URLS = ['http://127.0.0.1:9/x', 'https://[::1]:9/', 'http://0x7f000001:9/', 'ftp://127.0.0.1/', 'javascript:alert(1)', 'not a url', '', 'http://', 'file:///etc/passwd'];

const NASTY = [
  '', ' ', '\u0000', '\n', '\r\n', '\t', '..', '../', '/', '\\', '%00', '%2e%2e%2f', '${{7*7}}', '{{title}}', '<script>alert(1)</script>',
  "'; DROP TABLE x;--", '---\na: [', '---\n---', '- - -', '[[', ']]', '[[x|y]]', '#', '#tag/', '#a/b/c', '![[x]]', '^block', '- [ ] task',
  '\u202e', '\ufeff', '\ud800', '\u0085', '\u2028', '😀', 'Ω≈ç√∫', 'NaN', 'null', 'true', '-1', '1e309', '0x10', '{}', '[]', 'CON',
  '.git/config', '.obsidian/app.json', '.quire/x', 'Notes/', 'Notes/a.md', 'Journal', '*', '?', '&', '=', '+', ' \t ', '📝'.repeat(70),
  'a'.repeat(256), 'a/'.repeat(200), 'é'.repeat(300), 'x'.repeat(70_000), '\u0301'.repeat(500), '2026-02-30', '9999-99-99', '25:61',
  // Frontmatter that is costly to parse: deep flow nesting, deep block nesting, an alias bomb.
  `---\na: ${'['.repeat(5_000)}\n---\nbody`,
  `---\n${Array.from({ length: 400 }, (_, i) => `${' '.repeat(i)}k${i}:`).join('\n')}\n---\n`,
  `---\na: &a [x,x,x,x,x,x,x,x,x]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: [*d,*d,*d,*d,*d,*d,*d,*d,*d]\n---\n`,
  `${'#'.repeat(3_000)} ${'*'.repeat(20_000)} ${'[['.repeat(10_000)}`,
  `- [ ] ${'x '.repeat(20_000)}`,
];

const str = (maxLength = 40) =>
  fc.oneof(
    { weight: 3, arbitrary: fc.string({ maxLength }) },
    { weight: 2, arbitrary: fc.string({ unit: 'grapheme', maxLength }) },
    { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength }) },
    { weight: 2, arbitrary: fc.constantFrom(...NASTY) },
    { weight: 1, arbitrary: fc.lorem({ maxCount: 8 }) },
  );

const segment = fc.oneof(fc.stringMatching(/^[A-Za-z0-9 _.-]{1,12}$/), fc.constantFrom('Notes', 'Journal', 'Sub', 'Views', 'Templates', 'a.md', 'é', '.hidden'));
const relPath = fc.array(segment, { minLength: 1, maxLength: 4 }).map((s) => s.join('/'));
const dateStr = fc.date({ min: new Date('1900-01-01'), max: new Date('2200-01-01'), noInvalidDate: true }).map((d) => d.toISOString().slice(0, 10));
const instant = fc.date({ min: new Date('1970-01-01'), max: new Date('2100-01-01'), noInvalidDate: true }).map((d) => d.toISOString());

function fromPool(pool: string[], other: fc.Arbitrary<string>): fc.Arbitrary<string> {
  return pool.length ? fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...pool) }, { weight: 1, arbitrary: other }) : other;
}

/** A string the schema accepts, guided by the field's name. */
function validString(s: Json, name: string, pools: Pools): fc.Arbitrary<string> {
  if (s.format === 'uuid') return fromPool([...pools.userIds], fc.uuid());
  if (s.format === 'date-time') return instant;
  if (s.format === 'date') return dateStr;
  if (typeof s.pattern === 'string') {
    try {
      return fc.stringMatching(new RegExp(s.pattern));
    } catch {
      /* a pattern fast-check cannot generate from: plain strings below */
    }
  }
  const n = name.toLowerCase();
  if (PATH_FIELDS.has(n) && n !== 'from' && n !== 'to') return fromPool(pools.paths, fc.oneof(relPath, str()));
  if (/(^|_)url$|endpoint|uri$/.test(n)) return fc.constantFrom(...URLS);
  if (n === 'block_id') return fromPool(pools.blockIds, str(20));
  if (n === 'task_id') return fromPool(pools.taskIds, str(20));
  if (n === 'id' || n === 'note_id' || n === 'item_id') return fromPool([...pools.noteIds, ...pools.blockIds], fc.oneof(fc.uuid(), str(20)));
  if (n === 'user_id') return fromPool(pools.userIds, fc.uuid());
  if (n === 'date' || n === 'from' || n === 'to') return fc.oneof({ weight: 4, arbitrary: dateStr }, { weight: 1, arbitrary: str(12) });
  if (n === 'tz' || n === 'timezone' || n === 'x-svc-timezone') return fc.constantFrom('UTC', 'Europe/Paris', 'America/New_York', 'Asia/Kolkata', 'Nope/Zone', '+05:00', '');
  if (n === 'instant' || n === 'now' || n === 'start' || n === 'end' || n === 'due') return fc.oneof(instant, dateStr, str(20));
  if (n === 'tag' || n === 'old_tag' || n === 'new_tag') return fromPool(pools.tags, fc.oneof(fc.stringMatching(/^[a-z][a-z0-9/_-]{0,20}$/), str(20)));
  const min = s.minLength ?? 0;
  const max = s.maxLength ?? 200;
  return str(Math.min(max, 200)).filter((v) => v.length >= min && v.length <= max);
}

/** Values the schema accepts. */
export function validOf(s: Json, name: string, pools: Pools, depth = 0): fc.Arbitrary<Json> {
  if (!s || typeof s !== 'object' || depth > 6) return fc.constant(null);
  if (s.const !== undefined) return fc.constant(s.const);
  if (Array.isArray(s.anyOf)) return fc.oneof(...s.anyOf.map((b: Json) => validOf(b, name, pools, depth + 1)));
  if (Array.isArray(s.enum)) return fc.constantFrom(...s.enum);
  switch (s.type) {
    case 'string':
      return validString(s, name, pools);
    case 'integer': {
      const min = s.minimum ?? (s.exclusiveMinimum !== undefined ? s.exclusiveMinimum + 1 : -1_000_000);
      const max = s.maximum ?? (s.exclusiveMaximum !== undefined ? s.exclusiveMaximum - 1 : 1_000_000_000_000);
      return fc.oneof(fc.integer({ min: Math.max(min, -(2 ** 31)), max: Math.min(max, 2 ** 31 - 1) }), fc.constantFrom(min, max));
    }
    case 'number':
      return fc.double({ noNaN: true, noDefaultInfinity: true, min: s.minimum ?? -1e9, max: s.maximum ?? 1e12 });
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'array':
      return fc.array(validOf(s.items, name === 'tags' ? 'tag' : name, pools, depth + 1), {
        minLength: s.minItems ?? 0,
        maxLength: Math.max(s.minItems ?? 0, Math.min(s.maxItems ?? 6, 6)),
      });
    case 'object': {
      const keys = Object.keys(s.properties ?? {});
      if (name === 'subscription') {
        return fc.record({ endpoint: fc.constantFrom(...URLS), keys: fc.record({ p256dh: str(90), auth: str(24) }) }, { requiredKeys: [] });
      }
      if (keys.length === 0) return fc.dictionary(str(12), fc.jsonValue({ maxDepth: 3 }), { maxKeys: 6 });
      const rec: Record<string, fc.Arbitrary<Json>> = {};
      for (const k of keys) rec[k] = validOf(s.properties[k], k, pools, depth + 1);
      return fc.record(rec, { requiredKeys: (s.required ?? []).filter((k: string) => keys.includes(k)) });
    }
    default:
      return fc.jsonValue({ maxDepth: 4 });
  }
}

const deep = (n: number, leaf: Json = 1): Json => {
  let v: Json = leaf;
  for (let i = 0; i < n; i++) v = i % 2 ? { a: v } : [v];
  return v;
};

/** Values the schema must refuse (or, for loose schemas, values at its edges). */
export function invalidOf(s: Json, name: string, pools: Pools): fc.Arbitrary<Json> {
  const wrongTypes = fc.oneof(
    fc.integer(),
    fc.double(),
    fc.boolean(),
    fc.constant(null),
    fc.string({ maxLength: 20 }),
    fc.array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 4 }),
    fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 }),
  );
  const extremes = fc.constantFrom<Json>(
    '',
    'x'.repeat(100_000),
    -1,
    0,
    2 ** 53,
    -(2 ** 53),
    1e308,
    -0,
    0.5,
    deep(64),
    deep(2_000),
    Array.from({ length: 2_000 }, (_, i) => `t${i}`),
    { ['__proto__']: { polluted: true } },
    { constructor: { prototype: { polluted: true } } },
  );
  const options: fc.Arbitrary<Json>[] = [wrongTypes, extremes];
  if (s && s.type === 'object' && s.properties) {
    const keys = Object.keys(s.properties);
    const valid = validOf(s, name, pools);
    // One required field dropped, one unknown field added, or one field given a wrong value.
    options.push(
      valid.map((v: Json) => {
        const o = { ...v };
        const req = s.required ?? [];
        if (req.length) delete o[req[0]];
        return o;
      }),
      valid.map((v: Json) => ({ ...v, unknown_field: 1 })),
    );
    if (keys.length) {
      options.push(
        fc.tuple(valid, fc.constantFrom(...keys), fc.oneof(wrongTypes, extremes)).map(([v, k, bad]) => ({ ...v, [k]: bad })),
      );
    }
  }
  return fc.oneof(...options);
}

/** Mostly-valid inputs for every part of an action, with a share of invalid ones. */
export function partsOf(action: AnyAction, pools: Pools): fc.Arbitrary<Parts & { rawBody?: string; contentType?: string }> {
  const part = (schema: Json, name: string) =>
    schema ? fc.oneof({ weight: 3, arbitrary: validOf(schema, name, pools) }, { weight: 1, arbitrary: invalidOf(schema, name, pools) }) : fc.constant(undefined);
  const toStrings = (v: Json): Record<string, string> => {
    const out: Record<string, string> = {};
    if (v && typeof v === 'object' && !Array.isArray(v)) {
      for (const [k, x] of Object.entries(v)) if (x !== undefined) out[k] = typeof x === 'string' ? x : JSON.stringify(x);
    }
    return out;
  };
  const { input } = action;
  return fc
    .record({
      path: part(input.path, 'path'),
      query: part(input.query, 'query'),
      headers: part(input.headers, 'headers'),
      body: part(input.body, 'body'),
      // A share of bodies that are not JSON at all, or sent with the wrong type.
      raw: fc.option(
        fc.oneof(
          fc.constantFrom('{', '{"a":', 'null', '[]', '"x"', '\u0000', '{"__proto__":{"x":1}}', '{'.repeat(10_000), '[' + '1,'.repeat(5_000) + '1]'),
          fc.string({ maxLength: 50 }),
        ),
        { freq: 12 },
      ),
      contentType: fc.option(fc.constantFrom('text/plain', 'application/x-www-form-urlencoded', 'application/json; charset=latin1', 'multipart/form-data', ''), { freq: 15 }),
    })
    .map(({ path, query, headers, body, raw, contentType }) => {
      const p = toStrings(path);
      // Fastify cannot route an empty parameter; the schema fuzz is about what a handler sees.
      for (const k of Object.keys(input.path?.properties ?? {})) if (!p[k]) p[k] = 'x';
      return {
        path: p,
        query: toStrings(query),
        headers: toStrings(headers),
        body,
        rawBody: raw ?? undefined,
        contentType: contentType ?? undefined,
      };
    });
}
