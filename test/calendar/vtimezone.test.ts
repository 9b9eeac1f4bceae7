/**
 * VTIMEZONEs generated from the runtime's tz database for IANA TZIDs a file names without one:
 * read back by ical.js and node-ical they give the instants the server's own expansion gives,
 * across DST changes, and feeds carry one per zone over the years all their events need.
 */
import ICAL from 'ical.js';
import ical from 'node-ical';
import { describe, expect, it } from 'vitest';
import { feedDocument } from '../../src/calendar/feed-ical.js';
import { parseEvent } from '../../src/calendar/ics.js';
import { Expansion } from '../../src/calendar/recurrence.js';
import { missingZones, vtimezoneText, withZones } from '../../src/calendar/vtimezone.js';
import { offsetAt, transitionsIn, wallToInstant } from '../../src/calendar/zones.js';

const ZONES = ['America/New_York', 'Europe/Berlin', 'Australia/Sydney', 'Asia/Kolkata'];
const HOUR = 3_600_000;

const ics = (lines: string[], extra: string[] = []) =>
  ['BEGIN:VCALENDAR', 'VERSION:2.0', 'PRODID:-//test//EN', ...extra, 'BEGIN:VEVENT', 'UID:e@test', 'DTSTAMP:20260101T000000Z', ...lines, 'END:VEVENT', 'END:VCALENDAR', ''].join('\r\n');

describe('vtimezoneText read by ical.js', () => {
  // How clients use a VTIMEZONE: a wall-clock time in the zone to an instant. Times a change skips
  // or repeats are left out (ical.js resolves those its own way whatever the VTIMEZONE says).
  it.each(ZONES)('%s: every wall time around each change, and weekly, is the instant the tz database gives (2005–2030)', (zone) => {
    const comp = new ICAL.Component(ICAL.parse(vtimezoneText(zone, [2005, 2030])));
    const tz = new ICAL.Timezone({ component: comp, tzid: zone });
    const walls: number[] = [];
    for (let y = 2005; y <= 2030; y++) {
      for (const t of transitionsIn(zone, y)) for (let k = -6; k <= 6; k++) walls.push(t.at + t.from + k * HOUR / 2, t.at + t.from + k * HOUR / 2 - 1000);
    }
    for (let w = Date.UTC(2005, 0, 1, 9); w < Date.UTC(2031, 0, 1); w += 7 * 24 * HOUR) walls.push(w);
    const unique = (w: number) => new Set([offsetAt(zone, w - 14 * HOUR), offsetAt(zone, w + 14 * HOUR)].filter((o) => offsetAt(zone, w - o) === o)).size === 1;
    const checked = walls.filter(unique);
    const wrong = checked.filter((w) => {
      const d = new Date(w);
      const t = ICAL.Time.fromData({ year: d.getUTCFullYear(), month: d.getUTCMonth() + 1, day: d.getUTCDate(), hour: d.getUTCHours(), minute: d.getUTCMinutes(), second: d.getUTCSeconds() }, tz);
      return t.toUnixTime() * 1000 !== wallToInstant(zone, w);
    });
    expect(checked.length).toBeGreaterThan(1300);
    expect(wrong.map((w) => new Date(w).toISOString())).toEqual([]);
  });

  it('is small: one yearly rule per change while the rules hold, open-ended at the end', () => {
    const ny = vtimezoneText('America/New_York', [2020, 2040]);
    expect(ny.match(/BEGIN:(STANDARD|DAYLIGHT)/g)).toHaveLength(3);
    expect(ny).toContain('RRULE:FREQ=YEARLY;BYMONTH=3;BYDAY=2SU\r\n');
    expect(ny).toContain('RRULE:FREQ=YEARLY;BYMONTH=11;BYDAY=1SU\r\n');
    // The US rules changed in 2007: the earlier run ends with UNTIL.
    expect(vtimezoneText('America/New_York', [2000, 2010])).toContain('RRULE:FREQ=YEARLY;BYMONTH=4;BYDAY=1SU;UNTIL=20060402T070000Z');
    expect(vtimezoneText('Asia/Kolkata', [2000, 2040]).match(/BEGIN:(STANDARD|DAYLIGHT)/g)).toHaveLength(1);
  });
});

