/**
 * Task views end to end: hand-written `.base` fixtures (vault-fixtures/views)
 * read by id (also after a rename by hand), created, updated at the file's
 * hash, and evaluated over the Home's tasks.
 */
import fs from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInstance, type TestInstance } from '../helpers/instance.js';
import { eventually } from '../helpers/wait.js';

const FIXTURES = path.resolve(__dirname, '../../vault-fixtures/views');

let inst: TestInstance;
let user: { id: string; token: string };
let home: string;

const write = (rel: string, text: string) => {
  fs.mkdirSync(path.dirname(path.join(home, rel)), { recursive: true });
  fs.writeFileSync(path.join(home, rel), text);
};
const read = (rel: string) => fs.readFileSync(path.join(home, rel), 'utf8');
const exists = (rel: string) => fs.existsSync(path.join(home, rel));
const api = (method: string, route: string, o: { body?: unknown; headers?: Record<string, string> } = {}) =>
  inst.api(method, route, { token: user.token, ...o });

const pad = (n: number) => String(n).padStart(2, '0');
const day = (offset: number) => {
  const d = new Date();
  d.setDate(d.getDate() + offset);
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`;
};

beforeAll(async () => {
  inst = await startInstance();
  user = await inst.user('vera', 'member');
  home = path.join(inst.dataDir, 'homes', 'vera');
  for (const f of fs.readdirSync(FIXTURES)) write(`Views/${f}`, fs.readFileSync(path.join(FIXTURES, f), 'utf8'));
  write(
    'Notes/Garden.md',
    [
      '---',
      'tags: [garden]',
      'priority: 2',
      '---',
      '# Garden',
      '',
      `- [ ] Sow peas 📅 ${day(3)} ^peas`,
      `- [ ] Buy bulbs 📅 ${day(-2)} ^bulbs`,
      `- [x] Order compost ✅ ${day(-1)} ^compost`,
      '- [-] Build a shed ^shed',
      '- [/] Clear the beds ^beds',
    ].join('\n') + '\n',
  );
  write('Notes/Kitchen.md', `# Kitchen\n\nSee [[Garden]].\n\n- [ ] Make jam 📅 ${day(1)} ^jam\n- [ ] Fix tap ^tap\n`);
  write('Notes/Work.md', `---\ntags: [work]\n---\n- [ ] Send report 📅 ${day(10)} ^report\n- [x] Old thing ✅ 2020-01-01 ^old\n`);
  write('Templates/Meeting.md', '# {{title}}\n\n- [ ] template task ^tpl\n');
});
afterAll(() => inst.close());

describe('reading hand-written .base files', () => {
  it('lists every .base file with its id, name and parsed document', async () => {
    const r = await api('GET', '/api/v1/notes/tasks/views');
    expect(r.status).toBe(200);
    expect(r.body.items.map((v: any) => v.path)).toEqual(['Views/Garden.base', 'Views/No id.base', 'Views/Open tasks.base']);
    const [garden, noId, open] = r.body.items;
    expect(garden).toMatchObject({ id: 'garden-board', id_in_file: true, name: 'Garden by status', views: ['Garden by status', 'Due this week'] });
    expect(garden.base.formulas.overdue).toBe('if(task.due, task.due < today(), false)');
    expect(garden.view.groupBy).toEqual({ property: 'task.status', direction: 'DESC' });
    expect(open).toMatchObject({ id: 'open-tasks', name: 'Open tasks' });
    expect(open.view.sort).toEqual([{ property: 'task.due', direction: 'ASC' }, { property: 'file.name', direction: 'ASC' }]);
    expect(noId).toMatchObject({ id_in_file: false, name: 'Done recently' });
    expect(noId.id).toMatch(/^p[0-9a-f]{16}$/);

    const page = await api('GET', '/api/v1/notes/tasks/views?limit=2');
    expect(page.body.items).toHaveLength(2);
    expect(page.body.next_cursor).toBe(2);
    expect((await api('GET', '/api/v1/notes/tasks/views?cursor=2')).body.items.map((v: any) => v.path)).toEqual(['Views/Open tasks.base']);
  });

  it('gets a view by id with its ETag, and still after the file is renamed by hand', async () => {
    const r = await api('GET', '/api/v1/notes/tasks/views/open-tasks');
    expect(r.status).toBe(200);
    expect(r.headers.get('etag')).toBe(`"${r.body.etag}"`);
    expect(r.body.path).toBe('Views/Open tasks.base');
    fs.renameSync(path.join(home, 'Views/Open tasks.base'), path.join(home, 'Views/Renamed by hand.base'));
    await eventually(async () => (await api('GET', '/api/v1/notes/tasks/views/open-tasks')).body.path === 'Views/Renamed by hand.base');
    const after = await api('GET', '/api/v1/notes/tasks/views/open-tasks');
    expect(after.body.etag).toBe(r.body.etag);
    expect((await api('GET', '/api/v1/notes/tasks/views/nope')).status).toBe(404);
  });
});

