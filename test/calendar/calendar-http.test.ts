/**
 * The calendar end to end: a real server, a real Home, every action of the
 * calendar core over HTTP, bad input answered 4xx with the field named and
 * nothing written, and `.ics` files dropped in, edited and removed by another
 * program while the server runs.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInstance, type TestInstance } from '../helpers/instance.js';

let inst: TestInstance;
let user: { id: string; token: string };
let home: string;

const api = (method: string, route: string, body?: unknown) => inst.api(method, route, { token: user.token, body });
const read = (rel: string) => fs.readFileSync(path.join(home, rel), 'utf8');
const exists = (rel: string) => fs.existsSync(path.join(home, rel));
const write = (rel: string, text: string) => {
  fs.mkdirSync(path.dirname(path.join(home, rel)), { recursive: true });
  fs.writeFileSync(path.join(home, rel), text);
};
const filesIn = (rel: string) => (exists(rel) ? fs.readdirSync(path.join(home, rel)).sort() : []);

const ics = (lines: string[], extra: string[] = []) =>
  ['BEGIN:VCALENDAR', 'VERSION:2.0', 'PRODID:-//quire test//EN', ...extra, 'BEGIN:VEVENT', ...lines, 'END:VEVENT', 'END:VCALENDAR', ''].join('\r\n');

/** Polls until `check` passes (outside edits reach the server through its watcher). */
async function eventually<T>(fn: () => Promise<T>, check: (v: T) => boolean): Promise<T> {
  const until = Date.now() + 10_000;
  for (;;) {
    const v = await fn();
    if (check(v) || Date.now() > until) return v;
    await new Promise((r) => setTimeout(r, 50));
  }
}

beforeAll(async () => {
  inst = await startInstance();
  user = await inst.user('cleo', 'member');
  home = path.join(inst.dataDir, 'homes', 'cleo');
  fs.mkdirSync(home, { recursive: true });
});
afterAll(() => inst.close());

