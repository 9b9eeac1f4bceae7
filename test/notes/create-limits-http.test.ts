/**
 * Creating and updating notes through a real server: over-long titles, too
 * many tags and deeply nested frontmatter answer 400 naming the field without
 * holding up other requests; bursts of same-titled creates each get their own
 * file; names are never hidden; times are whole milliseconds; a hand-written
 * note with absurdly nested YAML is indexed, not a crash.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInstance, type TestInstance } from '../helpers/instance.js';
import { eventually } from '../helpers/wait.js';
import { TITLE_MAX } from '../../src/notes/limits.js';

let inst: TestInstance;
let user: { id: string; token: string };
let home: string;

const write = (rel: string, text: string) => {
  fs.mkdirSync(path.dirname(path.join(home, rel)), { recursive: true });
  fs.writeFileSync(path.join(home, rel), text);
};
const read = (rel: string) => fs.readFileSync(path.join(home, rel), 'utf8');
const api = (method: string, route: string, o: { body?: unknown; headers?: Record<string, string> } = {}) =>
  inst.api(method, route, { token: user.token, ...o });
const allNotes = async () => (await api('GET', '/api/v1/notes?limit=500')).body.items as Array<Record<string, any>>;

beforeAll(async () => {
  inst = await startInstance();
  user = await inst.user('tess', 'member');
  home = path.join(inst.dataDir, 'homes', 'tess');
  write('Notes/Plain.md', '# Plain\n');
});
afterAll(() => inst.close());

describe('titles', () => {
  it('answers a megabyte title with 400 at once while other requests still answer', async () => {
    const huge = 'word '.repeat(200_000);
    const started = Date.now();
    const [create, info, fromTemplate] = await Promise.all([
      api('POST', '/api/v1/notes', { body: { title: huge } }),
      inst.api('GET', '/api/v1/system/info'),
      api('POST', '/api/v1/notes/from-template', { body: { title: huge } }),
    ]);
    expect(create.status).toBe(400);
    expect(create.body.error.details.field).toBe('body.title');
    expect(fromTemplate.status).toBe(400);
    expect(fromTemplate.body.error.details.field).toBe('body.title');
    expect(info.status).toBe(200);
    // "Does not hang" bound: before the fix this request held the server for over ten minutes.
    expect(Date.now() - started).toBeLessThan(20_000);
    expect(fs.readdirSync(path.join(home, 'Notes'))).toEqual(['Plain.md']);
  });

  it('keeps a long title whole in the note and cuts only the file name', async () => {
    const title = 'Ünïcödé 😀 '.repeat(100).slice(0, TITLE_MAX).trim();
    const r = await api('POST', '/api/v1/notes', { body: { title } });
    expect(r.status).toBe(201);
    expect(r.body.title).toBe(title);
    const name = r.body.path.slice('Notes/'.length, -'.md'.length);
    expect(Buffer.byteLength(name)).toBeLessThanOrEqual(200);
    expect(title.startsWith(name)).toBe(true);
    expect(read(r.body.path)).toContain(`title: ${title}`);
    expect((await api('POST', '/api/v1/notes', { body: { title: 'x'.repeat(TITLE_MAX + 1) } })).status).toBe(400);
  });

  it.each([
    ['../../../tmp/evil', 'Notes/tmp evil.md'],
    ['..', 'Notes/Untitled.md'],
    ['.env', 'Notes/env.md'],
    ['x.quire-tmp-1', 'Notes/xquire-tmp-1.md'],
  ])('never writes a hidden or ignored file for the title %j', async (title, expected) => {
    const r = await api('POST', '/api/v1/notes', { body: { title } });
    expect(r.status).toBe(201);
    expect(r.body.path).toBe(expected);
    expect(r.body.title).toBe(title);
    expect(fs.existsSync(path.join(home, expected))).toBe(true);
  });
});

describe('a burst of creates with one title', () => {
  it('gives each of 200 concurrent creates its own file, none overwritten, all listed', async () => {
    const rs = await Promise.all(
      Array.from({ length: 200 }, (_, i) => api('POST', '/api/v1/notes', { body: { title: 'Standup', body: `body ${i}\n` } })),
    );
    expect(rs.map((r) => r.status)).toEqual(Array(200).fill(201));
    const paths = new Set(rs.map((r) => r.body.path));
    expect(paths.size).toBe(200);
    expect(paths.has('Notes/Standup.md')).toBe(true);
    for (const [i, r] of rs.entries()) {
      expect(r.body.path).toMatch(/^Notes\/Standup( \d+)?\.md$/);
      const text = read(r.body.path);
      expect(text).toContain(`id: ${r.body.id}`);
      expect(text.endsWith(`body ${i}\n`)).toBe(true);
    }
    const listed = (await allNotes()).filter((n) => n.title === 'Standup');
    expect(listed.length).toBe(200);
    // Numbering is dense: " 2" up to " 200".
    expect([...paths].sort()).toEqual(
      ['Notes/Standup.md', ...Array.from({ length: 199 }, (_, i) => `Notes/Standup ${i + 2}.md`)].sort(),
    );
  }, 120_000);
});

describe('tags', () => {
  it('refuses more than 1,000 tags, or a tag too long, naming the field', async () => {
    const many = Array.from({ length: 50_000 }, (_, i) => `t${i}`);
    const started = Date.now();
    const create = await api('POST', '/api/v1/notes', { body: { title: 'Tagged', tags: many } });
    expect(create.status).toBe(400);
    expect(create.body.error.details.field).toBe('body.tags');
    for (const p of ['Notes/Plain.md', 'Notes/Missing.md']) {
      const assign = await api('PUT', '/api/v1/tags/items', { body: { path: p, tags: many } });
      expect(assign.status).toBe(400);
      expect(assign.body.error.details.field).toBe('body.tags');
    }
    expect(Date.now() - started).toBeLessThan(20_000);
    const long = await api('PUT', '/api/v1/tags/items', { body: { path: 'Notes/Plain.md', tags: ['ok', 'x'.repeat(201)] } });
    expect(long.status).toBe(400);
    expect(long.body.error.details.field).toBe('body.tags[1]');
  });

  it('assigns 1,000 tags of 200 characters, and edits them again', async () => {
    const tags = Array.from({ length: 1000 }, (_, i) => `t${i}-`.padEnd(200, 'x'));
    const first = await api('PUT', '/api/v1/tags/items', { body: { path: 'Notes/Plain.md', tags } });
    expect(first.status).toBe(200);
    const again = await api('PUT', '/api/v1/tags/items', { body: { path: 'Notes/Plain.md', tags: [...tags.slice(1), 'last'] } });
    expect(again.status).toBe(200);
    expect(again.body.frontmatter_tags).toHaveLength(1000);
  });

  it('assigns 1,000 tags, first spelling of each kept', async () => {
    const tags = Array.from({ length: 500 }, (_, i) => [`Topic${i}`, `topic${i}`]).flat();
    const r = await api('PUT', '/api/v1/tags/items', { body: { path: 'Notes/Plain.md', tags } });
    expect(r.status).toBe(200);
    expect(r.body.frontmatter_tags).toEqual(Array.from({ length: 500 }, (_, i) => `Topic${i}`));
  });
});

describe('frontmatter', () => {
  const nested = (depth: number): unknown => {
    let v: unknown = 'leaf';
    for (let i = 0; i < depth; i++) v = [v];
    return v;
  };

  it('refuses a value nested 5,000 or 40 deep with 400 naming the field, and takes 32 levels', async () => {
    const created = await api('POST', '/api/v1/notes', { body: { title: 'Deep' } });
    const before = read(created.body.path);
    const deep = await api('PUT', `/api/v1/notes/${created.body.id}`, {
      headers: { 'if-match': created.body.etag },
      // Built as text: JSON.stringify itself recurses once per level.
      body: `{"frontmatter":{"deep":${'['.repeat(5000)}"leaf"${']'.repeat(5000)}}}`,
    });
    expect(deep.status).toBe(400);
    expect(deep.body.error.details.field).toMatch(/^body/);
    // Deeper than the notes limit, within any generic limit on request bodies.
    const forty = await api('PUT', `/api/v1/notes/${created.body.id}`, {
      headers: { 'if-match': created.body.etag },
      body: { frontmatter: { deep: nested(40) } },
    });
    expect(forty.status).toBe(400);
    expect(forty.body.error.details.field).toMatch(/^body\.frontmatter\.deep(\[0\]){32}$/);
    expect(forty.body.error.message).toMatch(/more than 32 levels/);
    expect(read(created.body.path)).toBe(before);

    const wide = await api('PUT', `/api/v1/notes/${created.body.id}`, {
      headers: { 'if-match': created.body.etag },
      body: { frontmatter: { wide: Array.from({ length: 20_000 }, (_, i) => i) } },
    });
    expect(wide.status).toBe(400);
    expect(wide.body.error.details.field).toBe('body.frontmatter');

    const ok = await api('PUT', `/api/v1/notes/${created.body.id}`, {
      headers: { 'if-match': created.body.etag },
      body: { frontmatter: { deep: nested(32) } },
    });
    expect(ok.status).toBe(200);
    const got = await api('GET', `/api/v1/notes/${created.body.id}`);
    expect(got.body.frontmatter.deep).toEqual(nested(32));
  });

  it('indexes a hand-written note with YAML nested 20,000 deep, and refuses to edit its properties with 409', async () => {
    write('Notes/Hand deep.md', `---\nid: hand-deep\nx: ${'['.repeat(20_000)}${']'.repeat(20_000)}\n---\n# Hand deep\n\nStill #searchable\n`);
    let block = '---\nid: hand-block\ny:\n';
    for (let i = 0; i < 3000; i++) block += ' '.repeat(i + 1) + '- \n';
    write('Notes/Hand block.md', `${block}---\n# Hand block\n`);
    const [deep, blockNote] = (await eventually(async () => {
      const notes = await allNotes();
      const d = notes.find((n) => n.path === 'Notes/Hand deep.md');
      const b = notes.find((n) => n.path === 'Notes/Hand block.md');
      return d && b ? ([d, b] as const) : null;
    }, 15_000))!;
    expect(deep.title).toBe('Hand deep');
    expect(blockNote.title).toBe('Hand block');
    const got = await api('GET', `/api/v1/notes/${deep.id}`);
    expect(got.status).toBe(200);
    const edit = await api('PUT', `/api/v1/notes/${deep.id}`, { headers: { 'if-match': got.body.etag }, body: { title: 'New' } });
    expect(edit.status).toBe(409);
    expect(edit.body.error.details.reason).toBe('invalid_frontmatter');
    expect((await inst.api('GET', '/api/v1/system/info')).status).toBe(200);
  });

  it('keeps a block-style tags list block-style, and a flow one flow', async () => {
    write('Notes/Styled.md', '---\nid: styled\ntags:\n  - one\n  - two\naliases: [A, B]\n---\nText\n');
    const n = await eventually(async () => (await allNotes()).find((x) => x.id === 'styled'), 15_000);
    const r = await api('PUT', '/api/v1/notes/styled', { headers: { 'if-match': n!.etag }, body: { tags: ['one', 'three'], frontmatter: { aliases: ['C'] } } });
    expect(r.status).toBe(200);
    expect(read('Notes/Styled.md')).toBe('---\nid: styled\ntags:\n  - one\n  - three\naliases: [C]\n---\nText\n');
  });
});

describe('times', () => {
  it('answers created and updated as whole milliseconds', async () => {
    const created = await api('POST', '/api/v1/notes', { body: { title: 'Timed' } });
    write('Notes/Outside.md', '# Outside\n');
    const notes = await eventually(async () => {
      const all = await allNotes();
      return all.some((n) => n.path === 'Notes/Outside.md') ? all : null;
    }, 15_000);
    for (const n of notes!) {
      expect(Number.isInteger(n.created), `${n.path} created ${n.created}`).toBe(true);
      expect(Number.isInteger(n.updated), `${n.path} updated ${n.updated}`).toBe(true);
    }
    const one = await api('GET', `/api/v1/notes/${created.body.id}`);
    expect(Number.isInteger(one.body.updated)).toBe(true);
    expect(Number.isInteger(created.body.updated)).toBe(true);
  });
});
