/**
 * Every input has a bound (docs/reliability.md, "Limits"): the registry's schemas carry them,
 * an oversized value is refused with 400 (413 for a body) naming the field before the handler
 * runs, and legitimate large inputs — note bodies and file contents of several MiB — still pass.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Kind, type TSchema } from '@sinclair/typebox';
import { registry } from '../../src/actions/registry.js';
import { bodyLimitOf, depthExceeds, jsonTextDepthExceeds, LIMITS } from '../../src/actions/limits.js';
import { startInstance, type TestInstance } from '../helpers/instance.js';

type Node = TSchema & Record<string, any>;

/** Every schema node of every action's input, with where it sits. */
function* nodes(): Generator<{ action: string; where: string; node: Node }> {
  function* walk(action: string, where: string, node: Node): Generator<{ action: string; where: string; node: Node }> {
    yield { action, where, node };
    for (const [k, v] of Object.entries((node.properties ?? {}) as Record<string, Node>)) yield* walk(action, `${where}.${k}`, v);
    if (node.items && typeof node.items === 'object') yield* walk(action, `${where}[]`, node.items);
    if (node.additionalProperties && typeof node.additionalProperties === 'object') yield* walk(action, `${where}.*`, node.additionalProperties);
    for (const v of Object.values((node.patternProperties ?? {}) as Record<string, Node>)) yield* walk(action, `${where}.*`, v);
    for (const key of ['anyOf', 'oneOf', 'allOf']) for (const v of (node[key] ?? []) as Node[]) yield* walk(action, where, v);
  }
  for (const def of registry) {
    for (const part of ['path', 'query', 'headers', 'body'] as const) {
      const s = def.input[part] as Node | undefined;
      if (s) yield* walk(def.name, part, s);
    }
  }
}

describe('the registry puts a bound on every input', () => {
  it('every string, array, object and open value of every action has a limit', () => {
    const missing: string[] = [];
    for (const { action, where, node } of nodes()) {
      if (node.type === 'string' && node.maxLength === undefined) missing.push(`${action} ${where}: string without maxLength`);
      if (node.type === 'array' && node.maxItems === undefined) missing.push(`${action} ${where}: array without maxItems`);
      if (node.type === 'object' && node.maxProperties === undefined) missing.push(`${action} ${where}: object without maxProperties`);
      if ((node[Kind] === 'Unknown' || node[Kind] === 'Any') && node.maxSize === undefined) missing.push(`${action} ${where}: open value without maxSize`);
    }
    expect(missing).toEqual([]);
  });

  it.each([
    ['create', 'body.body', LIMITS.contentBody],
    ['notes_update', 'body.body', LIMITS.contentBody],
    ['files_write', 'body.content_base64', LIMITS.contentBody],
    ['notes_update', 'body.tags[]', LIMITS.tag],
    ['update_profile', 'body.display_name', LIMITS.name],
    ['create', 'body.title', LIMITS.title],
    ['notes_journal_create_log', 'body.text', LIMITS.text],
    ['files_write', 'query.path', LIMITS.path],
    ['update_role', 'body.role', LIMITS.string],
  ])('%s %s is at most %i characters', (action, where, max) => {
    const found = [...nodes()].filter((n) => n.action === action && n.where === where && n.node.type === 'string');
    expect(found.length).toBeGreaterThan(0);
    for (const n of found) expect(n.node.maxLength).toBe(max);
  });

  it('gives the actions that carry whole notes and files larger bodies', () => {
    expect(bodyLimitOf({ name: 'files_write' })).toBe(32 * 1024 * 1024);
    expect(bodyLimitOf({ name: 'create' })).toBe(32 * 1024 * 1024);
    expect(bodyLimitOf({ name: 'update_profile' })).toBe(1024 * 1024);
  });
});

