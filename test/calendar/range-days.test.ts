/**
 * calendar_range answers windows of whole days from per-day parts kept in the
 * window cache; the answer must be byte for byte the one built in one piece
 * (views.rangeWhole), whatever the zone, the DST changes inside the week,
 * events running in from before the window, and parts reused across weeks.
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
  put('Calendars/A/long.ics', ics(['UID:long', 'DTSTART;TZID=Europe/Berlin:20260301T150000', 'DTEND;TZID=Europe/Berlin:20260318T090000', 'SUMMARY:Conference']));
  put('Calendars/A/trip.ics', ics(['UID:trip', 'DTSTART;VALUE=DATE:20260306', 'DTEND;VALUE=DATE:20260312', 'SUMMARY:Trip']));
  put('Calendars/A/midnight.ics', ics(['UID:midnight', 'DTSTART:20260310T000000Z', 'DTEND:20260310T000000Z', 'SUMMARY:Zero']));
  put('Calendars/A/late.ics', ics(['UID:late', 'DTSTART;TZID=America/New_York:20260307T230000', 'DTEND;TZID=America/New_York:20260308T040000', 'RRULE:FREQ=WEEKLY;COUNT=6', 'SUMMARY:Night shift']));
  put('Calendars/B/float.ics', ics(['UID:float', 'DTSTART:20260225T233000', 'DURATION:PT2H', 'RRULE:FREQ=DAILY;COUNT=50', 'SUMMARY:Floating']));
  put(
    'Calendars/B/weekly.ics',
    [
      'BEGIN:VCALENDAR', 'VERSION:2.0', 'PRODID:t',
      'BEGIN:VEVENT', 'UID:weekly', 'DTSTART;TZID=Australia/Sydney:20260302T080000', 'DTEND;TZID=Australia/Sydney:20260302T090000', 'RRULE:FREQ=WEEKLY', 'EXDATE;TZID=Australia/Sydney:20260316T080000', 'SUMMARY:Standup', 'END:VEVENT',
      'BEGIN:VEVENT', 'UID:weekly', 'RECURRENCE-ID;TZID=Australia/Sydney:20260323T080000', 'DTSTART;TZID=Australia/Sydney:20260325T230000', 'DTEND;TZID=Australia/Sydney:20260326T010000', 'SUMMARY:Moved', 'END:VEVENT',
      'END:VCALENDAR', '',
    ].join('\r\n'),
  );
  for (let d = 1; d <= 40; d++) {
    const at = new Date(Date.UTC(2026, 2, 1) + d * 86_400_000 * 0.7).toISOString().replace(/[-:]/g, '').slice(0, 13);
    put(`Calendars/${d % 2 ? 'A' : 'B'}/e${d}.ics`, ics([`UID:e${d}`, `DTSTART:${at}0000Z`, `DTEND:${at}3000Z`, `SUMMARY:E${d}`]));
  }
  put('Calendars/Hidden/calendar.json', JSON.stringify({ name: 'Hidden', visible: false }));
  put('Calendars/Hidden/h.ics', ics(['UID:h', 'DTSTART:20260310T100000Z', 'DTEND:20260310T110000Z', 'SUMMARY:Hidden']));
  put('Journal/2026-03-10.md', '## Log\n- 07:00 Tea\n- 23:00–01:00 Late\n- 00:00 Midnight\n');
  put('Journal/2026-03-20.md', '## Log\n- 08:00 Fine\n- 23:30 (Asia/Tokyo) Call in Tokyo\n');
  put('Tasks.md', '- [ ] One 📅 2026-03-08\n- [ ] Two 📅 2026-03-29\n- [ ] Three 📅 2026-03-10\n');
  vault = new Vault({ root: home, cacheFile: null, watch: false });
  scope = { vault, index: await vault.whenReady(), quotaBytes: 0, prefix: null };
});
afterAll(() => vault.close());

const day = (n: number) => new Date(Date.UTC(2026, 1, 24) + n * 86_400_000).toISOString().slice(0, 10);

it.each(['Europe/Berlin', 'America/New_York', 'Australia/Sydney', 'Pacific/Kiritimati', 'UTC'])('weeks in %s: assembled from day parts, equal to the whole build (cold and warm parts)', async (tz) => {
  let fromParts = 0;
  for (const pass of [0, 1]) {
    for (let s = 0; s < 45; s += pass ? 3 : 1) {
      for (const len of [1, 7]) {
        const q = { from: day(s), to: day(s + len - 1), tz };
        const a = await views.range(scope, q);
        const whole = await views.rangeWhole(scope, views.parseWindow(q, views.WINDOW_MAX_DAYS.range));
        expect(String(a.json()), `${q.from}..${q.to}`).toBe(whole.json());
        if (a.whole === false) fromParts++;
      }
    }
  }
  // The windows holding 2026-03-20 (an entry in Tokyo time) are built whole in most zones; the others come from parts.
  expect(fromParts).toBeGreaterThan(60);
});

it('a window not on day boundaries is built whole, with the same items', async () => {
  const q = { from: '2026-03-09T12:00', to: '2026-03-12', tz: 'Europe/Berlin' };
  const a = await views.range(scope, q);
  expect(a.whole).toBeUndefined();
  expect((a.data() as any).items.map((i: any) => i.id)).toContain('long');
});
