/**
 * Obsidian's own `.base` files end to end: written by hand into the Home
 * (as Obsidian would), evaluated through the view-rows action over the
 * Home's files, next to a task view in the same Home that still lists tasks.
 */
import fs from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInstance, type TestInstance } from '../helpers/instance.js';
import { eventually } from '../helpers/wait.js';

let inst: TestInstance;
let user: { id: string; token: string };
let home: string;

const write = (rel: string, text: string | Buffer) => {
  fs.mkdirSync(path.dirname(path.join(home, rel)), { recursive: true });
  fs.writeFileSync(path.join(home, rel), text);
};
const read = (rel: string) => fs.readFileSync(path.join(home, rel), 'utf8');
const api = (method: string, route: string, o: { body?: unknown; headers?: Record<string, string> } = {}) =>
  inst.api(method, route, { token: user.token, ...o });

const READING_BASE = `# Written in Obsidian: no id, rows are files.
filters:
  and:
    - file.inFolder("Books")
    - 'file.ext == "md"'
formulas:
  stars: '"★".repeat(rating)'
  shelf: 'if(status == "done", "read", "to read")'
summaries:
  names: 'values.map(value.lower()).join(", ")'
properties:
  note.author:
    displayName: Author
  formula.stars:
    displayName: Stars
views:
  - type: table
    name: Books
    filters: 'file.hasTag("book")'
    order:
      - file.name
      - note.author
      - formula.stars
      - file.backlinks
      - file.embeds
    sort:
      - property: rating
        direction: DESC
    summaries:
      rating: Average
      file.basename: names
  - type: cards
    name: Finished
    filters: 'status == "done"'
    order:
      - file.basename
      - formula.shelf
  - type: list
    name: Everything in Books
    groupBy:
      property: formula.shelf
      direction: ASC
    sort:
      - property: file.name
        direction: ASC
`;

const ALL_FILES_BASE = `views:
  - type: table
    name: All files
    order: [file.path, file.ext, file.size]
    sort:
      - property: file.path
        direction: ASC
`;

const TASK_VIEW = `id: open-tasks
filters: 'task.status != "x"'
views:
  - type: table
    name: Open
    order: [task.text, file.name]
`;

async function baseId(p: string): Promise<string> {
  const item = await eventually(async () => (await api('GET', '/api/v1/notes/tasks/views?limit=200')).body.items.find((v: any) => v.path === p));
  return item.id;
}

const rows = (id: string, query = '') => api('GET', `/api/v1/notes/tasks/views/${id}/rows${query}`);

