/**
 * A real client reads a published feed: Debian's vdirsyncer syncs the feed URL (an `http`
 * storage) into a folder (a `filesystem` storage), with its own config and status folders.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startInstance, tempDir, type TestInstance } from '../helpers/instance.js';
import { ics } from '../helpers/ics.js';

const run = promisify(execFile);
let inst: TestInstance;
let token: string;
const work = tempDir('quire-vdirsyncer-');

async function vdirsyncer(config: string, ...args: string[]) {
  return run('vdirsyncer', ['-c', config, ...args], { timeout: 60_000, env: { ...process.env, HOME: work } });
}

function configFor(name: string, url: string): { config: string; local: string } {
  const dir = path.join(work, name);
  const local = path.join(dir, 'local');
  fs.mkdirSync(local, { recursive: true });
  const config = path.join(dir, 'config');
  fs.writeFileSync(
    config,
    `[general]\nstatus_path = "${path.join(dir, 'status')}/"\n\n[pair feed]\na = "remote"\nb = "local"\ncollections = null\nconflict_resolution = "a wins"\n\n` +
      `[storage remote]\ntype = "http"\nurl = "${url}"\n\n[storage local]\ntype = "filesystem"\npath = "${local}/"\nfileext = ".ics"\n`,
  );
  return { config, local };
}

const synced = (local: string) => fs.readdirSync(local).map((f) => fs.readFileSync(path.join(local, f), 'utf8'));

beforeAll(async () => {
  inst = await startInstance();
  token = (await inst.user('ann')).token;
  const events = [
    ics('standup@test', ['DTSTART;TZID=Europe/Berlin:20260302T090000', 'DTEND;TZID=Europe/Berlin:20260302T093000', 'RRULE:FREQ=DAILY;COUNT=5', 'SUMMARY:Standup', 'LOCATION:Room 1']),
    ics('trip@test', ['DTSTART;VALUE=DATE:20260310', 'DTEND;VALUE=DATE:20260312', 'SUMMARY:Trip to Lyon', 'DESCRIPTION:Train at 7']),
  ];
  for (const icalendar of events) {
    const r = await inst.api('POST', '/api/v1/calendar/events', { token, body: { icalendar } });
    expect(r.status, r.text).toBe(201);
  }
}, 60_000);

afterAll(async () => {
  await inst?.close();
  fs.rmSync(work, { recursive: true, force: true });
});

it('vdirsyncer syncs a calendar feed into a folder: one file per event, details intact', async () => {
  const feed = await inst.api('POST', '/api/v1/calendar/feeds', { token, body: { name: 'Personal', detail: 'full', source: 'calendar' } });
  expect(feed.status, feed.text).toBe(201);
  const { config, local } = configFor('full', feed.body.url);
  await vdirsyncer(config, 'discover', 'feed');
  await vdirsyncer(config, 'sync');
  const files = synced(local);
  expect(files.length).toBe(2);
  // vdirsyncer gives items whose UID is not safe in a file name (`@`) a UID of its own: find them by content.
  const standup = files.find((f) => f.includes('SUMMARY:Standup'))!;
  expect(standup).toContain('DTSTART;TZID=Europe/Berlin:20260302T090000');
  expect(standup).toContain('RRULE:FREQ=DAILY;COUNT=5');
  expect(standup).toContain('SUMMARY:Standup');
  expect(standup).toContain('LOCATION:Room 1');
  expect(files.find((f) => f.includes('SUMMARY:Trip to Lyon'))).toContain('DTSTART;VALUE=DATE:20260310');

  // A new event reaches the folder on the next sync.
  const r = await inst.api('POST', '/api/v1/calendar/events', {
    token,
    body: { icalendar: ics('later@test', ['DTSTART:20260401T100000Z', 'DTEND:20260401T110000Z', 'SUMMARY:Later']) },
  });
  expect(r.status, r.text).toBe(201);
  await vdirsyncer(config, 'sync');
  expect(synced(local).some((f) => f.includes('SUMMARY:Later'))).toBe(true);

  // A revoked link fails the client's sync instead of serving stale data.
  await inst.api('DELETE', `/api/v1/calendar/feeds/${feed.body.id}/link`, { token });
  await expect(vdirsyncer(config, 'sync')).rejects.toThrow();
});

it('vdirsyncer syncs a busy-only feed: busy blocks without titles or places', async () => {
  const feed = await inst.api('POST', '/api/v1/calendar/feeds', { token, body: { name: 'Busy', detail: 'busy_only', source: 'calendar', source_id: 'Personal' } });
  expect(feed.status, feed.text).toBe(201);
  const { config, local } = configFor('busy', feed.body.url);
  await vdirsyncer(config, 'discover', 'feed');
  await vdirsyncer(config, 'sync');
  const files = synced(local);
  expect(files.length).toBe(3);
  for (const f of files) {
    expect(f).toContain('SUMMARY:Busy');
    expect(f).not.toMatch(/Standup|Lyon|Later|LOCATION|DESCRIPTION|Train/);
  }
  expect(files.some((f) => f.includes('RRULE:FREQ=DAILY;COUNT=5'))).toBe(true);
});
