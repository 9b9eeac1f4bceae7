/**
 * Tasks end to end: a real server, a Home on disk, and checks of both the
 * answers and the bytes on disk (only the task's line may change).
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInstance, type TestInstance } from '../helpers/instance.js';
import { runCli } from '../helpers/cli.js';
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

const pad = (n: number) => String(n).padStart(2, '0');
const localDay = (d: Date) => `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`;
const dayOffset = (n: number) => {
  const d = new Date();
  d.setDate(d.getDate() + n);
  return localDay(d);
};
const TODAY = localDay(new Date());
const YESTERDAY = dayOffset(-1);
const TOMORROW = dayOffset(1);

const GARDEN = [
  '---',
  'id: garden-id',
  'tags: [garden]',
  '---',
  '# Garden',
  '',
  '## Spring',
  '',
  '- [ ] Buy tulip bulbs 📅 2026-11-25 ^buy-bulbs',
  '- [/] Clear the beds',
  '- [x] Order compost ✅ 2026-11-20 ^compost',
  '',
  '## Autumn',
  '',
  'Rake the leaves.',
  '',
].join('\n');
const BIKE = ['---', 'id: bike-task', 'type: task', 'status: todo', 'due: 2026-11-30', '---', '# Buy a bike', '', 'Research first.', ''].join('\n');
const DAY_YESTERDAY = [
  '---',
  `date: ${YESTERDAY}`,
  '---',
  `# ${YESTERDAY}`,
  '',
  '## Log',
  '',
  '- 09:00 Planning the week #work ^log-y0900',
  '    - [[Attachments/plan.pdf]]',
  '- 12:15 Lunch with Sam ^log-y1215',
  '- 13:00 an entry without an anchor',
  '',
  '## Notes',
  '',
  'Nothing else.',
  '',
].join('\n');
const DAY_TOMORROW = ['## Log', '', '- 08:00 Future entry ^log-future', ''].join('\n');

beforeAll(async () => {
  inst = await startInstance();
  user = await inst.user('tess', 'member');
  home = path.join(inst.dataDir, 'homes', 'tess');
  write('Notes/Garden.md', GARDEN);
  write('Notes/Buy a bike.md', BIKE);
  write('Notes/Plain.md', '# Plain\n\nNo tasks here.');
  write(`Journal/${YESTERDAY}.md`, DAY_YESTERDAY);
  write(`Journal/${TOMORROW}.md`, DAY_TOMORROW);
  write('Attachments/plan.pdf', 'pdf');
});
afterAll(() => inst.close());

describe('reading tasks', () => {
  it('lists inline tasks and File Tasks with their facts', async () => {
    const r = await api('GET', '/api/v1/notes/tasks');
    expect(r.status).toBe(200);
    expect(r.body.next_cursor).toBeNull();
    const byText = Object.fromEntries(r.body.items.map((t: any) => [t.text, t]));
    expect(byText['Buy tulip bulbs 📅 2026-11-25']).toMatchObject({
      task_id: 'buy-bulbs',
      kind: 'inline',
      path: 'Notes/Garden.md',
      note_id: 'garden-id',
      line: 9,
      status: ' ',
      checked: false,
      due: '2026-11-25',
      done: null,
    });
    expect(byText['Clear the beds']).toMatchObject({ task_id: null, status: '/', line: 10 });
    expect(byText['Order compost ✅ 2026-11-20']).toMatchObject({ task_id: 'compost', checked: true, done: '2026-11-20' });
    expect(byText['Buy a bike']).toMatchObject({ task_id: 'bike-task', kind: 'file', status: ' ', due: '2026-11-30', line: null, log_entry: null });
  });

  it('pages with an offset cursor and refuses a bad limit', async () => {
    const all = (await api('GET', '/api/v1/notes/tasks')).body.items;
    const p1 = await api('GET', '/api/v1/notes/tasks?limit=2');
    expect(p1.body.items).toEqual(all.slice(0, 2));
    expect(p1.body.next_cursor).toBe(2);
    const p2 = await api('GET', `/api/v1/notes/tasks?limit=2&cursor=${p1.body.next_cursor}`);
    expect(p2.body.items).toEqual(all.slice(2, 4));
    expect((await api('GET', '/api/v1/notes/tasks?limit=0')).status).toBe(400);
    expect((await api('GET', '/api/v1/notes/tasks?limit=501')).status).toBe(400);
    expect((await api('GET', '/api/v1/notes/tasks?status=x')).status).toBe(400);
  });

  it('reads one task by block id or File Task id', async () => {
    const r = await api('GET', '/api/v1/notes/tasks/by-id?task_id=buy-bulbs');
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ task_id: 'buy-bulbs', path: 'Notes/Garden.md' });
    expect((await api('GET', '/api/v1/notes/tasks/by-id?task_id=bike-task')).body).toMatchObject({ kind: 'file', text: 'Buy a bike' });
    const missing = await api('GET', '/api/v1/notes/tasks/by-id?task_id=nope');
    expect(missing.status).toBe(404);
    expect(missing.body.error.code).toBe('not_found');
    // A note that is not a File Task is not a task.
    expect((await api('GET', '/api/v1/notes/tasks/by-id?task_id=garden-id')).status).toBe(404);
  });

  it('groups tasks by due and done day within a bounded window', async () => {
    const r = await api('GET', '/api/v1/notes/tasks/day?from=2026-11-19&to=2026-11-30&tz=Europe/Paris');
    expect(r.status).toBe(200);
    expect(r.body.items).toHaveLength(12);
    const day = (d: string) => r.body.items.find((x: any) => x.date === d);
    expect(day('2026-11-25').due.map((t: any) => t.task_id)).toEqual(['buy-bulbs']);
    expect(day('2026-11-20').done.map((t: any) => t.task_id)).toEqual(['compost']);
    expect(day('2026-11-30').due.map((t: any) => t.task_id)).toEqual(['bike-task']);
    expect(day('2026-11-19')).toEqual({ date: '2026-11-19', due: [], done: [] });
    expect(r.body.tz).toBe('Europe/Paris');

    const big = await api('GET', '/api/v1/notes/tasks/day?from=2026-01-01&to=2027-01-02');
    expect(big.status).toBe(400);
    expect(big.body.error.details).toMatchObject({ reason: 'window_too_large', max_days: '366' });
    expect((await api('GET', '/api/v1/notes/tasks/day?from=2026-01-01&to=2026-12-31')).status).toBe(200);
    expect((await api('GET', '/api/v1/notes/tasks/day?from=2026-11-10&to=2026-11-01')).status).toBe(400);
    expect((await api('GET', '/api/v1/notes/tasks/day?from=2026-02-30&to=2026-03-01')).body.error.details.field).toBe('query.from');
    expect((await api('GET', '/api/v1/notes/tasks/day?from=2026-11-01&to=2026-11-02&tz=Mars/Olympus')).body.error.details.field).toBe('query.tz');
  });
});

/** Asserts that `after` differs from `before` only at the given 1-based lines (same line count). */
function onlyLinesChanged(before: string, after: string, lines: number[]) {
  const b = before.split('\n');
  const a = after.split('\n');
  expect(a.length).toBe(b.length);
  for (let i = 0; i < b.length; i++) if (!lines.includes(i + 1)) expect(a[i], `line ${i + 1}`).toBe(b[i]);
}

