/**
 * The action catalog against the spec. A spec action's facts (method, route, tool, scopes, effect,
 * encodings, surfaces, recent confirmation, area) are read from spec/actions.json by specAction,
 * so they are not compared here; what an area still writes can go wrong and is checked:
 * - every spec row is declared exactly once, with specAction, and nothing else claims a spec name;
 * - the input schemas against the spec's parameter text (the `params` column, parsed here): every
 *   path, query, header and body parameter it names exists with its type and required-ness, and
 *   nothing more; a few negative tests prove the checker fails on a broken declaration;
 * - extensions are documented in docs/;
 * - validation messages name the field, also inside typed batch items;
 * - the registry module (sorting, duplicates, lookups).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { Type, TypeGuard } from '@sinclair/typebox';
import {
  AREAS,
  actionsByArea,
  buildRegistry,
  findAction,
  findActionByTool,
  registry,
  type AnyAction,
} from '../src/actions/registry.js';
import { isSpecDeclaration, specAction } from '../src/actions/spec.js';
import { validateInput } from '../src/actions/validate.js';
import { AppError } from '../src/core/errors.js';

// ---------------------------------------------------------------------------------------------
// The spec catalog

interface SpecAction {
  name: string;
  method: string;
  route: string;
  scopes: string[];
  effect: 'read' | 'destructive';
  request_encoding: string | null;
  response_encoding: string | null;
  surfaces: string[];
  tool: string;
  recent_confirmation: boolean;
  area: string;
  document: string;
  params: string;
}

const spec: SpecAction[] = JSON.parse(readFileSync(new URL('../spec/actions.json', import.meta.url), 'utf8'));
const specByName = new Map(spec.map((a) => [a.name, a]));

// ---------------------------------------------------------------------------------------------
// The parser of the spec's "Parameters and rules" text

type Part = 'path' | 'query' | 'headers' | 'body';

interface ParamSpec {
  part: Part;
  /** Header names lower-cased, as the schemas hold them. */
  name: string;
  /** true = `req`, false = `opt`; path parameters are always required. */
  required: boolean;
  /** The type words after the name (`string/null`, `int64 >= 0`, ...), backticked tokens removed. */
  desc: string;
  /** Backticked enum values listed for the parameter (`one of ...`, `a` or `b`). */
  enums: string[];
}

interface ParsedParams {
  params: ParamSpec[];
  /** The text names a body without naming members: a bare JSON boolean, or base64 bytes. */
  bareBody: 'boolean' | 'bytes' | null;
}

const KEYWORD = /^(tool|path|query|headers?|body)\b:?/i;
const REFERENCE = /^(?:same\s+)?(path\s+and\s+)?body\s+as\s+([a-z0-9_]+)/i;

function removeParentheses(text: string): string {
  let out = text;
  for (;;) {
    const next = out.replace(/\([^()]*\)/g, '');
    if (next === out) return out;
    out = next;
  }
}

function partOf(keyword: string): Part | 'tool' {
  const k = keyword.toLowerCase();
  if (k === 'tool') return 'tool';
  if (k === 'header' || k === 'headers') return 'headers';
  return k as Part;
}

interface Token {
  text: string;
  before: string;
  kind: 'name' | 'enum' | 'other';
}

