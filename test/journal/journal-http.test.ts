/**
 * Daily notes and log entries end to end: a real server, a Home holding the
 * hand-written fixtures of vault-fixtures/journal/, and checks of both the
 * answers and the bytes on disk (every edit changes only its entry's lines).
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { startInstance, type TestInstance } from '../helpers/instance.js';

let inst: TestInstance;
let user: { id: string; token: string };
let home: string;

const FIXTURES = path.resolve(__dirname, '../../vault-fixtures/journal');
const read = (rel: string) => fs.readFileSync(path.join(home, rel), 'utf8');
const exists = (rel: string) => fs.existsSync(path.join(home, rel));
const write = (rel: string, text: string) => {
  fs.mkdirSync(path.dirname(path.join(home, rel)), { recursive: true });
  fs.writeFileSync(path.join(home, rel), text);
};
const api = (method: string, route: string, o: { body?: unknown; headers?: Record<string, string> } = {}) =>
  inst.api(method, route, { token: user.token, ...o });
const day = (date: string) => api('GET', `/api/v1/notes/journal/${date}`);
const entryOf = async (date: string, pred: (e: any) => boolean) => (await day(date)).body.entries.find(pred);
const BERLIN = { timezone: 'Europe/Berlin' };

/** `after` equals `before` with exactly the given lines (1-based, in `before`) replaced / removed and lines inserted. */
function linesDiff(before: string, after: string) {
  const a = before.split('\n');
  const b = after.split('\n');
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  let ja = a.length - 1;
  let jb = b.length - 1;
  while (ja >= i && jb >= i && a[ja] === b[jb]) {
    ja--;
    jb--;
  }
  return { removed: a.slice(i, ja + 1), added: b.slice(i, jb + 1) };
}

beforeAll(async () => {
  inst = await startInstance();
  user = await inst.user('jules', 'member');
  home = path.join(inst.dataDir, 'homes', 'jules');
  fs.cpSync(FIXTURES, home, { recursive: true });
});
afterAll(() => inst.close());

describe('hand-written Daily notes (vault-fixtures/journal)', () => {
  it('reads entries, attachments, the note link and unparsed lines of a note typed in Obsidian', async () => {
    const r = await day('2026-03-09');
    expect(r.status).toBe(200);
    expect(r.headers.get('etag')).toBe(`"${r.body.etag}"`);
    expect(r.body).toMatchObject({ date: '2026-03-09', path: 'Journal/2026-03-09.md', exists: true, timezone: null });
    expect(r.body.content).toBe(read('Journal/2026-03-09.md'));
    const rows = r.body.entries.map((e: any) => [e.start, e.end, e.title, e.text, e.tags, e.tz]);
    expect(rows).toEqual([
      ['07:30', null, null, 'Run along the river #health', ['health'], null],
      ['09:00', '09:30', 'Standup', 'planning the sprint #work', ['work'], null],
      ['12:15', null, null, 'Lunch with Ana #people', ['people'], null],
      ['14:00', '15:30', null, 'Deep work on the parser', [], null],
      ['18:00', null, null, 'Call with Léa about the trip #travel', ['travel'], 'Europe/Paris'],
    ]);
    const standup = r.body.entries[1];
    expect(standup.anchored).toBe(false);
    expect(standup.block_id).toMatch(/^d20260309-[0-9a-f]{8}$/);
    expect(standup.attachments).toEqual([
      { target: 'Attachments/board.png', embed: true, path: 'Attachments/board.png', missing: false },
      { target: 'Attachments/minutes.pdf', embed: false, path: null, missing: true },
    ]);
    const call = r.body.entries[4];
    expect(call).toMatchObject({ block_id: 'call-lea', anchored: true, line: 13 });
    expect(call.note).toMatchObject({ target: 'Notes/Trip planning', path: 'Notes/Trip planning.md' });
    expect(call.note.id).toBeTruthy();
    expect(r.body.unparsed).toEqual([{ hash: expect.stringMatching(/^[0-9a-f]{12}$/), line: 12, text: 'Forgot to log the afternoon coffee' }]);
    // Reading twice gives the same derived ids and hashes.
    const again = await day('2026-03-09');
    expect(again.body.entries.map((e: any) => e.block_id)).toEqual(r.body.entries.map((e: any) => e.block_id));
    expect(again.body.unparsed[0].hash).toBe(r.body.unparsed[0].hash);
  });

  it('reads a CRLF note with frontmatter timezone, * markers, am/pm times and an impossible time', async () => {
    const r = await day('2026-03-10');
    expect(r.body.timezone).toBe('America/New_York');
    expect(r.body.entries.map((e: any) => [e.start, e.end, e.title, e.text, e.tz])).toEqual([
      ['08:00', null, null, 'coffee', 'America/New_York'],
      ['10:00', '11:30', 'Review', 'design doc #work', 'America/New_York'],
      [null, null, null, 'evening walk', 'America/New_York'],
    ]);
    expect(r.body.unparsed.map((u: any) => u.text)).toEqual(['* 25:00 typo line']);
  });

  it('finds no log in a note without a Log heading', async () => {
    const r = await day('2026-03-11');
    expect(r.body).toMatchObject({ exists: true, entries: [], unparsed: [] });
  });

  it('refuses a bad date', async () => {
    const r = await day('2026-02-30');
    expect(r.status).toBe(400);
    expect(r.body.error.details.field).toBe('path.date');
  });
});

