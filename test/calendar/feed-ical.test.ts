/** The pure parts of feeds and journal links, table-style: documents, busy blocks, links, settings. */
import ICAL from 'ical.js';
import ical from 'node-ical';
import { describe, expect, it } from 'vitest';
import { busyOnly, feedDocument, nextDay, type FeedItem } from '../../src/calendar/feed-ical.js';
import { checkFeedBody } from '../../src/calendar/feed.js';
import { noteDate, normalTag } from '../../src/calendar/feed-items.js';
import { eventLinkLine, linksEvent } from '../../src/calendar/journal-link.js';

const file = (text: string) => ({ root: new ICAL.Component(ICAL.parse(text)), text });
const EVENT = [
  'BEGIN:VCALENDAR', 'VERSION:2.0', 'PRODID:x',
  'BEGIN:VTIMEZONE', 'TZID:Custom/Zone', 'BEGIN:STANDARD', 'DTSTART:19700101T000000', 'TZOFFSETFROM:+0100', 'TZOFFSETTO:+0100', 'END:STANDARD', 'END:VTIMEZONE',
  'BEGIN:VEVENT', 'UID:a@x', 'DTSTAMP:20260101T000000Z', 'DTSTART;TZID=Custom/Zone:20260302T090000', 'DURATION:PT1H', 'RRULE:FREQ=DAILY;COUNT=3',
  'SUMMARY:Secret meeting', 'DESCRIPTION:About the merger', 'LOCATION:Room 9', 'ATTENDEE:mailto:boss@example.org', 'X-CUSTOM:kept in full',
  'BEGIN:VALARM', 'ACTION:DISPLAY', 'DESCRIPTION:Alarm text', 'TRIGGER:-PT5M', 'END:VALARM', 'END:VEVENT',
  'END:VCALENDAR', '',
].join('\n');
const header = { name: 'Feed', color: '#3366cc', stampMs: Date.UTC(2026, 0, 1) };

describe('feedDocument', () => {
  it('full: each event file is republished as stored (CRLF lines), its VTIMEZONE once', () => {
    const doc = feedDocument({ ...header, detail: 'full' }, [], [file(EVENT), file(EVENT.replace('UID:a@x', 'UID:b@x'))]);
    expect(doc.match(/BEGIN:VTIMEZONE/g)!.length).toBe(1);
    expect(doc).toContain('X-CUSTOM:kept in full\r\nBEGIN:VALARM');
    expect(doc).not.toMatch(/[^\r]\n/);
    const parsed = Object.values(ical.sync.parseICS(doc)).filter((c: any) => c.type === 'VEVENT') as any[];
    expect(parsed.map((e) => e.uid).sort()).toEqual(['a@x', 'b@x']);
    expect(parsed[0].summary).toBe('Secret meeting');
  });

  it('busy_only: keeps when and how often, drops title, description, location, attendees, alarms and X- properties', () => {
    const doc = feedDocument({ ...header, detail: 'busy_only' }, [], [file(EVENT)]);
    expect(doc).toContain('RRULE:FREQ=DAILY;COUNT=3');
    expect(doc).toContain('DURATION:PT1H');
    expect(doc).toContain('SUMMARY:Busy');
    expect(doc).not.toMatch(/Secret|merger|Room 9|boss|ATTENDEE|VALARM|Alarm|X-CUSTOM/);
  });

  it.each([
    ['TRANSP:TRANSPARENT', null],
    ['STATUS:CANCELLED', null],
    ['TRANSP:OPAQUE', 'Busy'],
  ])('busyOnly with %s → %s', (line, expected) => {
    const ev = file(EVENT.replace('SUMMARY:Secret meeting', `SUMMARY:Secret meeting\n${line}`)).root.getFirstSubcomponent('vevent')!;
    const out = busyOnly(ev);
    expect(out === null ? null : out.getFirstPropertyValue('summary')).toBe(expected);
  });

  const item = (over: Partial<FeedItem>): FeedItem => ({
    uid: 'i@log.quire', kind: 'log', summary: 'Run', description: null, categories: [], date: null,
    start: { date: '2026-03-29', time: '01:30', zone: 'Europe/Berlin' }, end: { date: '2026-03-29', time: '03:30', zone: 'Europe/Berlin' }, busy: true, ...over,
  });
  it.each([
    // Across the spring-forward change in Berlin: 01:30 CET is 00:30 UTC, 03:30 CEST is 01:30 UTC.
    ['zoned times become UTC instants', item({}), ['DTSTART:20260329T003000Z', 'DTEND:20260329T013000Z']],
    ['an end before the start is on the next day', item({ start: { date: '2026-03-02', time: '23:00', zone: 'UTC' }, end: { date: '2026-03-02', time: '01:00', zone: 'UTC' } }), ['DTSTART:20260302T230000Z', 'DTEND:20260303T010000Z']],
    ['a floating day stays floating', item({ start: { date: '2026-03-02', time: '09:00', zone: null }, end: null }), ['DTSTART:20260302T090000\r\n']],
    ['all-day items span their date', item({ kind: 'note', date: '2026-12-31', start: null, end: null, busy: false }), ['DTSTART;VALUE=DATE:20261231', 'DTEND;VALUE=DATE:20270101', 'TRANSP:TRANSPARENT']],
  ])('items: %s', (_name, it, expected) => {
    const doc = feedDocument({ ...header, detail: 'full' }, [it], []);
    for (const e of expected) expect(doc).toContain(e);
  });

  it('busy_only leaves out items that take no time (notes, tasks)', () => {
    const doc = feedDocument({ ...header, detail: 'busy_only' }, [item({}), item({ uid: 'n@note.quire', kind: 'note', date: '2026-03-01', start: null, end: null, busy: false })], []);
    expect(doc.match(/BEGIN:VEVENT/g)!.length).toBe(1);
    expect(doc).not.toContain('Run');
  });
});