/** Classifies the backticked tokens of one clause: parameter names, enum values, or mentions. */
function tokenize(rest: string): { tokens: Token[]; tail: string; prefix: string } {
  const tokens: Token[] = [];
  const re = /`([^`]+)`/g;
  let last = 0;
  let m: RegExpExecArray | null;
  while ((m = re.exec(rest)) !== null) {
    const before = rest.slice(last, m.index);
    const prev = tokens[tokens.length - 1];
    let kind: Token['kind'];
    if (!prev) kind = 'name';
    else if (/^\s*,\s*$/.test(before)) kind = prev.kind;
    else if (/\b(or|of)\s*$/.test(before)) kind = 'enum';
    else if (/^\s+$/.test(before)) kind = prev.kind === 'name' || prev.kind === 'enum' ? 'enum' : 'other';
    else if (/\w/.test(before) && /,\s*$/.test(before)) kind = 'name';
    else kind = 'other';
    tokens.push({ text: m[1]!, before, kind });
    last = m.index + m[0].length;
  }
  const prefix = tokens.length > 0 ? tokens[0]!.before : rest;
  return { tokens, tail: rest.slice(last), prefix };
}

/**
 * Parses an action's params text into the parameters it lists. Sentences that do not start with a
 * part keyword (`path`, `query`, `header(s)`, `body`, `tool`) or a body reference are prose and
 * skipped; within a sentence, parsing stops at the first clause that is neither a keyword clause
 * nor a continuation starting with a backticked name.
 */
function parseParams(entry: SpecAction, lookup: Map<string, SpecAction> = specByName): ParsedParams {
  const drafts: Array<Omit<ParamSpec, 'required'> & { required: boolean | undefined }> = [];
  let bareBody: ParsedParams['bareBody'] = null;
  const allOptional = new Set<Part>();
  const text = removeParentheses(entry.params);
  for (const sentence of text.split(/\.\s+|\.$/)) {
    const clauses = sentence.split(';').map((c) => c.trim());
    const first = clauses[0] ?? '';
    if (!KEYWORD.test(first) && !REFERENCE.test(first)) continue;
    let part: Part | 'tool' | null = null;
    for (const clause of clauses) {
      const ref = REFERENCE.exec(clause);
      if (ref) {
        const other = lookup.get(ref[2]!);
        if (!other) throw new Error(`${entry.name}: params refer to unknown action ${ref[2]}`);
        const inherited = parseParams(other, lookup).params.filter(
          (p) => p.part === 'body' || (ref[1] !== undefined && p.part === 'path'),
        );
        drafts.push(...inherited.map((p) => ({ ...p, enums: [...p.enums] })));
        part = null;
        continue;
      }
      let rest: string;
      const kw = KEYWORD.exec(clause);
      if (kw) {
        part = partOf(kw[1]!);
        rest = clause.slice(kw[0].length);
      } else if (clause.startsWith('`') && part !== null) {
        rest = clause;
      } else {
        break;
      }
      if (part === 'tool') continue;
      const { tokens, tail, prefix } = tokenize(rest);
      const prose = (tokens.map((t) => t.before).join(' ') + ' ' + tail).replace(/`[^`]*`/g, '');
      if (/\ball opt\b/.test(prose)) allOptional.add(part);
      if (tokens.length === 0) {
        if (part === 'body' && /bare JSON boolean/i.test(rest)) bareBody = 'boolean';
        else if (part === 'body' && /base64 bytes/i.test(rest)) bareBody = 'bytes';
        continue;
      }
      // Group consecutive names; each group shares the description up to the next group.
      let i = 0;
      while (i < tokens.length) {
        const names: string[] = [];
        while (i < tokens.length && tokens[i]!.kind === 'name' && (names.length === 0 || /^\s*,\s*$/.test(tokens[i]!.before))) {
          names.push(tokens[i]!.text);
          i++;
        }
        if (names.length === 0) throw new Error(`${entry.name}: cannot parse params clause "${clause}"`);
        const enums: string[] = [];
        let desc = prefix;
        while (i < tokens.length && !(tokens[i]!.kind === 'name')) {
          desc += ' ' + tokens[i]!.before;
          if (tokens[i]!.kind === 'enum') enums.push(tokens[i]!.text);
          i++;
        }
        desc += ' ' + (i < tokens.length ? tokens[i]!.before : tail);
        desc = desc.replace(/\s+/g, ' ').trim();
        const req = /\breq\b/.test(desc) ? true : /\bopt\b/.test(desc) ? false : undefined;
        for (const name of names) {
          drafts.push({
            part,
            name: part === 'headers' ? name.toLowerCase() : name,
            required: part === 'path' ? true : req,
            desc,
            enums,
          });
        }
      }
    }
  }
  // Required-ness the item does not state comes from an `all opt` of its part.
  const params: ParamSpec[] = drafts.map((p) => {
    if (p.required !== undefined) return { ...p, required: p.required };
    if (allOptional.has(p.part)) return { ...p, required: false };
    throw new Error(`${entry.name}: params do not say whether ${p.part} \`${p.name}\` is req or opt`);
  });
  // Route placeholders are path parameters even where the text does not list them.
  for (const name of placeholders(entry.route)) {
    if (!params.some((p) => p.part === 'path' && p.name === name)) {
      params.push({ part: 'path', name, required: true, desc: '', enums: [] });
    }
  }
  return { params, bareBody };
}

function placeholders(route: string): string[] {
  return [...route.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]!);
}

// ---------------------------------------------------------------------------------------------
// The checker

type Json = Record<string, any>;

function branches(schema: Json): Json[] {
  return Array.isArray(schema.anyOf) ? schema.anyOf.flatMap(branches) : [schema];
}

function typesOf(schema: Json): Set<string> {
  const out = new Set<string>();
  for (const b of branches(schema)) {
    if (typeof b.type === 'string') out.add(b.type);
    else if (Array.isArray(b.type)) for (const t of b.type) out.add(t);
    else out.add('any');
  }
  return out;
}

function constsOf(schema: Json): string[] {
  return branches(schema)
    .filter((b) => typeof b.const === 'string')
    .map((b) => b.const as string)
    .sort();
}