describe('daily and ensure_daily', () => {
  it('daily reads an absent day as empty without creating it', async () => {
    const r = await api('GET', '/api/v1/notes/daily?date=2026-04-01');
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ date: '2026-04-01', path: 'Journal/2026-04-01.md', exists: false, etag: null, entries: [], unparsed: [] });
    expect(exists('Journal/2026-04-01.md')).toBe(false);
  });

  it('defaults to today in the zone of X-Svc-Timezone', async () => {
    const today = (zone: string) =>
      new Intl.DateTimeFormat('en-CA', { timeZone: zone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(new Date());
    for (const zone of ['Pacific/Kiritimati', 'Pacific/Pago_Pago']) {
      const r = await api('GET', '/api/v1/notes/daily', { headers: { 'X-Svc-Timezone': zone } });
      expect([today(zone), new Intl.DateTimeFormat('en-CA', { timeZone: zone }).format(new Date(Date.now() - 5000))]).toContain(r.body.date);
    }
    const bad = await api('GET', '/api/v1/notes/daily', { headers: { 'X-Svc-Timezone': 'Mars/Olympus' } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details.field).toBe('headers.x-svc-timezone');
    const badDate = await api('GET', '/api/v1/notes/daily?date=2026-13-01');
    expect(badDate.status).toBe(400);
    expect(badDate.body.error.details.field).toBe('query.date');
  });

  it('ensure_daily creates the note once and leaves an existing one alone', async () => {
    const r = await api('POST', '/api/v1/notes/daily?date=2026-04-01', { headers: { 'X-Svc-Timezone': 'Europe/Berlin' } });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ created: true, exists: true, timezone: 'Europe/Berlin' });
    expect(read('Journal/2026-04-01.md')).toBe('---\ntimezone: Europe/Berlin\n---\n## Log\n');
    const again = await api('POST', '/api/v1/notes/daily?date=2026-04-01', { headers: { 'X-Svc-Timezone': 'Asia/Tokyo' } });
    expect(again.status).toBe(200);
    expect(again.body.created).toBe(false);
    expect(read('Journal/2026-04-01.md')).toBe('---\ntimezone: Europe/Berlin\n---\n## Log\n');
    const before = read('Journal/2026-03-09.md');
    expect((await api('POST', '/api/v1/notes/daily?date=2026-03-09')).status).toBe(200);
    expect(read('Journal/2026-03-09.md')).toBe(before);
  });
});

