/**
 * Template variables in hand-written template files: the same fills as
 * before, and linear time on text the variable patterns used to backtrack
 * over (many unclosed `{{date:`, long runs of spaces).
 */
import moment from 'moment';
import { describe, expect, it } from 'vitest';
import { fillTemplate } from '../../src/templates/templates.js';

const at = moment('2026-03-05T09:07:00');
const opts = { dateFormat: 'YYYY-MM-DD', timeFormat: 'HH:mm' };

describe('fillTemplate', () => {
  it.each([
    ['{{title}}', 'Plan', 'Plan'],
    ['{{ title }}', 'Plan', 'Plan'],
    ['{{date}} {{time}}', 'Plan', '2026-03-05 09:07'],
    ['{{date }}', 'Plan', '2026-03-05'],
    ['{{date:dddd, MMMM Do}}', 'Plan', 'Thursday, March 5th'],
    ['{{time: HH }}', 'Plan', '09'],
    ['{{other}} {{date', 'Plan', '{{other}} {{date'],
    [`{{date:${'Y'.repeat(201)}}}`, 'Plan', `{{date:${'Y'.repeat(201)}}}`],
  ])('fills %s in a note template', (text, title, expected) => {
    expect(fillTemplate(text, title, at, opts)).toBe(expected);
  });

  it.each([
    ['{{date}}', '2026-03-05'],
    ['{{yesterday}} {{tomorrow}}', '2026-03-04 2026-03-06'],
    ['{{date+1d}}', '2026-03-06'],
    ['{{date -2 d }}', '2026-03-03'],
    ['{{date+1M:MMM}}', 'Apr'],
    ['{{date+1w : YYYY-[W]ww }}', '2026-W11'],
    ['{{title+1d}}', '{{title+1d}}'],
  ])('fills %s in a daily template', (text, expected) => {
    expect(fillTemplate(text, 'Day', at, { ...opts, daily: true })).toBe(expected);
  });

  it.each([
    ['20,000 unclosed {{date:', '{{date:'.repeat(20_000)],
    ['{{date: and 200,000 spaces', `{{date:${' '.repeat(200_000)}`],
    ['{{date and 200,000 spaces', `{{date${' '.repeat(200_000)}`],
    ['{{date+1d and 200,000 spaces', `{{date+1d${' '.repeat(200_000)}x`],
  ])('reads a template of %s in linear time', (_, text) => {
    for (const daily of [false, true]) {
      const started = Date.now();
      expect(fillTemplate(text, 'T', at, { ...opts, daily })).toBe(text);
      expect(Date.now() - started).toBeLessThan(3000);
    }
  });
});
