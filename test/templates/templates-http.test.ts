/** Templates end to end: listing `Templates/*.md`, creating Notes from them, and the default in `.quire/templates.json`. */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fillTemplate, formatDate } from '../../src/templates/templates.js';
import { startInstance, type TestInstance } from '../helpers/instance.js';
import { runCli } from '../helpers/cli.js';

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

const MEETING = '---\nid: tpl-meeting\ntags: [meeting]\ntitle: "{{title}}"\n---\n# {{title}}\n\nDate: {{date}} {{time}}\nWeek of {{date:YYYY/MM/DD}}\n{{unknown}}\n\n## Actions\n\n- [ ] \n';
const PLAIN = '# {{ title }}\n\nCreated {{date}}.\n';

beforeAll(async () => {
  inst = await startInstance();
  user = await inst.user('tom', 'member');
  home = path.join(inst.dataDir, 'homes', 'tom');
  write('Templates/Meeting.md', MEETING);
  write('Templates/Plain.md', PLAIN);
  write('Notes/Not a template.md', '# x\n');
});
afterAll(() => inst.close());

describe('filling placeholders', () => {
  const now = new Date(2026, 10, 22, 9, 5, 7); // local time
  const cases: Array<[string, string]> = [
    ['{{title}}', 'Standup'],
    ['{{ title }}', 'Standup'],
    ['{{TITLE}}', 'Standup'],
    ['{{date}}', '2026-11-22'],
    ['{{time}}', '09:05'],
    ['{{date:DD.MM.YY}}', '22.11.26'],
    ['{{time:HH:mm:ss}}', '09:05:07'],
    ['{{date:[Week of] YYYY-M-D}}', 'Week of 2026-11-22'],
    ['{{other}}', '{{other}}'],
    ['{title}', '{title}'],
  ];
  it.each(cases)('%s', (src, expected) => {
    expect(fillTemplate(src, 'Standup', now)).toBe(expected);
  });
  it('formats with moment-style tokens', () => {
    expect(formatDate(now, 'YYYY-MM-DD HH:mm')).toBe('2026-11-22 09:05');
  });
});

describe('templates over HTTP', () => {
  it('lists the templates in Templates/', async () => {
    const r = await api('GET', '/api/v1/notes/templates');
    expect(r.status).toBe(200);
    expect(r.body.items.map((t: any) => [t.id, t.path, t.name, t.default])).toEqual([
      ['tpl-meeting', 'Templates/Meeting.md', 'Meeting', false],
      [expect.stringMatching(/^p/), 'Templates/Plain.md', 'Plain', false],
    ]);
  });

  it('creates a Note under Notes/ from a template, filling title, date and time', async () => {
    const r = await api('POST', '/api/v1/notes/from-template', { body: { title: 'Standup', template_id: 'tpl-meeting' } });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ path: 'Notes/Standup.md', title: 'Standup', tags: ['meeting'], template_id: 'tpl-meeting' });
    expect(r.body.id).not.toBe('tpl-meeting');
    const text = read('Notes/Standup.md');
    const created = /created: (.*)\n/.exec(text)![1]!;
    const d = new Date(created);
    const pad = (n: number) => String(n).padStart(2, '0');
    const date = `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`;
    const time = `${pad(d.getHours())}:${pad(d.getMinutes())}`;
    expect(text).toBe(
      `---\nid: ${r.body.id}\ntags: [meeting]\ntitle: Standup\ncreated: ${created}\n---\n# Standup\n\nDate: ${date} ${time}\nWeek of ${date.replace(/-/g, '/')}\n{{unknown}}\n\n## Actions\n\n- [ ] \n`,
    );
    // The template is untouched.
    expect(read('Templates/Meeting.md')).toBe(MEETING);
    // By path or name too; a taken name gets " 2".
    const again = await api('POST', '/api/v1/notes/from-template', { body: { title: 'Standup', template_id: 'Templates/Plain.md' } });
    expect(again.body.path).toBe('Notes/Standup 2.md');
    expect(read('Notes/Standup 2.md')).toMatch(/^---\nid: .+\ntitle: Standup\ncreated: .+\n---\n# Standup\n\nCreated \d{4}-\d{2}-\d{2}\.\n$/);
    expect((await api('POST', '/api/v1/notes/from-template', { body: { title: 'By name', template_id: 'plain' } })).status).toBe(201);
  });

  it('refuses an unknown template, another folder and a blank title', async () => {
    const r = await api('POST', '/api/v1/notes/from-template', { body: { title: 'X', template_id: 'nope' } });
    expect(r.status).toBe(404);
    expect((await api('POST', '/api/v1/notes/from-template', { body: { title: 'X', template_id: 'Notes/Not a template.md' } })).status).toBe(404);
    expect((await api('POST', '/api/v1/notes/from-template', { body: { title: 'X', folder: 'Archive/' } })).status).toBe(400);
    expect((await api('POST', '/api/v1/notes/from-template', { body: { title: '  ' } })).status).toBe(400);
    expect(exists('Notes/X.md')).toBe(false);
  });

  it('without a default, template_id omitted makes a plain Note', async () => {
    const r = await api('POST', '/api/v1/notes/from-template', { body: { title: 'Bare' } });
    expect(r.status).toBe(201);
    expect(r.body.template_id).toBeNull();
    expect(read('Notes/Bare.md')).toMatch(/^---\nid: .+\ntitle: Bare\ncreated: .+\n---\n$/);
  });

  it('sets the default template in .quire/templates.json and uses it', async () => {
    const r = await api('PUT', '/api/v1/notes/templates/default', { body: { template_id: 'Meeting', folder: 'Notes/' } });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ template_id: 'tpl-meeting', folder: 'Notes/' });
    expect(JSON.parse(read('.quire/templates.json'))).toEqual({ folder: 'Notes/', default_template_id: 'tpl-meeting', default_template_path: 'Templates/Meeting.md' });
    const list = await api('GET', '/api/v1/notes/templates');
    expect(list.body.items.find((t: any) => t.default).path).toBe('Templates/Meeting.md');

    const n = await api('POST', '/api/v1/notes/from-template', { body: { title: 'Retro' } });
    expect(n.body.template_id).toBe('tpl-meeting');
    expect(read('Notes/Retro.md')).toContain('# Retro\n');

    // null clears it; the file keeps other keys.
    const cleared = await api('PUT', '/api/v1/notes/templates/default', { body: { template_id: null } });
    expect(cleared.body.template_id).toBeNull();
    expect(JSON.parse(read('.quire/templates.json')).default_template_id).toBeNull();
    expect((await api('POST', '/api/v1/notes/from-template', { body: { title: 'Plain again' } })).body.template_id).toBeNull();

    expect((await api('PUT', '/api/v1/notes/templates/default', { body: { template_id: 'nope' } })).status).toBe(404);
    expect((await api('PUT', '/api/v1/notes/templates/default', { body: { folder: 'Elsewhere' } })).status).toBe(400);
  });

  it('runs from the command line', async () => {
    const r = await runCli([
      'action', 'run', 'notes_template_create',
      '--input', JSON.stringify({ body: { title: 'From CLI', template_id: 'tpl-meeting' } }),
      '--confirm', '--json', '--server', inst.url, '--token', user.token,
    ]);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ path: 'Notes/From CLI.md', tags: ['meeting'] });
    expect(read('Notes/From CLI.md')).toContain('# From CLI\n');
  });
});