describe('notes_journal_create_log', () => {
  it('creates the day and an entry from composer text, ordered by time', async () => {
    const r = await api('POST', '/api/v1/notes/journal/log', { body: { text: 'Standup 9-10:30 #work', now: '2026-04-02T08:15', ...BERLIN } });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ date: '2026-04-02', start: '09:00', end: '10:30', text: 'Standup #work', tags: ['work'], tz: 'Europe/Berlin', anchored: true, replayed: false });
    expect(r.headers.get('etag')).toBe(`"${r.body.etag}"`);
    const id = r.body.block_id;
    expect(read('Journal/2026-04-02.md')).toBe(`---\ntimezone: Europe/Berlin\n---\n## Log\n- 09:00–10:30 Standup #work ^${id}\n`);

    const early = await api('POST', '/api/v1/notes/journal/log', { body: { text: 'coffee', now: '2026-04-02T08:00', ...BERLIN } });
    expect(early.body.start).toBe('08:00');
    const late = await api('POST', '/api/v1/notes/journal/log', { body: { text: 'lunch at noon', now: '2026-04-02T08:01', ...BERLIN } });
    const tokyo = await api('POST', '/api/v1/notes/journal/log', { body: { text: 'call Tokyo office at 17:00', now: '2026-04-02T16:00', timezone: 'Asia/Tokyo' } });
    expect(tokyo.body.tz).toBe('Asia/Tokyo');
    const placed = await api('POST', '/api/v1/notes/journal/log', { body: { text: 'note between', now: '2026-04-02T23:00', ...BERLIN, position: { after: early.body.block_id } } });
    expect(read('Journal/2026-04-02.md')).toBe(
      [
        '---',
        'timezone: Europe/Berlin',
        '---',
        '## Log',
        `- 08:00 coffee ^${early.body.block_id}`,
        `- 23:00 note between ^${placed.body.block_id}`,
        `- 09:00–10:30 Standup #work ^${id}`,
        `- 12:00 lunch ^${late.body.block_id}`,
        `- 17:00 (Asia/Tokyo) call Tokyo office ^${tokyo.body.block_id}`,
        '',
      ].join('\n'),
    );
    const first = await api('POST', '/api/v1/notes/journal/log', { body: { text: 'first', now: '2026-04-02T23:30', ...BERLIN, position: { index: 0 } } });
    expect((await day('2026-04-02')).body.entries[0].block_id).toBe(first.body.block_id);
  });

  it('takes the date from the text, and links attachments in the same write', async () => {
    const r = await api('POST', '/api/v1/notes/journal/log', {
      body: {
        text: 'whiteboard photo yesterday at 15:00',
        now: '2026-04-03T09:00',
        ...BERLIN,
        attachments: [{ path: 'Attachments/board.png' }, { path: 'Notes/Trip planning.md', embed: false }],
      },
    });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ date: '2026-04-02', start: '15:00', text: 'whiteboard photo' });
    expect(r.body.attachments.map((a: any) => [a.path, a.embed, a.missing])).toEqual([
      ['Attachments/board.png', true, false],
      ['Notes/Trip planning.md', false, false],
    ]);
    expect(read('Journal/2026-04-02.md')).toContain(
      `- 15:00 whiteboard photo ^${r.body.block_id}\n    - ![[Attachments/board.png]]\n    - [[Notes/Trip planning.md]]\n- 17:00 (Asia/Tokyo)`,
    );
  });

  it('inserts into a hand-written note changing no other byte', async () => {
    const before = read('Journal/2026-03-09.md');
    const r = await api('POST', '/api/v1/notes/journal/log', { body: { text: 'nap', now: '2026-03-09T13:00', timezone: 'Europe/Paris' } });
    expect(r.status).toBe(201);
    const d = linesDiff(before, read('Journal/2026-03-09.md'));
    expect(d).toEqual({ removed: [], added: [`- 13:00 (Europe/Paris) nap ^${r.body.block_id}`] });
    expect(read('Journal/2026-03-09.md').indexOf('nap')).toBeLessThan(read('Journal/2026-03-09.md').indexOf('14:00 - 15:30'));
  });

  it('adds a Log section to a note without one, and handles a last line without a line ending', async () => {
    write('Journal/2026-04-20.md', '# Monday\n\nJust thoughts.');
    const a = await api('POST', '/api/v1/notes/journal/log', { body: { text: 'first entry', now: '2026-04-20T09:00', ...BERLIN } });
    expect(a.status).toBe(201);
    expect(read('Journal/2026-04-20.md')).toBe(`# Monday\n\nJust thoughts.\n\n## Log\n- 09:00 (Europe/Berlin) first entry ^${a.body.block_id}\n`);
    write('Journal/2026-04-21.md', '## Log');
    const b = await api('POST', '/api/v1/notes/journal/log', { body: { text: 'x', now: '2026-04-21T09:00', ...BERLIN } });
    expect(read('Journal/2026-04-21.md')).toBe(`## Log\n- 09:00 (Europe/Berlin) x ^${b.body.block_id}\n`);
    write('Journal/2026-04-22.md', '## Log\n- 08:00 a\n\n## Later\ntext\n');
    const c = await api('POST', '/api/v1/notes/journal/log', { body: { text: 'b', now: '2026-04-22T09:00', ...BERLIN } });
    expect(read('Journal/2026-04-22.md')).toBe(`## Log\n- 08:00 a\n- 09:00 (Europe/Berlin) b ^${c.body.block_id}\n\n## Later\ntext\n`);
  });

  it('refuses bad input and writes nothing', async () => {
    const before = read('Journal/2026-04-02.md');
    const cases: Array<[any, string]> = [
      [{ text: 'x', now: '2026-04-02T25:00', ...BERLIN }, 'body.now'],
      [{ text: 'x', now: '2026-04-02T10:00', timezone: 'Nowhere/City' }, 'body.timezone'],
      [{ text: '  ', now: '2026-04-02T10:00', ...BERLIN }, 'body.text'],
      [{ text: 'two\nlines', now: '2026-04-02T10:00', ...BERLIN }, 'body.text'],
      [{ text: 'x', now: '2026-04-02T10:00', ...BERLIN, position: { after: 'nope' } }, 'body.position'],
      [{ text: 'x', now: '2026-04-02T10:00', ...BERLIN, position: { sideways: 1 } }, 'body.position'],
    ];
    for (const [body, field] of cases) {
      const r = await api('POST', '/api/v1/notes/journal/log', { body });
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.error.details.field).toBe(field);
    }
    const missing = await api('POST', '/api/v1/notes/journal/log', { body: { text: 'x', now: '2026-04-02T10:00', ...BERLIN, attachments: [{ path: 'Attachments/none.png' }] } });
    expect(missing.status).toBe(404);
    expect(missing.body.error.details.field).toBe('body.attachments[0].path');
    expect(read('Journal/2026-04-02.md')).toBe(before);
  });

  it('creates no second entry when a client_id is retried', async () => {
    const body = { text: 'retry me', now: '2026-04-04T10:00', ...BERLIN, client_id: 'inst-1:op-1' };
    const a = await api('POST', '/api/v1/notes/journal/log', { body });
    const b = await api('POST', '/api/v1/notes/journal/log', { body: { ...body, text: 'changed text' } });
    expect(a.status).toBe(201);
    expect(b.status).toBe(200);
    expect(b.body).toMatchObject({ block_id: a.body.block_id, replayed: true, text: 'retry me', client_id: 'inst-1:op-1' });
    expect(read('Journal/2026-04-04.md').match(/retry me/g)).toHaveLength(1);
    // Server bookkeeping, kept under <data>/state/, never in the Home.
    const state = fs.readFileSync(path.join(inst.dataDir, 'state', 'journal', `${user.id}.client-ids.json`), 'utf8');
    expect(JSON.parse(state).records['log:inst-1:op-1'].block_id).toBe(a.body.block_id);
    expect(exists('.quire/journal-client-ids.json')).toBe(false);
  });
});

