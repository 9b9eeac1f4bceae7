/**
 * A log entry typed with a duration and no time (`Walk for 30m`) starts now
 * and ends after the duration: the Daily note gets `- 11:00–11:30 Walk`, the
 * record `end: "11:30"`. Through a real server, with the file read back.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { endAfter, parseComposer } from '../../src/composer/composer.js';
import { startInstance, type TestInstance } from '../helpers/instance.js';

let inst: TestInstance;
let user: { id: string; token: string };
let home: string;

beforeAll(async () => {
  inst = await startInstance();
  user = await inst.user('dora', 'member');
  home = path.join(inst.dataDir, 'homes', 'dora');
});
afterAll(() => inst.close());

describe('endAfter', () => {
  it.each([
    ['11:00', 30, '11:30'],
    ['11:00', 75, '12:15'],
    ['23:30', 120, '01:30'],
    ['00:00', 1440, '00:00'],
  ])('%s + %i min = %s', (start, minutes, end) => {
    expect(endAfter(start, minutes)).toBe(end);
  });
});

describe('log entries with a duration', () => {
  it.each([
    ['Walk for 30m', '2026-05-04T11:00', 'Walk', 30, '11:00', '11:30'],
    ['Read for 1h15', '2026-05-05T11:00', 'Read', 75, '11:00', '12:15'],
    ['Gym for 1h 15m', '2026-05-06T07:10', 'Gym', 75, '07:10', '08:25'],
    ['Nap for 90 minutes', '2026-05-07T14:00', 'Nap', 90, '14:00', '15:30'],
    ['Drive for 2 hours', '2026-05-08T22:30', 'Drive', 120, '22:30', '00:30'],
    ['Call at 9 for 45m', '2026-05-09T08:00', 'Call', 45, '09:00', '09:45'],
  ])('%s at %s', async (text, now, title, minutes, start, end) => {
    expect(parseComposer({ mode: 'event', now, text })).toMatchObject({ title, duration_minutes: minutes });
    const r = await inst.api('POST', '/api/v1/notes/journal/log', { token: user.token, body: { text, now, timezone: 'Europe/Paris' } });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ start, end, text: title });
    const date = now.slice(0, 10);
    const file = fs.readFileSync(path.join(home, 'Journal', `${date}.md`), 'utf8');
    expect(file).toContain(`- ${start}–${end} ${title} ^${r.body.block_id}\n`);
  });

  it('leaves an entry without a duration open-ended', async () => {
    const r = await inst.api('POST', '/api/v1/notes/journal/log', { token: user.token, body: { text: 'Coffee', now: '2026-05-10T09:00', timezone: 'Europe/Paris' } });
    expect(r.body).toMatchObject({ start: '09:00', end: null });
  });
});
