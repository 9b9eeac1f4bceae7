/**
 * A vault's own Obsidian settings, end to end: a real server on loopback,
 * Homes whose `.obsidian/*.json` name other Daily-note folders and formats,
 * a Daily template, a templates folder and an attachment folder. Checks the
 * answers, the file names on disk, that each Daily note is found again from
 * its date, and that `.obsidian/` is never written.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInstance, type TestInstance } from '../helpers/instance.js';
import { eventually } from '../helpers/wait.js';

let inst: TestInstance;

interface Person {
  token: string;
  home: string;
}
const people: Record<string, Person> = {};

const homeOf = (who: string) => people[who]!.home;
const read = (who: string, rel: string) => fs.readFileSync(path.join(homeOf(who), rel), 'utf8');
const exists = (who: string, rel: string) => fs.existsSync(path.join(homeOf(who), rel));
const write = (who: string, rel: string, text: string) => {
  fs.mkdirSync(path.dirname(path.join(homeOf(who), rel)), { recursive: true });
  fs.writeFileSync(path.join(homeOf(who), rel), text);
};
let tick = 0;
const settings = (who: string, name: string, json: unknown) => {
  write(who, `.obsidian/${name}`, JSON.stringify(json));
  // A later mtime than the previous version's, however fast the test runs.
  const t = new Date(Date.now() + 1000 * ++tick);
  fs.utimesSync(path.join(homeOf(who), `.obsidian/${name}`), t, t);
};
const api = (who: string, method: string, route: string, o: { body?: unknown; headers?: Record<string, string> } = {}) =>
  inst.api(method, route, { token: people[who]!.token, ...o });
const BERLIN = { 'x-svc-timezone': 'Europe/Berlin' };
const ensure = (who: string, date: string) => api(who, 'POST', `/api/v1/notes/daily?date=${date}`, { headers: BERLIN });
const daily = (who: string, date: string) => api(who, 'GET', `/api/v1/notes/daily?date=${date}`, { headers: BERLIN });
const log = (who: string, now: string, text: string) =>
  api(who, 'POST', '/api/v1/notes/journal/log', { body: { text, now, timezone: 'Europe/Berlin' } });

/** Every file under `.obsidian/` with its bytes, to show the server wrote none. */
function obsidianFiles(who: string): Record<string, string> {
  const dir = path.join(homeOf(who), '.obsidian');
  const out: Record<string, string> = {};
  for (const f of fs.readdirSync(dir)) out[f] = fs.readFileSync(path.join(dir, f), 'utf8');
  return out;
}

const DAILY_TEMPLATE = [
  '---',
  'tags: [daily]',
  '---',
  '# {{title}}',
  '',
  'Date: {{date:YYYY-MM-DD}} ({{date}}), made at {{time}}',
  'Previous: [[{{yesterday}}]] · Next: [[{{tomorrow}}]]',
  '',
  '## Log',
  '',
  '## Notes',
  '',
].join('\n');

beforeAll(async () => {
  inst = await startInstance();
  for (const who of ['ana', 'bo', 'cy', 'dee']) {
    const { token } = await inst.user(who, 'member');
    people[who] = { token, home: path.join(inst.dataDir, 'homes', who) };
  }
  // ana: the issue's example, with a Daily template.
  settings('ana', 'daily-notes.json', { folder: 'Daily/Notes', format: 'YYYY/MM/DD dddd', template: 'Templates/Daily' });
  write('ana', 'Templates/Daily.md', DAILY_TEMPLATE);
  write('ana', 'Daily/Notes/2026/03/12 Thursday.md', '## Log\n- 08:00 Coffee on the balcony\n- 09:00 Standup ^hand-1\n');
  write('ana', 'Journal/2026-03-13.md', '## Log\n- 07:00 Not a Daily note in this vault ^old-1\n');
  // bo: a plain folder with Obsidian's default format, and an app.json.
  settings('bo', 'daily-notes.json', { folder: 'Diary' });
  settings('bo', 'app.json', { attachmentFolderPath: './assets' });
  // cy: day-first names in the vault root (no folder), and File Tasks.
  settings('cy', 'daily-notes.json', { format: 'DD-MM-YYYY' });
  write('cy', '20-11-2026.md', '## Log\n- 09:00 Planning ^cy-0900\n- 12:15 Lunch with Sam ^cy-1215\n');
  write('cy', 'Journal/2026-11-21.md', '## Log\n- 10:00 In the old folder ^old-1000\n');
  write('cy', 'Notes/Buy a bike.md', '---\nid: bike-task\ntype: task\nstatus: todo\n---\n# Buy a bike\n');
  // dee: no daily-notes.json (the server's own layout), a templates folder of Obsidian's.
  settings('dee', 'templates.json', { folder: 'Meta/Templates', dateFormat: 'DD.MM.YYYY', timeFormat: 'HH:mm' });
  write('dee', 'Meta/Templates/Meeting.md', '# {{title}}\n\nOn {{date}}, {{date:dddd}}\n');
  write('dee', 'Templates/Old.md', '# Not a template in this vault\n');
});
afterAll(() => inst.close());