describe('notes_journal_create_log_batch', () => {
  it('writes entries of several days, one write per day', async () => {
    const r = await api('POST', '/api/v1/notes/journal/log/batch', {
      body: {
        entries: [
          { text: 'a at 10:00', now: '2026-04-05T10:00', ...BERLIN },
          { text: 'b at 09:00', now: '2026-04-05T10:00', ...BERLIN, client_id: 'batch-b' },
          { text: 'c', now: '2026-04-06T07:00', ...BERLIN },
        ],
      },
    });
    expect(r.status).toBe(201);
    expect(r.body.items.map((e: any) => [e.date, e.start, e.text])).toEqual([
      ['2026-04-05', '10:00', 'a'],
      ['2026-04-05', '09:00', 'b'],
      ['2026-04-06', '07:00', 'c'],
    ]);
    const [a, b] = r.body.items;
    expect(read('Journal/2026-04-05.md')).toBe(`---\ntimezone: Europe/Berlin\n---\n## Log\n- 09:00 b ^${b.block_id}\n- 10:00 a ^${a.block_id}\n`);
    const again = await api('POST', '/api/v1/notes/journal/log/batch', { body: { entries: [{ text: 'b at 09:00', now: '2026-04-05T10:00', ...BERLIN, client_id: 'batch-b' }] } });
    expect(again.body.items[0]).toMatchObject({ block_id: b.block_id, replayed: true });
    expect(read('Journal/2026-04-05.md').match(/ b \^/g)).toHaveLength(1);
  });

  it('is all or nothing: one bad entry and no file changes', async () => {
    const before = read('Journal/2026-04-05.md');
    const r = await api('POST', '/api/v1/notes/journal/log/batch', {
      body: {
        entries: [
          { text: 'fine', now: '2026-04-05T11:00', ...BERLIN },
          { text: 'new day', now: '2026-04-07T11:00', ...BERLIN },
          { text: 'bad', now: '2026-04-05T11:00', ...BERLIN, attachments: [{ path: 'Attachments/nothing.png' }] },
        ],
      },
    });
    expect(r.status).toBe(404);
    expect(r.body.error.details.field).toBe('body.entries[2].attachments[0].path');
    expect(read('Journal/2026-04-05.md')).toBe(before);
    expect(exists('Journal/2026-04-07.md')).toBe(false);
    const dup = await api('POST', '/api/v1/notes/journal/log/batch', {
      body: { entries: [{ text: 'x', now: '2026-04-07T11:00', ...BERLIN, client_id: 'same' }, { text: 'y', now: '2026-04-07T11:00', ...BERLIN, client_id: 'same' }] },
    });
    expect(dup.status).toBe(400);
    expect(exists('Journal/2026-04-07.md')).toBe(false);
  });

  it('puts back a day already written when a later day cannot be written', async () => {
    // A folder where the second day's file would go makes its write fail after the first day's write.
    fs.mkdirSync(path.join(home, 'Journal/2026-04-09.md'), { recursive: true });
    const before = read('Journal/2026-04-05.md');
    const r = await api('POST', '/api/v1/notes/journal/log/batch', {
      body: { entries: [{ text: 'one', now: '2026-04-05T12:00', ...BERLIN }, { text: 'two', now: '2026-04-09T12:00', ...BERLIN }] },
    });
    expect(r.status).toBeGreaterThanOrEqual(400);
    expect(read('Journal/2026-04-05.md')).toBe(before);
    fs.rmdirSync(path.join(home, 'Journal/2026-04-09.md'));
  });
});

