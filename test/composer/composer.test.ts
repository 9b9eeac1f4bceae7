import { describe, expect, it } from 'vitest';
import {
  ComposerInputError,
  parseComposer,
  type ComposerMode,
  type ComposerResult,
} from '../../src/composer/composer.js';
import { AppError } from '../../src/core/errors.js';

/** Wednesday 2026-03-11, late at night. */
const LATE = '2026-03-11T23:50';
/** Wednesday 2026-03-11, morning. */
const MORNING = '2026-03-11T08:15:30';

type Expect = Partial<Omit<ComposerResult, 'spans'>> & {
  /** `kind:text` of every span, in order. */
  spans?: string[];
};

interface Row {
  mode: ComposerMode;
  now: string;
  text: string;
  expect: Expect;
  note?: string;
}

const EMPTY = { date: null, start: null, end: null, duration_minutes: null, tags: [], due: null, priority: null };

const rows: Row[] = [
  // ---------------------------------------------------------------- event
  { mode: 'event', now: MORNING, text: 'Lunch with Sam', expect: { ...EMPTY, title: 'Lunch with Sam', spans: [] }, note: 'no date' },
  { mode: 'event', now: MORNING, text: 'lunch today', expect: { title: 'lunch', date: '2026-03-11', start: null, spans: ['date:today'] } },
  {
    mode: 'event',
    now: LATE,
    text: 'Standup tomorrow at 9 #work',
    expect: { title: 'Standup', date: '2026-03-12', start: '09:00', end: null, tags: ['work'], spans: ['date:tomorrow', 'time:at 9', 'tag:#work'] },
    note: 'tomorrow at 9 with now late at night',
  },
  { mode: 'event', now: LATE, text: 'call mom at 9', expect: { title: 'call mom', date: null, start: '09:00', spans: ['time:at 9'] }, note: 'time only: no date is invented' },
  { mode: 'event', now: MORNING, text: 'dinner next fri', expect: { title: 'dinner', date: '2026-03-20', spans: ['date:next fri'] } },
  { mode: 'event', now: MORNING, text: 'friday demo', expect: { title: 'demo', date: '2026-03-13', spans: ['date:friday'] } },
  { mode: 'event', now: LATE, text: 'wednesday review', expect: { title: 'review', date: '2026-03-11', spans: ['date:wednesday'] }, note: 'today’s weekday is today, whatever the hour' },
  { mode: 'event', now: MORNING, text: 'trip in 3 days', expect: { title: 'trip', date: '2026-03-14', spans: ['date:in 3 days'] } },
  { mode: 'event', now: MORNING, text: 'party on 12 March', expect: { title: 'party', date: '2026-03-12', spans: ['date:on 12 March'] } },
  { mode: 'event', now: MORNING, text: '2026-03-12 review', expect: { title: 'review', date: '2026-03-12', spans: ['date:2026-03-12'] } },
  { mode: 'event', now: MORNING, text: '3/12 dentist', expect: { title: 'dentist', date: '2026-03-12', spans: ['date:3/12'] } },
  { mode: 'event', now: MORNING, text: '3/10 dentist', expect: { title: 'dentist', date: '2027-03-10', spans: ['date:3/10'] }, note: 'forwardDate: a past month/day is next year' },
  {
    mode: 'event',
    now: MORNING,
    text: '9-10:30 standup',
    expect: { title: 'standup', date: null, start: '09:00', end: '10:30', duration_minutes: 90, spans: ['time:9-10:30'] },
  },
  {
    mode: 'event',
    now: MORNING,
    text: 'standup 9:00-10:30',
    expect: { title: 'standup', start: '09:00', end: '10:30', duration_minutes: 90, spans: ['time:9:00-10:30'] },
  },
  { mode: 'event', now: MORNING, text: 'coffee at 3pm', expect: { title: 'coffee', start: '15:00', spans: ['time:at 3pm'] } },
  { mode: 'event', now: MORNING, text: 'call 3pm', expect: { title: 'call', start: '15:00', spans: ['time:3pm'] } },
  { mode: 'event', now: MORNING, text: '15:00 sync', expect: { title: 'sync', start: '15:00', spans: ['time:15:00'] } },
  { mode: 'event', now: MORNING, text: 'lunch at noon', expect: { title: 'lunch', start: '12:00', spans: ['time:at noon'] } },
  {
    mode: 'event',
    now: MORNING,
    text: '11-1 lunch',
    expect: { title: 'lunch', start: '11:00', end: '13:00', duration_minutes: 120, spans: ['time:11-1'] },
    note: 'range crossing noon',
  },
  {
    mode: 'event',
    now: MORNING,
    text: 'workshop 10:30-1',
    expect: { title: 'workshop', start: '10:30', end: '13:00', duration_minutes: 150, spans: ['time:10:30-1'] },
    note: 'range crossing noon, chrono reads the end as 01:00 next day',
  },
  {
    mode: 'event',
    now: MORNING,
    text: 'Monday 9-10 planning',
    expect: { title: 'planning', date: '2026-03-16', start: '09:00', end: '10:00', duration_minutes: 60, spans: ['date:Monday', 'time:9-10'] },
  },
  { mode: 'event', now: MORNING, text: 'run for 45m', expect: { title: 'run', start: null, end: null, duration_minutes: 45, spans: ['duration:for 45m'] } },
  {
    mode: 'event',
    now: MORNING,
    text: 'deep work at 9 for 1h30',
    expect: { title: 'deep work', start: '09:00', end: '10:30', duration_minutes: 90, spans: ['time:at 9', 'duration:for 1h30'] },
  },
  {
    mode: 'event',
    now: MORNING,
    text: 'meeting 2pm for 2 hours',
    expect: { title: 'meeting', start: '14:00', end: '16:00', duration_minutes: 120, spans: ['time:2pm', 'duration:for 2 hours'] },
  },
  {
    mode: 'event',
    now: MORNING,
    text: 'late show at 11pm for 90 minutes',
    expect: { title: 'late show', start: '23:00', end: '00:30', duration_minutes: 90, spans: ['time:at 11pm', 'duration:for 90 minutes'] },
    note: 'end passes midnight',
  },
  { mode: 'event', now: MORNING, text: 'retro last fri', expect: { title: 'retro', date: '2026-03-06', spans: ['date:last fri'] } },
  { mode: 'event', now: MORNING, text: 'gym yesterday', expect: { title: 'gym', date: '2026-03-10', spans: ['date:yesterday'] } },
  { mode: 'event', now: MORNING, text: 'bring 3-4 chairs', expect: { ...EMPTY, title: 'bring 3-4 chairs', spans: [] }, note: 'ambiguous numbers' },
  { mode: 'event', now: MORNING, text: 'buy 12 eggs for 2 people', expect: { ...EMPTY, title: 'buy 12 eggs for 2 people', spans: [] }, note: 'ambiguous numbers' },
  { mode: 'event', now: MORNING, text: 'read 1984 chapter 3', expect: { ...EMPTY, title: 'read 1984 chapter 3', spans: [] }, note: 'ambiguous numbers' },
  { mode: 'event', now: MORNING, text: 'sat on the bench', expect: { ...EMPTY, title: 'sat on the bench', spans: [] }, note: 'lower-case "sat" is a word' },
  { mode: 'event', now: MORNING, text: 'Sat brunch', expect: { title: 'brunch', date: '2026-03-14', spans: ['date:Sat'] } },
  { mode: 'event', now: MORNING, text: 'hike for 2 days', expect: { ...EMPTY, title: 'hike for 2 days', spans: [] }, note: 'day-long durations are not read' },
  {
    mode: 'event',
    now: MORNING,
    text: 'lunch, tomorrow at noon',
    expect: { title: 'lunch', date: '2026-03-12', start: '12:00', spans: ['date:tomorrow', 'time:at noon'] },
  },
  { mode: 'event', now: MORNING, text: 'at 9 on friday', expect: { title: '', date: '2026-03-13', start: '09:00', spans: ['time:at 9', 'date:on friday'] } },
  {
    mode: 'event',
    now: MORNING,
    text: '2026-03-12T10:00 sync',
    expect: { title: 'sync', date: '2026-03-12', start: '10:00', spans: ['date:2026-03-12T10:00'] },
    note: 'one ISO expression, one span',
  },
  { mode: 'event', now: LATE, text: 'ping in 2 hours', expect: { title: 'ping', date: '2026-03-12', start: '01:50', spans: ['time:in 2 hours'] } },
  { mode: 'event', now: '2026-12-31T20:00', text: 'brunch tomorrow', expect: { title: 'brunch', date: '2027-01-01', spans: ['date:tomorrow'] }, note: 'year rollover' },
  { mode: 'event', now: '2026-01-31T10:00', text: 'tomorrow', expect: { title: '', date: '2026-02-01', spans: ['date:tomorrow'] }, note: 'month rollover' },
  { mode: 'event', now: '2026-12-30T10:00', text: 'trip in 3 days', expect: { title: 'trip', date: '2027-01-02', spans: ['date:in 3 days'] }, note: 'year rollover' },
  { mode: 'event', now: '2026-12-15T10:00', text: 'party jan 5', expect: { title: 'party', date: '2027-01-05', spans: ['date:jan 5'] }, note: 'forwardDate across the year' },
  { mode: 'event', now: '2028-02-28T22:00', text: 'leap party tomorrow', expect: { title: 'leap party', date: '2028-02-29', spans: ['date:tomorrow'] }, note: 'leap day' },
  { mode: 'event', now: '2028-02-29T09:00', text: 'tomorrow', expect: { date: '2028-03-01', spans: ['date:tomorrow'] }, note: 'leap day rollover' },
  { mode: 'event', now: '2026-02-28T09:00', text: 'tomorrow', expect: { date: '2026-03-01', spans: ['date:tomorrow'] }, note: 'no leap day' },
  { mode: 'event', now: MORNING, text: 'x 2028-02-29', expect: { title: 'x', date: '2028-02-29', spans: ['date:2028-02-29'] }, note: 'explicit leap day' },
  { mode: 'event', now: MORNING, text: 'x 2027-02-29', expect: { ...EMPTY, title: 'x 2027-02-29', spans: [] }, note: 'impossible date stays text' },
  { mode: 'event', now: MORNING, text: '#work', expect: { ...EMPTY, title: '', tags: ['work'], spans: ['tag:#work'] }, note: 'tag only' },
  {
    mode: 'event',
    now: MORNING,
    text: 'Tee #日本語 #café/über #Work #work',
    expect: { title: 'Tee', tags: ['日本語', 'café/über', 'Work'], spans: ['tag:#日本語', 'tag:#café/über', 'tag:#Work', 'tag:#work'] },
    note: 'unicode tags, case-insensitive dedupe',
  },
  { mode: 'event', now: MORNING, text: 'issue #123 and a#b', expect: { ...EMPTY, title: 'issue #123 and a#b', spans: [] }, note: 'digit-only and mid-word # are not tags' },
  { mode: 'event', now: MORNING, text: 'launch !1 p1', expect: { title: 'launch !1 p1', priority: null, spans: [] }, note: 'no priority outside tasks' },
  { mode: 'event', now: MORNING, text: 'tomorrow #sprint-2 at 9', expect: { title: '', date: '2026-03-12', start: '09:00', tags: ['sprint-2'], spans: ['date:tomorrow', 'tag:#sprint-2', 'time:at 9'] } },

  // ---------------------------------------------------------------- task
  { mode: 'task', now: MORNING, text: 'Water the plants', expect: { ...EMPTY, title: 'Water the plants', spans: [] }, note: 'no date' },
  { mode: 'task', now: MORNING, text: 'pay rent due friday !1', expect: { title: 'pay rent', date: null, due: '2026-03-13', priority: 1, spans: ['due:due friday', 'priority:!1'] } },
  { mode: 'task', now: MORNING, text: 'report by 3/20 p2', expect: { title: 'report', due: '2026-03-20', priority: 2, spans: ['due:by 3/20', 'priority:p2'] } },
  { mode: 'task', now: MORNING, text: 'buy milk tomorrow', expect: { title: 'buy milk', date: '2026-03-12', due: null, spans: ['date:tomorrow'] } },
  {
    mode: 'task',
    now: MORNING,
    text: 'email Bob tomorrow due fri !!!',
    expect: { title: 'email Bob', date: '2026-03-12', due: '2026-03-13', priority: 1, spans: ['date:tomorrow', 'due:due fri', 'priority:!!!'] },
  },
  { mode: 'task', now: MORNING, text: 'fix bug !high #dev', expect: { title: 'fix bug', priority: 1, tags: ['dev'], spans: ['priority:!high', 'tag:#dev'] } },
  { mode: 'task', now: MORNING, text: 'tidy desk !!', expect: { title: 'tidy desk', priority: 2, spans: ['priority:!!'] } },
  { mode: 'task', now: MORNING, text: 'sort mail !med', expect: { title: 'sort mail', priority: 2, spans: ['priority:!med'] } },
  { mode: 'task', now: MORNING, text: 'file receipts P3', expect: { title: 'file receipts', priority: 3, spans: ['priority:P3'] } },
  { mode: 'task', now: MORNING, text: 'x p1 p2', expect: { title: 'x p2', priority: 1, spans: ['priority:p1'] }, note: 'first priority wins' },
  { mode: 'task', now: MORNING, text: 'p4 backlog hello!', expect: { ...EMPTY, title: 'p4 backlog hello!', spans: [] }, note: 'not priority tokens' },
  { mode: 'task', now: MORNING, text: 'due: 2026-04-01 taxes', expect: { title: 'taxes', due: '2026-04-01', spans: ['due:due: 2026-04-01'] } },
  {
    mode: 'task',
    now: MORNING,
    text: 'finish deck due friday at 5pm',
    expect: { title: 'finish deck', due: '2026-03-13', date: null, start: '17:00', spans: ['due:due friday', 'time:at 5pm'] },
  },
  { mode: 'task', now: MORNING, text: 'call at 9 !low', expect: { title: 'call', start: '09:00', priority: 3, spans: ['time:at 9', 'priority:!low'] } },
  { mode: 'task', now: MORNING, text: 'x until next monday', expect: { title: 'x', due: '2026-03-16', spans: ['due:until next monday'] } },
  { mode: 'task', now: MORNING, text: 'Overdue friday', expect: { title: 'Overdue', date: '2026-03-13', due: null, spans: ['date:friday'] }, note: '"due" inside a word is not the keyword' },
  {
    mode: 'task',
    now: LATE,
    text: 'tomorrow at 9 gym',
    expect: { title: 'gym', date: '2026-03-12', start: '09:00', spans: ['date:tomorrow', 'time:at 9'] },
    note: 'tomorrow at 9 with now late at night',
  },
  { mode: 'task', now: '2026-12-31T23:59', text: 'renew passport due tomorrow', expect: { title: 'renew passport', due: '2027-01-01', spans: ['due:due tomorrow'] }, note: 'year rollover' },
  { mode: 'task', now: '2028-02-01T10:00', text: 'leap task due feb 29', expect: { title: 'leap task', due: '2028-02-29', spans: ['due:due feb 29'] }, note: 'leap day' },
  { mode: 'task', now: MORNING, text: '#chores', expect: { ...EMPTY, title: '', tags: ['chores'], spans: ['tag:#chores'] }, note: 'tag only' },
  { mode: 'task', now: MORNING, text: 'write 2 pages for 30 min', expect: { title: 'write 2 pages', duration_minutes: 30, spans: ['duration:for 30 min'] } },
  { mode: 'task', now: MORNING, text: 'focus block 9-11 !2', expect: { title: 'focus block 9-11', start: null, priority: 2, spans: ['priority:!2'] }, note: 'bare range mid-sentence is not a time' },
  { mode: 'task', now: MORNING, text: '#ñandú/ß call at 10:30 p1', expect: { title: 'call', tags: ['ñandú/ß'], start: '10:30', priority: 1, spans: ['tag:#ñandú/ß', 'time:at 10:30', 'priority:p1'] } },
  { mode: 'task', now: MORNING, text: 'plan 3/4 of the budget', expect: { title: 'plan of the budget', date: '2027-03-04', spans: ['date:3/4'] }, note: 'ambiguous: slash numbers read as month/day' },

  // ---------------------------------------------------------------- note
  { mode: 'note', now: MORNING, text: 'Reading list', expect: { ...EMPTY, title: 'Reading list', spans: [] }, note: 'no date' },
  {
    mode: 'note',
    now: MORNING,
    text: 'Meeting notes 2026-03-12 #meeting',
    expect: { title: 'Meeting notes 2026-03-12', date: '2026-03-12', tags: ['meeting'], spans: ['date:2026-03-12', 'tag:#meeting'] },
  },
  {
    mode: 'note',
    now: LATE,
    text: 'Ideas for tomorrow at 9 #idea',
    expect: { title: 'Ideas for tomorrow at 9', date: '2026-03-12', start: '09:00', tags: ['idea'], spans: ['date:tomorrow', 'time:at 9', 'tag:#idea'] },
  },
  { mode: 'note', now: MORNING, text: 'Plan !1 friday', expect: { title: 'Plan !1 friday', date: '2026-03-13', priority: null, due: null, spans: ['date:friday'] } },
  { mode: 'note', now: MORNING, text: 'Retro due friday', expect: { title: 'Retro due friday', date: '2026-03-13', due: null, spans: ['date:friday'] }, note: 'due keyword only in tasks' },
  { mode: 'note', now: MORNING, text: '#inbox', expect: { ...EMPTY, title: '', tags: ['inbox'], spans: ['tag:#inbox'] }, note: 'tag only' },
  { mode: 'note', now: MORNING, text: '#projekt/größe Plan', expect: { title: 'Plan', tags: ['projekt/größe'], spans: ['tag:#projekt/größe'] }, note: 'unicode tag' },
  { mode: 'note', now: MORNING, text: 'Monday recap', expect: { title: 'Monday recap', date: '2026-03-09', spans: ['date:Monday'] }, note: 'note mode reads the nearest weekday, not the next' },
  { mode: 'note', now: MORNING, text: 'Notes from 3/10', expect: { title: 'Notes from 3/10', date: '2026-03-10', spans: ['date:3/10'] }, note: 'no forwardDate in notes' },
  { mode: 'note', now: MORNING, text: 'Workshop 11-1 agenda', expect: { title: 'Workshop 11-1 agenda', start: null, spans: [] } },
  { mode: 'note', now: MORNING, text: '11-1 workshop agenda', expect: { title: '11-1 workshop agenda', start: '11:00', end: '13:00', duration_minutes: 120, spans: ['time:11-1'] }, note: 'range crossing noon' },
  { mode: 'note', now: MORNING, text: 'Talk at 4pm for 45m', expect: { title: 'Talk at 4pm for 45m', start: '16:00', end: '16:45', duration_minutes: 45, spans: ['time:at 4pm', 'duration:for 45m'] } },
  { mode: 'note', now: '2026-12-31T10:00', text: 'Plans for tomorrow', expect: { title: 'Plans for tomorrow', date: '2027-01-01', spans: ['date:tomorrow'] }, note: 'year rollover' },
  { mode: 'note', now: '2028-02-29T10:00', text: 'Leap day log today', expect: { title: 'Leap day log today', date: '2028-02-29', spans: ['date:today'] }, note: 'leap day' },
  { mode: 'note', now: MORNING, text: 'Chapter 12 of 30', expect: { ...EMPTY, title: 'Chapter 12 of 30', spans: [] }, note: 'ambiguous numbers' },
  { mode: 'note', now: MORNING, text: '  spaced   out   title  ', expect: { ...EMPTY, title: 'spaced out title', spans: [] }, note: 'whitespace tidied' },
  { mode: 'note', now: MORNING, text: 'Trip notes (#travel) last fri', expect: { title: 'Trip notes last fri', tags: ['travel'], date: '2026-03-06', spans: ['tag:#travel', 'date:last fri'] } },
  { mode: 'note', now: MORNING, text: '', expect: { ...EMPTY, title: '', spans: [] }, note: 'empty text' },
];