describe('evaluating views', () => {
  it('filters with and/not groups and sorts by due date, nulls last', async () => {
    const r = await api('GET', '/api/v1/notes/tasks/views/open-tasks/rows');
    expect(r.status).toBe(200);
    // Not done, not cancelled, not in Templates/.
    expect(r.body.items.map((t: any) => t.task_id)).toEqual(['bulbs', 'jam', 'peas', 'report', 'beds', 'tap']);
    expect(r.body.total).toBe(6);
    expect(r.body.items[0].values).toEqual({ 'task.text': `Buy bulbs 📅 ${day(-2)}`, 'task.due': day(-2), 'file.name': 'Garden.md' });
    expect(r.body.groups).toBeNull();
  });

  it('uses or groups with hasTag/hasLink, formulas, groupBy and a second view by name', async () => {
    const r = await api('GET', '/api/v1/notes/tasks/views/garden-board/rows');
    expect(r.status).toBe(200);
    // Garden (tag) and Kitchen (links to Garden); grouped by status, descending.
    expect(r.body.groups.map((g: any) => g.key)).toEqual(['x', '/', '-', ' ']);
    expect(r.body.groups[0].items.map((t: any) => t.task_id)).toEqual(['compost']);
    expect(r.body.groups[3].items.map((t: any) => t.task_id).sort()).toEqual(['bulbs', 'jam', 'peas', 'tap']);
    const bulbs = r.body.items.find((t: any) => t.task_id === 'bulbs');
    expect(bulbs.values).toEqual({ 'task.text': `Buy bulbs 📅 ${day(-2)}`, 'formula.overdue': true, 'formula.where': 'Garden:8' });
    expect(r.body.items.find((t: any) => t.task_id === 'peas').values['formula.overdue']).toBe(false);

    const week = await api('GET', `/api/v1/notes/tasks/views/garden-board/rows?view=${encodeURIComponent('Due this week')}`);
    expect(week.body.view).toBe('Due this week');
    expect(week.body.items.map((t: any) => t.task_id)).toEqual(['peas', 'jam']);
    expect((await api('GET', '/api/v1/notes/tasks/views/garden-board/rows?view=Nope')).status).toBe(404);
  });

  it('applies the view limit and pages the rows', async () => {
    const noId = (await api('GET', '/api/v1/notes/tasks/views')).body.items.find((v: any) => v.path === 'Views/No id.base');
    const r = await api('GET', `/api/v1/notes/tasks/views/${noId.id}/rows`);
    // Done within 30 days, latest first.
    expect(r.body.items.map((t: any) => t.task_id)).toEqual(['compost']);
    const all = await api('GET', '/api/v1/notes/tasks/views/open-tasks/rows?limit=4');
    expect(all.body.items).toHaveLength(4);
    expect(all.body.next_cursor).toBe(4);
    const next = await api('GET', '/api/v1/notes/tasks/views/open-tasks/rows?limit=4&cursor=4');
    expect(next.body.items.map((t: any) => t.task_id)).toEqual(['beds', 'tap']);
    expect(next.body.next_cursor).toBeNull();
  });
});

