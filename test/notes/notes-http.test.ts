/**
 * The notes and tags actions end to end: a real server on a real port, a
 * Home on disk, and checks of both the API's answers and the bytes on disk.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInstance, type TestInstance } from '../helpers/instance.js';
import { eventually } from '../helpers/wait.js';

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

beforeAll(async () => {
  inst = await startInstance();
  user = await inst.user('nora', 'member');
  home = path.join(inst.dataDir, 'homes', 'nora');
  write('Notes/Alpha.md', '---\nid: alpha-id\ntags: [project]\naliases: [First]\n---\n# Alpha\n\nLinks to [[Beta]] and [[Gamma#Part]]. #project/web\n\n- [ ] task one ^t1\n');
  write('Notes/Beta.md', '# Beta\n\nBack to [[Alpha]] and [[First]]. Code: `[[Nowhere]]` #idea\n');
  write('Archive/Old.md', 'Old note linking [[Alpha]].\n');
  write('Attachments/pic.png', 'not really a png');
});
afterAll(() => inst.close());

async function noteByPath(p: string) {
  const list = await api('GET', '/api/v1/notes?limit=500');
  return list.body.items.find((n: any) => n.path === p);
}

describe('reading notes', () => {
  it('lists notes with the record fields', async () => {
    const r = await api('GET', '/api/v1/notes');
    expect(r.status).toBe(200);
    expect(r.body.next_cursor).toBeNull();
    const alpha = r.body.items.find((n: any) => n.path === 'Notes/Alpha.md');
    expect(alpha).toMatchObject({ id: 'alpha-id', title: 'Alpha', tags: ['project', 'project/web'] });
    for (const k of ['id', 'path', 'title', 'tags', 'etag', 'created', 'updated']) expect(alpha).toHaveProperty(k);
  });

  it('gets a note with body, frontmatter and an ETag header', async () => {
    const r = await api('GET', '/api/v1/notes/alpha-id');
    expect(r.status).toBe(200);
    expect(r.headers.get('etag')).toBe(`"${r.body.etag}"`);
    expect(r.body.frontmatter).toMatchObject({ id: 'alpha-id', tags: ['project'] });
    expect(r.body.body.startsWith('# Alpha')).toBe(true);
    expect((await api('GET', '/api/v1/notes/nope')).status).toBe(404);
  });

  it('gives a note without a frontmatter id a stable path-derived id', async () => {
    const beta = await noteByPath('Notes/Beta.md');
    expect(beta.id).toBeTruthy();
    const again = await noteByPath('Notes/Beta.md');
    expect(again.id).toBe(beta.id);
    expect((await api('GET', `/api/v1/notes/${beta.id}`)).body.title).toBe('Beta');
  });

  it('pages with opaque cursors that stay stable while notes are added', async () => {
    const first = await api('GET', '/api/v1/notes?limit=1&sort=title');
    expect(first.body.items).toHaveLength(1);
    expect(typeof first.body.next_cursor).toBe('string');
    await api('POST', '/api/v1/notes', { body: { title: 'AAA first in order' } });
    const second = await api('GET', `/api/v1/notes?limit=1&sort=title&cursor=${first.body.next_cursor}`);
    expect(second.body.items[0].title.toLowerCase() > first.body.items[0].title.toLowerCase()).toBe(true);
    const bad = await api('GET', '/api/v1/notes?cursor=garbage!');
    expect(bad.status).toBe(400);
    expect((await api('GET', '/api/v1/notes?sort=size')).status).toBe(400);
  });

  it('filters by path prefix and sorts by recent', async () => {
    const r = await api('GET', '/api/v1/notes?path=Archive/');
    expect(r.body.items.map((n: any) => n.path)).toEqual(['Archive/Old.md']);
    const recent = await api('GET', '/api/v1/notes?recent=true');
    const updated = recent.body.items.map((n: any) => n.updated);
    expect([...updated].sort((a, b) => b - a)).toEqual(updated);
  });
});

describe('links, backlinks and tags', () => {
  it('lists outgoing links with resolution; code is not a link', async () => {
    const beta = await noteByPath('Notes/Beta.md');
    const r = await api('GET', `/api/v1/notes/${beta.id}/links`);
    expect(r.status).toBe(200);
    expect(r.body.items.map((l: any) => [l.target, l.resolved_path])).toEqual([
      ['Alpha', 'Notes/Alpha.md'],
      ['First', 'Notes/Alpha.md'],
    ]);
  });

  it('lists backlinks by note id and by Home path, resolving aliases', async () => {
    const r = await api('GET', '/api/v1/notes/alpha-id/backlinks');
    expect(r.body.items.map((b: any) => b.path).sort()).toEqual(['Archive/Old.md', 'Notes/Beta.md']);
    const byPath = await api('GET', '/api/v1/notes/backlinks?path=Notes/Alpha.md');
    expect(byPath.body.items.map((b: any) => b.path).sort()).toEqual(['Archive/Old.md', 'Notes/Beta.md']);
    const beta = byPath.body.items.find((b: any) => b.path === 'Notes/Beta.md');
    expect(beta.occurrences).toHaveLength(2);
    expect((await api('GET', '/api/v1/notes/backlinks?path=Notes/Missing.md')).status).toBe(404);
  });

  it('finds notes by tag including nested tags', async () => {
    const r = await api('GET', '/api/v1/notes/tags/project');
    expect(r.body.items.map((n: any) => n.path)).toEqual(['Notes/Alpha.md']);
    const nested = await api('GET', '/api/v1/notes/tags/project/web');
    expect(nested.body.items.map((n: any) => n.path)).toEqual(['Notes/Alpha.md']);
    const tags = await api('GET', '/api/v1/tags');
    const project = tags.body.items.find((t: any) => t.tag === 'project');
    expect(project.count).toBe(1);
    expect(tags.body.items.some((t: any) => t.tag === 'project/web')).toBe(true);
    const page = await api('GET', '/api/v1/tags/idea');
    expect(page.body.items.map((n: any) => n.path)).toEqual(['Notes/Beta.md']);
  });

  it('assign_tags rewrites only the frontmatter tags, keeping every other byte', async () => {
    const before = read('Notes/Alpha.md');
    const r = await api('PUT', '/api/v1/tags/items', { body: { path: 'Notes/Alpha.md', tags: ['project', 'urgent'] } });
    expect(r.status).toBe(200);
    const after = read('Notes/Alpha.md');
    expect(after).toBe(before.replace('tags: [project]', 'tags: [project, urgent]'));
    const a = await api('GET', '/api/v1/tags/items/Notes/Alpha.md');
    expect(a.body.tags).toEqual(expect.arrayContaining(['project', 'urgent', 'project/web']));
    const list = await api('GET', '/api/v1/tags/items?limit=1');
    expect(list.body.items).toHaveLength(1);
    expect(list.body.next_cursor).toBe(1);
    const bad = await api('PUT', '/api/v1/tags/items', { body: { path: 'Notes/Alpha.md', tags: ['123'] } });
    expect(bad.status).toBe(400);
  });

  it('searches full text', async () => {
    const r = await api('GET', '/api/v1/notes/search?q=alpha');
    expect(r.status).toBe(200);
    expect(r.body.items[0].path).toBe('Notes/Alpha.md');
  });
});

describe('writing notes', () => {
  it('creates a note under Notes/ with an id, and refuses other folders', async () => {
    const r = await api('POST', '/api/v1/notes', { body: { title: 'Trip: Rome/Paris?', body: 'Pack light.\n', tags: ['travel'] } });
    expect(r.status).toBe(201);
    expect(r.body.path).toBe('Notes/Trip Rome Paris.md');
    const text = read(r.body.path);
    expect(text).toMatch(/^---\nid: [0-9a-f-]{36}\ntitle: "?Trip: Rome\/Paris\?"?\n/);
    expect(text.endsWith('---\nPack light.\n')).toBe(true);
    const again = await api('POST', '/api/v1/notes', { body: { title: 'trip rome paris' } });
    expect(again.body.path).toBe('Notes/trip rome paris 2.md');
    const bad = await api('POST', '/api/v1/notes', { body: { title: 'x', folder: 'Elsewhere/' } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details.field).toBe('body.folder');
  });

  it('updates at the current ETag, changing only the edited part; stale ETags are refused', async () => {
    const created = await api('POST', '/api/v1/notes', { body: { title: 'Editable', body: 'one\n' } });
    const id = created.body.id;
    const stale = created.body.etag;
    const up = await api('PUT', `/api/v1/notes/${id}`, { body: { body: 'two\n' }, headers: { 'if-match': `"${stale}"` } });
    expect(up.status).toBe(200);
    expect(read(created.body.path)).toBe(read(created.body.path).replace(/two\n$/, '') + 'two\n');
    const conflict = await api('PUT', `/api/v1/notes/${id}`, { body: { body: 'three\n' }, headers: { 'if-match': stale } });
    expect(conflict.status).toBe(412);
    expect(read(created.body.path).endsWith('two\n')).toBe(true);
    const missing = await api('PUT', `/api/v1/notes/${id}`, { body: { body: 'x' } });
    expect(missing.status).toBe(428);
  });

  it('refuses a write when a desktop editor changed the file after the read', async () => {
    const created = await api('POST', '/api/v1/notes', { body: { title: 'Contested', body: 'api\n' } });
    const text = read(created.body.path);
    fs.writeFileSync(path.join(home, created.body.path), text.replace('api', 'desktop'));
    const r = await api('PUT', `/api/v1/notes/${created.body.id}`, { body: { body: 'api again\n' }, headers: { 'if-match': created.body.etag } });
    expect(r.status).toBe(412);
    expect(read(created.body.path)).toContain('desktop');
  });

  it('moves a note into Notes/ keeping its id, at its ETag', async () => {
    const old = await noteByPath('Archive/Old.md');
    const r = await api('POST', `/api/v1/notes/${old.id}/move`, { body: { folder: 'Notes/' }, headers: { 'if-match': old.etag } });
    expect(r.status).toBe(200);
    expect(r.body.path).toBe('Notes/Old.md');
    expect(r.body.id).toBe(old.id);
    expect(fs.existsSync(path.join(home, 'Archive/Old.md'))).toBe(false);
    expect(read('Notes/Old.md')).toContain(`id: ${old.id}`);
    expect((await api('GET', `/api/v1/notes/${old.id}`)).body.path).toBe('Notes/Old.md');
    const bad = await api('POST', `/api/v1/notes/${old.id}/move`, { body: { folder: 'Archive/' }, headers: { 'if-match': r.body.etag } });
    expect(bad.status).toBe(400);
  });

  it('deletes at the ETag', async () => {
    const c = await api('POST', '/api/v1/notes', { body: { title: 'Doomed' } });
    expect((await api('DELETE', `/api/v1/notes/${c.body.id}`, { headers: { 'if-match': 'wrong' } })).status).toBe(412);
    expect((await api('DELETE', `/api/v1/notes/${c.body.id}`, { headers: { 'if-match': c.body.etag } })).status).toBe(200);
    expect(fs.existsSync(path.join(home, c.body.path))).toBe(false);
    expect((await api('GET', `/api/v1/notes/${c.body.id}`)).status).toBe(404);
  });

  it('creates a canvas note the Excalidraw plugin can open', async () => {
    const r = await api('POST', '/api/v1/notes', { body: { title: 'Sketch', canvas: true } });
    expect(r.status).toBe(201);
    expect(r.body.path).toBe('Notes/Sketch.excalidraw.md');
    expect(r.body.canvas).toBe(true);
    const text = read(r.body.path);
    expect(text).toContain('excalidraw-plugin: parsed');
    expect(text).toContain('# Excalidraw Data');
  });

  it('creates and lists linked notes about a Home file', async () => {
    const c = await api('POST', '/api/v1/notes/linked-notes', { body: { path: 'Attachments/pic.png' } });
    expect(c.status).toBe(201);
    expect(read(c.body.path)).toContain('![[Attachments/pic.png]]');
    const l = await api('GET', '/api/v1/notes/linked-notes?path=Attachments/pic.png');
    expect(l.body.items.map((n: any) => n.id)).toEqual([c.body.id]);
    const back = await api('GET', '/api/v1/notes/backlinks?path=Attachments/pic.png');
    expect(back.body.items.map((b: any) => b.path)).toContain(c.body.path);
  });
});

describe('files', () => {
  it('writes, reads with Range, lists and deletes', async () => {
    const create = await api('PUT', '/api/v1/files/content?path=Attachments/data.txt', {
      body: { content: 'hello world' },
      headers: { 'if-none-match': '*' },
    });
    expect(create.status).toBe(201);
    const etag = create.body.etag;
    expect(read('Attachments/data.txt')).toBe('hello world');
    const again = await api('PUT', '/api/v1/files/content?path=Attachments/data.txt', { body: { content: 'x' }, headers: { 'if-none-match': '*' } });
    expect(again.status).toBe(412);
    const res = await fetch(`${inst.url}/api/v1/files/content?path=Attachments/data.txt`, { headers: { authorization: `Bearer ${user.token}`, range: 'bytes=6-' } });
    expect(res.status).toBe(206);
    expect(await res.text()).toBe('world');
    expect(res.headers.get('content-range')).toBe('bytes 6-10/11');
    const list = await api('GET', '/api/v1/files?path=Attachments');
    expect(list.body.items.map((e: any) => e.name)).toEqual(expect.arrayContaining(['data.txt', 'pic.png']));
    const noCond = await api('PUT', '/api/v1/files/content?path=Attachments/data.txt', { body: { content: 'x' } });
    expect(noCond.status).toBe(428);
    const del = await api('DELETE', '/api/v1/files/content?path=Attachments/data.txt', { headers: { 'if-match': etag } });
    expect(del.status).toBe(200);
    expect(fs.existsSync(path.join(home, 'Attachments/data.txt'))).toBe(false);
  });

  it('refuses unsafe paths with precise errors', async () => {
    const esc = await api('PUT', '/api/v1/files/content?path=../escape.txt', { body: { content: 'x' }, headers: { 'if-none-match': '*' } });
    expect(esc.status).toBe(400);
    const long = 'a'.repeat(300);
    const tooLong = await api('PUT', `/api/v1/files/content?path=${long}.md`, { body: { content: 'x' }, headers: { 'if-none-match': '*' } });
    expect(tooLong.body.error.code).toBe('name_too_long');
    const caseClash = await api('PUT', '/api/v1/files/content?path=notes/alpha.md', { body: { content: 'x' }, headers: { 'if-none-match': '*' } });
    expect(caseClash.body.error.code).toBe('name_conflict_case');
  });
});

describe('external edits', () => {
  it('shows files created, changed, renamed and deleted on disk', async () => {
    write('Notes/Outside.md', '---\nid: outside-1\n---\n# Outside\n#external\n');
    const got = await eventually(async () => {
      const r = await api('GET', '/api/v1/notes/outside-1');
      return r.status === 200 ? r : null;
    });
    expect(got!.body.title).toBe("Outside");
    write('Notes/Outside.md', '---\nid: outside-1\n---\n# Outside changed\n');
    await eventually(async () => (await api('GET', '/api/v1/notes/outside-1')).body.title === 'Outside changed');
    fs.renameSync(path.join(home, 'Notes/Outside.md'), path.join(home, 'Notes/Renamed.md'));
    await eventually(async () => (await api('GET', '/api/v1/notes/outside-1')).body.path === 'Notes/Renamed.md');
    fs.unlinkSync(path.join(home, 'Notes/Renamed.md'));
    await eventually(async () => (await api('GET', '/api/v1/notes/outside-1')).status === 404);
  });
});

describe('quota', () => {
  it('refuses a write over the quota and writes nothing', async () => {
    const owner = await inst.user('quota-owner', 'owner');
    const small = await inst.user('small', 'member');
    const q = await inst.api('PATCH', `/api/v1/auth/users/${small.id}/quota`, { token: owner.token, body: { quota_override_bytes: 100 } });
    expect(q.status).toBe(200);
    const r = await inst.api('POST', '/api/v1/notes', { token: small.token, body: { title: 'Big', body: 'x'.repeat(500) } });
    expect(r.status).toBe(507);
    expect(r.body.error.details.reason).toBe('quota_exceeded');
    expect(fs.existsSync(path.join(inst.dataDir, 'homes/small/Notes/Big.md'))).toBe(false);
  });
});