describe('parseComposer table', () => {
  it('has at least 60 rows and 15 per mode', () => {
    expect(rows.length).toBeGreaterThanOrEqual(60);
    for (const mode of ['event', 'task', 'note'] as const) {
      expect(rows.filter((r) => r.mode === mode).length).toBeGreaterThanOrEqual(15);
    }
  });

  it.each(rows.map((r) => [`${r.mode} ${JSON.stringify(r.text)}${r.note ? ` (${r.note})` : ''}`, r] as const))('%s', (_name, row) => {
    const result = parseComposer({ mode: row.mode, now: row.now, text: row.text });
    const { spans, ...fields } = row.expect;
    expect(result).toMatchObject(fields);
    if (spans) expect(result.spans.map((s) => `${s.kind}:${s.text}`)).toEqual(spans);
    // spans point into the text, in order, without overlap
    let last = 0;
    for (const span of result.spans) {
      expect(row.text.slice(span.start, span.end)).toBe(span.text);
      expect(span.start).toBeGreaterThanOrEqual(last);
      expect(span.end).toBeGreaterThan(span.start);
      last = span.end;
    }
    // every field is always present
    expect(Object.keys(result).sort()).toEqual(
      ['date', 'due', 'duration_minutes', 'end', 'priority', 'spans', 'start', 'tags', 'title'].sort(),
    );
  });
});

