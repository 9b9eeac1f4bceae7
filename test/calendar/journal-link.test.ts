/**
 * Journal links end to end: events made from notes and log entries link back and are linked
 * from their source; past events logged in their day's Daily note; items duplicated.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInstance, type TestInstance } from '../helpers/instance.js';
import { ics } from '../helpers/ics.js';

let inst: TestInstance;
let token: string;
let home: string;

const read = (p: string) => fs.readFileSync(path.join(home, p), 'utf8');

let annId: string;

async function homeWrite(p: string, text: string): Promise<void> {
  const { vault } = await inst.server.services.vaults.forCaller({ userId: annId } as never);
  await vault.home.write(p, text);
}

async function event(uid: string, lines: string[]) {
  const r = await inst.api('POST', '/api/v1/calendar/events', { token, body: { icalendar: ics(uid, lines) } });
  expect(r.status, r.text).toBe(201);
  return r.body;
}

beforeAll(async () => {
  inst = await startInstance();
  ({ id: annId, token } = await inst.user('ann'));
  home = path.join(inst.dataDir, 'homes', 'ann');
  await event('seed@test', ['DTSTART:20260101T100000Z', 'DTEND:20260101T110000Z', 'SUMMARY:Seed']);
}, 60_000);

afterAll(async () => inst?.close());

describe('events from notes and log entries', () => {
  it('from a note: the event names the note, the note gains an Event: link to the event file', async () => {
    await homeWrite('Notes/Plan.md', '# Plan\n\nSome text.\n');
    const note = (await inst.api('GET', '/api/v1/notes?limit=50', { token })).body.items.find((n: any) => n.path === 'Notes/Plan.md');
    const r = await inst.api('POST', '/api/v1/calendar/events/from-note', {
      token,
      body: { note_id: note.id, start: '2026-03-02T09:00:00+01:00', end: '2026-03-02T10:00:00+01:00', timezone: 'Europe/Berlin' },
    });
    expect(r.status, r.text).toBe(201);
    const ev = r.body.event;
    expect(ev).toMatchObject({ title: 'Plan', calendar_id: 'Personal', timezone: 'Europe/Berlin', start: '2026-03-02T09:00:00+01:00', end: '2026-03-02T10:00:00+01:00' });
    const file = read(ev.path);
    expect(file).toContain(`X-QUIRE-NOTE-ID:${note.id}`);
    expect(file).toContain('DTSTART;TZID=Europe/Berlin:20260302T090000');
    expect(read('Notes/Plan.md')).toBe(`# Plan\n\nSome text.\nEvent: [Plan](<${ev.path}>)\n`);
  });

  it('from a log entry: the event names the entry block, the entry gains an Event: child line', async () => {
    const log = await inst.api('POST', '/api/v1/notes/journal/log', { token, body: { text: '15:00 Call with Sam', now: '2026-03-03T14:00', timezone: 'Europe/Berlin' } });
    expect(log.status, log.text).toBeLessThan(300);
    const blockId = log.body.block_id ?? log.body.record?.block_id;
    const r = await inst.api('POST', '/api/v1/calendar/events/from-log', {
      token,
      body: { log_id: blockId, calendar_id: 'Personal', start: '2026-03-03T15:00:00+01:00', end: '2026-03-03T15:30:00+01:00', timezone: 'Europe/Berlin' },
    });
    expect(r.status, r.text).toBe(201);
    expect(r.body.event.title).toBe('Call with Sam');
    expect(read(r.body.event.path)).toContain(`X-QUIRE-LOG-ID:${blockId}`);
    const day = read('Journal/2026-03-03.md');
    expect(day).toContain(`15:00 Call with Sam ^${blockId}\n    - Event: [Call with Sam](<${r.body.event.path}>)`);
  });

  it.each([
    [{ note_id: 'nope', start: '2026-03-02T09:00:00Z', end: '2026-03-02T10:00:00Z', timezone: 'UTC' }, 404, 'body.note_id'],
    [{ note_id: 'x', start: '2026-03-02 09:00', end: '2026-03-02T10:00:00Z', timezone: 'UTC' }, 400, 'body.start'],
    [{ note_id: 'x', start: '2026-03-02T11:00:00Z', end: '2026-03-02T10:00:00Z', timezone: 'UTC' }, 400, 'body.end'],
    [{ note_id: 'x', start: '2026-03-02T09:00:00Z', end: '2026-03-02T10:00:00Z', timezone: 'Mars/Olympus' }, 400, 'body.timezone'],
  ])('from-note bad input %j → %i naming %s', async (body, status, field) => {
    const r = await inst.api('POST', '/api/v1/calendar/events/from-note', { token, body });
    expect(r.status, r.text).toBe(status);
    expect(r.body.error.details.field).toBe(field);
  });

  it('from-log: unknown entry 404 body.log_id, unknown calendar 404 body.calendar_id, nothing written', async () => {
    const base = { start: '2026-03-03T15:00:00Z', end: '2026-03-03T16:00:00Z', timezone: 'UTC' };
    const a = await inst.api('POST', '/api/v1/calendar/events/from-log', { token, body: { ...base, log_id: 'zzzzzzzz', calendar_id: 'Personal' } });
    expect(a.status, a.text).toBe(404);
    expect(a.body.error.details.field).toBe('body.log_id');
    const before = fs.readdirSync(path.join(home, 'Calendars/Personal')).length;
    const log = await inst.api('POST', '/api/v1/notes/journal/log', { token, body: { text: '16:00 Tea', now: '2026-03-03T15:00', timezone: 'UTC' } });
    const b = await inst.api('POST', '/api/v1/calendar/events/from-log', { token, body: { ...base, log_id: log.body.block_id, calendar_id: 'Nope' } });
    expect(b.status, b.text).toBe(404);
    expect(b.body.error.details.field).toBe('body.calendar_id');
    expect(fs.readdirSync(path.join(home, 'Calendars/Personal')).length).toBe(before);
  });
});

describe('logging past events', () => {
  it('status says not logged; log_event writes the entry in that day\'s Daily note; status finds it', async () => {
    await event('review@test', ['DTSTART;TZID=Europe/Berlin:20260105T140000', 'DTEND;TZID=Europe/Berlin:20260105T150000', 'SUMMARY:Design review']);
    const s0 = await inst.api('GET', '/api/v1/calendar/events/review@test/log-this', { token });
    expect(s0.status, s0.text).toBe(200);
    expect(s0.body).toMatchObject({ logged: false, date: '2026-01-05', start: '14:00', end: '15:00', entry: null });
    const r = await inst.api('POST', '/api/v1/calendar/events/review@test/log-this', { token, body: {} });
    expect(r.status, r.text).toBe(201);
    expect(r.body.created).toBe(true);
    expect(r.body.entry).toMatchObject({ date: '2026-01-05', start: '14:00', end: '15:00', title: 'Design review' });
    const day = read('Journal/2026-01-05.md');
    expect(day).toMatch(/- 14:00–15:00 \*\*Design review\*\* \^[a-z0-9]+\n {4}- Event: \[Design review\]\(<Calendars\/Personal\/review@test\.ics>\)/);
    const s1 = await inst.api('GET', '/api/v1/calendar/events/review@test/log-this', { token });
    expect(s1.body.logged).toBe(true);
    expect(s1.body.entry.block_id).toBe(r.body.entry.block_id);
    // Logging again writes nothing new.
    const again = await inst.api('POST', '/api/v1/calendar/events/review@test/log-this', { token, body: {} });
    expect(again.status).toBe(200);
    expect(again.body.created).toBe(false);
    expect(read('Journal/2026-01-05.md')).toBe(day);
  });

  it('two "log this" at once write one entry', async () => {
    await event('twice@test', ['DTSTART:20260107T120000Z', 'DTEND:20260107T130000Z', 'SUMMARY:Lunch talk']);
    const [a, b] = await Promise.all([0, 1].map(() => inst.api('POST', '/api/v1/calendar/events/twice@test/log-this', { token, body: {} })));
    expect([a!.status, b!.status].sort()).toEqual([200, 201].sort());
    expect(a!.body.entry.block_id).toBe(b!.body.entry.block_id);
    expect(read('Journal/2026-01-07.md').match(/Lunch talk\*\*/g)!.length).toBe(1);
  });

  it('HH:MM overrides set the logged times; a recurring event logs its last started occurrence', async () => {
    await event('weekly@test', ['DTSTART;TZID=Europe/Berlin:20260105T090000', 'DTEND;TZID=Europe/Berlin:20260105T100000', 'RRULE:FREQ=WEEKLY;COUNT=3', 'SUMMARY:Weekly']);
    const r = await inst.api('POST', '/api/v1/calendar/events/weekly@test/log-this', { token, body: { start: '09:10', end: '09:55' } });
    expect(r.status, r.text).toBe(201);
    expect(r.body.entry).toMatchObject({ date: '2026-01-19', start: '09:10', end: '09:55' });
  });

  it('bad input: unknown event 404 path.id, a future event 409, a malformed time 400 body.start', async () => {
    const a = await inst.api('GET', '/api/v1/calendar/events/nope/log-this', { token });
    expect(a.status).toBe(404);
    expect(a.body.error.details.field).toBe('path.id');
    await event('future@test', ['DTSTART:20990101T100000Z', 'DTEND:20990101T110000Z', 'SUMMARY:Future']);
    const b = await inst.api('POST', '/api/v1/calendar/events/future@test/log-this', { token, body: {} });
    expect(b.status, b.text).toBe(409);
    const c = await inst.api('POST', '/api/v1/calendar/events/review@test/log-this', { token, body: { start: '9:5' } });
    expect(c.status).toBe(400);
    expect(JSON.stringify(c.body.error)).toContain('body.start');
  });
});