describe('calendars and events', () => {
  it('a new Home shows the default calendar, created on disk with its first event', async () => {
    const before = await api('GET', '/api/v1/calendar/calendars');
    expect(before.status).toBe(200);
    expect(before.body.calendars).toEqual([expect.objectContaining({ id: 'Personal', name: 'Personal', default: true, events: 0, etag: null })]);
    expect(exists('Calendars')).toBe(false);

    const text = ics(['UID:first@example.com', 'DTSTAMP:20260101T000000Z', 'DTSTART;TZID=Europe/Berlin:20260310T090000', 'DTEND;TZID=Europe/Berlin:20260310T100000', 'SUMMARY:Dentist', 'CATEGORIES:health,errands', 'X-APPLE-TRAVEL-ADVISORY-BEHAVIOR:AUTOMATIC']);
    const r = await api('POST', '/api/v1/calendar/events', { icalendar: text });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({
      id: 'first@example.com',
      calendar_id: 'Personal',
      title: 'Dentist',
      start: '2026-03-10T09:00:00+01:00',
      end: '2026-03-10T10:00:00+01:00',
      all_day: false,
      timezone: 'Europe/Berlin',
      rrule: null,
      tags: ['health', 'errands'],
      path: 'Calendars/Personal/first@example.com.ics',
    });
    // The client's bytes, as sent.
    expect(read('Calendars/Personal/first@example.com.ics')).toBe(text);
    expect(JSON.parse(read('Calendars/Personal/calendar.json'))).toEqual({ name: 'Personal', color: null, visible: true });
    const detail = await api('GET', '/api/v1/calendar/events/first@example.com');
    expect(detail.status).toBe(200);
    expect(detail.body.icalendar).toBe(text);
    expect(detail.body.etag).toBe(r.body.etag);
  });

  it('names files from the UID safely, and adds a UID when the text has none', async () => {
    const r = await api('POST', '/api/v1/calendar/events', { icalendar: ics(['UID:../a/b c', 'DTSTART;VALUE=DATE:20260401', 'SUMMARY:Odd uid']) });
    expect(r.status).toBe(201);
    expect(r.body.path).toBe('Calendars/Personal/%2E.%2Fa%2Fb%20c.ics');
    expect(exists(r.body.path)).toBe(true);
    expect(r.body).toMatchObject({ all_day: true, start: '2026-04-01', end: '2026-04-02', timezone: null });

    const n = await api('POST', '/api/v1/calendar/events', { icalendar: ics(['DTSTART:20260402T120000Z', 'SUMMARY:No uid']) });
    expect(n.status).toBe(201);
    expect(n.body.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(read(n.body.path)).toContain(`UID:${n.body.id}`);
  });

  it('refuses bad input with the field named and writes nothing', async () => {
    const before = filesIn('Calendars/Personal');
    const cases: Array<[unknown, number, string, string?]> = [
      [{ icalendar: 'BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\nDTSTART:2026\r\n' }, 400, 'body.icalendar'],
      [{ icalendar: 'not ical at all' }, 400, 'body.icalendar'],
      [{ icalendar: ics(['UID:tz', 'DTSTART;TZID=Mars/Olympus_Mons:20260101T100000']) }, 400, 'body.icalendar', 'unknown_tzid'],
      [{ icalendar: ics(['UID:nostart', 'SUMMARY:x']) }, 400, 'body.icalendar', 'missing_dtstart'],
      [{ icalendar: ics(['UID:first@example.com', 'DTSTART:20260101T100000Z']) }, 409, 'body.icalendar', 'uid_exists'],
      [{ icalendar: ics(['UID:x1', 'DTSTART:20260101T100000Z']), calendar_id: 'Nope' }, 404, 'body.calendar_id'],
      [{ icalendar: ics(['UID:x2', 'DTSTART:20260101T100000Z']), calendar_id: '../etc' }, 400, 'body.calendar_id'],
      [{ icalendar: ics(['UID:x3', 'DTSTART:20260101T100000Z', 'DTEND:20251231T100000Z']) }, 400, 'body.icalendar', 'end_before_start'],
    ];
    for (const [body, status, field, reason] of cases) {
      const r = await api('POST', '/api/v1/calendar/events', body);
      expect([JSON.stringify(body).slice(0, 80), r.status, r.body.error.details.field]).toEqual([JSON.stringify(body).slice(0, 80), status, field]);
      if (reason) expect(r.body.error.details.reason).toBe(reason);
    }
    const tz = await api('POST', '/api/v1/calendar/events', { icalendar: ics(['UID:tz', 'DTSTART;TZID=Mars/Olympus_Mons:20260101T100000']) });
    expect(tz.body.error.details.tzid).toBe('Mars/Olympus_Mons');
    expect(filesIn('Calendars/Personal')).toEqual(before);
    expect((await api('GET', '/api/v1/calendar/events/nope')).status).toBe(404);
    expect((await api('DELETE', '/api/v1/calendar/events/nope')).body.error.details.field).toBe('path.id');
  });

  it('an update changes what it changes and keeps X- and unknown properties the text leaves out', async () => {
    const uid = 'upd-1';
    const v1 = ics([`UID:${uid}`, 'DTSTART;TZID=America/New_York:20260105T140000', 'DTEND;TZID=America/New_York:20260105T150000', 'RRULE:FREQ=WEEKLY;COUNT=3', 'SUMMARY:Review', 'LOCATION:Room 1', 'X-MOZ-GENERATION:3', 'X-CUSTOM;X-P=1:kept']);
    const c = await api('POST', '/api/v1/calendar/events', { icalendar: v1 });
    expect(c.status).toBe(201);
    // A client that knows nothing of the X- properties and drops LOCATION.
    const v2 = ics([`UID:${uid}`, 'DTSTART;TZID=America/New_York:20260105T140000', 'DTEND;TZID=America/New_York:20260105T150000', 'RRULE:FREQ=WEEKLY;COUNT=3', 'SUMMARY:Review (new)']);
    const u = await api('PUT', `/api/v1/calendar/events/${uid}`, { icalendar: v2 });
    expect(u.status).toBe(200);
    expect(u.body).toMatchObject({ title: 'Review (new)', location: null, rrule: 'FREQ=WEEKLY;COUNT=3' });
    const text = read(u.body.path);
    expect(text).toContain('X-MOZ-GENERATION:3');
    expect(text).toContain('X-CUSTOM;X-P=1:kept');
    expect(text).not.toContain('LOCATION');
    expect(text.split('\r\n').filter((l) => l.startsWith('DTSTART')).length).toBe(1);
    // An unchanged text leaves the file as it is.
    const same = await api('PUT', `/api/v1/calendar/events/${uid}`, { icalendar: v2 });
    expect(same.body.etag).toBe(u.body.etag);

    const bad = await api('PUT', `/api/v1/calendar/events/${uid}`, { icalendar: v2.replace(`UID:${uid}`, 'UID:other') });
    expect([bad.status, bad.body.error.details.field, bad.body.error.details.reason]).toEqual([400, 'body.icalendar', 'uid_changed']);
    const broken = await api('PUT', `/api/v1/calendar/events/${uid}`, { icalendar: 'BEGIN:VCALENDAR\r\nX' });
    expect(broken.status).toBe(400);
    expect(read(u.body.path)).toBe(text);
  });

  it('moves an event between calendars (the file moves) and changes a calendar', async () => {
    write('Calendars/Work/calendar.json', JSON.stringify({ name: 'Work', color: '#ff0000', visible: true, 'x-owner': 'kept' }));
    const cals = await eventually(() => api('GET', '/api/v1/calendar/calendars'), (r) => r.body.calendars.some((c: any) => c.id === 'Work'));
    expect(cals.body.calendars.map((c: any) => c.id)).toEqual(['Personal', 'Work']);

    const m = await api('POST', '/api/v1/calendar/events/first@example.com/move', { calendar_id: 'Work' });
    expect(m.status).toBe(200);
    expect(m.body).toMatchObject({ calendar_id: 'Work', path: 'Calendars/Work/first@example.com.ics' });
    expect(exists('Calendars/Personal/first@example.com.ics')).toBe(false);
    expect(exists('Calendars/Work/first@example.com.ics')).toBe(true);
    expect((await api('POST', '/api/v1/calendar/events/first@example.com/move', { calendar_id: 'Gone' })).body.error.details.field).toBe('body.calendar_id');

    const u = await api('PATCH', '/api/v1/calendar/calendars/Work', { color: '#00AA00', visible: false });
    expect(u.status).toBe(200);
    expect(u.body).toMatchObject({ id: 'Work', color: '#00aa00', visible: false });
    expect(JSON.parse(read('Calendars/Work/calendar.json'))).toEqual({ name: 'Work', color: '#00aa00', visible: false, 'x-owner': 'kept' });
    const bad = await api('PATCH', '/api/v1/calendar/calendars/Work', { color: 'green' });
    expect([bad.status, bad.body.error.details.field]).toEqual([400, 'body.color']);
    expect((await api('PATCH', '/api/v1/calendar/calendars/Nope', { visible: true })).status).toBe(404);

    // A hidden calendar's events leave the grid but stay in the event list.
    const grid = await api('GET', '/api/v1/calendar/range?from=2026-03-09&to=2026-03-15&tz=Europe/Berlin');
    expect(grid.body.items.map((i: any) => i.id)).not.toContain('first@example.com');
    const list = await api('GET', '/api/v1/calendar/events?from=2026-03-09&to=2026-03-15&tz=Europe/Berlin');
    expect(list.body.events.map((i: any) => i.id)).toContain('first@example.com');
    const reset = await api('PATCH', '/api/v1/calendar/calendars/Work', { color: null, visible: null });
    expect(reset.body).toMatchObject({ color: null, visible: true });
  });

  it('deletes an event', async () => {
    const r = await api('DELETE', '/api/v1/calendar/events/upd-1');
    expect(r.status).toBe(200);
    expect(exists('Calendars/Personal/upd-1.ics')).toBe(false);
    expect((await api('GET', '/api/v1/calendar/events/upd-1')).status).toBe(404);
  });
});

describe('views', () => {
  beforeAll(async () => {
    const series = ics(['UID:syd-weekly', 'DTSTART;TZID=Australia/Sydney:20260329T190000', 'DTEND;TZID=Australia/Sydney:20260329T200000', 'RRULE:FREQ=WEEKLY;COUNT=3', 'EXDATE;TZID=Australia/Sydney:20260412T190000', 'SUMMARY:Choir', 'CATEGORIES:music']);
    expect((await api('POST', '/api/v1/calendar/events', { icalendar: series })).status).toBe(201);
    write('Journal/2026-04-06.md', '## Log\n- 08:15–08:45 (Australia/Sydney) **Run** by the harbour ^run1\n- had lunch\n');
    write('Projects/Home.md', '# Home\n\n- [ ] Pay rent 📅 2026-04-06\n- [ ] Someday\n');
    await eventually(() => api('GET', '/api/v1/calendar/items?from=2026-04-06&to=2026-04-06&tz=Australia/Sydney'), (r) => r.body.items?.length === 2);
  });

  it('calendar_events lists occurrences in the viewer zone, staying at local time across the change', async () => {
    const r = await api('GET', '/api/v1/calendar/events?from=2026-03-28&to=2026-04-30&tz=Australia/Sydney');
    expect(r.status).toBe(200);
    const rows = r.body.events.filter((e: any) => e.id === 'syd-weekly').map((e: any) => [e.start, e.end, e.recurrence_id]);
    expect(rows).toEqual([
      ['2026-03-29T19:00:00+11:00', '2026-03-29T20:00:00+11:00', '2026-03-29T19:00:00+11:00'],
      ['2026-04-05T19:00:00+10:00', '2026-04-05T20:00:00+10:00', '2026-04-05T19:00:00+10:00'],
    ]);
    const all = await api('GET', '/api/v1/calendar/events');
    expect(all.body.events.map((e: any) => e.id)).toContain('syd-weekly');
    expect(all.body.events.find((e: any) => e.id === 'syd-weekly').rrule).toBe('FREQ=WEEKLY;COUNT=3');
  });

  it('calendar_items merges events, timed log entries and due tasks, paged with next_cursor', async () => {
    const q = '/api/v1/calendar/items?from=2026-04-05&to=2026-04-06&tz=Australia/Sydney';
    const all = await api('GET', q);
    expect(all.status).toBe(200);
    expect(all.body.items.map((i: any) => [i.kind, i.title, i.start, i.all_day])).toEqual([
      ['event', 'Choir', '2026-04-05T19:00:00+10:00', false],
      ['task', 'Pay rent 📅 2026-04-06', '2026-04-06', true],
      ['log', 'Run', '2026-04-06T08:15:00+10:00', false],
    ]);
    expect(all.body.next_cursor).toBeNull();
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: any = await api('GET', `${q}&limit=1${cursor ? `&cursor=${cursor}` : ''}`);
      expect(page.body.items.length).toBe(1);
      seen.push(page.body.items[0].kind);
      cursor = page.body.next_cursor;
    } while (cursor);
    expect(seen).toEqual(['event', 'task', 'log']);
    expect((await api('GET', `${q}&cursor=garbage`)).body.error.details.field).toBe('query.cursor');
    expect((await api('GET', `${q}&limit=0`)).body.error.details.field).toBe('query.limit');
  });

  it('windows beyond their maximum, bad zones and bad times answer 400 naming the field', async () => {
    const rows: Array<[string, string, string?]> = [
      ['/api/v1/calendar/range?from=2026-01-01&to=2026-12-31', 'query.to', 'window_too_large'],
      ['/api/v1/calendar/events?from=2026-01-01&to=2027-06-01', 'query.to', 'window_too_large'],
      ['/api/v1/calendar/items?from=2026-01-01&to=2027-06-01&tz=UTC', 'query.to', 'window_too_large'],
      ['/api/v1/calendar/range?from=2026-01-01&to=2026-01-02&tz=Mars/Base', 'query.tz'],
      ['/api/v1/calendar/range?from=yesterday&to=2026-01-02', 'query.from'],
      ['/api/v1/calendar/range?from=2026-01-05&to=2026-01-02', 'query.to'],
      ['/api/v1/calendar/events?from=2026-01-05', 'query.to'],
      ['/api/v1/calendar/year?year=0', 'query.year'],
    ];
    for (const [route, field, reason] of rows) {
      const r = await api('GET', route);
      expect([route, r.status, r.body.error.details.field]).toEqual([route, 400, field]);
      if (reason) {
        expect(r.body.error.details.reason).toBe(reason);
        expect(r.body.error.message).toContain('request smaller from/to windows');
      }
    }
  });

  it('a window asked again answers what changed since (answers are cached per state of the files)', async () => {
    const q = '/api/v1/calendar/items?from=2026-04-06&to=2026-04-06&tz=Australia/Sydney';
    const titles = async () => (await api('GET', q)).body.items.map((i: any) => i.title);
    expect(await titles()).toEqual(['Pay rent 📅 2026-04-06', 'Run']);
    expect(await titles()).toEqual(['Pay rent 📅 2026-04-06', 'Run']);
    fs.appendFileSync(path.join(home, 'Journal/2026-04-06.md'), '- 21:00 Read ^read1\n');
    expect(await eventually(titles, (t) => t.length === 3)).toEqual(['Pay rent 📅 2026-04-06', 'Run', 'Read']);
    const c = await api('POST', '/api/v1/calendar/events', { icalendar: ics(['UID:late', 'DTSTART;TZID=Australia/Sydney:20260406T120000', 'SUMMARY:Lunch']) });
    expect(c.status).toBe(201);
    expect(await titles()).toEqual(['Pay rent 📅 2026-04-06', 'Run', 'Lunch', 'Read']);
    expect((await api('DELETE', '/api/v1/calendar/events/late')).status).toBe(200);
    expect(await titles()).toEqual(['Pay rent 📅 2026-04-06', 'Run', 'Read']);
  });

  it('calendar_range, calendar_year and calendar_tags', async () => {
    const r = await api('GET', '/api/v1/calendar/range?from=2026-04-05&to=2026-04-06&tz=Australia/Sydney');
    expect(r.body.dates).toEqual(['2026-04-05', '2026-04-06']);
    expect(r.body.items.map((i: any) => i.kind)).toEqual(['event', 'task', 'log', 'log']);
    expect(r.body.calendars.map((c: any) => c.id)).toContain('Personal');

    const y = await api('GET', '/api/v1/calendar/year?year=2026&tz=Australia/Sydney');
    expect(y.status).toBe(200);
    expect(y.body.days.find((d: any) => d.date === '2026-04-06')).toEqual({ date: '2026-04-06', events: 0, logs: 2, tasks: 1 });
    expect(y.body.days.find((d: any) => d.date === '2026-03-29')).toEqual({ date: '2026-03-29', events: 1, logs: 0, tasks: 0 });

    const t = await api('GET', '/api/v1/calendar/tags');
    expect(t.body.tags).toEqual(expect.arrayContaining([{ tag: 'music', count: 1 }, { tag: 'health', count: 1 }]));
  });
});