describe('changing tasks', () => {
  it('sets a status: done adds ✅ today, undone removes it; only that line changes', async () => {
    const before = read('Notes/Garden.md');
    const r = await api('POST', '/api/v1/notes/tasks/status', { body: { task_id: 'buy-bulbs', status: 'x' } });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ task_id: 'buy-bulbs', status: 'x', checked: true, done: TODAY });
    const after = read('Notes/Garden.md');
    onlyLinesChanged(before, after, [9]);
    expect(after.split('\n')[8]).toBe(`- [x] Buy tulip bulbs 📅 2026-11-25 ✅ ${TODAY} ^buy-bulbs`);
    expect(r.headers.get('etag')).toBe(`"${r.body.etag}"`);

    const undo = await api('POST', '/api/v1/notes/tasks/status', { body: { task_id: 'buy-bulbs', status: ' ' } });
    expect(undo.body).toMatchObject({ status: ' ', done: null });
    expect(read('Notes/Garden.md')).toBe(before);
  });

  it('gives a task found by position a block id, changing only its line', async () => {
    const before = read('Notes/Garden.md');
    const etag = (await api('GET', '/api/v1/notes/tasks?limit=500')).body.items.find((t: any) => t.path === 'Notes/Garden.md').etag;
    // A position means something only at one revision: If-Match is required.
    const noEtag = await api('POST', '/api/v1/notes/tasks/status', { body: { path: 'Notes/Garden.md', line: 10, status: 'x' } });
    expect(noEtag.status).toBe(428);
    const r = await api('POST', '/api/v1/notes/tasks/status', { body: { path: 'Notes/Garden.md', line: 10, status: 'x', timezone: 'UTC' }, headers: { 'if-match': etag } });
    expect(r.status).toBe(200);
    expect(r.body.task_id).toMatch(/^t[0-9a-z]{6}$/);
    const after = read('Notes/Garden.md');
    onlyLinesChanged(before, after, [10]);
    expect(after.split('\n')[9]).toMatch(new RegExp(`^- \\[x\\] Clear the beds ✅ \\d{4}-\\d{2}-\\d{2} \\^${r.body.task_id}$`));
    // The new id now finds the task.
    expect((await api('GET', `/api/v1/notes/tasks/by-id?task_id=${r.body.task_id}`)).body.line).toBe(10);
    // No task on that line: 404; bad status: 400; both ways of naming: 400.
    expect((await api('POST', '/api/v1/notes/tasks/status', { body: { path: 'Notes/Garden.md', line: 5, status: 'x' }, headers: { 'if-match': r.body.etag } })).status).toBe(404);
    expect((await api('POST', '/api/v1/notes/tasks/status', { body: { task_id: 'compost', status: 'xx' } })).status).toBe(400);
    expect((await api('POST', '/api/v1/notes/tasks/status', { body: { task_id: 'compost', path: 'Notes/Garden.md', line: 11, status: 'x' } })).status).toBe(400);
  });

  it('refuses with 412 when If-Match is stale (the file changed on disk), leaving it untouched', async () => {
    const etag = (await api('GET', '/api/v1/notes/tasks/by-id?task_id=compost')).body.etag;
    const edited = read('Notes/Garden.md').replace('Rake the leaves.', 'Rake the leaves twice.');
    write('Notes/Garden.md', edited); // a desktop editor's change
    const r = await api('POST', '/api/v1/notes/tasks/status', { body: { task_id: 'compost', status: ' ' }, headers: { 'if-match': `"${etag}"` } });
    expect(r.status).toBe(412);
    expect(r.body.error.details.reason).toBe('etag_mismatch');
    expect(read('Notes/Garden.md')).toBe(edited);
    // At the current revision it works.
    const cur = r.body.error.details.current_etag;
    const ok = await api('POST', '/api/v1/notes/tasks/status', { body: { task_id: 'compost', status: ' ' }, headers: { 'if-match': `"${cur}"` } });
    expect(ok.status).toBe(200);
    expect(read('Notes/Garden.md').split('\n')[10]).toBe('- [ ] Order compost ^compost');
  });

  it('edits text and due, keeping status, markers and block id', async () => {
    const before = read('Notes/Garden.md');
    const r = await api('PATCH', '/api/v1/notes/tasks/by-id', { body: { task_id: 'buy-bulbs', text: 'Buy daffodil bulbs', due: '2026-12-01' } });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ task_id: 'buy-bulbs', due: '2026-12-01', text: 'Buy daffodil bulbs 📅 2026-12-01' });
    onlyLinesChanged(before, read('Notes/Garden.md'), [9]);
    const r2 = await api('PATCH', '/api/v1/notes/tasks/by-id', { body: { task_id: 'buy-bulbs', due: null } });
    expect(r2.body.due).toBeNull();
    expect(read('Notes/Garden.md').split('\n')[8]).toBe('- [ ] Buy daffodil bulbs ^buy-bulbs');
    expect((await api('PATCH', '/api/v1/notes/tasks/by-id', { body: { task_id: 'buy-bulbs', due: '2026-13-01' } })).status).toBe(400);
    expect((await api('PATCH', '/api/v1/notes/tasks/by-id', { body: { task_id: 'buy-bulbs' } })).status).toBe(400);
    expect((await api('PATCH', '/api/v1/notes/tasks/by-id', { body: { task_id: 'buy-bulbs', text: 'two\nlines' } })).status).toBe(400);
  });

  it('changes a File Task in its frontmatter', async () => {
    const r = await api('POST', '/api/v1/notes/tasks/status', { body: { task_id: 'bike-task', status: 'x' } });
    expect(r.body).toMatchObject({ kind: 'file', status: 'x', done: TODAY });
    expect(read('Notes/Buy a bike.md')).toBe(BIKE.replace('status: todo', 'status: done').replace('due: 2026-11-30\n', `due: 2026-11-30\ndone: ${TODAY}\n`));
    await api('POST', '/api/v1/notes/tasks/status', { body: { task_id: 'bike-task', status: ' ' } });
    expect(read('Notes/Buy a bike.md')).toBe(BIKE);
  });

  it('creates tasks at the end, under a heading, or after a line', async () => {
    const before = read('Notes/Garden.md');
    const a = await api('POST', '/api/v1/notes/tasks', { body: { note_id: 'garden-id', text: 'Plant garlic', due: '2026-12-05' } });
    expect(a.status).toBe(201);
    expect(a.body).toMatchObject({ text: 'Plant garlic 📅 2026-12-05', due: '2026-12-05', status: ' ' });
    const afterA = read('Notes/Garden.md');
    expect(afterA).toBe(`${before}- [ ] Plant garlic 📅 2026-12-05 ^${a.body.task_id}\n`);

    const b = await api('POST', '/api/v1/notes/tasks', { body: { path: 'Notes/Garden.md', text: 'Sow peas', heading: 'Spring' } });
    expect(b.status).toBe(201);
    const lines = read('Notes/Garden.md').split('\n');
    expect(lines[11]).toBe(`- [ ] Sow peas ^${b.body.task_id}`);
    expect(lines.filter((l, i) => i !== 11)).toEqual(afterA.split('\n'));
    expect(b.body.line).toBe(12);

    expect((await api('POST', '/api/v1/notes/tasks', { body: { path: 'Notes/Plain.md', text: 'First', after_line: 0 } })).status).toBe(428);
    const plainEtag = (await api('GET', '/api/v1/notes?path=Notes/Plain.md')).body.items[0].etag;
    const c = await api('POST', '/api/v1/notes/tasks', { body: { path: 'Notes/Plain.md', text: 'First', after_line: 0 }, headers: { 'if-match': plainEtag } });
    expect(c.status).toBe(201);
    expect(read('Notes/Plain.md')).toBe(`- [ ] First ^${c.body.task_id}\n# Plain\n\nNo tasks here.`);
    const d = await api('POST', '/api/v1/notes/tasks', { body: { path: 'Notes/Plain.md', text: 'Last' } });
    expect(read('Notes/Plain.md')).toBe(`- [ ] First ^${c.body.task_id}\n# Plain\n\nNo tasks here.\n- [ ] Last ^${d.body.task_id}\n`);

    expect((await api('POST', '/api/v1/notes/tasks', { body: { path: 'Notes/Garden.md', text: 'x', heading: 'Winter' } })).status).toBe(404);
    expect((await api('POST', '/api/v1/notes/tasks', { body: { path: 'Notes/Nope.md', text: 'x' } })).status).toBe(404);
    expect((await api('POST', '/api/v1/notes/tasks', { body: { text: 'x' } })).status).toBe(400);
    const stale = await api('POST', '/api/v1/notes/tasks', { body: { path: 'Notes/Plain.md', text: 'x' }, headers: { 'if-match': '"nope"' } });
    expect(stale.status).toBe(412);
  });
});

