/** The log's Markdown form, line by line: lines as people type them in a desktop editor. */
import { describe, expect, it } from 'vitest';
import { applySplices, derivedBlockId, lineHash, parseDay, parseLink, tagsOf } from '../../src/journal/log-format.js';

type Expect =
  | { start: string | null; end?: string | null; tz?: string | null; title?: string | null; text: string; tags?: string[]; anchor?: string | null }
  | 'unparsed'
  | 'skipped';

const ROWS: Array<[string, Expect]> = [
  ['- 09:00 Coffee', { start: '09:00', text: 'Coffee' }],
  ['- 9:00 Coffee', { start: '09:00', text: 'Coffee' }],
  ['- 9:05 late start', { start: '09:05', text: 'late start' }],
  ['- 23:59 bed', { start: '23:59', text: 'bed' }],
  ['- 00:00 midnight snack', { start: '00:00', text: 'midnight snack' }],
  ['- 9am coffee', { start: '09:00', text: 'coffee' }],
  ['- 9 am coffee', { start: '09:00', text: 'coffee' }],
  ['- 12am night', { start: '00:00', text: 'night' }],
  ['- 12pm lunch', { start: '12:00', text: 'lunch' }],
  ['- 9:30pm movie', { start: '21:30', text: 'movie' }],
  ['- 9:30 p.m. movie', { start: '21:30', text: 'movie' }],
  ['- 09:00:30 precise', { start: '09:00', text: 'precise' }],
  ['- 09:00-10:30 Standup', { start: '09:00', end: '10:30', text: 'Standup' }],
  ['- 09:00–10:30 Standup', { start: '09:00', end: '10:30', text: 'Standup' }],
  ['- 09:00 – 10:30 Standup', { start: '09:00', end: '10:30', text: 'Standup' }],
  ['- 09:00 — 10:30 Standup', { start: '09:00', end: '10:30', text: 'Standup' }],
  ['- 9:00 to 10:00 Standup', { start: '09:00', end: '10:00', text: 'Standup' }],
  ['- 10am-2pm workshop', { start: '10:00', end: '14:00', text: 'workshop' }],
  ['- **09:00** bold time', { start: '09:00', text: 'bold time' }],
  ['- 09:00 **Standup** roadmap talk', { start: '09:00', title: 'Standup', text: 'roadmap talk' }],
  ['- 09:00–10:30 **Standup** Text #work ^abc123', { start: '09:00', end: '10:30', title: 'Standup', text: 'Text #work', tags: ['work'], anchor: 'abc123' }],
  ['- 09:00 (Europe/Paris) croissant', { start: '09:00', tz: 'Europe/Paris', text: 'croissant' }],
  ['- 09:00 (Not/AZone) text', { start: '09:00', tz: null, text: '(Not/AZone) text' }],
  ['- 14:00 (America/New_York) **Call** with Sam ^call-1', { start: '14:00', tz: 'America/New_York', title: 'Call', text: 'with Sam', anchor: 'call-1' }],
  ['* 10:00 star marker', { start: '10:00', text: 'star marker' }],
  ['+ 10:00 plus marker', { start: '10:00', text: 'plus marker' }],
  ['1. 10:00 numbered', { start: '10:00', text: 'numbered' }],
  ['- 10:00 tags #a #b/c #123 x#y', { start: '10:00', text: 'tags #a #b/c #123 x#y', tags: ['a', 'b/c'] }],
  ['- 10:00 #Work and #work', { start: '10:00', text: '#Work and #work', tags: ['Work'] }],
  ['- 10:00 no id ^', { start: '10:00', text: 'no id ^' }],
  ['- 10:00 trailing spaces ^id-1   ', { start: '10:00', text: 'trailing spaces', anchor: 'id-1' }],
  ['- had lunch', { start: null, text: 'had lunch' }],
  ['- **Title only**', { start: null, title: 'Title only', text: '' }],
  ['- 2 coffees', { start: null, text: '2 coffees' }],
  ['- 3 amazing things', { start: null, text: '3 amazing things' }],
  ['- 10:00am-ish maybe', 'unparsed'],
  ['- 25:00 broken', 'unparsed'],
  ['- 9:75 broken', 'unparsed'],
  ['- 13pm nonsense', 'unparsed'],
  ['- 0:30 after midnight', { start: '00:30', text: 'after midnight' }],
  ['Went for a run', 'unparsed'],
  ['> a quote', 'unparsed'],
  ['- [ ] a task in the log', 'skipped'],
  ['- [x] done task', 'skipped'],
  ['### Afternoon', 'skipped'],
];

