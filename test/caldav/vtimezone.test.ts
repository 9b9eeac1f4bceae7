/**
 * Events created through the API name an IANA zone in TZID without a VTIMEZONE. What the
 * server sends of them (CalDAV GET, calendar-multiget and calendar-query calendar-data, a
 * calendar feed) carries a VTIMEZONE per zone, and ical.js and node-ical read from it the
 * instants the server's own expansion gives, across DST changes. The stored files are unchanged.
 */
import fs from 'node:fs';
import path from 'node:path';
import ICAL from 'ical.js';
import ical from 'node-ical';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInstance, type TestInstance } from '../helpers/instance.js';

let inst: TestInstance;
let token: string;
let password: string;

const ZONES = ['America/New_York', 'Europe/Berlin', 'Australia/Sydney', 'Asia/Kolkata'];
const uidOf = (zone: string) => `weekly-${zone.replace('/', '-')}@test`;
const stored = (zone: string) =>
  ['BEGIN:VCALENDAR', 'VERSION:2.0', 'PRODID:-//test//EN', 'BEGIN:VEVENT', `UID:${uidOf(zone)}`, 'DTSTAMP:20260101T000000Z',
    `DTSTART;TZID=${zone}:20260105T090000`, `DTEND;TZID=${zone}:20260105T093000`, 'RRULE:FREQ=WEEKLY;COUNT=52', `SUMMARY:Weekly ${zone}`,
    'END:VEVENT', 'END:VCALENDAR', ''].join('\r\n');

const dav = async (method: string, route: string, body?: string, headers: Record<string, string> = {}) => {
  const res = await fetch(inst.url + route, {
    method,
    body,
    headers: { authorization: `Basic ${Buffer.from(`ann:${password}`).toString('base64')}`, ...(body ? { 'content-type': 'application/xml; charset=utf-8' } : {}), ...headers },
  });
  return { status: res.status, text: await res.text() };
};

const unescapeXml = (s: string) => s.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&#13;/g, '\r').replace(/&amp;/g, '&');
const calendarData = (xml: string) => [...xml.matchAll(/<c:calendar-data[^>]*>([\s\S]*?)<\/c:calendar-data>/g)].map((m) => unescapeXml(m[1]!));

/** The server's own occurrences of each series in 2026 (its expansion, through the API). */
let serverStarts: Map<string, number[]>;

function viaIcalJs(text: string): number[] {
  const root = new ICAL.Component(ICAL.parse(text));
  const ev = new ICAL.Event(root.getFirstSubcomponent('vevent')!);
  // What ical.js read is the VTIMEZONE in the text (this process registers no IANA zones).
  expect((ev.startDate.zone as ICAL.Timezone).component).toBeTruthy();
  const out: number[] = [];
  const it = ev.iterator();
  for (let t = it.next(); t; t = it.next()) out.push(t.toUnixTime() * 1000);
  return out;
}

function viaNodeIcal(text: string, uid: string): number[] {
  const ev = Object.values(ical.sync.parseICS(text)).find((c: any) => c.type === 'VEVENT' && c.uid === uid) as ical.VEvent;
  return ical.expandRecurringEvent(ev, { from: new Date('2026-01-01T00:00:00Z'), to: new Date('2027-01-01T00:00:00Z') }).map((i) => i.start.getTime());
}

beforeAll(async () => {
  inst = await startInstance();
  token = (await inst.user('ann')).token;
  const pw = await inst.api('POST', '/api/v1/auth/app-passwords', { token, body: { name: 'phone' } });
  password = pw.body.password;
  for (const zone of ZONES) {
    const r = await inst.api('POST', '/api/v1/calendar/events', { token, body: { icalendar: stored(zone) } });
    expect(r.status, r.text).toBe(201);
  }
  const list = await inst.api('GET', '/api/v1/calendar/events?from=2026-01-01&to=2026-12-31&tz=UTC', { token });
  expect(list.status, list.text).toBe(200);
  serverStarts = new Map(ZONES.map((z) => [z, list.body.events.filter((e: any) => e.id === uidOf(z)).map((e: any) => Date.parse(e.start))]));
  for (const z of ZONES) expect(serverStarts.get(z)).toHaveLength(52);
}, 60_000);