describe('daily-notes.json: folder, format and template', () => {
  it('ensure_daily creates the note at the path the format names, from the template', async () => {
    const before = obsidianFiles('ana');
    const r = await ensure('ana', '2026-03-09');
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ date: '2026-03-09', path: 'Daily/Notes/2026/03/09 Monday.md', exists: true, created: true, timezone: 'Europe/Berlin' });
    const text = read('ana', 'Daily/Notes/2026/03/09 Monday.md');
    expect(text).toMatch(
      /^---\ntags: \[daily\]\ntimezone: Europe\/Berlin\n---\n# 09 Monday\n\nDate: 2026-03-09 \(2026\/03\/09 Monday\), made at \d\d:\d\d\nPrevious: \[\[2026\/03\/08 Sunday\]\] · Next: \[\[2026\/03\/10 Tuesday\]\]\n\n## Log\n\n## Notes\n$/,
    );
    expect(r.body.content).toBe(text);
    expect(exists('ana', 'Journal/2026-03-09.md')).toBe(false);
    // Found again from its date; a second ensure leaves it alone.
    const again = await ensure('ana', '2026-03-09');
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ path: 'Daily/Notes/2026/03/09 Monday.md', created: false, etag: r.body.etag });
    expect((await daily('ana', '2026-03-09')).body).toMatchObject({ exists: true, path: 'Daily/Notes/2026/03/09 Monday.md', etag: r.body.etag });
    expect(obsidianFiles('ana')).toEqual(before);
  });

  it('a log entry creates its day from the template, and is found again by block id', async () => {
    const r = await log('ana', '2026-03-10T09:05', 'Standup #work');
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ date: '2026-03-10', path: 'Daily/Notes/2026/03/10 Tuesday.md', start: '09:05', tags: ['work'] });
    const text = read('ana', 'Daily/Notes/2026/03/10 Tuesday.md');
    expect(text).toContain('# 10 Tuesday\n');
    // The entry goes into the template's Log section, before its Notes section.
    expect(text).toContain(`## Log\n- 09:05 Standup #work ^${r.body.block_id}\n\n## Notes\n`);
    const got = await api('ana', 'GET', `/api/v1/notes/journal/entries/${r.body.block_id}`);
    expect(got.status).toBe(200);
    expect(got.body).toMatchObject({ path: 'Daily/Notes/2026/03/10 Tuesday.md', date: '2026-03-10' });
    const dayRec = await api('ana', 'GET', '/api/v1/notes/journal/2026-03-10');
    expect(dayRec.body.entries.map((e: any) => e.block_id)).toEqual([r.body.block_id]);

    // Moving it to another day creates that day's note by the same settings.
    const moved = await api('ana', 'PATCH', `/api/v1/notes/journal/entries/${r.body.block_id}`, {
      body: { date: '2026-03-11' },
      headers: { 'if-match': got.body.etag },
    });
    expect(moved.status).toBe(200);
    expect(moved.body).toMatchObject({ date: '2026-03-11', path: 'Daily/Notes/2026/03/11 Wednesday.md' });
    expect(read('ana', 'Daily/Notes/2026/03/11 Wednesday.md')).toContain(`# 11 Wednesday\n`);
    expect(read('ana', 'Daily/Notes/2026/03/10 Tuesday.md')).not.toContain('Standup');
  });

  it('reads notes written by Obsidian at its paths, and not the server\'s default ones', async () => {
    const day = await api('ana', 'GET', '/api/v1/notes/journal/2026-03-12');
    expect(day.body).toMatchObject({ exists: true, path: 'Daily/Notes/2026/03/12 Thursday.md' });
    const [coffee, standup] = day.body.entries;
    expect(standup).toMatchObject({ block_id: 'hand-1', anchored: true });
    // Anchored ids are found through the index, derived ones through the date in the id.
    expect((await api('ana', 'GET', '/api/v1/notes/journal/entries/hand-1')).body.path).toBe('Daily/Notes/2026/03/12 Thursday.md');
    expect((await api('ana', 'GET', `/api/v1/notes/journal/entries/${coffee.block_id}`)).body.text).toBe('Coffee on the balcony');
    // Journal/YYYY-MM-DD.md is an ordinary note in a vault whose Daily notes live elsewhere.
    expect((await api('ana', 'GET', '/api/v1/notes/journal/2026-03-13')).body).toMatchObject({ exists: false, path: 'Daily/Notes/2026/03/13 Friday.md' });
    expect((await api('ana', 'GET', '/api/v1/notes/journal/entries/old-1')).status).toBe(404);
  });

  it('follows a change of the settings while the server runs', async () => {
    settings('ana', 'daily-notes.json', { folder: 'Days', format: 'DD-MM-YYYY' });
    const r = await ensure('ana', '2026-03-14');
    expect(r.body).toMatchObject({ path: 'Days/14-03-2026.md', created: true });
    // No template any more: the plain note.
    expect(read('ana', 'Days/14-03-2026.md')).toBe('---\ntimezone: Europe/Berlin\n---\n## Log\n');
    settings('ana', 'daily-notes.json', { folder: 'Daily/Notes', format: 'YYYY/MM/DD dddd', template: 'Templates/Daily' });
    expect((await daily('ana', '2026-03-09')).body).toMatchObject({ exists: true, path: 'Daily/Notes/2026/03/09 Monday.md' });
  });

  it('a folder with the default format, and attachment_folder from app.json', async () => {
    const before = obsidianFiles('bo');
    const r = await log('bo', '2026-05-02T18:30', 'Dinner');
    expect(r.body.path).toBe('Diary/2026-05-02.md');
    expect(read('bo', 'Diary/2026-05-02.md')).toBe(`---\ntimezone: Europe/Berlin\n---\n## Log\n- 18:30 Dinner ^${r.body.block_id}\n`);
    const d = await daily('bo', '2026-05-02');
    expect(d.body).toMatchObject({ path: 'Diary/2026-05-02.md', attachment_folder: 'Diary/assets', entries: [{ block_id: r.body.block_id }] });
    settings('bo', 'app.json', { attachmentFolderPath: 'Files/Attachments' });
    expect((await daily('bo', '2026-05-02')).body.attachment_folder).toBe('Files/Attachments');
    settings('bo', 'app.json', { attachmentFolderPath: '/' });
    expect((await daily('bo', '2026-05-02')).body.attachment_folder).toBe('');
    fs.rmSync(path.join(homeOf('bo'), '.obsidian/app.json'));
    expect((await daily('bo', '2026-05-02')).body.attachment_folder).toBe('Attachments');
    expect(exists('bo', 'Journal')).toBe(false);
    delete before['app.json'];
    expect(obsidianFiles('bo')).toEqual(before);
  });

  it('a template whose frontmatter is broken is used as written; a missing one gives the plain note', async () => {
    write('bo', 'Templates/Broken.md', '---\ntags: [a\n---\n# {{title}}\n');
    settings('bo', 'daily-notes.json', { folder: 'Diary', template: 'Templates/Broken' });
    expect((await ensure('bo', '2026-05-03')).status).toBe(201);
    expect(read('bo', 'Diary/2026-05-03.md')).toBe('---\ntags: [a\n---\n# 2026-05-03\n');
    settings('bo', 'daily-notes.json', { folder: 'Diary', template: 'Templates/Missing' });
    expect((await ensure('bo', '2026-05-04')).status).toBe(201);
    expect(read('bo', 'Diary/2026-05-04.md')).toBe('---\ntimezone: Europe/Berlin\n---\n## Log\n');
  });

  it('day-first names in the vault root', async () => {
    const r = await ensure('cy', '2026-11-22');
    expect(r.body).toMatchObject({ path: '22-11-2026.md', created: true });
    expect(exists('cy', '22-11-2026.md')).toBe(true);
    expect((await api('cy', 'GET', '/api/v1/notes/journal/2026-11-20')).body.entries.map((e: any) => e.block_id)).toEqual(['cy-0900', 'cy-1215']);
  });
});