describe('reading, patching and deleting entries', () => {
  it('gets an entry by an anchored id and by a derived id', async () => {
    const call = await api('GET', '/api/v1/notes/journal/entries/call-lea');
    expect(call.status).toBe(200);
    expect(call.body).toMatchObject({ date: '2026-03-09', start: '18:00', tz: 'Europe/Paris' });
    const lunch = await entryOf('2026-03-09', (e) => e.text.startsWith('Lunch'));
    const r = await api('GET', `/api/v1/notes/journal/entries/${lunch.block_id}`);
    expect(r.status).toBe(200);
    expect(r.body.text).toBe('Lunch with Ana #people');
    expect(r.headers.get('etag')).toBe(`"${r.body.etag}"`);
    expect((await api('GET', '/api/v1/notes/journal/entries/nope')).status).toBe(404);
  });

  it('patches a hand-typed entry: writes its derived id into the line and changes only that line', async () => {
    const before = read('Journal/2026-03-09.md');
    const lunch = await entryOf('2026-03-09', (e) => e.text.startsWith('Lunch'));
    const noIfMatch = await api('PATCH', `/api/v1/notes/journal/entries/${lunch.block_id}`, { body: { title: 'Lunch' } });
    expect(noIfMatch.status).toBe(428);
    const r = await api('PATCH', `/api/v1/notes/journal/entries/${lunch.block_id}`, { body: { title: 'Lunch', start: '12:30', end: '13:30' }, headers: { 'if-match': lunch.etag } });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ block_id: lunch.block_id, anchored: true, title: 'Lunch', start: '12:30', end: '13:30' });
    expect(linesDiff(before, read('Journal/2026-03-09.md'))).toEqual({
      removed: ['- 12:15 Lunch with Ana #people'],
      added: [`- 12:30–13:30 **Lunch** Lunch with Ana #people ^${lunch.block_id}`],
    });
    const tags = await api('PATCH', `/api/v1/notes/journal/entries/${lunch.block_id}`, { body: { tags: ['food', 'people'], tz: 'Europe/Rome', title: null }, headers: { 'if-match': r.body.etag } });
    expect(tags.body).toMatchObject({ tags: ['people', 'food'], tz: 'Europe/Rome', title: null });
    expect(tags.body.raw).toBe(`- 12:30–13:30 (Europe/Rome) Lunch with Ana #people #food ^${lunch.block_id}`);
    const bad = await api('PATCH', `/api/v1/notes/journal/entries/${lunch.block_id}`, { body: { start: '9am' }, headers: { 'if-match': tags.body.etag } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details.field).toBe('body.start');
  });

  it('refuses a stale If-Match after a desktop edit and leaves the file as the editor wrote it', async () => {
    const run = await entryOf('2026-03-09', (e) => e.text.startsWith('Run'));
    const edited = read('Journal/2026-03-09.md').replace('Nothing else worth saying.', 'Edited in Obsidian.');
    write('Journal/2026-03-09.md', edited);
    const r = await api('PATCH', `/api/v1/notes/journal/entries/${run.block_id}`, { body: { title: 'Run' }, headers: { 'if-match': run.etag } });
    expect(r.status).toBe(412);
    expect(r.body.error.details.current_etag).toBeTruthy();
    const del = await api('DELETE', `/api/v1/notes/journal/entries/${run.block_id}`, { headers: { 'if-match': run.etag } });
    expect(del.status).toBe(412);
    expect(read('Journal/2026-03-09.md')).toBe(edited);
  });

  it('moves an entry with its attachment lines to another day', async () => {
    const standup = await entryOf('2026-03-09', (e) => e.title === 'Standup');
    const before = read('Journal/2026-03-09.md');
    const r = await api('PATCH', `/api/v1/notes/journal/entries/${standup.block_id}`, { body: { date: '2026-03-10' }, headers: { 'if-match': standup.etag } });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ block_id: standup.block_id, date: '2026-03-10', start: '09:00', end: '09:30' });
    expect(linesDiff(before, read('Journal/2026-03-09.md'))).toEqual({
      removed: ['- 9:00–9:30 **Standup** planning the sprint #work', '    - ![[Attachments/board.png]]', '    - [[Attachments/minutes.pdf]]'],
      added: [],
    });
    // The target is a CRLF note: the moved lines take its line endings, other bytes stay.
    expect(read('Journal/2026-03-10.md')).toBe(
      '---\r\ntimezone: America/New_York\r\n---\r\n## Log\r\n* 8am coffee\r\n' +
        `- 9:00–9:30 **Standup** planning the sprint #work ^${standup.block_id}\r\n    - ![[Attachments/board.png]]\r\n    - [[Attachments/minutes.pdf]]\r\n` +
        '* 10am-11:30am **Review** design doc #work\r\n* 25:00 typo line\r\n* evening walk\r\n',
    );
    expect((await api('GET', `/api/v1/notes/journal/entries/${standup.block_id}`)).body.date).toBe('2026-03-10');
  });

  it('deletes an entry with its child lines and reports the attachments for undo', async () => {
    const standup = await api('GET', '/api/v1/notes/journal/entries/' + (await entryOf('2026-03-10', (e) => e.title === 'Standup')).block_id);
    const before = read('Journal/2026-03-10.md');
    const r = await api('DELETE', `/api/v1/notes/journal/entries/${standup.body.block_id}`, { headers: { 'if-match': standup.body.etag } });
    expect(r.status).toBe(200);
    expect(r.body.attachments).toEqual([
      { path: 'Attachments/board.png', target: 'Attachments/board.png', embed: true },
      { path: 'Attachments/minutes.pdf', target: 'Attachments/minutes.pdf', embed: false },
    ]);
    expect(linesDiff(before, read('Journal/2026-03-10.md')).added).toEqual([]);
    expect(read('Journal/2026-03-10.md')).toBe(before.replace(/- 9:00–9:30 .*\r\n.*\r\n.*\r\n/, ''));
    expect((await api('GET', `/api/v1/notes/journal/entries/${standup.body.block_id}`)).status).toBe(404);
  });
});