afterAll(() => inst?.close());

describe('VTIMEZONE on output', () => {
  it.each(ZONES)('GET %s: a VTIMEZONE is sent, and both libraries read the server\'s instants', async (zone) => {
    const r = await dav('GET', `/dav/calendars/ann/Personal/${uidOf(zone)}.ics`);
    expect(r.status).toBe(200);
    expect(r.text).toContain(`BEGIN:VTIMEZONE\r\nTZID:${zone}\r\n`);
    expect(viaIcalJs(r.text)).toEqual(serverStarts.get(zone));
    expect(viaNodeIcal(r.text, uidOf(zone))).toEqual(serverStarts.get(zone));
  });

  it('the stored files stay as written (no VTIMEZONE), and the API shows them as stored', async () => {
    for (const zone of ZONES) {
      const file = fs.readFileSync(path.join(inst.dataDir, 'homes', 'ann', 'Calendars', 'Personal', `${uidOf(zone)}.ics`), 'utf8');
      expect(file).toBe(stored(zone));
      expect((await inst.api('GET', `/api/v1/calendar/events/${encodeURIComponent(uidOf(zone))}`, { token })).body.icalendar).toBe(stored(zone));
    }
  });

  it('calendar-multiget and calendar-query send the same text as GET, and getcontentlength counts it', async () => {
    const hrefs = ZONES.map((z) => `<d:href>/dav/calendars/ann/Personal/${uidOf(z)}.ics</d:href>`).join('');
    const multi = await dav('REPORT', '/dav/calendars/ann/Personal/',
      `<c:calendar-multiget xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav"><d:prop><d:getcontentlength/><c:calendar-data/></d:prop>${hrefs}</c:calendar-multiget>`);
    expect(multi.status).toBe(207);
    const query = await dav('REPORT', '/dav/calendars/ann/Personal/',
      `<c:calendar-query xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav"><d:prop><c:calendar-data/></d:prop><c:filter><c:comp-filter name="VCALENDAR"><c:comp-filter name="VEVENT"/></c:comp-filter></c:filter></c:calendar-query>`,
      { depth: '1' });
    expect(query.status).toBe(207);
    const fromGet = await Promise.all(ZONES.map(async (z) => (await dav('GET', `/dav/calendars/ann/Personal/${uidOf(z)}.ics`)).text));
    expect(calendarData(multi.text).sort()).toEqual([...fromGet].sort());
    for (const t of [...calendarData(multi.text), ...calendarData(query.text)]) expect(t).toContain('BEGIN:VTIMEZONE');
    expect(calendarData(query.text).sort()).toEqual([...fromGet].sort());
    const lengths = [...multi.text.matchAll(/<d:getcontentlength>(\d+)<\/d:getcontentlength>/g)].map((m) => Number(m[1])).sort();
    expect(lengths).toEqual(fromGet.map((t) => Buffer.byteLength(t)).sort());
  });

  it('a calendar feed carries one VTIMEZONE per zone and gives the same instants', async () => {
    const feed = await inst.api('POST', '/api/v1/calendar/feeds', { token, body: { name: 'Cal', detail: 'busy_only', source: 'calendar' } });
    expect(feed.status, feed.text).toBe(201);
    const doc = await (await fetch(inst.url + new URL(feed.body.url).pathname)).text();
    for (const zone of ZONES) {
      expect(doc.split(`BEGIN:VTIMEZONE\r\nTZID:${zone}\r\n`)).toHaveLength(2);
      expect(viaNodeIcal(doc, uidOf(zone))).toEqual(serverStarts.get(zone));
    }
  });
});