describe('tasks find Daily notes by the same settings', () => {
  it('attaches a File Task to the latest entry of a Daily note named DD-MM-YYYY, and detaches it', async () => {
    const dayBefore = read('cy', '20-11-2026.md');
    const r = await api('cy', 'POST', '/api/v1/notes/tasks/attach', { body: { task_id: 'bike-task' } });
    expect(r.status).toBe(200);
    // Journal/2026-11-21.md is newer but is not a Daily note in this vault; 22-11-2026.md has no entries.
    expect(r.body.log_entry).toEqual({ path: '20-11-2026.md', date: '2026-11-20', block_id: 'cy-1215' });
    expect(r.body.task.log_entry).toBe('[[20-11-2026#^cy-1215]]');
    expect(read('cy', '20-11-2026.md')).toBe(dayBefore.replace('^cy-1215\n', '^cy-1215\n    - [[Notes/Buy a bike]]\n'));
    const d = await api('cy', 'POST', '/api/v1/notes/tasks/detach', { body: { task_id: 'bike-task' } });
    expect(d.body).toMatchObject({ detached: true, link_removed: true, log_entry: { path: '20-11-2026.md', date: '2026-11-20', block_id: 'cy-1215' } });
    expect(read('cy', '20-11-2026.md')).toBe(dayBefore);
  });
});

