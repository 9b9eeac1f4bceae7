/**
 * Recurrence and time zones, table-style: each file names its zone by IANA
 * TZID only, as most clients write it, and is expanded by the server's path
 * (ics.ts + recurrence.ts, zones from the runtime's tz database). The same
 * occurrences must come out of two references: ical.js expanding the file with
 * a real VTIMEZONE pasted in, and node-ical (an independent parser and
 * recurrence engine) on the file as it is. DST changes in both hemispheres.
 */
import ICAL from 'ical.js';
import ical from 'node-ical';
import { describe, expect, it } from 'vitest';
import { parseEvent } from '../../src/calendar/ics.js';
import { Expansion, instantOf } from '../../src/calendar/recurrence.js';
import { rfc3339, wallToInstant } from '../../src/calendar/zones.js';

const VTZ: Record<string, string> = {
  'America/New_York': [
    'BEGIN:VTIMEZONE', 'TZID:America/New_York',
    'BEGIN:DAYLIGHT', 'TZOFFSETFROM:-0500', 'TZOFFSETTO:-0400', 'TZNAME:EDT', 'DTSTART:20070311T020000', 'RRULE:FREQ=YEARLY;BYMONTH=3;BYDAY=2SU', 'END:DAYLIGHT',
    'BEGIN:STANDARD', 'TZOFFSETFROM:-0400', 'TZOFFSETTO:-0500', 'TZNAME:EST', 'DTSTART:20071104T020000', 'RRULE:FREQ=YEARLY;BYMONTH=11;BYDAY=1SU', 'END:STANDARD',
    'END:VTIMEZONE',
  ].join('\r\n'),
  'Australia/Sydney': [
    'BEGIN:VTIMEZONE', 'TZID:Australia/Sydney',
    'BEGIN:STANDARD', 'TZOFFSETFROM:+1100', 'TZOFFSETTO:+1000', 'TZNAME:AEST', 'DTSTART:20080406T030000', 'RRULE:FREQ=YEARLY;BYMONTH=4;BYDAY=1SU', 'END:STANDARD',
    'BEGIN:DAYLIGHT', 'TZOFFSETFROM:+1000', 'TZOFFSETTO:+1100', 'TZNAME:AEDT', 'DTSTART:20081005T020000', 'RRULE:FREQ=YEARLY;BYMONTH=10;BYDAY=1SU', 'END:DAYLIGHT',
    'END:VTIMEZONE',
  ].join('\r\n'),
};

const cal = (...events: string[][]) =>
  ['BEGIN:VCALENDAR', 'VERSION:2.0', 'PRODID:-//quire test//EN', ...events.flatMap((e) => ['BEGIN:VEVENT', 'DTSTAMP:20260101T000000Z', ...e, 'END:VEVENT']), 'END:VCALENDAR', ''].join('\r\n');

interface Case {
  name: string;
  text: string;
  zone: string;
  from: string;
  to: string;
  /** Expected local starts in `zone` (the table's claim, checked against both references too). */
  local: string[];
  /** node-ical reads floating times in the process's zone: compare only zoned and all-day cases. */
  nodeIcal?: boolean;
  /** Occurrences from RDATE, which node-ical does not expand (it has no RDATE support): left out of that comparison. */
  fromRdate?: string[];
}

const NY = 'America/New_York';
const SYD = 'Australia/Sydney';