describe('creating and updating views', () => {
  it('creates a view in its own readable file under Views with a stable id', async () => {
    const view = {
      type: 'table',
      name: 'Work: due soon',
      filters: { and: ['file.hasTag("work")', 'task.due <= today() + "30d"'] },
      sort: [{ property: 'task.due', direction: 'ASC' }],
      order: ['task.text', 'task.due'],
    };
    const r = await api('POST', '/api/v1/notes/tasks/views', { body: { view } });
    expect(r.status).toBe(201);
    expect(r.body.path).toBe('Views/Work  due soon.base'.replace('  ', ' '));
    const doc = YAML.parse(read(r.body.path));
    expect(doc).toEqual({ id: r.body.id, views: [view] });
    expect(r.body.etag).toBe(r.headers.get('etag')!.replace(/"/g, ''));
    // Readable YAML: block style, no JSON.
    expect(read(r.body.path)).toContain('views:\n  - type: table\n');
    const rows = await api('GET', `/api/v1/notes/tasks/views/${r.body.id}/rows`);
    expect(rows.body.items.map((t: any) => t.task_id)).toEqual(['report']);
  });

  it('checks a given id, and the filters and sort of the view', async () => {
    const ok = await api('POST', '/api/v1/notes/tasks/views', { body: { view: { id: 'my-view', name: 'Mine', filters: 'task.status == " "' } } });
    expect(ok.status).toBe(201);
    expect(YAML.parse(read(ok.body.path)).id).toBe('my-view');
    const taken = await api('POST', '/api/v1/notes/tasks/views', { body: { view: { id: 'my-view', name: 'Again' } } });
    expect(taken.status).toBe(409);
    expect(taken.body.error.details.reason).toBe('id_taken');
    expect(exists('Views/Again.base')).toBe(false);
    const badFilter = await api('POST', '/api/v1/notes/tasks/views', { body: { view: { name: 'Bad', filters: { and: ['task.due >'] } } } });
    expect(badFilter.status).toBe(400);
    expect(badFilter.body.error.details.field).toBe('body.view.filters');
    expect((await api('POST', '/api/v1/notes/tasks/views', { body: { view: { name: 'Bad', sort: [{ property: 'x', direction: 'UP' }] } } })).status).toBe(400);
    expect((await api('POST', '/api/v1/notes/tasks/views', { body: { view: { name: 'Bad', id: 'has space' } } })).status).toBe(400);
    expect((await api('POST', '/api/v1/notes/tasks/views', { body: { view: { name: 'Bad', limit: 0 } } })).status).toBe(400);
    expect(exists('Views/Bad.base')).toBe(false);
  });

  it('replaces the first view at the file hash, keeping the rest of the file', async () => {
    const before = read('Views/Garden.base');
    const cur = await api('GET', '/api/v1/notes/tasks/views/garden-board');
    const view = { type: 'table', name: 'Garden, open', filters: 'task.status == " "', order: ['task.text'] };
    const r = await api('PUT', '/api/v1/notes/tasks/views/garden-board', { body: { view }, headers: { 'if-match': `"${cur.body.etag}"` } });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ id: 'garden-board', name: 'Garden, open', views: ['Garden, open', 'Due this week'] });
    const doc = YAML.parse(read('Views/Garden.base'));
    const old = YAML.parse(before);
    expect(doc.views[0]).toEqual(view);
    expect(doc.views[1]).toEqual(old.views[1]);
    expect(doc.formulas).toEqual(old.formulas);
    expect(doc.properties).toEqual(old.properties);
    // The top of the file is byte-identical up to the views.
    expect(read('Views/Garden.base').slice(0, before.indexOf('views:'))).toBe(before.slice(0, before.indexOf('views:')));
  });

  it('refuses a stale hash (a concurrent edit on disk) with 412 and leaves the file untouched', async () => {
    const cur = await api('GET', '/api/v1/notes/tasks/views/my-view');
    const p = cur.body.path;
    const edited = read(p) + '# edited in a desktop editor\n';
    write(p, edited);
    const r = await api('PUT', '/api/v1/notes/tasks/views/my-view', { body: { view: { name: 'Mine 2' } }, headers: { 'if-match': `"${cur.body.etag}"` } });
    expect(r.status).toBe(412);
    expect(read(p)).toBe(edited);
    const missing = await api('PUT', '/api/v1/notes/tasks/views/my-view', { body: { view: { name: 'Mine 2' } } });
    expect(missing.status).toBe(428);
    const wrongId = await api('PUT', '/api/v1/notes/tasks/views/my-view', { body: { view: { id: 'other', name: 'x' } }, headers: { 'if-match': `"${r.body.error.details.current_etag}"` } });
    expect(wrongId.status).toBe(400);
    expect(read(p)).toBe(edited);
  });

  it('writes a path-derived id into the file on update, so a later rename keeps it', async () => {
    const noId = (await api('GET', '/api/v1/notes/tasks/views')).body.items.find((v: any) => v.path === 'Views/No id.base');
    const r = await api('PUT', `/api/v1/notes/tasks/views/${noId.id}`, { body: { view: { type: 'cards', name: 'Done recently', limit: 5 } }, headers: { 'if-match': noId.etag } });
    expect(r.status).toBe(200);
    expect(YAML.parse(read('Views/No id.base')).id).toBe(noId.id);
    expect(r.body.id_in_file).toBe(true);
    fs.renameSync(path.join(home, 'Views/No id.base'), path.join(home, 'Views/Has id now.base'));
    await eventually(async () => (await api('GET', `/api/v1/notes/tasks/views/${noId.id}`)).body?.path === 'Views/Has id now.base');
  });
});

describe('broken views', () => {
  it('lists a .base file with invalid YAML with its error, and refuses to evaluate it', async () => {
    write('Views/Broken.base', 'id: broken\nviews: [unclosed\n');
    const item = await eventually(async () =>
      (await api('GET', '/api/v1/notes/tasks/views?limit=200')).body.items.find((v: any) => v.path === 'Views/Broken.base'),
    );
    expect(item.base).toBeNull();
    expect(item.error).toBeTruthy();
    const rows = await api('GET', `/api/v1/notes/tasks/views/${item.id}/rows`);
    expect(rows.status).toBe(409);
    expect(rows.body.error.details.reason).toBe('invalid_base');
    const put = await api('PUT', `/api/v1/notes/tasks/views/${item.id}`, { body: { view: { name: 'x' } }, headers: { 'if-match': item.etag } });
    expect(put.status).toBe(409);
    expect(read('Views/Broken.base')).toBe('id: broken\nviews: [unclosed\n');
  });

  it('answers 400 invalid_expression for an unknown function, written by hand', async () => {
    write('Views/Unknown fn.base', 'id: unknown-fn\nviews:\n  - type: table\n    name: x\n    filters: \'frobnicate(task.due)\'\n');
    await eventually(async () => (await api('GET', '/api/v1/notes/tasks/views/unknown-fn')).status === 200);
    const r = await api('GET', '/api/v1/notes/tasks/views/unknown-fn/rows');
    expect(r.status).toBe(400);
    expect(r.body.error.details.reason).toBe('invalid_expression');
    expect(r.body.error.message).toContain('frobnicate');
  });
});