describe('attachments of an entry', () => {
  it('adds, removes and restores attachment links, reporting missing files', async () => {
    const c = await api('POST', '/api/v1/notes/journal/log', { body: { text: 'photos', now: '2026-04-10T10:00', ...BERLIN } });
    const id = c.body.block_id;
    const add = await api('POST', `/api/v1/notes/journal/entries/${id}/attachments`, { body: { attachments: [{ path: 'Attachments/board.png' }] } });
    expect(add.status).toBe(200);
    expect(read('Journal/2026-04-10.md')).toBe(`---\ntimezone: Europe/Berlin\n---\n## Log\n- 10:00 photos ^${id}\n    - ![[Attachments/board.png]]\n`);
    const none = await api('POST', `/api/v1/notes/journal/entries/${id}/attachments`, { body: { attachments: [{ path: 'Attachments/gone.png' }] } });
    expect(none.status).toBe(404);
    const rm = await api('POST', `/api/v1/notes/journal/entries/${id}/attachments/remove`, { body: { target: 'Attachments/board.png' } });
    expect(rm.status).toBe(200);
    expect(rm.body.removed).toEqual({ target: 'Attachments/board.png', path: 'Attachments/board.png', embed: true });
    expect(read('Journal/2026-04-10.md')).toBe(`---\ntimezone: Europe/Berlin\n---\n## Log\n- 10:00 photos ^${id}\n`);
    expect((await api('POST', `/api/v1/notes/journal/entries/${id}/attachments/remove`, { body: { target: 'Attachments/board.png' } })).status).toBe(404);
    const restore = await api('POST', `/api/v1/notes/journal/entries/${id}/attachments/restore`, {
      body: { attachments: [{ path: 'Attachments/board.png', embed: true }, { path: 'Attachments/gone.png', embed: true }] },
    });
    expect(restore.status).toBe(200);
    expect(restore.body.missing).toEqual(['Attachments/gone.png']);
    expect(restore.body.attachments.map((a: any) => [a.target, a.missing])).toEqual([
      ['Attachments/board.png', false],
      ['Attachments/gone.png', true],
    ]);
    expect(read('Journal/2026-04-10.md')).toBe(
      `---\ntimezone: Europe/Berlin\n---\n## Log\n- 10:00 photos ^${id}\n    - ![[Attachments/board.png]]\n    - ![[Attachments/gone.png]]\n`,
    );
  });

  it('writes the derived id when first adding to a hand-typed entry', async () => {
    const deep = await entryOf('2026-03-09', (e) => e.text.startsWith('Deep work'));
    const before = read('Journal/2026-03-09.md');
    const r = await api('POST', `/api/v1/notes/journal/entries/${deep.block_id}/attachments`, { body: { attachments: [{ path: 'Notes/Trip planning.md' }] } });
    expect(r.status).toBe(200);
    expect(linesDiff(before, read('Journal/2026-03-09.md'))).toEqual({
      removed: ['- 14:00 - 15:30 Deep work on the parser'],
      // Child lines take the indentation the note already uses (a tab, in this hand-typed note).
      added: [`- 14:00 - 15:30 Deep work on the parser ^${deep.block_id}`, '\t- [[Notes/Trip planning.md]]'],
    });
  });
});

