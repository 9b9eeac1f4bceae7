/**
 * The views build their HTTP bodies from cached JSON parts; those bodies must
 * be exactly the JSON of the records other surfaces (command line, MCP) get.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { Vault } from '../../src/vault/vault.js';
import * as views from '../../src/calendar/views.js';
import { calendarWith } from '../helpers/ics.js';
import { tempDir } from '../helpers/instance.js';

let vault: Vault;
let scope: any;
const ics = (lines: string[]) => calendarWith(lines, 't');

beforeAll(async () => {
  const home = tempDir();
  const put = (rel: string, text: string) => {
    fs.mkdirSync(path.dirname(path.join(home, rel)), { recursive: true });
    fs.writeFileSync(path.join(home, rel), text);
  };
  put('Calendars/A/one.ics', ics(['UID:one "quoted" \\\\ ü', 'DTSTART;TZID=Europe/Berlin:20260310T090000', 'DTEND;TZID=Europe/Berlin:20260310T100000', 'SUMMARY:Say "hi" \\, then \\n go', 'CATEGORIES:a,b', 'LOCATION:Café']));
  put('Calendars/A/two.ics', ics(['UID:two', 'DTSTART;VALUE=DATE:20260311', 'SUMMARY:All day']));
  put('Calendars/B/three.ics', ics(['UID:three', 'DTSTART:20260312T080000', 'DURATION:PT1H', 'RRULE:FREQ=DAILY;COUNT=3', 'SUMMARY:Floating']));
  put('Journal/2026-03-12.md', '## Log\n- 07:00 Tea "green" ^tea1\n');
  put('Tasks.md', '- [ ] Call "Bob" 📅 2026-03-13\n');
  vault = new Vault({ root: home, cacheFile: null, watch: false });
  scope = { vault, index: await vault.whenReady(), quotaBytes: 0, prefix: null };
});
afterAll(() => vault.close());

it.each([
  ['events', () => views.listEvents(scope, { from: '2026-03-01', to: '2026-03-31', tz: 'America/New_York' })],
  ['events, no window', () => views.listEvents(scope, {})],
  ['items', () => views.listItems(scope, { from: '2026-03-01', to: '2026-03-31', tz: 'Asia/Tokyo' })],
  ['items, a page', () => views.listItems(scope, { from: '2026-03-01', to: '2026-03-31', tz: 'Asia/Tokyo', limit: 2 })],
  ['range', () => views.range(scope, { from: '2026-03-09', to: '2026-03-15', tz: 'Europe/Berlin' })],
  ['year', () => views.year(scope, { year: 2026, tz: 'UTC' })],
])('%s: json() is JSON.stringify(data())', async (_name, run) => {
  const a = await run();
  const data = a.data() as any;
  // calendar_range's JSON comes as bytes assembled from per-day parts (range-days.test.ts compares it with the whole build).
  expect(String(a.json())).toBe(JSON.stringify(data));
  // Each answer holds the awkward texts (quotes, backslashes, non-ASCII), so escaping is exercised.
  if (_name !== 'year' && _name !== 'items, a page') expect(String(a.json())).toContain('Say \\"hi\\"');
  if (_name === 'items' || _name === 'range') expect(data.items.map((i: any) => i.kind).sort()).toEqual(['event', 'event', 'event', 'event', 'event', 'log', 'task']);
});