describe('attaching File Tasks to log entries', () => {
  it('attaches to the latest eligible entry: a child link and the log_entry key, nothing else', async () => {
    const dayBefore = read(`Journal/${YESTERDAY}.md`);
    const bikeBefore = read('Notes/Buy a bike.md');
    const r = await api('POST', '/api/v1/notes/tasks/attach', { body: { task_id: 'bike-task' } });
    expect(r.status).toBe(200);
    expect(r.body.log_entry).toEqual({ path: `Journal/${YESTERDAY}.md`, date: YESTERDAY, block_id: 'log-y1215' });
    expect(r.body.task.log_entry).toBe(`[[Journal/${YESTERDAY}#^log-y1215]]`);
    // The future Daily note is untouched; the entry gets one child line using the file's child indentation.
    expect(read(`Journal/${TOMORROW}.md`)).toBe(DAY_TOMORROW);
    expect(read(`Journal/${YESTERDAY}.md`)).toBe(dayBefore.replace('- 12:15 Lunch with Sam ^log-y1215\n', '- 12:15 Lunch with Sam ^log-y1215\n    - [[Notes/Buy a bike]]\n'));
    expect(read('Notes/Buy a bike.md')).toBe(bikeBefore.replace('---\n# Buy', `log_entry: "[[Journal/${YESTERDAY}#^log-y1215]]"\n---\n# Buy`));
    // Attaching again changes nothing.
    await api('POST', '/api/v1/notes/tasks/attach', { body: { task_id: 'bike-task' } });
    expect(read(`Journal/${YESTERDAY}.md`).match(/Buy a bike/g)).toHaveLength(1);
  });

  it('detaches: both files are back to their bytes', async () => {
    const r = await api('POST', '/api/v1/notes/tasks/detach', { body: { task_id: 'bike-task' } });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ detached: true, link_removed: true, task: { log_entry: null } });
    expect(read(`Journal/${YESTERDAY}.md`)).toBe(DAY_YESTERDAY);
    expect(read('Notes/Buy a bike.md')).toBe(BIKE);
    const again = await api('POST', '/api/v1/notes/tasks/detach', { body: { task_id: 'bike-task' } });
    expect(again.body.detached).toBe(false);
  });

  it('moves an attachment to a newer entry and refuses inline tasks', async () => {
    await api('POST', '/api/v1/notes/tasks/attach', { body: { task_id: 'bike-task' } });
    write(`Journal/${TODAY}.md`, '## Log\n\n- 00:00 Midnight thoughts ^log-t0000\n');
    // Written by hand: the server knows the new Daily note once its watcher has seen it.
    await eventually(async () => {
      const r = await api('GET', '/api/v1/notes?path=Journal/');
      return r.body.items.some((n: any) => n.path === `Journal/${TODAY}.md`);
    });
    const r = await api('POST', '/api/v1/notes/tasks/attach', { body: { task_id: 'bike-task' } });
    expect(r.body.log_entry.block_id).toBe('log-t0000');
    expect(read(`Journal/${YESTERDAY}.md`)).toBe(DAY_YESTERDAY);
    expect(read(`Journal/${TODAY}.md`)).toBe('## Log\n\n- 00:00 Midnight thoughts ^log-t0000\n    - [[Notes/Buy a bike]]\n');
    const inline = await api('POST', '/api/v1/notes/tasks/attach', { body: { task_id: 'compost' } });
    expect(inline.status).toBe(400);
    expect(inline.body.error.details.reason).toBe('not_a_file_task');
    expect((await api('POST', '/api/v1/notes/tasks/attach', { body: { task_id: 'nope' } })).status).toBe(404);
    await api('POST', '/api/v1/notes/tasks/detach', { body: { task_id: 'bike-task' } });
    expect(read(`Journal/${TODAY}.md`)).toBe('## Log\n\n- 00:00 Midnight thoughts ^log-t0000\n');
    expect(read('Notes/Buy a bike.md')).toBe(BIKE);
  });
});