describe('notes_journal_entry_note', () => {
  it('creates a linked Note once per client_id and links it below the entry', async () => {
    const c = await api('POST', '/api/v1/notes/journal/log', { body: { text: 'Design review at 14:00 #work', now: '2026-04-11T15:00', ...BERLIN } });
    const id = c.body.block_id;
    const r = await api('POST', `/api/v1/notes/journal/entries/${id}/note`, { body: { body: 'We chose option B.\n\n- faster\n', client_id: 'note-op-1' } });
    expect(r.status).toBe(201);
    expect(r.body.note).toMatchObject({ path: 'Notes/Design review 2026-04-11.md' });
    expect(read('Notes/Design review 2026-04-11.md').endsWith('We chose option B.\n\n- faster\n')).toBe(true);
    expect(read('Journal/2026-04-11.md')).toBe(
      `---\ntimezone: Europe/Berlin\n---\n## Log\n- 14:00 Design review #work ^${id}\n    - Note: [[Notes/Design review 2026-04-11]]\n`,
    );
    const again = await api('POST', `/api/v1/notes/journal/entries/${id}/note`, { body: { body: 'other', client_id: 'note-op-1' } });
    expect(again.status).toBe(200);
    expect(again.body.note.path).toBe('Notes/Design review 2026-04-11.md');
    expect(fs.readdirSync(path.join(home, 'Notes')).filter((n) => n.startsWith('Design review'))).toHaveLength(1);
    expect(read('Notes/Design review 2026-04-11.md').endsWith('We chose option B.\n\n- faster\n')).toBe(true);
    // A new operation rewrites the body of the same linked Note.
    const next = await api('POST', `/api/v1/notes/journal/entries/${id}/note`, { body: { body: 'Option C after all.\n', client_id: 'note-op-2' } });
    expect(next.status).toBe(200);
    expect(read('Notes/Design review 2026-04-11.md').endsWith('Option C after all.\n')).toBe(true);
    expect(read('Journal/2026-04-11.md').match(/Note:/g)).toHaveLength(1);
  });
});