describe('nesting depth', () => {
  it.each([
    ['{}', 1, false],
    ['[[]]', 1, true],
    ['[[]]', 2, false],
    ['{"a":"[[[[[["}', 1, false],
    ['{"a":"\\"[[[[["}', 1, false],
    ['"\\\\"[[', 1, true],
    ['[1,[2],[3]]', 2, false],
    ['['.repeat(100_000), 64, true],
  ])('text %s deeper than %i: %s', (text, max, exceeds) => {
    expect(jsonTextDepthExceeds(text, max)).toBe(exceeds);
  });

  it.each([
    [null, 0, false],
    [{ a: 1 }, 1, false],
    [{ a: [1] }, 1, true],
    [[[[]]], 3, false],
  ])('value %j deeper than %i: %s', (value, max, exceeds) => {
    expect(depthExceeds(value, max)).toBe(exceeds);
  });
});

describe('over HTTP', () => {
  let inst: TestInstance;
  let token: string;
  beforeAll(async () => {
    inst = await startInstance();
    ({ token } = await inst.user('lena', 'member'));
  });
  afterAll(() => inst.close());

  it('refuses a 1 MB title with 400 naming the field and the limit, and writes nothing', async () => {
    const r = await inst.api('POST', '/api/v1/notes', { token, body: { title: 'T'.repeat(1_000_000), body: 'x' } });
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe('bad_request');
    expect(r.body.error.details).toMatchObject({ field: 'body.title', limit: String(LIMITS.title) });
    expect(fs.existsSync(path.join(inst.dataDir, 'homes', 'lena', 'Notes'))).toBe(false);
  });

  it('answers an over-long name with name_too_long', async () => {
    const r = await inst.api('PATCH', '/api/v1/auth/me/profile', { token, body: { display_name: 'd'.repeat(300), username: 'lena' } });
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe('name_too_long');
    expect(r.body.error.details).toEqual({ field: 'body.display_name', limit: '255' });
  });

  it('refuses too many tags and over-long tags, naming them', async () => {
    const many = await inst.api('POST', '/api/v1/notes', { token, body: { title: 'Tags', tags: Array.from({ length: 1001 }, (_, i) => `t${i}`) } });
    expect(many.status).toBe(400);
    expect(many.body.error.details.field).toBe('body.tags');
    expect(many.body.error.message).toContain('1001 items');
  });

  it('refuses a body nested deeper than the limit before parsing it', async () => {
    const deep = '{"title":"Deep","tags":' + '['.repeat(100_000) + ']'.repeat(100_000) + '}';
    const r = await inst.api('POST', '/api/v1/notes', { token, body: deep });
    expect(r.status).toBe(400);
    expect(r.body.error.details).toEqual({ field: 'body', limit: String(LIMITS.bodyDepth) });
  });

  it('refuses a body over the action limit with 413 naming the limit', async () => {
    const r = await inst.api('PATCH', '/api/v1/auth/me/profile', { token, body: { display_name: 'x'.repeat(1_100_000), username: 'lena' } });
    expect(r.status).toBe(413);
    expect(r.body.error).toMatchObject({ code: 'bad_request', details: { field: 'body', limit: String(1024 * 1024) } });
  });

  it('still takes a 3 MB note body and a 5 MB file', async () => {
    const body = 'Line of text.\n'.repeat(220_000);
    const note = await inst.api('POST', '/api/v1/notes', { token, body: { title: 'Long note', body } });
    expect(note.status).toBe(201);
    expect(fs.readFileSync(path.join(inst.dataDir, 'homes', 'lena', note.body.path), 'utf8')).toContain(body);
    const bytes = Buffer.alloc(5 * 1024 * 1024, 7);
    const file = await inst.api('PUT', '/api/v1/files/content?path=Attachments/blob.bin', {
      token,
      headers: { 'if-none-match': '*' },
      body: { content_base64: bytes.toString('base64') },
    });
    expect(file.status).toBe(201);
    expect(fs.readFileSync(path.join(inst.dataDir, 'homes', 'lena', 'Attachments/blob.bin')).equals(bytes)).toBe(true);
  });
});
