/**
 * Calendar subscriptions end to end: a real Instance subscribes to a loopback HTTP server whose
 * feed and ETag change; refreshes are conditional GETs (304 changes nothing), events are read-only
 * in the Home, and bad feeds answer 4xx with the Home untouched.
 */
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CalendarSyncSchedule } from '../../src/calendar/sync-schedule.js';
import { startInstance, type TestInstance } from '../helpers/instance.js';

const ev = (uid: string, summary: string) =>
  ['BEGIN:VEVENT', `UID:${uid}`, 'DTSTAMP:20260101T000000Z', 'DTSTART:20260310T090000Z', 'DTEND:20260310T100000Z', `SUMMARY:${summary}`, 'END:VEVENT'].join('\r\n');
const feedOf = (...events: string[]) => ['BEGIN:VCALENDAR', 'VERSION:2.0', 'PRODID:-//feed//EN', ...events, 'END:VCALENDAR', ''].join('\r\n');

let feed = feedOf(ev('a@feed', 'Alpha'), ev('b@feed', 'Beta'));
let etag = '"v1"';
const seen: Array<{ url: string; ifNoneMatch: string | undefined; status: number }> = [];
const server = http.createServer((req, res) => {
  const send = (status: number, body: string, headers: Record<string, string> = {}) => {
    seen.push({ url: req.url!, ifNoneMatch: req.headers['if-none-match'], status });
    res.writeHead(status, headers).end(body);
  };
  if (req.url === '/cal.ics') {
    if (req.headers['if-none-match'] === etag) return send(304, '');
    return send(200, feed, { 'content-type': 'text/calendar', etag });
  }
  if (req.url === '/huge.ics') return send(200, 'BEGIN:VCALENDAR\r\n' + 'X'.repeat(6 * 1024 * 1024), { 'content-type': 'text/calendar' });
  if (req.url === '/broken.ics') return send(200, 'this is not a calendar', { 'content-type': 'text/calendar' });
  send(404, 'no');
});

let inst: TestInstance;
let strict: TestInstance;
let token: string;
let base: string;
let home: string;