/** What the type words of a parameter demand of its schema; returns the problems. */
function checkType(where: string, p: ParamSpec, schema: Json): string[] {
  const problems: string[] = [];
  const d = p.desc;
  const types = typesOf(schema);
  const need = (t: string, why: string) => {
    if (!types.has(t)) problems.push(`${where}: spec says ${why} (\`${d}\`) but the schema allows ${[...types].join('|')}`);
  };
  if (/\barray\b/.test(d)) need('array', 'array');
  else {
    if (/\bobject\b/.test(d)) need('object', 'object');
    if (/\bany\b/.test(d)) need('any', 'any');
    if (/\bboolean\b/.test(d)) need('boolean', 'boolean');
    if (/\bstrings?\b/.test(d)) need('string', 'string');
    if (/\buuid\b/.test(d)) {
      need('string', 'uuid');
      if (!branches(schema).some((b) => b.format === 'uuid')) problems.push(`${where}: spec says uuid but the schema has no format uuid`);
    }
    if (/\bint(32|64|eger)\b/.test(d)) {
      need('integer', 'integer');
      const int = branches(schema).find((b) => b.type === 'integer');
      if (int) {
        if (/>=\s*0\b/.test(d) && int.minimum !== 0) problems.push(`${where}: spec says >= 0 but minimum is ${int.minimum}`);
        const range = /\b(\d+) to (\d+)\b/.exec(d);
        if (range && (int.minimum !== Number(range[1]) || int.maximum !== Number(range[2]))) {
          problems.push(`${where}: spec says ${range[0]} but the schema has ${int.minimum} to ${int.maximum}`);
        }
        if (/\bint32\b/.test(d) && !(typeof int.maximum === 'number' && int.maximum <= 2147483647)) {
          problems.push(`${where}: spec says int32 but the schema has no int32 maximum`);
        }
      }
    }
  }
  if (/\/null\b|\bor null\b/.test(d)) need('null', 'null allowed');
  else if (types.has('null') && !/\bnull\b/.test(d)) problems.push(`${where}: the schema allows null but the spec does not`);
  if (p.enums.length > 0) {
    const want = [...p.enums].sort();
    const have = constsOf(schema);
    if (JSON.stringify(want) !== JSON.stringify(have)) {
      problems.push(`${where}: spec enum ${want.join(',')} but the schema allows ${have.join(',') || 'any value'}`);
    }
  }
  return problems;
}

const ENCODINGS_WITH_BODY = new Set(['json', 'base64']);

