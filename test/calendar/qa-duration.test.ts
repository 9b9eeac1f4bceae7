/**
 * DURATION as RFC 5545 reads it (3.3.6, 3.8.5.3): weeks and days are nominal (wall clock), hours,
 * minutes and seconds exact. A one-hour event that starts at 01:30 on New York's fall-back night
 * lasts one real hour (it ends at 01:30 EST), and so does every occurrence of its series.
 */
import { describe, expect, it } from 'vitest';
import { eventRecord } from '../../src/calendar/events.js';
import { parseEvent } from '../../src/calendar/ics.js';
import { Expansion } from '../../src/calendar/recurrence.js';
import { rfc3339 } from '../../src/calendar/zones.js';

const NY = 'America/New_York';
const cal = (...lines: string[]) =>
  ['BEGIN:VCALENDAR', 'VERSION:2.0', 'PRODID:-//quire test//EN', 'BEGIN:VEVENT', 'UID:d', 'DTSTAMP:20260101T000000Z', ...lines, 'SUMMARY:x', 'END:VEVENT', 'END:VCALENDAR', ''].join('\r\n');

const rows: [string, string[], [string, string][]][] = [
  ['PT1H from 01:30 on the fall-back night', [`DTSTART;TZID=${NY}:20261101T013000`, 'DURATION:PT1H'], [['2026-11-01T01:30:00-04:00', '2026-11-01T01:30:00-05:00']]],
  [
    'PT1H daily across the fall-back: one real hour each day',
    [`DTSTART;TZID=${NY}:20261031T013000`, 'DURATION:PT1H', 'RRULE:FREQ=DAILY;COUNT=3'],
    [
      ['2026-10-31T01:30:00-04:00', '2026-10-31T02:30:00-04:00'],
      ['2026-11-01T01:30:00-04:00', '2026-11-01T01:30:00-05:00'],
      ['2026-11-02T01:30:00-05:00', '2026-11-02T02:30:00-05:00'],
    ],
  ],
  ['P1D over the spring-forward day is 23 real hours', [`DTSTART;TZID=${NY}:20260307T120000`, 'DURATION:P1D'], [['2026-03-07T12:00:00-05:00', '2026-03-08T12:00:00-04:00']]],
  ['P1DT1H: a day on the wall, then an exact hour', [`DTSTART;TZID=${NY}:20260307T120000`, 'DURATION:P1DT1H'], [['2026-03-07T12:00:00-05:00', '2026-03-08T13:00:00-04:00']]],
  ['PT90M on an ordinary day', [`DTSTART;TZID=${NY}:20260601T090000`, 'DURATION:PT90M'], [['2026-06-01T09:00:00-04:00', '2026-06-01T10:30:00-04:00']]],
  ['DTEND stays as written', [`DTSTART;TZID=${NY}:20260601T090000`, `DTEND;TZID=${NY}:20260601T100000`], [['2026-06-01T09:00:00-04:00', '2026-06-01T10:00:00-04:00']]],
];

describe('DURATION: nominal days, exact hours', () => {
  it.each(rows)('%s', (_name, lines, want) => {
    const ics = parseEvent(cal(...lines), { field: 'body.icalendar', strict: true });
    // The event record shows the first occurrence's end in the event's zone, like its start.
    const rec = eventRecord({ ics, path: 'x.ics', etag: 'e', calendarId: 'c' } as unknown as Parameters<typeof eventRecord>[0]);
    expect([rec.start, rec.end]).toEqual(want[0]);
    const got = new Expansion(ics)
      .between(Date.parse('2026-01-01T00:00:00Z'), Date.parse('2027-01-01T00:00:00Z'), NY)
      .map((o) => [rfc3339(o.start, NY), rfc3339(o.end, NY)]);
    expect(got).toEqual(want);
  });
});