describe('templates.json: the templates folder and its formats', () => {
  it('lists and uses templates from the folder Obsidian names', async () => {
    const list = await api('dee', 'GET', '/api/v1/notes/templates');
    expect(list.body.items.map((t: any) => t.path)).toEqual(['Meta/Templates/Meeting.md']);
    const r = await api('dee', 'POST', '/api/v1/notes/from-template', { body: { title: 'Kickoff', template_id: 'Meeting' } });
    expect(r.status).toBe(201);
    const d = new Date();
    const dd = (n: number) => String(n).padStart(2, '0');
    const weekday = d.toLocaleDateString('en-US', { weekday: 'long' });
    expect(read('dee', r.body.path)).toContain(`# Kickoff\n\nOn ${dd(d.getDate())}.${dd(d.getMonth() + 1)}.${d.getFullYear()}, ${weekday}\n`);
    const old = await api('dee', 'POST', '/api/v1/notes/from-template', { body: { title: 'X', template_id: 'Old' } });
    expect(old.status).toBe(404);
    expect(old.body.error.message).toContain('Meta/Templates/');
  });

  it('without daily-notes.json, Daily notes stay in Journal/YYYY-MM-DD.md', async () => {
    const r = await ensure('dee', '2026-03-09');
    expect(r.body).toMatchObject({ path: 'Journal/2026-03-09.md', created: true, attachment_folder: 'Attachments' });
    expect(read('dee', 'Journal/2026-03-09.md')).toBe('---\ntimezone: Europe/Berlin\n---\n## Log\n');
  });
});

describe('a Daily note written by hand appears at its Obsidian path', () => {
  it('is found once the watcher has seen it', async () => {
    write('ana', 'Daily/Notes/2026/04/01 Wednesday.md', '## Log\n- 10:00 April fool ^apr-1\n');
    await eventually(async () => (await api('ana', 'GET', '/api/v1/notes/journal/entries/apr-1')).status === 200, 10_000);
    expect((await api('ana', 'GET', '/api/v1/notes/journal/entries/apr-1')).body).toMatchObject({ date: '2026-04-01', path: 'Daily/Notes/2026/04/01 Wednesday.md' });
  });
});