beforeAll(async () => {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as import('node:net').AddressInfo).port}`;
  inst = await startInstance({ allowPrivateFetch: true });
  token = (await inst.user('sub')).token;
  home = path.join(inst.dataDir, 'homes', 'sub');
  strict = await startInstance();
});
afterAll(async () => {
  await inst?.close();
  await strict?.close();
  server.close();
});

const homeFiles = () => (fs.existsSync(path.join(home, 'Calendars')) ? fs.readdirSync(path.join(home, 'Calendars'), { recursive: true }).map(String).sort() : []);

describe('calendar subscriptions', () => {
  let id: string;
  let calendarId: string;

  it('subscribes: the feed becomes a read-only calendar folder with one file per event', async () => {
    const r = await inst.api('POST', '/api/v1/calendar/subscriptions', { token, body: { name: 'Holidays', url: `${base}/cal.ics`, color: '#ff0000' } });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ name: 'Holidays', calendar_id: 'Holidays', added: 2, color: '#ff0000' });
    id = r.body.id;
    calendarId = r.body.calendar_id;
    const meta = JSON.parse(fs.readFileSync(path.join(home, 'Calendars', calendarId, 'calendar.json'), 'utf8'));
    expect(meta).toMatchObject({ name: 'Holidays', read_only: true, source: { kind: 'subscription', id } });
    const events = await inst.api('GET', '/api/v1/calendar/events', { token });
    expect(events.body.events.map((e: any) => e.title).sort()).toEqual(['Alpha', 'Beta']);
    const list = await inst.api('GET', '/api/v1/calendar/subscriptions', { token });
    expect(list.body.subscriptions).toHaveLength(1);
    expect(JSON.stringify(list.body)).not.toContain('"v1"');
  });

  it('keeps its events read-only through the API', async () => {
    const upd = await inst.api('PUT', '/api/v1/calendar/events/a@feed', { token, body: { icalendar: feedOf(ev('a@feed', 'Changed')) } });
    expect(upd.status).toBe(403);
    expect(upd.body.error.details.reason).toBe('read_only_calendar');
    const del = await inst.api('DELETE', '/api/v1/calendar/events/a@feed', { token, headers: { 'x-quire-confirm': '1' } });
    expect(del.status).toBe(403);
    expect(fs.existsSync(path.join(home, 'Calendars', calendarId, 'a@feed.ics'))).toBe(true);
  });

  it('refreshes with a conditional GET: unchanged is a 304 and writes nothing, a new feed and ETag update the folder', async () => {
    const before = fs.statSync(path.join(home, 'Calendars', calendarId, 'a@feed.ics')).mtimeMs;
    const same = await inst.api('POST', `/api/v1/calendar/subscriptions/${id}/refresh`, { token });
    expect(same.status).toBe(200);
    expect(same.body).toMatchObject({ not_modified: true, added: 0, changed: 0, removed: 0 });
    expect(seen.at(-1)).toMatchObject({ ifNoneMatch: '"v1"', status: 304 });
    expect(fs.statSync(path.join(home, 'Calendars', calendarId, 'a@feed.ics')).mtimeMs).toBe(before);

    feed = feedOf(ev('a@feed', 'Alpha moved'), ev('c@feed', 'Gamma'));
    etag = '"v2"';
    const changed = await inst.api('POST', `/api/v1/calendar/subscriptions/${id}/refresh`, { token });
    expect(changed.body).toMatchObject({ not_modified: false, added: 1, changed: 1, removed: 1 });
    const events = await inst.api('GET', '/api/v1/calendar/events', { token });
    expect(events.body.events.map((e: any) => e.title).sort()).toEqual(['Alpha moved', 'Gamma']);
  });

  it('refreshes as a job through calendar_refresh_calendar and calendar_refresh_now', async () => {
    feed = feedOf(ev('c@feed', 'Gamma'), ev('d@feed', 'Delta'));
    etag = '"v3"';
    const r = await inst.api('POST', `/api/v1/calendar/calendars/${encodeURIComponent(calendarId)}/refresh`, { token });
    expect([200, 202]).toContain(r.status);
    const done = await inst.server.services.jobs!.wait(r.body.job.id);
    expect(done).toMatchObject({ state: 'succeeded' });
    const all = await inst.api('POST', '/api/v1/calendar/refresh', { token });
    expect((await inst.server.services.jobs!.wait(all.body.job.id))!.state).toBe('succeeded');
    const events = await inst.api('GET', '/api/v1/calendar/events', { token });
    expect(events.body.events.map((e: any) => e.title).sort()).toEqual(['Delta', 'Gamma']);
  });

  it('renames, recolours and hides through calendar_update_subscription', async () => {
    const r = await inst.api('PUT', `/api/v1/calendar/subscriptions/${id}`, { token, body: { name: 'Days off', visible: false } });
    expect(r.status).toBe(200);
    const meta = JSON.parse(fs.readFileSync(path.join(home, 'Calendars', calendarId, 'calendar.json'), 'utf8'));
    expect(meta).toMatchObject({ name: 'Days off', visible: false, read_only: true });
  });

  it('refuses bad feeds with a 4xx and leaves the Home untouched', async () => {
    const before = homeFiles();
    for (const [url, reason] of [
      [`${base}/huge.ics`, 'too_large'],
      [`${base}/broken.ics`, 'invalid_calendar'],
      [`${base}/missing.ics`, 'fetch_failed'],
      ['http://127.0.0.1:1/cal.ics', 'fetch_failed'],
      ['ftp://example.com/cal.ics', 'scheme_not_allowed'],
    ]) {
      const r = await inst.api('POST', '/api/v1/calendar/subscriptions', { token, body: { name: 'Bad', url } });
      expect(r.status, url).toBe(400);
      expect(r.body.error.details.reason, url).toBe(reason);
    }
    expect(homeFiles()).toEqual(before);
  });

  it('refuses loopback addresses unless the operator allows private fetches', async () => {
    const t = (await strict.user('strict')).token;
    const r = await strict.api('POST', '/api/v1/calendar/subscriptions', { token: t, body: { name: 'Local', url: `${base}/cal.ics` } });
    expect(r.status).toBe(400);
    expect(r.body.error.details.reason).toBe('address_not_allowed');
    expect(r.body.error.message).toContain('QUIRE_FETCH_ALLOW_PRIVATE=1');
  });

  it('is refreshed on the schedule', async () => {
    feed = feedOf(ev('e@feed', 'Epsilon'));
    etag = '"v4"';
    await new CalendarSyncSchedule(inst.server.services, () => undefined).runOnce();
    const events = await inst.api('GET', '/api/v1/calendar/events', { token });
    expect(events.body.events.map((e: any) => e.title)).toEqual(['Epsilon']);
  });

  it('removes the subscription and its folder', async () => {
    const r = await inst.api('DELETE', `/api/v1/calendar/subscriptions/${id}`, { token, headers: { 'x-quire-confirm': '1' } });
    expect(r.status).toBe(200);
    expect(fs.existsSync(path.join(home, 'Calendars', calendarId))).toBe(false);
    expect((await inst.api('GET', '/api/v1/calendar/subscriptions', { token })).body.subscriptions).toEqual([]);
  });
});