describe('one log line', () => {
  it.each(ROWS)('%s', (line, want) => {
    const day = parseDay(`## Log\n${line}\n`, '2026-03-12');
    if (want === 'unparsed') {
      expect(day.entries).toHaveLength(0);
      expect(day.unparsed.map((u) => u.text)).toEqual([line]);
      return;
    }
    if (want === 'skipped') {
      expect(day.entries).toHaveLength(0);
      expect(day.unparsed).toHaveLength(0);
      return;
    }
    expect(day.unparsed).toEqual([]);
    expect(day.entries).toHaveLength(1);
    const e = day.entries[0]!;
    expect(e.parts.start).toBe(want.start);
    expect(e.parts.end).toBe(want.end ?? null);
    expect(e.parts.tz).toBe(want.tz ?? null);
    expect(e.parts.title).toBe(want.title ?? null);
    expect(e.parts.text).toBe(want.text);
    expect(e.tags).toEqual(want.tags ?? tagsOf(want.text));
    expect(e.parts.anchor).toBe(want.anchor ?? null);
    expect(e.anchored).toBe((want.anchor ?? null) !== null);
    if (!e.anchored) expect(e.blockId).toMatch(/^d20260312-[0-9a-f]{8}$/);
  });
});

describe('a Daily note', () => {
  const note = [
    '---',
    'timezone: Europe/Berlin',
    '---',
    '# Thursday',
    '',
    'Intro paragraph, not part of the log.',
    '- 08:00 not in the log',
    '',
    '## Log',
    '- 09:00 Standup ^s1',
    '    - ![[Attachments/board.png]]',
    '    - [[Attachments/minutes.pdf]]',
    '    - ![](Attachments/My%20photo.jpg)',
    '    - [slides](<Attachments/deck v2.pdf>)',
    '    - Note: [[Notes/Standup 2026-03-12]]',
    '    - a plain child line',
    '',
    '    indented paragraph still in the block',
    '- 10:00 Coffee',
    '- 10:00 Coffee',
    '```',
    '- 11:00 inside a fence',
    '```',
    '',
    '## Tomorrow',
    '- 09:00 not in the log either',
    '',
  ].join('\n');
  const day = parseDay(note, '2026-03-12');

  it('reads the section, the zone and the entries', () => {
    expect(day.dayZone).toBe('Europe/Berlin');
    expect(day.entries.map((e) => e.parts.text)).toEqual(['Standup', 'Coffee', 'Coffee']);
    expect(day.unparsed).toEqual([]);
  });

  it('reads attachment child lines, the note line, and the block extent', () => {
    const e = day.entries[0]!;
    expect(e.attachments.map((a) => [a.target, a.embed])).toEqual([
      ['Attachments/board.png', true],
      ['Attachments/minutes.pdf', false],
      ['Attachments/My photo.jpg', true],
      ['Attachments/deck v2.pdf', false],
    ]);
    expect(e.note?.target).toBe('Notes/Standup 2026-03-12');
    expect(day.lines[e.end - 1]!.text).toBe('    indented paragraph still in the block');
    expect(e.childIndent).toBe('    ');
  });

  it('gives identical hand-typed lines different, stable derived ids', () => {
    const [, a, b] = day.entries;
    expect(a!.blockId).not.toBe(b!.blockId);
    expect(a!.blockId).toBe(derivedBlockId('2026-03-12', '10:00 Coffee', 0));
    expect(parseDay(note, '2026-03-12').entries[2]!.blockId).toBe(b!.blockId);
    // An edit elsewhere in the file does not change them.
    expect(parseDay(note.replace('Intro paragraph', 'Changed intro'), '2026-03-12').entries[1]!.blockId).toBe(a!.blockId);
  });

  it('hashes unparsed lines stably, distinguishing repeats', () => {
    const d = parseDay('## Log\nsame\nsame\n- 09:00 ok\n', '2026-03-12');
    expect(d.unparsed.map((u) => u.hash)).toEqual([lineHash('same', 0), lineHash('same', 1)]);
    expect(parseDay('intro\n\n## Log\nsame\nsame\n', '2026-03-12').unparsed.map((u) => u.hash)).toEqual(d.unparsed.map((u) => u.hash));
  });

  it('keeps CRLF and every untouched byte when splicing', () => {
    const crlf = '## Log\r\n- 09:00 a\r\n- 11:00 c';
    const d = parseDay(crlf, '2026-03-12');
    expect(applySplices(d, [{ at: 2, remove: 0, insert: ['- 10:00 b'] }])).toBe('## Log\r\n- 09:00 a\r\n- 10:00 b\r\n- 11:00 c');
    expect(applySplices(d, [{ at: 3, remove: 0, insert: ['- 12:00 d'] }])).toBe('## Log\r\n- 09:00 a\r\n- 11:00 c\r\n- 12:00 d\r\n');
    expect(applySplices(d, [{ at: 2, remove: 1, insert: ['- 11:00 C'] }])).toBe('## Log\r\n- 09:00 a\r\n- 11:00 C');
  });

  it('reads links as attachment lines only when the line is one link', () => {
    expect(parseLink('![[a.png]]')).toMatchObject({ target: 'a.png', embed: true });
    expect(parseLink('[[a.pdf|the pdf]]')).toMatchObject({ target: 'a.pdf', embed: false });
    expect(parseLink('see [[a.pdf]]')).toBeNull();
    expect(parseLink('[site](https://example.com)')).toBeNull();
  });
});
