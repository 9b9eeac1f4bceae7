/** The pure parts of subscriptions and CalDAV sync, table by table: feed splitting, UIDs, folder names, conflict copies. */
import { describe, expect, it } from 'vitest';
import { calendarIdFromName, splitFeed, uidOf } from '../../src/calendar/sync-mirror.js';
import { conflictCopy } from '../../src/calendar/sync.js';

const cal = (...lines: string[]) => ['BEGIN:VCALENDAR', 'VERSION:2.0', 'PRODID:-//t//EN', ...lines, 'END:VCALENDAR', ''].join('\r\n');
const tz = ['BEGIN:VTIMEZONE', 'TZID:Europe/Paris', 'BEGIN:STANDARD', 'DTSTART:19701025T030000', 'TZOFFSETFROM:+0200', 'TZOFFSETTO:+0100', 'END:STANDARD', 'END:VTIMEZONE'];
const ev = (uid: string | null, extra: string[] = []) => ['BEGIN:VEVENT', ...(uid ? [`UID:${uid}`] : []), 'DTSTAMP:20260101T000000Z', 'DTSTART:20260310T090000Z', 'SUMMARY:S', ...extra, 'END:VEVENT'];

describe('splitFeed', () => {
  it.each([
    ['two events', cal(...ev('a'), ...ev('b')), ['a', 'b']],
    ['a master and its override share a file', cal(...ev('r', ['RRULE:FREQ=DAILY']), ...ev('r', ['RECURRENCE-ID:20260311T090000Z'])), ['r']],
    ['no events', cal(), []],
  ])('%s', (_label, text, uids) => {
    expect([...splitFeed(text, 'url').keys()]).toEqual(uids);
  });

  it('keeps the VTIMEZONEs an event names, and only those', () => {
    const out = splitFeed(cal(...tz, ...ev('z', ['DTEND;TZID=Europe/Paris:20260310T110000']), ...ev('u')), 'url');
    expect(out.get('z')).toContain('TZID:Europe/Paris');
    expect(out.get('u')).not.toContain('VTIMEZONE');
  });

  it('gives an event without UID a stable one', () => {
    const a = [...splitFeed(cal(...ev(null)), 'url').keys()];
    expect(a).toEqual([...splitFeed(cal(...ev(null)), 'url').keys()]);
    expect(a[0]).toMatch(/@subscription\.quire$/);
  });

  it.each([
    ['plain text', 'hello'],
    ['a VCARD', 'BEGIN:VCARD\r\nVERSION:4.0\r\nEND:VCARD\r\n'],
    ['an unterminated calendar', 'BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\n'],
  ])('refuses %s with 400 invalid_calendar', (_label, text) => {
    expect(() => splitFeed(text, 'url')).toThrow(expect.objectContaining({ status: 400, details: expect.objectContaining({ reason: 'invalid_calendar' }) }));
  });
});

describe('uidOf', () => {
  it.each([
    ['UID:abc\r\n', 'abc'],
    ['UID;X-P=1:urn:uuid:1234\r\n', 'urn:uuid:1234'],
    ['UID:long\r\n  folded\r\n', 'long folded'],
    ['SUMMARY:no uid\r\n', null],
  ])('%j → %j', (text, uid) => {
    expect(uidOf(text)).toBe(uid);
  });
});

describe('calendarIdFromName', () => {
  it.each([
    ['Work', 'Work'],
    ['a/b\\c', 'a b c'],
    ['..hidden', 'hidden'],
    ['   ', 'Calendar'],
    ['x'.repeat(100), 'x'.repeat(80)],
  ])('%j → %j', (name, id) => expect(calendarIdFromName(name)).toBe(id));
});

describe('conflictCopy', () => {
  const at = new Date('2026-03-01T10:20:30.456Z');
  it.each([
    ['marks the title and gives a new UID', cal(...ev('u1')), 'u1-conflict-20260301T102030Z', 'SUMMARY:Conflict copy: S'],
    ['adds a title when there is none', cal('BEGIN:VEVENT', 'UID:u2', 'DTSTART:20260310T090000Z', 'END:VEVENT'), 'u2-conflict-20260301T102030Z', 'SUMMARY:Conflict copy'],
  ])('%s', (_label, text, uid, summary) => {
    const c = conflictCopy(text, uidOf(text)!, at);
    expect(c.uid).toBe(uid);
    expect(uidOf(c.text)).toBe(uid);
    expect(c.text).toContain(summary);
  });
});