const CASES: Case[] = [
  {
    name: 'weekly in New York across the March change stays at 09:30 local',
    text: cal(['UID:ny-weekly', `DTSTART;TZID=${NY}:20260301T093000`, `DTEND;TZID=${NY}:20260301T103000`, 'RRULE:FREQ=WEEKLY;COUNT=4', 'SUMMARY:Standup']),
    zone: NY,
    from: '2026-02-28T00:00:00Z',
    to: '2026-04-01T00:00:00Z',
    local: ['2026-03-01T09:30:00-05:00', '2026-03-08T09:30:00-04:00', '2026-03-15T09:30:00-04:00', '2026-03-22T09:30:00-04:00'],
  },
  {
    name: 'daily in New York across the November change',
    text: cal(['UID:ny-daily', `DTSTART;TZID=${NY}:20261030T080000`, 'DURATION:PT30M', 'RRULE:FREQ=DAILY;UNTIL=20261103T130000Z']),
    zone: NY,
    from: '2026-10-29T00:00:00Z',
    to: '2026-11-10T00:00:00Z',
    local: ['2026-10-30T08:00:00-04:00', '2026-10-31T08:00:00-04:00', '2026-11-01T08:00:00-05:00', '2026-11-02T08:00:00-05:00', '2026-11-03T08:00:00-05:00'],
  },
  {
    name: 'weekly in Sydney across the April change (DST ends in the south)',
    text: cal(['UID:syd-apr', `DTSTART;TZID=${SYD}:20260329T190000`, `DTEND;TZID=${SYD}:20260329T200000`, 'RRULE:FREQ=WEEKLY;COUNT=3']),
    zone: SYD,
    from: '2026-03-20T00:00:00Z',
    to: '2026-04-30T00:00:00Z',
    local: ['2026-03-29T19:00:00+11:00', '2026-04-05T19:00:00+10:00', '2026-04-12T19:00:00+10:00'],
  },
  {
    name: 'weekly in Sydney across the October change (DST starts), with an EXDATE given in UTC and an RDATE',
    text: cal([
      'UID:syd-oct', `DTSTART;TZID=${SYD}:20260927T070000`, `DTEND;TZID=${SYD}:20260927T073000`, 'RRULE:FREQ=WEEKLY;COUNT=4',
      'EXDATE:20261010T200000Z', `RDATE;TZID=${SYD}:20261008T120000`,
    ]),
    zone: SYD,
    from: '2026-09-20T00:00:00Z',
    to: '2026-10-31T00:00:00Z',
    local: ['2026-09-27T07:00:00+10:00', '2026-10-04T07:00:00+11:00', '2026-10-08T12:00:00+11:00', '2026-10-18T07:00:00+11:00'],
    fromRdate: ['2026-10-08T12:00:00+11:00'],
  },
  {
    name: 'a RECURRENCE-ID override moves one occurrence and renames it',
    text: cal(
      ['UID:ovr', `DTSTART;TZID=${NY}:20260105T140000`, `DTEND;TZID=${NY}:20260105T150000`, 'RRULE:FREQ=WEEKLY;BYDAY=MO;COUNT=3', 'SUMMARY:Review'],
      ['UID:ovr', `RECURRENCE-ID;TZID=${NY}:20260112T140000`, `DTSTART;TZID=${NY}:20260113T160000`, `DTEND;TZID=${NY}:20260113T170000`, 'SUMMARY:Review (moved)'],
    ),
    zone: NY,
    from: '2026-01-01T00:00:00Z',
    to: '2026-02-01T00:00:00Z',
    local: ['2026-01-05T14:00:00-05:00', '2026-01-13T16:00:00-05:00', '2026-01-19T14:00:00-05:00'],
  },
  {
    name: 'monthly on the second Tuesday',
    text: cal(['UID:monthly', `DTSTART;TZID=${SYD}:20260113T090000`, 'DURATION:PT1H', 'RRULE:FREQ=MONTHLY;BYDAY=2TU;COUNT=12']),
    zone: SYD,
    from: '2026-03-01T00:00:00Z',
    to: '2026-06-30T00:00:00Z',
    local: ['2026-03-10T09:00:00+11:00', '2026-04-14T09:00:00+10:00', '2026-05-12T09:00:00+10:00', '2026-06-09T09:00:00+10:00'],
  },
  {
    name: 'UTC times',
    text: cal(['UID:utc', 'DTSTART:20260702T120000Z', 'DTEND:20260702T130000Z', 'RRULE:FREQ=DAILY;COUNT=2']),
    zone: NY,
    from: '2026-07-01T00:00:00Z',
    to: '2026-07-10T00:00:00Z',
    local: ['2026-07-02T08:00:00-04:00', '2026-07-03T08:00:00-04:00'],
  },
  {
    name: 'all-day yearly dates start at midnight in the viewer zone, with an EXDATE',
    text: cal(['UID:allday', 'DTSTART;VALUE=DATE:20250228', 'DTEND;VALUE=DATE:20250301', 'RRULE:FREQ=YEARLY;COUNT=4', 'EXDATE;VALUE=DATE:20260228']),
    zone: SYD,
    from: '2025-01-01T00:00:00Z',
    to: '2029-01-01T00:00:00Z',
    local: ['2025-02-28T00:00:00+11:00', '2027-02-28T00:00:00+11:00', '2028-02-28T00:00:00+11:00'],
    nodeIcal: false,
  },
  {
    name: 'floating times are read in the viewer zone',
    text: cal(['UID:float', 'DTSTART:20260302T070000', 'DTEND:20260302T080000', 'RRULE:FREQ=DAILY;COUNT=2']),
    zone: SYD,
    from: '2026-03-01T00:00:00+11:00',
    to: '2026-03-05T00:00:00+11:00',
    local: ['2026-03-02T07:00:00+11:00', '2026-03-03T07:00:00+11:00'],
    nodeIcal: false,
  },
];

