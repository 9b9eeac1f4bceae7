/**
 * A real CalDAV client against Quire's DAV tree: tsdav discovers the account from
 * `/.well-known/caldav`, lists calendars and events, creates, updates and deletes with
 * ETags, and follows changes with sync-collection tokens.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { DAVClient, type DAVCalendar } from 'tsdav';
import { startInstance, type TestInstance } from '../helpers/instance.js';
import { eventually } from '../helpers/wait.js';
import { ics } from '../helpers/ics.js';

let inst: TestInstance;
let token: string;
let password: string;

async function client() {
  const c = new DAVClient({ serverUrl: inst.url, credentials: { username: 'ann', password }, authMethod: 'Basic', defaultAccountType: 'caldav' });
  await c.login();
  return c;
}

async function personal(c: DAVClient): Promise<DAVCalendar> {
  const calendars = await c.fetchCalendars();
  return calendars.find((x) => x.displayName === 'Personal')!;
}

const eventText = async (uid: string) => (await inst.api('GET', `/api/v1/calendar/events/${encodeURIComponent(uid)}`, { token })).body?.icalendar as string | undefined;

beforeAll(async () => {
  inst = await startInstance();
  token = (await inst.user('ann')).token;
  const ap = await inst.api('POST', '/api/v1/auth/app-passwords', { token, body: { name: 'phone' } });
  expect(ap.status, ap.text).toBe(201);
  password = ap.body.password;
  for (const icalendar of [
    ics('standup@test', ['DTSTART;TZID=Europe/Berlin:20260302T090000', 'DTEND;TZID=Europe/Berlin:20260302T093000', 'RRULE:FREQ=DAILY;COUNT=5', 'SUMMARY:Standup']),
    ics('trip@test', ['DTSTART;VALUE=DATE:20260310', 'DTEND;VALUE=DATE:20260312', 'SUMMARY:Trip']),
  ]) {
    const r = await inst.api('POST', '/api/v1/calendar/events', { token, body: { icalendar } });
    expect(r.status, r.text).toBe(201);
  }
}, 60_000);

afterAll(() => inst?.close());

it('discovers the account from /.well-known/caldav and lists calendars and events', async () => {
  const c = await client();
  expect(c.account?.principalUrl).toBe(`${inst.url}/dav/principals/ann/`);
  expect(c.account?.homeUrl).toBe(`${inst.url}/dav/calendars/ann/`);
  const cal = await personal(c);
  expect(cal.url).toBe(`${inst.url}/dav/calendars/ann/Personal/`);
  expect(cal.components).toEqual(['VEVENT']);
  expect(cal.ctag).toBeTruthy();
  expect(cal.syncToken).toMatch(/^https:\/\/quire\.invalid\/ns\/sync\//);
  const objects = await c.fetchCalendarObjects({ calendar: cal });
  expect(objects.length).toBe(2);
  expect(objects.find((o) => o.url.endsWith('/standup@test.ics'))?.data).toContain('SUMMARY:Standup');
  expect(objects.every((o) => o.etag?.startsWith('"'))).toBe(true);
  // A time range: the recurring standup's 3rd occurrence falls in it, the trip does not.
  const march4 = await c.fetchCalendarObjects({ calendar: cal, timeRange: { start: '2026-03-04T00:00:00Z', end: '2026-03-05T00:00:00Z' } });
  expect(march4.map((o) => o.url.split('/').pop())).toEqual(['standup@test.ics']);
});

it('creates, updates and deletes events with ETags; a stale ETag is refused with 412', async () => {
  const c = await client();
  const cal = await personal(c);
  // The resource name the client picks differs from the UID-derived file name: it round-trips.
  const created = await c.createCalendarObject({ calendar: cal, filename: 'client-name.ics', iCalString: ics('lunch@test', ['DTSTART:20260320T120000Z', 'DTEND:20260320T130000Z', 'SUMMARY:Lunch']) });
  expect(created.status).toBe(201);
  expect(await eventText('lunch@test')).toContain('SUMMARY:Lunch');
  let objects = await c.fetchCalendarObjects({ calendar: cal });
  const lunch = objects.find((o) => o.data.includes('SUMMARY:Lunch'))!;
  expect(lunch.url).toBe(`${cal.url}client-name.ics`);

  const updated = await c.updateCalendarObject({ calendarObject: { ...lunch, data: lunch.data.replace('SUMMARY:Lunch', 'SUMMARY:Long lunch') } });
  expect(updated.status).toBe(204);
  expect(await eventText('lunch@test')).toContain('SUMMARY:Long lunch');
  // The ETag the client still holds is the old one.
  const stale = await c.updateCalendarObject({ calendarObject: { ...lunch, data: lunch.data.replace('SUMMARY:Lunch', 'SUMMARY:Stale') } });
  expect(stale.status).toBe(412);
  expect(await eventText('lunch@test')).toContain('SUMMARY:Long lunch');
  const staleDelete = await c.deleteCalendarObject({ calendarObject: lunch });
  expect(staleDelete.status).toBe(412);

  objects = await c.fetchCalendarObjects({ calendar: cal });
  const fresh = objects.find((o) => o.url === lunch.url)!;
  expect(fresh.data).toContain('SUMMARY:Long lunch');
  const deleted = await c.deleteCalendarObject({ calendarObject: fresh });
  expect(deleted.status).toBe(204);
  expect(await eventText('lunch@test')).toBeUndefined();
});

it('follows changes with sync-collection tokens', async () => {
  const c = await client();
  const cal = await personal(c);
  const props = { 'd:getetag': {} };
  const first = await c.syncCollection({ url: cal.url, props, syncLevel: 1, syncToken: cal.syncToken as string });
  expect(first.filter((r) => r.href)).toEqual([]);

  // A change made elsewhere (the JSON API), a new event and a delete.
  const r = await inst.api('POST', '/api/v1/calendar/events', { token, body: { icalendar: ics('dentist@test', ['DTSTART:20260401T080000Z', 'SUMMARY:Dentist']) } });
  expect(r.status, r.text).toBe(201);
  expect((await inst.api('DELETE', '/api/v1/calendar/events/trip%40test', { token })).status).toBe(200);
  const cal2 = await personal(c);
  expect(cal2.ctag).not.toBe(cal.ctag);
  const second = await c.syncCollection({ url: cal.url, props, syncLevel: 1, syncToken: cal.syncToken as string });
  const byName = Object.fromEntries(second.filter((x) => x.href).map((x) => [x.href!.split('/').pop(), x.status]));
  expect(byName).toEqual({ 'dentist@test.ics': 207, 'trip@test.ics': 404 });

  // Nothing changed since the newest token: nothing to report.
  const third = await c.syncCollection({ url: cal.url, props, syncLevel: 1, syncToken: cal2.syncToken as string });
  expect(third.filter((x) => x.href)).toEqual([]);

  // An edit made outside the server (an editor, git) reaches the client at its next sync.
  const file = path.join(inst.dataDir, 'homes', 'ann', 'Calendars', 'Personal', 'dentist@test.ics');
  fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replace('SUMMARY:Dentist', 'SUMMARY:Dentist (moved)'));
  const fourth = await eventually(async () => {
    const r = await c.syncCollection({ url: cal.url, props, syncLevel: 1, syncToken: cal2.syncToken as string });
    return r.some((x) => x.href?.endsWith('/dentist@test.ics')) ? r : null;
  });
  expect(fourth!.filter((x) => x.href).length).toBe(1);
  const [moved] = await c.fetchCalendarObjects({ calendar: cal, objectUrls: [`${cal.url}dentist@test.ics`] });
  expect(moved?.data).toContain('SUMMARY:Dentist (moved)');
});