describe('files written by other programs', () => {
  it('sees a .ics dropped in, edited and removed while the server runs', async () => {
    const q = '/api/v1/calendar/events?from=2026-06-01&to=2026-06-30&tz=UTC';
    const titles = async () => (await api('GET', q)).body.events.map((e: any) => e.title);
    const rel = 'Calendars/Personal/dropped.ics';
    write(rel, ics(['UID:dropped-1', 'DTSTART:20260610T100000Z', 'SUMMARY:From vdirsyncer']));
    expect(await eventually(titles, (t) => t.includes('From vdirsyncer'))).toContain('From vdirsyncer');
    write(rel, ics(['UID:dropped-1', 'DTSTART:20260610T100000Z', 'SUMMARY:Edited in vim']));
    expect(await eventually(titles, (t) => t.includes('Edited in vim'))).toEqual(['Edited in vim']);
    // The API writes the outside version, by the name the other program chose.
    const u = await api('PUT', '/api/v1/calendar/events/dropped-1', { icalendar: ics(['UID:dropped-1', 'DTSTART:20260610T100000Z', 'SUMMARY:Via API']) });
    expect(u.body.path).toBe(rel);
    fs.rmSync(path.join(home, rel));
    expect(await eventually(titles, (t) => t.length === 0)).toEqual([]);
    expect((await api('GET', '/api/v1/calendar/events/dropped-1')).status).toBe(404);
  });

  it('a file ical.js cannot expand and a rule with too many occurrences answer 4xx or what can be read, never 500', async () => {
    write('Calendars/Personal/odd-rule.ics', ics(['UID:odd-rule', 'DTSTART:20260901T100000Z', 'RRULE:FREQ=WEEKLY;BYDAY=XX;COUNT=3', 'SUMMARY:Odd']));
    write('Calendars/Personal/minutely.ics', ics(['UID:minutely', 'DTSTART:20260905T000000Z', 'RRULE:FREQ=MINUTELY', 'SUMMARY:Tick']));
    const day = await eventually(() => api('GET', '/api/v1/calendar/events?from=2026-09-05&to=2026-09-05&tz=UTC'), (r) => r.body.events?.length >= 1440);
    expect(day.status).toBe(200);
    expect(day.body.events.filter((e: any) => e.id === 'minutely').length).toBe(1440);
    const month = await api('GET', '/api/v1/calendar/range?from=2026-09-01&to=2026-09-30&tz=UTC');
    expect([month.status, month.body.error.details.field, month.body.error.details.reason]).toEqual([400, 'query.to', 'too_many_items']);
    const sept = await api('GET', '/api/v1/calendar/items?from=2026-09-01&to=2026-09-04&tz=UTC');
    expect(sept.status).toBe(200);
    fs.rmSync(path.join(home, 'Calendars/Personal/minutely.ics'));
    fs.rmSync(path.join(home, 'Calendars/Personal/odd-rule.ics'));
    await eventually(() => api('GET', '/api/v1/calendar/events/minutely'), (r) => r.status === 404);
  });

  it('a new calendar folder dropped in as a whole appears', async () => {
    write('Calendars/Holidays/ny.ics', ics(['UID:ny-2027', 'DTSTART;VALUE=DATE:20270101', 'SUMMARY:New Year']));
    const r = await eventually(() => api('GET', '/api/v1/calendar/calendars'), (x) => x.body.calendars.some((c: any) => c.id === 'Holidays'));
    expect(r.body.calendars.find((c: any) => c.id === 'Holidays')).toMatchObject({ name: 'Holidays', events: 1, etag: null });
  });
});