beforeAll(async () => {
  inst = await startInstance();
  user = await inst.user('olga', 'member');
  home = path.join(inst.dataDir, 'homes', 'olga');
  write('Books/Dune.md', '---\ntags: [book]\nauthor: Frank Herbert\nrating: 5\nstatus: reading\n---\n# Dune\n\nBy [[Herbert]].\n\n![[cover.png]]\n\n- [ ] Finish part two ^dune-2\n');
  write('Books/Emma.md', '---\ntags: [book, classic]\nauthor: Jane Austen\nrating: 4\nstatus: done\n---\n# Emma\n');
  write('Books/Reading notes.md', '---\nstatus: done\n---\n# Reading notes\n\nAbout [[Dune]].\n');
  write('Books/cover.png', Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
  write('People/Herbert.md', '# Frank Herbert\n\nWrote [[Dune]].\n');
  write('Notes/Garden.md', '# Garden\n\n- [ ] Sow peas ^peas\n- [x] Buy seeds ^seeds\n');
  write('Views/Reading.base', READING_BASE);
  write('Views/All files.base', ALL_FILES_BASE);
  write('Views/Open tasks.base', TASK_VIEW);
});
afterAll(() => inst.close());

describe('an Obsidian base lists files', () => {
  it('is listed as a base whose rows are files; the task view as one whose rows are tasks', async () => {
    await baseId('Views/Reading.base');
    const items = (await api('GET', '/api/v1/notes/tasks/views?limit=200')).body.items;
    expect(items.find((v: any) => v.path === 'Views/Reading.base')).toMatchObject({ rows: 'files', id_in_file: false, views: ['Books', 'Finished', 'Everything in Books'] });
    expect(items.find((v: any) => v.path === 'Views/Open tasks.base')).toMatchObject({ id: 'open-tasks', rows: 'tasks' });
  });

  it('evaluates file.* and note properties, formulas, sort and the view columns', async () => {
    const id = await baseId('Views/Reading.base');
    const r = await rows(id);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ id, path: 'Views/Reading.base', view: 'Books', rows: 'files', total: 2, groups: null, next_cursor: null });
    expect(r.body.columns).toEqual([
      { id: 'file.name', name: 'file.name' },
      { id: 'note.author', name: 'Author' },
      { id: 'formula.stars', name: 'Stars' },
      { id: 'file.backlinks', name: 'file.backlinks' },
      { id: 'file.embeds', name: 'file.embeds' },
    ]);
    // Rows are files (not the task in Dune), highest rating first.
    expect(r.body.items.map((i: any) => i.path)).toEqual(['Books/Dune.md', 'Books/Emma.md']);
    const [dune, emma] = r.body.items;
    expect(dune).toMatchObject({ title: 'Dune', values: { 'file.name': 'Dune.md', 'note.author': 'Frank Herbert', 'formula.stars': '★★★★★', 'file.embeds': ['Books/cover.png'] } });
    expect(dune.values['file.backlinks'].sort()).toEqual(['Books/Reading notes.md', 'People/Herbert.md']);
    expect(dune.note_id).toBeTruthy();
    expect(dune.task_id).toBeUndefined();
    expect(emma.values['formula.stars']).toBe('★★★★');
    expect(r.body.summaries).toEqual({ rating: 4.5, 'file.basename': 'dune, emma' });
  });

  it('evaluates another view by name, and groupBy over files', async () => {
    const id = await baseId('Views/Reading.base');
    const done = await rows(id, '?view=Finished');
    expect(done.body.summaries).toBeNull();
    expect(done.body.items.map((i: any) => i.values)).toEqual([
      { 'file.basename': 'Emma', 'formula.shelf': 'read' },
      { 'file.basename': 'Reading notes', 'formula.shelf': 'read' },
    ]);
    const all = await rows(id, `?view=${encodeURIComponent('Everything in Books')}`);
    // Markdown files in Books only (the global filters): not cover.png.
    expect(all.body.groups.map((g: any) => [g.key, g.items.map((i: any) => i.path)])).toEqual([
      ['read', ['Books/Emma.md', 'Books/Reading notes.md']],
      ['to read', ['Books/Dune.md']],
    ]);
  });

  it('includes every file of the Home without filters, as Obsidian does, and pages them', async () => {
    const id = await baseId('Views/All files.base');
    const first = await rows(id, '?limit=3');
    expect(first.body.total).toBe(9);
    expect(first.body.items.map((i: any) => i.path)).toEqual(['Books/cover.png', 'Books/Dune.md', 'Books/Emma.md']);
    expect(first.body.items[0]).toMatchObject({ note_id: null, title: 'cover.png', values: { 'file.ext': 'png', 'file.size': 8 } });
    expect(first.body.next_cursor).toBe(3);
    const rest = await rows(id, '?limit=10&cursor=3');
    expect(rest.body.items.map((i: any) => i.path)).toEqual([
      'Books/Reading notes.md',
      'Notes/Garden.md',
      'People/Herbert.md',
      'Views/All files.base',
      'Views/Open tasks.base',
      'Views/Reading.base',
    ]);
    expect(rest.body.next_cursor).toBeNull();
  });

  it('follows edits made on disk by another program', async () => {
    const id = await baseId('Views/Reading.base');
    write('Books/Emma.md', '---\ntags: [book, classic]\nauthor: Jane Austen\nrating: 6\nstatus: done\n---\n# Emma\n');
    await eventually(async () => (await rows(id)).body.items[0]?.path === 'Books/Emma.md');
    expect((await rows(id)).body.items[0].values['formula.stars']).toBe('★★★★★★');
  });
});

describe('an App Password limited to a Home prefix', () => {
  it('lists only the files under the prefix, and only backlinks from there', async () => {
    write('Books/Shelf.base', "filters: 'file.ext == \"md\"'\nviews:\n  - type: table\n    name: Shelf\n    order: [file.backlinks]\n    sort: [{ property: file.path }]\n");
    const id = await baseId('Books/Shelf.base');
    const pw = await inst.api('POST', '/api/v1/auth/app-passwords', { token: user.token, body: { name: 'books', home_prefix: 'Books/' } });
    expect(pw.status).toBe(201);
    const r = await inst.api('GET', `/api/v1/notes/tasks/views/${id}/rows`, { token: pw.body.password });
    expect(r.status).toBe(200);
    expect(r.body.items.map((i: any) => [i.path, i.values['file.backlinks']])).toEqual([
      ['Books/Dune.md', ['Books/Reading notes.md']],
      ['Books/Emma.md', []],
      ['Books/Reading notes.md', []],
    ]);
    fs.rmSync(path.join(home, 'Books/Shelf.base'));
    await eventually(async () => (await api('GET', `/api/v1/notes/tasks/views/${id}`)).status === 404);
  });
});