function serverStarts(c: Case): number[] {
  const ics = parseEvent(c.text, { field: 'icalendar', strict: true });
  return new Expansion(ics)
    .between(Date.parse(c.from), Date.parse(c.to), c.zone)
    .map((o) => instantOf(o.start, o.floating, c.zone))
    .sort((a, b) => a - b);
}

/** ical.js on its own, with the zones as VTIMEZONEs in the file (no IANA lookup involved). */
function icalJsStarts(c: Case): number[] {
  let text = c.text;
  const tzids = new Set([...text.matchAll(/TZID=([^:;]+)/g)].map((m) => m[1]!));
  for (const tz of tzids) text = text.replace('BEGIN:VEVENT', `${VTZ[tz]}\r\nBEGIN:VEVENT`);
  const root = new ICAL.Component(ICAL.parse(text));
  const events = root.getAllSubcomponents('vevent');
  const master = events.find((e) => !e.hasProperty('recurrence-id'))!;
  const ev = new ICAL.Event(master, { exceptions: events.filter((e) => e.hasProperty('recurrence-id')) });
  const out: number[] = [];
  const it = ev.iterator();
  for (let t = it.next(); t; t = it.next()) {
    const d = ev.getOccurrenceDetails(t);
    const s = d.startDate;
    const ms = s.zone === ICAL.Timezone.localTimezone ? wallToInstant(c.zone, Date.UTC(s.year, s.month - 1, s.day, s.hour, s.minute, s.second)) : s.toUnixTime() * 1000;
    if (ms >= Date.parse(c.from) && ms < Date.parse(c.to)) out.push(ms);
  }
  return out.sort((a, b) => a - b);
}

function nodeIcalStarts(c: Case): number[] {
  const parsed = ical.sync.parseICS(c.text);
  const ev = Object.values(parsed).find((v) => v && (v as { type?: string }).type === 'VEVENT') as ical.VEvent;
  return ical
    .expandRecurringEvent(ev, { from: new Date(c.from), to: new Date(c.to) })
    .map((i) => i.start.getTime())
    .filter((ms) => ms >= Date.parse(c.from) && ms < Date.parse(c.to))
    .sort((a, b) => a - b);
}

describe('recurrence and time zones', () => {
  for (const c of CASES) {
    it(c.name, () => {
      const mine = serverStarts(c);
      expect(mine.map((ms) => rfc3339(ms, c.zone))).toEqual(c.local);
      expect(icalJsStarts(c)).toEqual(mine);
      if (c.nodeIcal !== false) expect(nodeIcalStarts(c)).toEqual(mine.filter((ms) => !c.fromRdate?.includes(rfc3339(ms, c.zone))));
    });
  }
});

describe('wall time to instant at DST edges (RFC 5545 3.3.5)', () => {
  const rows: Array<[string, string, string]> = [
    [NY, '2026-03-08T02:30:00', '2026-03-08T03:30:00-04:00'], // skipped: the offset before the change
    [NY, '2026-11-01T01:30:00', '2026-11-01T01:30:00-04:00'], // twice: the first
    [SYD, '2026-10-04T02:30:00', '2026-10-04T03:30:00+11:00'],
    [SYD, '2026-04-05T02:30:00', '2026-04-05T02:30:00+11:00'],
    ['Europe/Berlin', '2026-07-01T12:00:00', '2026-07-01T12:00:00+02:00'],
    ['Asia/Kathmandu', '2026-01-01T00:00:00', '2026-01-01T00:00:00+05:45'],
  ];
  it.each(rows)('%s %s', (zone, wall, want) => {
    expect(rfc3339(wallToInstant(zone, Date.parse(wall + 'Z')), zone)).toBe(want);
  });
});