describe('duplicating', () => {
  it('a log entry is copied into another day\'s Daily note', async () => {
    const log = await inst.api('POST', '/api/v1/notes/journal/log', { token, body: { text: '07:00-07:30 Swim #sport', now: '2026-02-01T08:00', timezone: 'Europe/Berlin' } });
    const r = await inst.api('POST', '/api/v1/calendar/items/duplicate', { token, body: { kind: 'log', id: log.body.block_id, date: '2026-02-02' } });
    expect(r.status, r.text).toBe(201);
    expect(r.body.item).toMatchObject({ date: '2026-02-02', start: '07:00', end: '07:30', tags: ['sport'] });
    expect(r.body.id).not.toBe(log.body.block_id);
    expect(read('Journal/2026-02-02.md')).toContain('07:00–07:30 Swim #sport');
    expect(read('Journal/2026-02-01.md')).toContain('Swim #sport');
  });

  it('an event occurrence is copied as a single event on the day, same local times', async () => {
    const r = await inst.api('POST', '/api/v1/calendar/items/duplicate', { token, body: { kind: 'event', id: 'weekly@test', date: '2026-01-12' } });
    expect(r.status, r.text).toBe(201);
    expect(r.body.item).toMatchObject({ title: 'Weekly', rrule: null, start: '2026-01-12T09:00:00+01:00', end: '2026-01-12T10:00:00+01:00' });
    expect(r.body.id).not.toBe('weekly@test');
    const moved = await inst.api('POST', '/api/v1/calendar/items/duplicate', { token, body: { kind: 'event', id: 'review@test', date: '2026-01-20' } });
    expect(moved.body.item).toMatchObject({ start: '2026-01-20T14:00:00+01:00', end: '2026-01-20T15:00:00+01:00' });
  });

  it('a task is copied below the original, due on the day', async () => {
    await homeWrite('Tasks.md', '# Tasks\n- [ ] Pay rent 📅 2026-02-01 ^rent\n- [ ] Other\n');
    const r = await inst.api('POST', '/api/v1/calendar/items/duplicate', { token, body: { kind: 'task', id: 'rent', date: '2026-03-01' } });
    expect(r.status, r.text).toBe(201);
    expect(r.body.item).toMatchObject({ due: '2026-03-01', checked: false });
    const lines = read('Tasks.md').split('\n');
    expect(lines[1]).toBe('- [ ] Pay rent 📅 2026-02-01 ^rent');
    expect(lines[2]).toMatch(/^- \[ \] Pay rent 📅 2026-03-01 \^\S+$/);
    expect(lines[3]).toBe('- [ ] Other');
  });

  it.each([
    [{ kind: 'log', id: 'nope', date: '2026-02-02' }, 404, 'body.id'],
    [{ kind: 'event', id: 'nope', date: '2026-02-02' }, 404, 'body.id'],
    [{ kind: 'task', id: 'nope', date: '2026-02-02' }, 404, 'body.id'],
    [{ kind: 'log', id: 'x', date: '2026-02-30' }, 400, 'body.date'],
    [{ kind: 'note', id: 'x', date: '2026-02-02' }, 400, 'body.kind'],
  ])('bad input %j → %i naming %s', async (body, status, field) => {
    const r = await inst.api('POST', '/api/v1/calendar/items/duplicate', { token, body });
    expect(r.status, r.text).toBe(status);
    expect(JSON.stringify(r.body.error)).toContain(field);
  });
});