describe('task views keep listing tasks', () => {
  it('a view reading task fields returns task rows, with the files base in the same Home', async () => {
    await baseId('Views/Open tasks.base');
    const r = await rows('open-tasks');
    expect(r.status).toBe(200);
    expect(r.body.rows).toBe('tasks');
    expect(r.body.items.map((t: any) => t.task_id)).toEqual(['dune-2', 'peas']);
    expect(r.body.items[1].values).toEqual({ 'task.text': 'Sow peas', 'file.name': 'Garden.md' });
  });

  it('a view created through the API without task fields still lists tasks (its id marks it)', async () => {
    const c = await api('POST', '/api/v1/notes/tasks/views', { body: { view: { name: 'Every task' } } });
    expect(c.status).toBe(201);
    expect(c.body.rows).toBe('tasks');
    const r = await rows(c.body.id);
    expect(r.body.items.map((t: any) => t.task_id)).toEqual(['dune-2', 'peas', 'seeds']);
  });
});

describe('updating and broken Obsidian bases', () => {
  it('an update writes the id and rows: files, so the base keeps listing files', async () => {
    write('Views/Shelf.base', 'filters: file.hasTag("classic")\nviews:\n  - type: table\n    name: Classics\n');
    const id = await baseId('Views/Shelf.base');
    const cur = await api('GET', `/api/v1/notes/tasks/views/${id}`);
    const put = await api('PUT', `/api/v1/notes/tasks/views/${id}`, {
      body: { view: { type: 'table', name: 'Classics', order: ['file.basename', 'author'] } },
      headers: { 'if-match': cur.body.etag },
    });
    expect(put.status).toBe(200);
    const doc = YAML.parse(read('Views/Shelf.base'));
    expect(doc).toMatchObject({ id, rows: 'files', filters: 'file.hasTag("classic")' });
    const r = await rows(id);
    expect(r.body.rows).toBe('files');
    expect(r.body.items.map((i: any) => i.values)).toEqual([{ 'file.basename': 'Emma', author: 'Jane Austen' }]);
  });

  const broken: Array<[string, number, string, RegExp, string]> = [
    ['an unknown function', 400, 'invalid_expression', /Unknown function frobnicate/, "filters: 'frobnicate(file.name)'\nviews:\n  - type: table\n    name: x\n"],
    ['an unknown method in a column', 400, 'invalid_expression', /Unknown method shout/, 'views:\n  - type: table\n    name: x\n    order: [file.name.shout()]\n'],
    ['a formula cycle', 400, 'invalid_expression', /refers to itself/, "formulas:\n  a: 'formula.b'\n  b: 'formula.a'\nviews:\n  - type: table\n    name: x\n    order: [formula.a]\n"],
    ['an expression too long', 400, 'invalid_expression', /longer than 2000/, `filters: '${'1 + '.repeat(600)}1 > 0'\nviews:\n  - type: table\n    name: x\n`],
    ['an unknown summary', 400, 'invalid_expression', /unknown summary "Mode"/, 'views:\n  - type: table\n    name: x\n    summaries:\n      file.size: Mode\n'],
    ['an unknown rows value', 409, 'invalid_base', /rows must be/, 'rows: notes\nviews:\n  - type: table\n    name: x\n'],
  ];
  it.each(broken)('%s answers %i with a clear message', async (name, status, reason, msg, text) => {
    const p = `Broken/${name}.base`;
    write(p, text);
    const id = await baseId(p);
    const r = await rows(id);
    expect(r.status).toBe(status);
    expect(r.body.error.details.reason).toBe(reason);
    expect(r.body.error.message).toMatch(msg);
  });

  it('a cell that fails at run time is null, the other cells and rows stay', async () => {
    write('Views/Cells.base', "filters: 'file.hasTag(\"book\")'\nviews:\n  - type: table\n    name: x\n    order: ['\"★\".repeat(rating * 100000)', file.basename]\n    sort: [{ property: file.name }]\n");
    const id = await baseId('Views/Cells.base');
    const r = await rows(id);
    expect(r.status).toBe(200);
    expect(r.body.items.map((i: any) => Object.values(i.values))).toEqual([
      [null, 'Dune'],
      [null, 'Emma'],
    ]);
  });
});
