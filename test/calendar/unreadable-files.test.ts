/**
 * calendar_calendars counts only the events the server can read, and names the files it skips
 * and why (at most UNREADABLE_SHOWN, with the total), following edits made outside the server.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UNREADABLE_SHOWN } from '../../src/calendar/events.js';
import { startInstance, type TestInstance } from '../helpers/instance.js';
import { eventually } from '../helpers/wait.js';

let inst: TestInstance;
let token: string;
let userId: string;

const ics = (uid: string, body: string[]) => ['BEGIN:VCALENDAR', 'VERSION:2.0', 'PRODID:-//test//EN', ...body.map((l) => l.replace('$UID', uid)), 'END:VCALENDAR', ''].join('\r\n');
const event = (uid: string) => ics(uid, ['BEGIN:VEVENT', 'UID:$UID', 'DTSTAMP:20260101T000000Z', 'DTSTART:20260302T090000Z', 'SUMMARY:Fine', 'END:VEVENT']);

async function homeWrite(path: string, text: string | Buffer): Promise<void> {
  const { vault } = await inst.server.services.vaults.forCaller({ userId } as never);
  await vault.home.write(path, text as never);
}
async function homeDelete(path: string): Promise<void> {
  const { vault } = await inst.server.services.vaults.forCaller({ userId } as never);
  await vault.home.delete(path);
}
const calendar = async (id: string) => (await inst.api('GET', '/api/v1/calendar/calendars', { token })).body.calendars.find((c: any) => c.id === id);
/** The Work calendar's record once `ready` holds of it. */
const work = (ready: (c: any) => boolean) => eventually(async () => {
  const c = await calendar('Work');
  return c && ready(c) ? c : null;
});

beforeAll(async () => {
  inst = await startInstance();
  const u = await inst.user('ann');
  token = u.token;
  userId = u.id;
  await homeWrite('Calendars/Work/a-fine.ics', event('fine-1'));
  await homeWrite('Calendars/Work/b-fine.ics', event('fine-2'));
  await homeWrite('Calendars/Work/c-binary.ics', Buffer.from([0, 1, 2, 255, 254, 10, 13]));
  await homeWrite('Calendars/Work/d-empty.ics', '');
  await homeWrite('Calendars/Work/e-todo.ics', ics('todo-1', ['BEGIN:VTODO', 'UID:$UID', 'DTSTAMP:20260101T000000Z', 'SUMMARY:Task', 'END:VTODO']));
  await homeWrite('Calendars/Work/f-nostart.ics', ics('nostart', ['BEGIN:VEVENT', 'UID:$UID', 'DTSTAMP:20260101T000000Z', 'SUMMARY:No start', 'END:VEVENT']));
  await homeWrite('Calendars/Work/g-unclosed.ics', 'BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\nUID:x\r\n');
  await homeWrite('Calendars/Work/h-text.ics', 'just some notes, not iCalendar\n');
  await homeWrite('Calendars/Work/i-vcard.ics', 'BEGIN:VCARD\r\nVERSION:4.0\r\nFN:Ann\r\nEND:VCARD\r\n');
}, 60_000);

afterAll(() => inst?.close());

describe('calendar_calendars and unreadable files', () => {
  it('counts readable events only and names the first skipped files with their reason, and the total', async () => {
    const cal = await work((c) => c.unreadable_total === 7);
    expect(cal.events).toBe(2);
    expect(cal.unreadable).toHaveLength(UNREADABLE_SHOWN);
    expect(cal.unreadable.map((u: any) => u.path)).toEqual(['c-binary', 'd-empty', 'e-todo', 'f-nostart', 'g-unclosed'].map((n) => `Calendars/Work/${n}.ics`));
    for (const u of cal.unreadable) {
      expect(typeof u.reason).toBe('string');
      expect(u.reason.length).toBeGreaterThan(5);
      // The path is the record's own field; the reason does not repeat it.
      expect(u.reason).not.toContain(u.path);
    }
    expect(cal.unreadable.find((u: any) => u.path.endsWith('e-todo.ics')).reason).toBe('no VEVENT in the text');
    // The list view shows as many events as the record counts.
    const events = (await inst.api('GET', '/api/v1/calendar/events', { token })).body.events.filter((e: any) => e.calendar_id === 'Work');
    expect(events).toHaveLength(cal.events);
  });

  it('follows outside edits: a repaired file counts again, a deleted one leaves the list', async () => {
    await homeWrite('Calendars/Work/f-nostart.ics', event('repaired'));
    await homeDelete('Calendars/Work/c-binary.ics');
    const cal = await work((c) => c.unreadable_total === 5 && c.events === 3);
    expect(cal.events).toBe(3);
    expect(cal.unreadable.map((u: any) => u.path)).toEqual(['d-empty', 'e-todo', 'g-unclosed', 'h-text', 'i-vcard'].map((n) => `Calendars/Work/${n}.ics`));
  });

  it('a calendar whose files all read has an empty list', async () => {
    await homeWrite('Calendars/Home/x.ics', event('home-1'));
    const cal = await eventually(() => calendar('Home'));
    expect(cal).toMatchObject({ events: 1, unreadable: [], unreadable_total: 0 });
  });
});