describe('notes_journal_fix_line', () => {
  it('turns an unparsed line into an entry at the If-Match, changing only that line', async () => {
    const d = await day('2026-03-09');
    const u = d.body.unparsed.find((x: any) => x.text.startsWith('Forgot'));
    const stale = await api('POST', `/api/v1/notes/journal/2026-03-09/lines/${u.hash}/fix`, { headers: { 'if-match': '"stale"' } });
    expect(stale.status).toBe(412);
    const before = read('Journal/2026-03-09.md');
    const r = await api('POST', `/api/v1/notes/journal/2026-03-09/lines/${u.hash}/fix`, { headers: { 'if-match': d.body.etag } });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ start: null, text: 'Forgot to log the afternoon coffee', anchored: true });
    expect(linesDiff(before, read('Journal/2026-03-09.md'))).toEqual({
      removed: ['Forgot to log the afternoon coffee'],
      added: [`- Forgot to log the afternoon coffee ^${r.body.block_id}`],
    });
    expect((await day('2026-03-09')).body.unparsed).toEqual([]);
    expect((await api('POST', `/api/v1/notes/journal/2026-03-09/lines/${u.hash}/fix`, { headers: { 'if-match': r.body.etag } })).status).toBe(404);
  });

  it('reads a time the line names, and refuses a line it cannot repair', async () => {
    write('Journal/2026-04-12.md', '## Log\nCoffee with Bo at 15:30\n- 25:00 typo\n> quoted at 7pm ^kept-id\n');
    const d = await day('2026-04-12');
    const [coffee, typo, quoted] = d.body.unparsed;
    const r = await api('POST', `/api/v1/notes/journal/2026-04-12/lines/${coffee.hash}/fix`, { headers: { 'if-match': d.body.etag } });
    expect(r.body).toMatchObject({ start: '15:30', text: 'Coffee with Bo' });
    const bad = await api('POST', `/api/v1/notes/journal/2026-04-12/lines/${typo.hash}/fix`, { headers: { 'if-match': r.body.etag } });
    expect(bad.status).toBe(409);
    expect(bad.body.error.details.reason).toBe('cannot_fix');
    expect(read('Journal/2026-04-12.md')).toBe(`## Log\n- 15:30 Coffee with Bo ^${r.body.block_id}\n- 25:00 typo\n> quoted at 7pm ^kept-id\n`);
    const q = await api('POST', `/api/v1/notes/journal/2026-04-12/lines/${quoted.hash}/fix`, { headers: { 'if-match': r.body.etag } });
    expect(q.body).toMatchObject({ block_id: 'kept-id', start: '19:00' });
    expect(read('Journal/2026-04-12.md').endsWith('\n- 19:00 quoted ^kept-id\n')).toBe(true);
  });
});

describe('the command line', () => {
  it('reads a day and creates an entry through quire action run', async () => {
    const remote = ['--server', inst.url, '--token', user.token, '--json'];
    const r = await runCli(['action', 'run', 'notes_journal_day', '--input', JSON.stringify({ path: { date: '2026-03-11' } }), ...remote]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ date: '2026-03-11', exists: true, entries: [] });
    const input = { body: { text: 'from the terminal at 21:00', now: '2026-04-13T21:05', ...BERLIN, client_id: 'cli-1' } };
    const c = await runCli(['action', 'run', 'notes_journal_create_log', '--input', JSON.stringify(input), '--confirm', ...remote]);
    expect(c.code).toBe(0);
    const e = JSON.parse(c.stdout);
    expect(e).toMatchObject({ start: '21:00', text: 'from the terminal', date: '2026-04-13' });
    expect(read('Journal/2026-04-13.md')).toContain(`- 21:00 from the terminal ^${e.block_id}\n`);
  });
});