describe('preferences', () => {
  it('null clears, omitted keeps, enums checked; stored in .quire/calendar.json', async () => {
    const g = await api('GET', '/api/v1/calendar/preferences');
    expect(g.body).toEqual({ date_format: null, default_event_calendar_id: null, first_day_of_week: null, hour_height: null, snap_to_items: null, snap_to_now: null, time_format: null, time_step_minutes: null });
    const p1 = await api('PUT', '/api/v1/calendar/preferences', { date_format: 'iso', time_step_minutes: 15, default_event_calendar_id: 'Work', snap_to_now: true });
    expect(p1.status).toBe(200);
    expect(p1.body).toMatchObject({ date_format: 'iso', time_step_minutes: 15, default_event_calendar_id: 'Work', snap_to_now: true, time_format: null });
    const p2 = await api('PUT', '/api/v1/calendar/preferences', { time_step_minutes: null, hour_height: 48 });
    expect(p2.body).toMatchObject({ date_format: 'iso', time_step_minutes: null, hour_height: 48, default_event_calendar_id: 'Work' });
    expect(JSON.parse(read('.quire/calendar.json'))).toEqual({ date_format: 'iso', default_event_calendar_id: 'Work', snap_to_now: true, hour_height: 48 });
    const bad = await api('PUT', '/api/v1/calendar/preferences', { time_step_minutes: 7 });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details.field).toContain('time_step_minutes');
    const unknown = await api('PUT', '/api/v1/calendar/preferences', { default_event_calendar_id: 'Nope' });
    expect([unknown.status, unknown.body.error.details.field]).toEqual([404, 'body.default_event_calendar_id']);
    // The saved default takes new events without calendar_id.
    const c = await api('POST', '/api/v1/calendar/events', { icalendar: ics(['UID:to-work', 'DTSTART:20260801T090000Z']) });
    expect(c.body.calendar_id).toBe('Work');
  });
});
