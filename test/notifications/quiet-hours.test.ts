/** Quiet hours: the pure range check (table), and get/set over HTTP. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inQuietHours, quietEndsAt } from '../../src/notifications/quiet-time.js';
import { startInstance, type TestInstance } from '../helpers/instance.js';

const at = (h: number, m: number) => new Date(2026, 2, 10, h, m, 30);

describe('inQuietHours', () => {
  it.each([
    // same-day range [09:00, 17:00)
    ['09:00', '17:00', 8, 59, false],
    ['09:00', '17:00', 9, 0, true],
    ['09:00', '17:00', 16, 59, true],
    ['09:00', '17:00', 17, 0, false],
    // crossing midnight [22:00, 07:00)
    ['22:00', '07:00', 21, 59, false],
    ['22:00', '07:00', 22, 0, true],
    ['22:00', '07:00', 23, 59, true],
    ['22:00', '07:00', 0, 0, true],
    ['22:00', '07:00', 6, 59, true],
    ['22:00', '07:00', 7, 0, false],
    ['22:00', '07:00', 12, 0, false],
    // equal start and end: no quiet hours
    ['08:00', '08:00', 8, 0, false],
    ['00:00', '00:00', 3, 0, false],
    // up to midnight
    ['20:30', '00:00', 23, 59, true],
    ['20:30', '00:00', 0, 0, false],
  ] as const)('%s–%s at %i:%i → %s', (start, end, h, m, expected) => {
    expect(inQuietHours(at(h, m), start, end)).toBe(expected);
  });

  it('quietEndsAt is the next local end time', () => {
    expect(quietEndsAt(at(23, 0), '07:00')).toBe(new Date(2026, 2, 11, 7, 0, 0, 0).getTime());
    expect(quietEndsAt(at(3, 0), '07:00')).toBe(new Date(2026, 2, 10, 7, 0, 0, 0).getTime());
  });
});

describe('quiet hours over HTTP', () => {
  let inst: TestInstance;
  let u: { id: string; token: string };
  beforeAll(async () => {
    inst = await startInstance();
    u = await inst.user('quinn');
  });
  afterAll(async () => inst.close());

  it('is unset at first, then reads back what was set; bad times are refused', async () => {
    const first = await inst.api('GET', '/api/v1/notifications/settings/quiet-hours', { token: u.token });
    expect(first.status).toBe(200);
    expect(first.body).toEqual({ quiet_start: null, quiet_end: null });
    const set = await inst.api('PUT', '/api/v1/notifications/settings/quiet-hours', {
      token: u.token,
      body: { quiet_start: '22:00', quiet_end: '07:30' },
    });
    expect(set.status).toBe(200);
    expect(set.body).toEqual({ quiet_start: '22:00', quiet_end: '07:30' });
    const bad = await inst.api('PUT', '/api/v1/notifications/settings/quiet-hours', {
      token: u.token,
      body: { quiet_start: '24:00', quiet_end: '07:30' },
    });
    expect(bad.status).toBe(400);
    const again = await inst.api('GET', '/api/v1/notifications/settings/quiet-hours', { token: u.token });
    expect(again.body).toEqual({ quiet_start: '22:00', quiet_end: '07:30' });
    const other = await inst.user('rory');
    expect((await inst.api('GET', '/api/v1/notifications/settings/quiet-hours', { token: other.token })).body).toEqual({
      quiet_start: null,
      quiet_end: null,
    });
  });
});