/** Every difference between the parameters the spec lists and the declaration's input schemas. */
function paramDiffs(entry: SpecAction, def: AnyAction, lookup: Map<string, SpecAction> = specByName): string[] {
  const out: string[] = [];
  const { params, bareBody } = parseParams(entry, lookup);
  const input = def.input as Partial<Record<Part, Json>>;

  for (const part of ['path', 'query', 'headers'] as const) {
    const schema = input[part];
    const listed = params.filter((p) => p.part === part);
    if (schema && schema.type !== 'object') out.push(`${entry.name}: input.${part} is not an object schema`);
    if (listed.length > 0 && !schema) {
      out.push(`${entry.name}: spec lists ${part} ${listed.map((p) => p.name).join(', ')} but input.${part} is missing`);
    }
  }
  const body = input.body;
  const bodyExpected = entry.request_encoding !== null && ENCODINGS_WITH_BODY.has(entry.request_encoding);
  if (bodyExpected && !body) out.push(`${entry.name}: request encoding ${entry.request_encoding} but no body schema`);
  if (!bodyExpected && body) out.push(`${entry.name}: request encoding ${entry.request_encoding} but a body schema is declared`);
  if (body && entry.request_encoding === 'base64' && !(body.type === 'string' && body.contentEncoding === 'base64')) {
    out.push(`${entry.name}: base64 body must be a string with contentEncoding base64`);
  }
  if (body && entry.request_encoding === 'json') {
    if (bareBody === 'boolean') {
      if (body.type !== 'boolean') out.push(`${entry.name}: spec body is a bare JSON boolean`);
    } else if (body.type !== 'object') {
      out.push(`${entry.name}: json body must be an object schema`);
    } else if (body.additionalProperties !== false) {
      out.push(`${entry.name}: json body must set additionalProperties: false`);
    }
  }

  for (const p of params) {
    const schema = p.part === 'body' ? body : input[p.part];
    const where = `${entry.name}: ${p.part} \`${p.name}\``;
    const props = (schema?.properties ?? {}) as Record<string, Json>;
    const member = props[p.name];
    if (!schema || !member) {
      out.push(`${where} is listed in the spec but missing from input.${p.part}`);
      continue;
    }
    const required = Array.isArray(schema.required) && schema.required.includes(p.name);
    if (required !== p.required) {
      out.push(`${where} is ${required ? 'required' : 'optional'} in the schema, spec says ${p.required ? 'req' : 'opt'}`);
    }
    out.push(...checkType(where, p, member));
    if (p.part === 'path' && !p.desc.includes('uuid') && member.minLength !== 1) {
      out.push(`${where}: path strings need minLength 1`);
    }
  }

  // Nothing beyond the spec: every declared member is a listed parameter (headers may add the
  // Public links section's X-Public-Password, which the rows do not repeat).
  for (const part of ['path', 'query', 'headers', 'body'] as const) {
    const schema = input[part];
    if (!schema?.properties) continue;
    const allowed = new Set(params.filter((p) => p.part === part).map((p) => p.name));
    if (part === 'headers' && entry.area === 'Public links') allowed.add('x-public-password');
    for (const key of Object.keys(schema.properties)) {
      if (!allowed.has(key)) out.push(`${entry.name}: input.${part} declares \`${key}\`, which the spec does not list`);
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Tests

describe('catalog: each spec action declared once', () => {
  const declared = AREAS.flatMap((a) => a.actions.map((def) => ({ def, folder: a.folder })));

  it('declares every spec row exactly once, and every non-extension declaration is a spec row', () => {
    expect(spec).toHaveLength(197);
    const count = new Map<string, number>();
    for (const { def } of declared) if (!def.extension) count.set(def.name, (count.get(def.name) ?? 0) + 1);
    const problems = [
      ...spec.filter((e) => count.get(e.name) !== 1).map((e) => `${e.name}: declared ${count.get(e.name) ?? 0} times`),
      ...[...count.keys()].filter((name) => !specByName.has(name)).map((name) => `${name}: not in spec/actions.json and not an extension`),
    ];
    expect(problems).toEqual([]);
  });

  it('declares spec actions with specAction, so their facts come from spec/actions.json alone', () => {
    const restated = declared.filter(({ def }) => !def.extension && !isSpecDeclaration(def)).map(({ def }) => def.name);
    expect(restated).toEqual([]);
  });

  it('gives extensions names the spec does not use', () => {
    const clashing = declared.filter(({ def }) => def.extension && specByName.has(def.name)).map(({ def }) => def.name);
    expect(clashing).toEqual([]);
  });

  it('refuses a specAction name the spec does not declare (a typo cannot become an extension)', () => {
    expect(() => specAction('list_tag', { summary: 'x.' })).toThrow(/spec\/actions.json declares no such action/);
  });

  it('declares each action in the folder of its area', () => {
    const misplaced = declared.filter(({ def, folder }) => AREAS.find((a) => a.area === def.area)?.folder !== folder);
    expect(misplaced.map(({ def, folder }) => `${def.name} (${def.area}) in src/${folder}/`)).toEqual([]);
    expect(new Set(spec.map((e) => e.area))).toEqual(new Set(AREAS.map((a) => a.area)));
  });

  it('documents every extension in docs/ (beyond the generated docs/actions.md)', () => {
    const dir = new URL('../docs/', import.meta.url);
    const docs = readdirSync(dir)
      .filter((f) => f.endsWith('.md') && f !== 'actions.md')
      .map((f) => readFileSync(new URL(f, dir), 'utf8'))
      .join('\n');
    const undocumented = registry.filter((a) => a.extension && !docs.includes(`\`${a.name}\``)).map((a) => a.name);
    expect(undocumented).toEqual([]);
  });

  it.each(spec.map((e) => [e.name, e] as const))('%s: schemas match the params text', (_name, entry) => {
    const def = findAction(entry.name);
    expect(def, `${entry.name} is declared`).toBeDefined();
    expect(paramDiffs(entry, def!)).toEqual([]);
  });
});

describe('catalog: the params parser', () => {
  const parse = (name: string) => {
    const entry = specByName.get(name)!;
    return parseParams(entry).params.map((p) => `${p.part}.${p.name}${p.required ? '' : '?'}`);
  };

  // Each row: a spec action, and the parameters its params text names (`?` = opt).
  it.each([
    ['create_invite', 'body.quota_override_bytes? body.role body.ttl_secs'],
    ['approval_page', 'query.user_code'],
    ['oidc_browser_callback', 'path.provider query.code? query.error? query.state?'],
    ['notes_delete_block_reminder', 'path.id path.reminder_id headers.if-match'],
    ['public_upload_patch', 'path.id headers.tus-resumable headers.upload-offset headers.upload-checksum? path.slug'],
    ['public_upload_create', 'headers.tus-resumable headers.upload-length headers.upload-metadata headers.upload-checksum? headers.upload-conflict-policy? path.slug'],
    ['public_preview', 'query.item? query.path? headers.if-none-match? headers.range? path.slug'],
    // tool names, prose sentences, parenthesised notes and response fields are skipped
    ['backlinks', 'query.path'],
    ['notes_events', 'headers.last-event-id?'],
    ['changes_events', ''],
    ['list_file_assignments', 'query.cursor? query.folder? query.limit?'],
    ['notifications_undo_inbox_mutation', 'path.id body.operation_id'],
    ['notifications_inbox_mark_all_read', 'query.until_ms?'],
    ['canvas_elements_event', 'path.id body.elements body.font?'],
    ['notes_composer_parse', 'body.mode body.now body.text'],
    ['system_info', ''],
  ])('reads the parameters of %s', (name, want) => {
    expect(parse(name)).toEqual(want.split(' ').filter(Boolean));
  });

  it('tells enum values from parameter names', () => {
    const role = parseParams(specByName.get('update_role')!).params.find((p) => p.name === 'role')!;
    expect(role.enums).toEqual(['owner', 'admin', 'member', 'guest']);
    expect(parse('calendar_create_feed')).toEqual([
      'body.color?',
      'body.detail',
      'body.include_notes?',
      'body.include_tasks?',
      'body.name',
      'body.source',
      'body.source_id?',
    ]);
    const kind = parseParams(specByName.get('oidc_callback')!).params.find((p) => p.name === 'kind')!;
    expect(kind).toMatchObject({ required: false, enums: ['web', 'installation'] });
    expect(parse('shared_canvas_export')).toEqual([
      'path.owner',
      'path.id',
      'query.format',
      'query.limit?',
      'query.offset?',
    ]);
    expect(parse('notifications_set_quiet_hours')).toEqual(['body.quiet_end', 'body.quiet_start']);
  });

  it('applies "all opt" to the whole part', () => {
    expect(parse('appearance_put')).toEqual([
      'body.auto_scheme?',
      'body.background?',
      'body.background_assignment?',
      'body.backgrounds?',
      'body.fonts?',
      'body.initialize_auto_scheme?',
    ]);
    expect(parse('notes_journal_patch_entry')).toEqual([
      'path.block_id',
      'headers.if-match',
      'body.date?',
      'body.end?',
      'body.start?',
      'body.title?',
      'body.tz?',
      'body.tags?',
    ]);
    expect(parse('calendar_update_subscription')).toEqual(['path.id', 'body.color?', 'body.name?', 'body.visible?']);
    expect(parse('calendar_preferences_put')).toHaveLength(8);
    expect(parse('calendar_preferences_put').every((p) => p.endsWith('?'))).toBe(true);
  });

  it('follows "same body as" and "body as" references', () => {
    expect(parse('rename_tag')).toEqual(parse('preview_rename'));
    expect(parse('start_rewrite')).toEqual(parse('preview_rename'));
    expect(parse('calendar_update_feed')).toEqual(['path.id', ...parse('calendar_create_feed')]);
    expect(parse('collab_history_undo_preflight').sort()).toEqual(parse('collab_history_undo').sort());
  });

  it('notes bare bodies', () => {
    expect(parseParams(specByName.get('set_share_invites_setting')!).bareBody).toBe('boolean');
    expect(parseParams(specByName.get('public_upload_patch')!).bareBody).toBe('bytes');
  });

  it('refuses text that does not say req or opt', () => {
    const broken = { ...specByName.get('create_invite')!, params: 'body `role` string; `ttl_secs` int64 req' };
    expect(() => parseParams(broken)).toThrow(/req or opt/);
  });
});

describe('catalog: the checker catches broken declarations', () => {
  /** A plain-JSON copy of a declaration (TypeBox's symbol keys dropped), to break on purpose. */
  const copy = (name: string): AnyAction & { input: Record<Part, Json> } =>
    ({ ...findAction(name)!, input: JSON.parse(JSON.stringify(findAction(name)!.input)) }) as never;
  const diffsOf = (def: AnyAction) => paramDiffs(specByName.get(def.name)!, def);
  const dropRequired = (schema: Json, key: string) => {
    schema.required = (schema.required as string[]).filter((k) => k !== key);
  };

  it('passes the unbroken copies', () => {
    for (const name of ['create_invite', 'move_note', 'update_role', 'rename_tag', 'calendar_update_feed']) {
      expect(diffsOf(copy(name))).toEqual([]);
    }
  });

  it('catches a missing body member', () => {
    const def = copy('create_invite');
    delete def.input.body.properties.role;
    dropRequired(def.input.body, 'role');
    expect(diffsOf(def)).toEqual([expect.stringMatching(/body `role` is listed in the spec but missing/)]);
  });

  it('catches a required member declared optional, and an optional one declared required', () => {
    const def = copy('create_invite');
    dropRequired(def.input.body, 'ttl_secs');
    def.input.body.required.push('quota_override_bytes');
    expect(diffsOf(def)).toEqual([
      expect.stringMatching(/`quota_override_bytes` is required in the schema, spec says opt/),
      expect.stringMatching(/`ttl_secs` is optional in the schema, spec says req/),
    ]);
  });

  it('catches a required header left optional or missing', () => {
    const optional = copy('move_note');
    dropRequired(optional.input.headers, 'if-match');
    expect(diffsOf(optional)).toEqual([expect.stringMatching(/headers `if-match` is optional in the schema/)]);
    const missing = copy('move_note');
    delete (missing.input as Partial<Record<Part, Json>>).headers;
    expect(diffsOf(missing).join('\n')).toMatch(/input.headers is missing/);
  });

  it('catches an optional query parameter declared required', () => {
    const def = copy('notifications_snooze_block_reminder');
    def.input.query.required = ['operation_id'];
    expect(diffsOf(def)).toEqual([expect.stringMatching(/query `operation_id` is required in the schema, spec says opt/)]);
  });

  it('catches a wrong enum, a lost null and a wrong range', () => {
    const role = copy('update_role');
    role.input.body.properties.role.anyOf.pop();
    expect(diffsOf(role)).toEqual([expect.stringMatching(/spec enum admin,guest,member,owner but the schema allows admin,member,owner/)]);
    const quota = copy('update_quota');
    quota.input.body.properties.quota_override_bytes = { type: 'integer', minimum: 0 };
    expect(diffsOf(quota)).toEqual([expect.stringMatching(/spec says null allowed/)]);
    const canvas = copy('export_canvas');
    canvas.input.query.properties.limit.maximum = 1000;
    expect(diffsOf(canvas)).toEqual([expect.stringMatching(/spec says 1 to 524288/)]);
  });

  it('catches a member the spec does not list, and a renamed path parameter', () => {
    const extra = copy('rename_passkey');
    extra.input.body.properties.nickname = { type: 'string' };
    expect(diffsOf(extra)).toEqual([expect.stringMatching(/declares `nickname`, which the spec does not list/)]);
    const renamed = copy('rename_passkey');
    renamed.input.path = { type: 'object', properties: { passkey: { type: 'string', minLength: 1 } }, required: ['passkey'] };
    expect(diffsOf(renamed).join('\n')).toMatch(/path `id` is listed in the spec but missing/);
  });

  it('catches broken shared bodies through "same body as" and "body as"', () => {
    const rename = copy('rename_tag');
    delete rename.input.body.properties.new_tag;
    dropRequired(rename.input.body, 'new_tag');
    expect(diffsOf(rename)).toEqual([expect.stringMatching(/rename_tag: body `new_tag` is listed in the spec but missing/)]);
    const feed = copy('calendar_update_feed');
    dropRequired(feed.input.body, 'detail');
    expect(diffsOf(feed)).toEqual([expect.stringMatching(/body `detail` is optional in the schema, spec says req/)]);
  });

  it('catches a body on a none-encoded action', () => {
    const def = copy('list_tags');
    (def.input as Partial<Record<Part, Json>>).body = { type: 'object', properties: {}, additionalProperties: false };
    expect(diffsOf(def)).toEqual([expect.stringMatching(/request encoding none but a body schema is declared/)]);
  });
});

describe('catalog: declarations', () => {
  it('route placeholders equal the path schema keys, all required', () => {
    const problems: string[] = [];
    for (const def of registry) {
      const want = placeholders(def.route).sort();
      const path = def.input.path as Json | undefined;
      const have = Object.keys(path?.properties ?? {}).sort();
      const required = [...((path?.required as string[] | undefined) ?? [])].sort();
      if (JSON.stringify(want) !== JSON.stringify(have)) problems.push(`${def.name}: placeholders ${want} vs path keys ${have}`);
      if (JSON.stringify(want) !== JSON.stringify(required)) problems.push(`${def.name}: path keys not all required`);
      if (path && path.additionalProperties !== false) problems.push(`${def.name}: path must set additionalProperties: false`);
    }
    expect(problems).toEqual([]);
  });

  it('query objects are closed, header objects are open with lower-case names', () => {
    const problems: string[] = [];
    for (const def of registry) {
      const query = def.input.query as Json | undefined;
      const headers = def.input.headers as Json | undefined;
      if (query && query.additionalProperties !== false) problems.push(`${def.name}: query must set additionalProperties: false`);
      if (headers && headers.additionalProperties !== true) problems.push(`${def.name}: headers must set additionalProperties: true`);
      for (const key of Object.keys(headers?.properties ?? {})) {
        if (key !== key.toLowerCase()) problems.push(`${def.name}: header ${key} must be lower-case`);
      }
    }
    expect(problems).toEqual([]);
  });

  it('summaries are one or two plain sentences that state the key rules', () => {
    const problems: string[] = [];
    for (const def of registry) {
      const s = def.summary.trim();
      const sentences = s.split(/(?<=[.!?])\s+(?=[A-Z`])/).filter(Boolean);
      if (s.length < 10 || !/[.]$/.test(s)) problems.push(`${def.name}: summary must be a sentence`);
      if (sentences.length > 2) problems.push(`${def.name}: summary has ${sentences.length} sentences`);
      if (def.recentConfirmation && !/recent confirmation/i.test(s)) problems.push(`${def.name}: summary must mention the recent confirmation`);
      if (def.surfaces.length === 0 && !/browser flow only/i.test(s)) problems.push(`${def.name}: summary must say "Browser flow only"`);
      if (def.scopes.includes('admin') && !/admin only/i.test(s)) problems.push(`${def.name}: summary must say "Admin only"`);
      if (/\b(TODO|TBD)\b/.test(s)) problems.push(`${def.name}: unfinished summary`);
    }
    expect(problems).toEqual([]);
  });

  it('marks only the tus creation body optional (the protocol allows an empty creation request)', () => {
    const optional = registry.filter((a) => a.input.body && TypeGuard.IsOptional(a.input.body)).map((a) => a.name);
    expect(optional).toEqual(['public_upload_create']);
  });
});

describe('catalog: schemas are valid JSON Schema and mean what the spec says', () => {
  const addFormats =
    (addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ?? addFormatsModule;
  const ajv = new Ajv({ strict: false, allErrors: true });
  (addFormats as unknown as (a: Ajv) => void)(ajv);
  const validator = (name: string, part: Part) => ajv.compile(findAction(name)!.input[part]!);

  it('compiles every schema', () => {
    for (const def of registry) {
      for (const part of ['path', 'query', 'headers', 'body'] as const) {
        const schema = def.input[part];
        if (schema) expect(() => ajv.compile(schema), `${def.name}.${part}`).not.toThrow();
      }
    }
  });

  it('checks formats, patterns, ranges and enums', () => {
    const quiet = validator('notifications_set_quiet_hours', 'body');
    expect(quiet({ quiet_start: '22:00', quiet_end: '07:30' })).toBe(true);
    expect(quiet({ quiet_start: '24:00', quiet_end: '07:30' })).toBe(false);
    expect(quiet({ quiet_start: '7:30', quiet_end: '07:30' })).toBe(false);

    const snooze = validator('notifications_snooze_block_reminder', 'body');
    expect(snooze({ minutes: 1 })).toBe(true);
    expect(snooze({ minutes: 10080 })).toBe(true);
    expect(snooze({ minutes: 0 })).toBe(false);
    expect(snooze({ minutes: 10081 })).toBe(false);

    const prefs = validator('calendar_preferences_put', 'body');
    expect(prefs({})).toBe(true);
    expect(prefs({ time_step_minutes: 15, date_format: 'iso', first_day_of_week: null })).toBe(true);
    expect(prefs({ time_step_minutes: 20 })).toBe(false);
    expect(prefs({ unknown: 1 })).toBe(false);

    const parse = validator('notes_composer_parse', 'body');
    expect(parse({ mode: 'task', now: '2026-01-02T09:30', text: 'call mum tomorrow' })).toBe(true);
    expect(parse({ mode: 'task', now: '2026-01-02T09:30:15', text: 'x' })).toBe(true);
    expect(parse({ mode: 'task', now: '2026-01-02T09:30Z', text: 'x' })).toBe(false);
    expect(parse({ mode: 'task', now: '2026-01-02T09:30', text: 'two\nlines' })).toBe(false);

    const reminder = validator('notes_create_block_reminder', 'body');
    expect(reminder({ block_id: 'abc', instant: '2026-01-02T09:30:00Z' })).toBe(true);
    expect(reminder({ block_id: 'abc', instant: 'tomorrow' })).toBe(false);

    const job = validator('get_my_job', 'path');
    expect(job({ id: '3f1c2a9e-8f7b-4c2d-9a1e-2b3c4d5e6f70' })).toBe(true);
    expect(job({ id: 'not-a-uuid' })).toBe(false);

    const quota = validator('update_quota', 'body');
    expect(quota({ quota_override_bytes: null })).toBe(true);
    expect(quota({ quota_override_bytes: 0 })).toBe(true);
    expect(quota({ quota_override_bytes: -1 })).toBe(false);
    expect(quota({})).toBe(true);

    const appPassword = validator('create_app_password', 'body');
    expect(appPassword({ name: 'phone', scopes: [{ scope: 'data', access: 'read' }] })).toBe(true);
    expect(appPassword({ name: 'phone', scopes: [{ scope: 'none', access: 'read' }] })).toBe(false);
    expect(appPassword({ name: 'phone', scopes: [{ scope: 'data', access: 'read', extra: 1 }] })).toBe(false);

    expect(validator('set_share_invites_setting', 'body')(true)).toBe(true);
    expect(validator('set_share_invites_setting', 'body')({ value: true })).toBe(false);

    const upload = validator('public_upload_patch', 'body');
    expect(upload('aGVsbG8=')).toBe(true);
    expect(upload('not base64!')).toBe(false);
  });
});

describe('catalog: validation messages name the field', () => {
  /** The 400 a surface answers for this input, as `field: message`. */
  const refusal = (name: string, raw: Parameters<typeof validateInput>[1]): string => {
    try {
      validateInput(findAction(name)!, raw);
    } catch (e) {
      if (!(e instanceof AppError)) throw e;
      expect(e.status).toBe(400);
      return `${(e.details as { field: string }).field}: ${e.message}`;
    }
    return 'accepted';
  };
  const entry = { text: 'Standup', now: '2026-04-05T10:00', timezone: 'Europe/Berlin' };
  const batch = (...entries: unknown[]) => refusal('notes_journal_create_log_batch', { body: { entries } });

  it.each([
    ['a good batch', batch(entry, { ...entry, attachments: [{ path: 'a.png' }], position: { after: 'abc' }, client_id: null }), 'accepted'],
    ['an empty batch', batch(), 'body.entries: body.entries must not be empty'],
    ['a missing member', batch(entry, { text: 'x', now: entry.now }), 'body.entries[1].timezone: body.entries[1].timezone is required'],
    ['a member of the wrong type', batch({ ...entry, text: 7 }), 'body.entries[0].text: body.entries[0].text must be string'],
    ['an unknown member', batch({ ...entry, colour: 'red' }), 'body.entries[0].colour: body.entries[0].colour is not a known body field'],
    ['an attachment without a path', batch({ ...entry, attachments: [{ embed: true }] }), 'body.entries[0].attachments[0].path: body.entries[0].attachments[0].path is required'],
    ['a position of no known form', batch({ ...entry, position: { after: 'a', index: 1 } }), 'body.entries[0].position: body.entries[0].position must be { after } or { before } or { index } or null'],
    ['an empty client_id', batch({ ...entry, client_id: '' }), 'body.entries[0].client_id: body.entries[0].client_id must not be empty'],
  ])('the batch body: %s', (_what, got, want) => {
    expect(got).toEqual(want);
  });

  it('says the limit of an oversized batch', () => {
    expect(batch(...Array.from({ length: 501 }, () => entry))).toBe('body.entries: body.entries has 501 items; the limit is 500');
  });

  it('reads the single create body with the same schema as a batch item', () => {
    expect(refusal('notes_journal_create_log', { body: { ...entry, position: { index: -1 } } })).toMatch(/^body.position: body.position must be/);
    expect(refusal('notes_journal_create_log', { body: entry })).toBe('accepted');
  });
});

describe('catalog: the registry module', () => {
  it('is sorted by name, with unique names, tools and routes', () => {
    const names = registry.map((a) => a.name);
    expect(names).toEqual([...names].sort());
    expect(new Set(names).size).toBe(names.length);
    expect(new Set(registry.map((a) => a.tool)).size).toBe(registry.length);
    expect(new Set(registry.map((a) => `${a.method} ${a.route}`)).size).toBe(registry.length);
    expect(Object.isFrozen(registry)).toBe(true);
  });

  it('finds actions by name and by tool', () => {
    expect(findAction('current_user')?.route).toBe('/api/v1/auth/me');
    expect(findAction('no_such_action')).toBeUndefined();
    expect(findActionByTool('svc_notes_get_or_create_daily')?.name).toBe('daily');
    expect(findActionByTool('svc_api_daily')).toBeUndefined();
  });

  it('groups actions by area in document order', () => {
    const groups = actionsByArea();
    expect([...groups.keys()]).toEqual(AREAS.map((a) => a.area));
    for (const [area, list] of groups) {
      expect(list.length, area).toBe(registry.filter((a) => a.area === area).length);
      expect(list.map((a) => a.name)).toEqual(list.map((a) => a.name).sort());
    }
    expect(groups.get('4.5 Jobs')?.map((a) => a.name)).toEqual(['cancel_my_job', 'get_my_job', 'list_my_jobs', 'my_job_events']);
  });

  it('throws on a duplicate name, tool name, or method and route', () => {
    const base = findAction('current_user')!;
    const other = findAction('list_tags')!;
    expect(() => buildRegistry([base, other])).not.toThrow();
    expect(() => buildRegistry([base, { ...other, name: base.name }])).toThrow(/duplicate action name "current_user"/);
    expect(() => buildRegistry([base, { ...other, tool: base.tool }])).toThrow(/duplicate tool name "svc_api_current_user"/);
    expect(() => buildRegistry([base, { ...other, method: 'GET', route: base.route }])).toThrow(/duplicate route GET \/api\/v1\/auth\/me/);
    const byId = { ...other, name: 'x1', tool: 'x1', method: 'GET' as const, route: '/api/v1/x/{id}', input: { path: Type.Object({ id: Type.String() }) } };
    const bySlug = { ...other, name: 'x2', tool: 'x2', method: 'GET' as const, route: '/api/v1/x/{slug}', input: { path: Type.Object({ slug: Type.String() }) } };
    expect(() => buildRegistry([byId, bySlug])).toThrow(/duplicate route GET \/api\/v1\/x\/\{slug\} \(x1 and x2\)/);
  });
});
