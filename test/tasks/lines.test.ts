/** Pure task-line edits and the log-entry parser used by attach/detach. */
import { describe, expect, it } from 'vitest';
import * as L from '../../src/tasks/lines.js';
import { logEntries, parseEntryLink } from '../../src/tasks/attach.js';

describe('task lines', () => {
  const status: Array<[string, string, string]> = [
    ['- [ ] Buy bulbs ^b1', 'x', '- [x] Buy bulbs ✅ 2026-11-22 ^b1'],
    ['- [ ] Buy bulbs 📅 2026-11-25 ^b1', 'x', '- [x] Buy bulbs 📅 2026-11-25 ✅ 2026-11-22 ^b1'],
    ['- [x] Buy bulbs 📅 2026-11-25 ✅ 2026-11-20 ^b1', ' ', '- [ ] Buy bulbs 📅 2026-11-25 ^b1'],
    ['- [x] Buy bulbs ✅ 2026-11-20', 'X', '- [X] Buy bulbs ✅ 2026-11-20'],
    ['- [ ] Buy bulbs', '/', '- [/] Buy bulbs'],
    ['- [/] Buy bulbs', '-', '- [-] Buy bulbs'],
    ['  * [ ] nested   ^n-1', 'x', '  * [x] nested ✅ 2026-11-22   ^n-1'],
    ['> - [ ] quoted', 'x', '> - [x] quoted ✅ 2026-11-22'],
    ['1. [ ] numbered ^q', 'x', '1. [x] numbered ✅ 2026-11-22 ^q'],
    ['- [x] done already', 'x', '- [x] done already'],
  ];
  it.each(status)('status of %j → %j', (line, s, expected) => {
    expect(L.withStatus(line, s, '2026-11-22')).toBe(expected);
  });

  const ids: Array<[string, string]> = [
    ['- [ ] a', '- [ ] a ^t1'],
    ['- [ ] a   ', '- [ ] a ^t1'],
    ['- [ ] a ^keep', '- [ ] a ^keep'],
    ['\t- [x] tabbed 📅 2026-01-02', '\t- [x] tabbed 📅 2026-01-02 ^t1'],
  ];
  it.each(ids)('block id on %j', (line, expected) => {
    expect(L.withBlockId(line, 't1')).toBe(expected);
  });

  const texts: Array<[string, string, string]> = [
    ['- [ ] old text ^a', 'new text', '- [ ] new text ^a'],
    ['- [ ] old text 📅 2026-11-25 ⏫ ^a', 'new', '- [ ] new 📅 2026-11-25 ⏫ ^a'],
    ['- [x] old ✅ 2026-11-20', 'new', '- [x] new ✅ 2026-11-20'],
    ['- [ ] old [due:: 2026-11-25]', 'new', '- [ ] new [due:: 2026-11-25]'],
  ];
  it.each(texts)('text of %j', (line, text, expected) => {
    expect(L.withText(line, text)).toBe(expected);
  });

  const dues: Array<[string, string | null, string]> = [
    ['- [ ] a ^x', '2026-12-01', '- [ ] a 📅 2026-12-01 ^x'],
    ['- [ ] a 📅 2026-11-25 ^x', '2026-12-01', '- [ ] a 📅 2026-12-01 ^x'],
    ['- [ ] a 📅 2026-11-25 ^x', null, '- [ ] a ^x'],
    ['- [x] a ✅ 2026-11-20 ^x', '2026-12-01', '- [x] a 📅 2026-12-01 ✅ 2026-11-20 ^x'],
    ['- [ ] a [due:: 2026-11-25]', '2026-12-01', '- [ ] a [due:: 2026-12-01]'],
    ['- [ ] a [due:: 2026-11-25] more', null, '- [ ] a more'],
    ['- [ ] a due:2026-11-25', '2026-12-01', '- [ ] a due:2026-12-01'],
    ['- [ ] a due:2026-11-25', null, '- [ ] a'],
    ['- [ ] a', null, '- [ ] a'],
  ];
  it.each(dues)('due of %j → %j', (line, due, expected) => {
    expect(L.withDue(line, due)).toBe(expected);
  });

  it('reads descriptions and done dates, refuses non-task lines', () => {
    expect(L.descriptionOf('- [ ] Buy 📅 2026-11-25 ^x')).toBe('Buy');
    expect(L.doneDateOf('Buy ✅ 2026-11-21')).toBe('2026-11-21');
    expect(L.doneDateOf('Buy')).toBeNull();
    expect(L.parseTaskLine('- not a task')).toBeNull();
    expect(L.parseTaskLine('-[ ] no space')).toBeNull();
    expect(() => L.withStatus('plain', 'x', '2026-01-01')).toThrow();
  });

  it('splices lines keeping every other byte and the line endings', () => {
    expect(L.replaceLine('a\r\nb\r\nc', 2, 'B')).toBe('a\r\nB\r\nc');
    expect(L.insertLineAfter('a\nb\n', 1, 'X')).toBe('a\nX\nb\n');
    expect(L.insertLineAfter('a\nb\n', 2, 'X')).toBe('a\nb\nX\n');
    expect(L.insertLineAfter('a\nb', 2, 'X')).toBe('a\nb\nX');
    expect(L.insertLineAfter('a\r\nb\r\n', 0, 'X')).toBe('X\r\na\r\nb\r\n');
    expect(L.appendLine('a\nb', 'X')).toBe('a\nb\nX\n');
    expect(L.appendLine('a\r\nb\r\n', 'X')).toBe('a\r\nb\r\nX\r\n');
    expect(L.appendLine('', 'X')).toBe('X\n');
    expect(L.removeLine('a\nb\nc\n', 2)).toBe('a\nc\n');
    expect(L.removeLine('a\nb', 2)).toBe('a');
  });
});

describe('log entries of a Daily note', () => {
  const day = [
    '---',
    'date: 2026-11-21',
    '---',
    '# 2026-11-21',
    '',
    '- 07:00 not in the log ^before',
    '',
    '## Log',
    '',
    '- 09:00–09:30 Planning #work ^log-0900',
    '    - ![[Attachments/board.png]]',
    '    - [[Notes/Standup]]',
    '- 10:00 No anchor here',
    '- [ ] a task in the log ^task-in-log',
    '- **12:15** Lunch ^log-1215',
    '',
    '  continuation of lunch',
    '```',
    '- 13:00 inside code ^code',
    '```',
    '- 18:00 Evening ^log-1800',
    '',
    '## Notes',
    '',
    '- 20:00 after the log ^after',
  ].join('\n');

  it('finds anchored entries of the Log section with their blocks', () => {
    const es = logEntries(day);
    expect(es.map((e) => e.blockId)).toEqual(['log-0900', 'log-1215', 'log-1800']);
    expect(es[0]).toMatchObject({ line: 10, end: 12, minutes: 540, childIndent: '    ' });
    expect(es[1]).toMatchObject({ line: 15, end: 17, minutes: 735, childIndent: '  ' });
    expect(es[2]).toMatchObject({ line: 21, end: 21, minutes: 1080, childIndent: null });
  });

  it('reads entry links', () => {
    expect(parseEntryLink('[[Journal/2026-11-21#^log-0900]]')).toEqual({ path: 'Journal/2026-11-21.md', date: '2026-11-21', blockId: 'log-0900' });
    expect(parseEntryLink('[[Journal/2026-11-21.md#^a|x]]')).toMatchObject({ blockId: 'a' });
    expect(parseEntryLink('[[Notes/x#^a]]')).toBeNull();
    expect(parseEntryLink(3)).toBeNull();
  });
});