describe('App Passwords limited to a Home prefix', () => {
  it('see and change only tasks under the prefix', async () => {
    const mk = async (home_prefix: string) => {
      const r = await inst.api('POST', '/api/v1/auth/app-passwords', { token: user.token, body: { name: `p-${home_prefix}`, home_prefix } });
      expect(r.status).toBe(201);
      return r.body.password as string;
    };
    const journalOnly = await mk('Journal/');
    const list = await inst.api('GET', '/api/v1/notes/tasks', { token: journalOnly });
    expect(list.status).toBe(200);
    expect(list.body.items).toEqual([]);
    expect((await inst.api('GET', '/api/v1/notes/tasks/by-id?task_id=compost', { token: journalOnly })).status).toBe(404);
    const before = read('Notes/Garden.md');
    expect((await inst.api('POST', '/api/v1/notes/tasks/status', { token: journalOnly, body: { task_id: 'compost', status: 'x' } })).status).toBe(404);
    expect(read('Notes/Garden.md')).toBe(before);
    const notesOnly = await mk('Notes/');
    expect((await inst.api('GET', '/api/v1/notes/tasks/by-id?task_id=compost', { token: notesOnly })).status).toBe(200);
    // Attaching writes the Daily note, outside the prefix: refused, nothing written.
    const bike = read('Notes/Buy a bike.md');
    const a = await inst.api('POST', '/api/v1/notes/tasks/attach', { token: notesOnly, body: { task_id: 'bike-task' } });
    expect(a.status).toBe(403);
    expect(read('Notes/Buy a bike.md')).toBe(bike);
    expect(read(`Journal/${YESTERDAY}.md`)).toBe(DAY_YESTERDAY);
  });
});

describe('the command line', () => {
  it('lists tasks and sets a status through quire action run', async () => {
    const list = await runCli(['action', 'run', 'notes_task_by_id', '--input', JSON.stringify({ query: { task_id: 'compost' } }), '--json', '--server', inst.url, '--token', user.token]);
    expect(list.code, list.stderr).toBe(0);
    expect(JSON.parse(list.stdout)).toMatchObject({ task_id: 'compost', path: 'Notes/Garden.md' });
    const set = await runCli(['action', 'run', 'notes_task_status_set', '--input', JSON.stringify({ body: { task_id: 'compost', status: '-' } }), '--confirm', '--json', '--server', inst.url, '--token', user.token]);
    expect(set.code, set.stderr).toBe(0);
    expect(JSON.parse(set.stdout)).toMatchObject({ status: '-', cancelled: true });
    expect(read('Notes/Garden.md')).toContain('- [-] Order compost ^compost');
  });
});