describe('missingZones', () => {
  const zones = (lines: string[], extra: string[] = []) => Object.fromEntries(missingZones(parseEvent(ics(lines, extra), { field: 'f', strict: false }).root, { nowYear: 2026 }));
  it.each([
    ['a single event', ['DTSTART;TZID=Europe/Berlin:20240310T090000', 'DTEND;TZID=Europe/Berlin:20240310T100000'], { 'Europe/Berlin': [2024, 2024] }],
    ['a series with UNTIL', ['DTSTART;TZID=Europe/Berlin:20240310T090000', 'RRULE:FREQ=WEEKLY;UNTIL=20271231T000000Z'], { 'Europe/Berlin': [2024, 2027] }],
    ['a series without end: this year plus the horizon', ['DTSTART;TZID=Europe/Berlin:20200310T090000', 'RRULE:FREQ=WEEKLY'], { 'Europe/Berlin': [2020, 2031] }],
    ['two zones, EXDATE in a later year', ['DTSTART;TZID=Asia/Kolkata:20240310T090000', 'DTEND;TZID=America/New_York:20240310T000000', 'RRULE:FREQ=YEARLY;COUNT=3', 'EXDATE;TZID=Asia/Kolkata:20250310T090000'], { 'Asia/Kolkata': [2024, 2031], 'America/New_York': [2024, 2031] }],
    ['UTC and floating times', ['DTSTART:20240310T090000Z', 'DTEND:20240310T100000'], {}],
    ['a Windows name (not in the tz database)', ['DTSTART;TZID=W. Europe Standard Time:20240310T090000'], {}],
  ])('%s', (_name, lines, expected) => expect(zones(lines)).toEqual(expected));

  it('a zone the file describes itself is left alone', () => {
    const own = ['BEGIN:VTIMEZONE', 'TZID:Europe/Berlin', 'BEGIN:STANDARD', 'DTSTART:19700101T000000', 'TZOFFSETFROM:+0100', 'TZOFFSETTO:+0100', 'END:STANDARD', 'END:VTIMEZONE'];
    expect(zones(['DTSTART;TZID=Europe/Berlin:20240310T090000'], own)).toEqual({});
  });
});

describe('served objects give the server\'s instants to ical.js and node-ical', () => {
  const FROM = Date.UTC(2026, 0, 1);
  const TO = Date.UTC(2027, 6, 1);
  // Weekly for 18 months at 09:00 (both DST changes of 2026 in every zone that has them) and one
  // event at 01:30 local on a day of change.
  const cases = ZONES.map((zone) => [zone, ics([`DTSTART;TZID=${zone}:20260105T090000`, `DTEND;TZID=${zone}:20260105T093000`, 'RRULE:FREQ=WEEKLY;COUNT=78'])] as const);

  it.each(cases)('%s', (zone, stored) => {
    const parsed = parseEvent(stored, { field: 'f', strict: false });
    const served = withZones(stored, parsed.root);
    expect(served.startsWith('BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//test//EN\r\nBEGIN:VTIMEZONE\r\nTZID:' + zone + '\r\n')).toBe(true);
    expect(served.replace(/BEGIN:VTIMEZONE[\s\S]*END:VTIMEZONE\r\n/, '')).toBe(stored);

    const server = new Expansion(parsed).between(FROM, TO, 'UTC').map((o) => o.start);
    expect(server).toHaveLength(78);

    const root = new ICAL.Component(ICAL.parse(served));
    const ev = new ICAL.Event(root.getFirstSubcomponent('vevent')!);
    // The generated VTIMEZONE, not the server's registered zone, is what ical.js used.
    expect((ev.startDate.zone as ICAL.Timezone).component).toBeTruthy();
    const it = ev.iterator();
    const viaIcalJs: number[] = [];
    for (let t = it.next(); t; t = it.next()) viaIcalJs.push(t.toUnixTime() * 1000);
    expect(viaIcalJs).toEqual(server);

    const vevent = Object.values(ical.sync.parseICS(served)).find((c: any) => c.type === 'VEVENT') as ical.VEvent;
    const viaNodeIcal = ical.expandRecurringEvent(vevent, { from: new Date(FROM), to: new Date(TO) }).map((i) => i.start.getTime());
    expect(viaNodeIcal).toEqual(server);
  });

  it.each([
    ['America/New_York', '20261101T023000'],
    ['Europe/Berlin', '20260329T033000'],
    ['Australia/Sydney', '20260405T033000'],
    ['Asia/Kolkata', '20260329T013000'],
  ])('%s: an event at %s, just after a change', (zone, start) => {
    const stored = ics([`DTSTART;TZID=${zone}:${start}`, 'DURATION:PT1H']);
    const parsed = parseEvent(stored, { field: 'f', strict: false });
    const served = withZones(stored, parsed.root);
    const server = new Expansion(parsed).between(FROM, TO, 'UTC')[0]!.start;
    const root = new ICAL.Component(ICAL.parse(served));
    expect(new ICAL.Event(root.getFirstSubcomponent('vevent')!).startDate.toUnixTime() * 1000).toBe(server);
    const vevent = Object.values(ical.sync.parseICS(served)).find((c: any) => c.type === 'VEVENT') as ical.VEvent;
    expect(vevent.start.getTime()).toBe(server);
  });

  it('a file without a zone to add is served as stored (same string)', () => {
    const stored = ics(['DTSTART:20260105T090000Z', 'DURATION:PT1H']);
    expect(withZones(stored, parseEvent(stored, { field: 'f', strict: false }).root)).toBe(stored);
  });

  it('LF files get LF VTIMEZONE lines', () => {
    const stored = ics(['DTSTART;TZID=Europe/Berlin:20260105T090000']).replace(/\r\n/g, '\n');
    const served = withZones(stored, parseEvent(stored, { field: 'f', strict: false }).root);
    expect(served).toContain('BEGIN:VTIMEZONE\nTZID:Europe/Berlin\n');
    expect(served).not.toContain('\r');
  });
});