describe('small rules', () => {
  it.each([
    ['2026-02-28', '2026-03-01'],
    ['2024-02-28', '2024-02-29'],
    ['2026-12-31', '2027-01-01'],
  ])('nextDay(%s) = %s', (d, n) => expect(nextDay(d)).toBe(n));

  it.each([
    [{ date: '2026-03-04' }, '2026-03-04'],
    [{ date: new Date('2026-03-04T00:00:00Z') }, '2026-03-04'],
    [{ date: '2026-03-04T10:00' }, '2026-03-04'],
    [{ date: '2026-02-30' }, null],
    [{ date: 5 }, null],
    [null, null],
  ])('noteDate(%j) = %s', (fm, d) => expect(noteDate(fm as never)).toBe(d));

  it.each([
    ['#Work', 'work'],
    ['work/Alpha/', 'work/alpha'],
  ])('normalTag(%s) = %s', (t, n) => expect(normalTag(t)).toBe(n));

  it('eventLinkLine / linksEvent: the Markdown form and how status finds it (by file name, any folder)', () => {
    const line = eventLinkLine('Plan [v2]', 'Calendars/Personal/a@x.ics');
    expect(line).toBe('Event: [Plan v2](<Calendars/Personal/a@x.ics>)');
    expect(linksEvent(`    - ${line}`, 'a@x')).toBe(true);
    expect(linksEvent('- Event: [Plan](<Calendars/Work/a@x.ics>)', 'a@x')).toBe(true);
    expect(linksEvent(`- ${line}`, 'b@x')).toBe(false);
    expect(linksEvent('- [Plan](<Calendars/Personal/a@x.ics>)', 'a@x')).toBe(false);
  });

  it.each([
    [{ name: ' Work ', detail: 'full', source: 'area', source_id: '#Work/Alpha' }, { name: 'Work', source_id: 'work/alpha', include_notes: false, color: null }],
    [{ name: 'J', detail: 'busy_only', source: 'journal', include_tasks: true, color: '#abc' }, { source_id: null, include_tasks: true, color: '#abc' }],
  ])('checkFeedBody(%j)', (body, expected) => expect(checkFeedBody(body as never)).toMatchObject(expected));
});
