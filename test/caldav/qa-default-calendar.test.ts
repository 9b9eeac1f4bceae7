/**
 * A new user's phone, set up with the App Password profile, lists the calendar home before any
 * event exists: it must find the default calendar (the API already shows it as `Personal`) and
 * be able to add an event to it. A read-only credential sees the Home as it is, untouched.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInstance, type TestInstance } from '../helpers/instance.js';

let inst: TestInstance;
let token: string;
const basic = (user: string, pass: string) => `Basic ${Buffer.from(`${user}:${pass}`).toString('base64')}`;
const home = () => path.join(inst.dataDir, 'homes', 'nina');

async function appPassword(scopes: unknown[]): Promise<string> {
  const r = await inst.api('POST', '/api/v1/auth/app-passwords', { token, body: { name: `p${Math.random()}`, scopes } });
  expect(r.status, r.text).toBe(201);
  return r.body.password;
}

const dav = (method: string, route: string, auth: string, body?: string, headers: Record<string, string> = {}) =>
  fetch(inst.url + route, { method, headers: { authorization: auth, ...headers }, body });

beforeAll(async () => {
  inst = await startInstance();
  token = (await inst.user('nina')).token;
});
afterAll(() => inst.close());

describe('a Home without calendars over CalDAV', () => {
  it('a read-only credential lists no calendar and writes nothing', async () => {
    const reader = basic('nina', await appPassword([{ scope: 'data', access: 'read' }]));
    const r = await dav('PROPFIND', '/dav/calendars/nina/', reader, undefined, { depth: '1' });
    expect(r.status).toBe(207);
    expect(await r.text()).not.toContain('/dav/calendars/nina/Personal/');
    expect(fs.existsSync(path.join(home(), 'Calendars'))).toBe(false);
  });

  it('the first listing shows the default calendar, and an event PUT into it is stored', async () => {
    const phone = basic('nina', await appPassword([{ scope: 'data', access: 'write' }]));
    const r = await dav('PROPFIND', '/dav/calendars/nina/', phone, undefined, { depth: '1' });
    expect(r.status).toBe(207);
    expect(await r.text()).toContain('<d:href>/dav/calendars/nina/Personal/</d:href>');
    const ics = ['BEGIN:VCALENDAR', 'VERSION:2.0', 'PRODID:-//phone//EN', 'BEGIN:VEVENT', 'UID:first@phone', 'DTSTAMP:20260101T000000Z', 'DTSTART:20261201T090000Z', 'DTEND:20261201T100000Z', 'SUMMARY:From the phone', 'END:VEVENT', 'END:VCALENDAR', ''].join('\r\n');
    const put = await dav('PUT', '/dav/calendars/nina/Personal/first.ics', phone, ics, { 'content-type': 'text/calendar', 'if-none-match': '*' });
    expect(put.status, await put.text()).toBe(201);
    const list = await inst.api('GET', '/api/v1/calendar/events', { token });
    expect(list.body.events.map((e: { id: string; calendar_id: string }) => [e.id, e.calendar_id])).toEqual([['first@phone', 'Personal']]);
    expect(fs.readdirSync(path.join(home(), 'Calendars', 'Personal')).sort()).toEqual(['calendar.json', 'first@phone.ics']);
  });
});