describe('feedDocument', () => {
  const file = (text: string) => ({ root: new ICAL.Component(ICAL.parse(text)), text });
  const header = { name: 'Feed', color: null, stampMs: Date.UTC(2026, 0, 1) };

  it('busy_only: no VTIMEZONE for the zone of an event it leaves out (free time), one for a busy event', () => {
    const free = ics(['DTSTART;TZID=Asia/Kolkata:20260105T090000', 'DURATION:PT1H', 'TRANSP:TRANSPARENT']);
    const busy = ics(['DTSTART;TZID=Europe/Berlin:20260105T090000', 'DURATION:PT1H']).replace('UID:e@test', 'UID:f@test');
    const doc = feedDocument({ ...header, detail: 'busy_only' }, [], [file(free), file(busy)]);
    expect(doc).not.toContain('Asia/Kolkata');
    expect(doc).toContain('BEGIN:VTIMEZONE\r\nTZID:Europe/Berlin\r\n');
    expect(feedDocument({ ...header, detail: 'full' }, [], [file(free)])).toContain('BEGIN:VTIMEZONE\r\nTZID:Asia/Kolkata\r\n');
  });

  it.each(['full', 'busy_only'] as const)('%s: one VTIMEZONE per IANA zone, over the years of every event naming it', (detail) => {
    const a = ics(['DTSTART;TZID=America/New_York:20030105T090000', 'DURATION:PT1H']);
    const b = ics(['DTSTART;TZID=America/New_York:20260105T090000', 'DURATION:PT1H']).replace('UID:e@test', 'UID:f@test');
    const doc = feedDocument({ ...header, detail }, [], [file(a), file(b)]);
    expect(doc.match(/BEGIN:VTIMEZONE/g)).toHaveLength(1);
    // 2003 (first Sunday of April) and 2026 (second Sunday of March) are both described.
    expect(doc).toContain('RRULE:FREQ=YEARLY;BYMONTH=4;BYDAY=1SU;UNTIL=20060402T070000Z');
    expect(doc).toContain('RRULE:FREQ=YEARLY;BYMONTH=3;BYDAY=2SU\r\n');
    const parsed = Object.values(ical.sync.parseICS(doc)).filter((c: any) => c.type === 'VEVENT') as any[];
    expect(parsed.map((e) => e.start.toISOString()).sort()).toEqual(['2003-01-05T14:00:00.000Z', '2026-01-05T14:00:00.000Z']);
  });
});