describe('parseComposer input errors', () => {
  const bad: Array<[string, unknown, RegExp]> = [
    ['date only', { mode: 'event', now: '2026-03-11', text: 'x' }, /YYYY-MM-DDTHH:MM/],
    ['impossible day', { mode: 'event', now: '2026-02-29T10:00', text: 'x' }, /day 29, but 2026-02 has days 01 to 28/],
    ['hour 24', { mode: 'event', now: '2026-03-11T24:00', text: 'x' }, /hour 24/],
    ['minute 60', { mode: 'event', now: '2026-03-11T10:60', text: 'x' }, /minute 60/],
    ['month 13', { mode: 'event', now: '2026-13-11T10:00', text: 'x' }, /month 13/],
    ['not a string', { mode: 'event', now: 12, text: 'x' }, /now must be a string/],
    ['garbage', { mode: 'event', now: 'tomorrow', text: 'x' }, /got "tomorrow"/],
    ['bad mode', { mode: 'calendar', now: '2026-03-11T10:00', text: 'x' }, /mode must be one of event, task, note/],
    ['line break', { mode: 'note', now: '2026-03-11T10:00', text: 'a\nb' }, /line break/],
    ['too long', { mode: 'note', now: '2026-03-11T10:00', text: 'a'.repeat(2001) }, /2001 characters/],
  ];
  it.each(bad)('%s', (_name, input, message) => {
    let caught: unknown;
    try {
      parseComposer(input as never);
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(ComposerInputError);
    expect(caught).toBeInstanceOf(AppError);
    expect((caught as ComposerInputError).status).toBe(400);
    expect((caught as ComposerInputError).code).toBe('bad_request');
    expect((caught as Error).message).toMatch(message);
  });

  it('accepts seconds, fractions and an ignored zone in now', () => {
    for (const now of ['2026-03-11T23:50:59', '2026-03-11T23:50:00.123', '2026-03-11T23:50Z', '2026-03-11T23:50:00+05:30']) {
      expect(parseComposer({ mode: 'event', now, text: 'tomorrow' }).date).toBe('2026-03-12');
    }
  });
});

describe('parseComposer properties', () => {
  it('is deterministic and leaves the input alone', () => {
    const input = { mode: 'task' as const, now: LATE, text: 'ship it tomorrow at 9 for 1h #rel p1' };
    const a = parseComposer(input);
    const b = parseComposer({ ...input });
    expect(a).toEqual(b);
    expect(input.text).toBe('ship it tomorrow at 9 for 1h #rel p1');
  });

  it('handles surrogate pairs before spans (UTF-16 offsets)', () => {
    const text = '🎉🎉 party tomorrow #🎉x #fun';
    const r = parseComposer({ mode: 'event', now: MORNING, text });
    for (const s of r.spans) expect(text.slice(s.start, s.end)).toBe(s.text);
    expect(r.date).toBe('2026-03-12');
    expect(r.tags).toEqual(['fun']);
  });
});
