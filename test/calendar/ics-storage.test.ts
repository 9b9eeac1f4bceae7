/** Pure rules of event files: names from UIDs, strict checks, the update merge. */
import { describe, expect, it } from 'vitest';
import { mergeUpdate, parseEvent, withUid } from '../../src/calendar/ics.js';
import { eventPathParts, fileNameForUid } from '../../src/calendar/storage.js';
import { AppError } from '../../src/core/errors.js';

const cal = (...lines: string[]) => ['BEGIN:VCALENDAR', 'VERSION:2.0', 'PRODID:t', ...lines, 'END:VCALENDAR', ''].join('\r\n');
const ev = (...lines: string[]) => ['BEGIN:VEVENT', ...lines, 'END:VEVENT'];

describe('fileNameForUid', () => {
  it.each([
    ['abc-123@example.com', 'abc-123@example.com.ics'],
    ['a/b', 'a%2Fb.ics'],
    ['..', '%2E..ics'],
    ['.hidden', '%2Ehidden.ics'],
    ['with space', 'with%20space.ics'],
    ['100%', '100%25.ics'],
    ['ü', '%C3%BC.ics'],
    ['a\u0000b', 'a%00b.ics'],
  ])('%j → %s', (uid, name) => {
    expect(fileNameForUid(uid)).toBe(name);
    expect(eventPathParts(`Calendars/Personal/${name}`)).toEqual({ calendarId: 'Personal', name });
  });

  it('cuts a long UID and keeps two long UIDs apart', () => {
    const a = fileNameForUid('x'.repeat(400) + 'a');
    const b = fileNameForUid('x'.repeat(400) + 'b');
    expect(Buffer.byteLength(a)).toBeLessThanOrEqual(190);
    expect(a).not.toBe(b);
  });
});

describe('parseEvent (strict)', () => {
  const reason = (text: string) => {
    try {
      parseEvent(text, { field: 'body.icalendar', strict: true });
      return 'ok';
    } catch (e) {
      return (e as AppError).details?.reason;
    }
  };
  it.each([
    [cal(...ev('UID:a', 'DTSTART:20260101T100000Z')), 'ok'],
    [cal(...ev('UID:a', 'DTSTART;TZID=Europe/Berlin:20260101T100000')), 'ok'],
    [cal(...ev('UID:a', 'DTSTART;TZID=Custom Zone:20260101T100000'), 'BEGIN:VTIMEZONE', 'TZID:Custom Zone', 'BEGIN:STANDARD', 'DTSTART:19700101T000000', 'TZOFFSETFROM:+0100', 'TZOFFSETTO:+0100', 'END:STANDARD', 'END:VTIMEZONE'), 'ok'],
    [cal(...ev('UID:a', 'DTSTART;TZID=Custom Zone:20260101T100000')), 'unknown_tzid'],
    ['', 'empty'],
    ['garbage', 'malformed_icalendar'],
    [cal(), 'no_event'],
    [cal(...ev('UID:a', 'DTSTART:20260101T100000Z'), 'BEGIN:VTODO', 'UID:t', 'END:VTODO'), 'unsupported_component'],
    [cal(...ev('UID:a', 'DTSTART:20260101T100000Z'), ...ev('UID:b', 'DTSTART:20260101T100000Z')), 'several_uids'],
    [cal(...ev('UID:a', 'DTSTART:20260101T100000Z'), ...ev('UID:a', 'DTSTART:20260102T100000Z')), 'several_masters'],
    [cal(...ev('DTSTART:20260101T100000Z')), 'missing_uid'],
    [cal(...ev('UID:a', 'SUMMARY:x')), 'missing_dtstart'],
    [cal(...ev('UID:a', 'DTSTART:20260101T100000Z', 'DTEND:20250101T100000Z')), 'end_before_start'],
  ])('%#: %s', (text, want) => {
    expect(reason(text)).toBe(want);
  });

  it('adds one UID to every VEVENT of a text without one, and leaves the rest as sent', () => {
    const text = cal(...ev('DTSTART:20260101T100000Z', 'RRULE:FREQ=DAILY;COUNT=2'), ...ev('RECURRENCE-ID:20260102T100000Z', 'DTSTART:20260102T120000Z'));
    const r = withUid(text, 'f');
    expect(r.text.match(new RegExp(`UID:${r.uid}`, 'g'))!.length).toBe(2);
    expect(r.text.replace(new RegExp(`UID:${r.uid}\\r\\n`, 'g'), '')).toBe(text);
  });
});

describe('mergeUpdate', () => {
  const stored = cal(
    ...ev('UID:m', 'DTSTART:20260101T100000Z', 'RRULE:FREQ=DAILY;COUNT=3', 'SUMMARY:Old', 'LOCATION:Here', 'X-KEEP:1', 'X-ALSO;P=v:2'),
    ...ev('UID:m', 'RECURRENCE-ID:20260102T100000Z', 'DTSTART:20260102T120000Z', 'SUMMARY:Moved'),
  );
  const p = (t: string) => parseEvent(t, { field: 'f', strict: false });

  it('keeps X- properties the new text leaves out, drops known ones, replaces in place', () => {
    const next = cal(...ev('UID:m', 'DTSTART:20260101T100000Z', 'RRULE:FREQ=DAILY;COUNT=3', 'SUMMARY:New', 'X-ALSO;P=v:3'));
    const out = mergeUpdate(stored, p(stored), p(next));
    const lines = out.split('\r\n');
    const master = lines.slice(lines.indexOf('BEGIN:VEVENT'), lines.indexOf('END:VEVENT') + 1);
    expect(master).toEqual(['BEGIN:VEVENT', 'UID:m', 'DTSTART:20260101T100000Z', 'RRULE:FREQ=DAILY;COUNT=3', 'SUMMARY:New', 'X-KEEP:1', 'X-ALSO;P=v:3', 'END:VEVENT']);
    // The override the new text dropped is gone.
    expect(out).not.toContain('RECURRENCE-ID');
  });

  it('returns the stored text itself when nothing changed', () => {
    expect(mergeUpdate(stored, p(stored), p(stored))).toBe(stored);
  });
});
