/**
 * Debian's vdirsyncer syncs Quire's CalDAV server both ways with a local folder (a
 * `filesystem` storage), with its own config and status folders: discovery from the server's
 * root, REPORTs, conditional PUTs and DELETEs, as a real client makes them.
 */
import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startInstance, tempDir, type TestInstance } from '../helpers/instance.js';
import { ics } from '../helpers/ics.js';

const run = promisify(execFile);
let inst: TestInstance;
let token: string;
const work = tempDir('quire-dav-vdirsyncer-');
const dir = path.join(work, 'pair');
const local = path.join(dir, 'local');
const config = path.join(dir, 'config');

const env = () => ({ ...process.env, HOME: work });

async function sync() {
  return run('vdirsyncer', ['-c', config, 'sync'], { timeout: 60_000, env: env() });
}

/** `vdirsyncer discover` asks before it creates a collection on either side: answer yes. */
function discover(): Promise<string> {
  return new Promise((resolve, reject) => {
    const p = spawn('vdirsyncer', ['-c', config, 'discover'], { env: env() });
    let out = '';
    p.stdout.on('data', (d) => (out += d));
    p.stderr.on('data', (d) => (out += d));
    p.stdin.end('y\ny\ny\ny\n');
    const timer = setTimeout(() => p.kill(), 60_000);
    p.on('close', (code) => {
      clearTimeout(timer);
      if (code === 0) resolve(out);
      else reject(new Error(`vdirsyncer discover exited ${code}: ${out}`));
    });
  });
}

/** The local copy of the Personal calendar: file name → text. */
const localFiles = (collection = 'Personal') => {
  const d = path.join(local, collection);
  return Object.fromEntries(fs.readdirSync(d).map((f) => [f, fs.readFileSync(path.join(d, f), 'utf8')]));
};
const homeEvents = async () => (await inst.api('GET', '/api/v1/calendar/events', { token })).body.events as Array<{ id: string; title: string; calendar_id: string }>;

beforeAll(async () => {
  inst = await startInstance();
  token = (await inst.user('ann')).token;
  const ap = await inst.api('POST', '/api/v1/auth/app-passwords', { token, body: { name: 'vdirsyncer' } });
  expect(ap.status, ap.text).toBe(201);
  // vdirsyncer refuses to sync a side that was emptied completely: 'Holiday' stays throughout.
  for (const icalendar of [
    ics('standup@test', ['DTSTART;TZID=Europe/Berlin:20260302T090000', 'DTEND;TZID=Europe/Berlin:20260302T093000', 'SUMMARY:Standup']),
    ics('holiday-1', ['DTSTART;VALUE=DATE:20260801', 'SUMMARY:Holiday']),
  ]) {
    const r = await inst.api('POST', '/api/v1/calendar/events', { token, body: { icalendar } });
    expect(r.status, r.text).toBe(201);
  }
  fs.mkdirSync(local, { recursive: true });
  fs.writeFileSync(
    config,
    `[general]\nstatus_path = "${path.join(dir, 'status')}/"\n\n` +
      `[pair quire]\na = "remote"\nb = "local"\ncollections = ["from a", "from b"]\nconflict_resolution = "a wins"\n\n` +
      `[storage remote]\ntype = "caldav"\nurl = "${inst.url}/"\nusername = "ann"\npassword = "${ap.body.password}"\n\n` +
      `[storage local]\ntype = "filesystem"\npath = "${local}/"\nfileext = ".ics"\n`,
  );
  await discover();
}, 90_000);

afterAll(async () => {
  await inst?.close();
  fs.rmSync(work, { recursive: true, force: true });
});

it('syncs both ways: server events arrive, local files reach the Home, changes and deletes travel both ways', async () => {
  await sync();
  let files = localFiles();
  expect(Object.values(files).some((t) => t.includes('SUMMARY:Standup'))).toBe(true);

  // A file created locally appears in the Home (vdirsyncer names it after a UUID: '@' is not safe for it).
  fs.writeFileSync(path.join(local, 'Personal', 'picnic.ics'), ics('picnic@test', ['DTSTART:20260501T100000Z', 'DTEND:20260501T140000Z', 'SUMMARY:Picnic']));
  await sync();
  expect((await homeEvents()).map((e) => e.title).sort()).toEqual(['Holiday', 'Picnic', 'Standup']);
  // The Home names the file after the UID; the server maps vdirsyncer's own resource name to it.
  expect(fs.existsSync(path.join(inst.dataDir, 'homes', 'ann', 'Calendars', 'Personal', 'picnic@test.ics'))).toBe(true);

  // Changed in the Home → changed locally.
  const detail = await inst.api('GET', '/api/v1/calendar/events/standup%40test', { token });
  const put = await inst.api('PUT', '/api/v1/calendar/events/standup%40test', {
    token,
    headers: { 'if-match': `"${detail.body.etag}"` },
    body: { icalendar: detail.body.icalendar.replace('SUMMARY:Standup', 'SUMMARY:Daily standup') },
  });
  expect(put.status, put.text).toBe(200);
  await sync();
  files = localFiles();
  expect(Object.values(files).some((t) => t.includes('SUMMARY:Daily standup'))).toBe(true);

  // Changed locally → changed in the Home.
  const picnicFile = Object.keys(files).find((f) => files[f]!.includes('SUMMARY:Picnic'))!;
  fs.writeFileSync(path.join(local, 'Personal', picnicFile), files[picnicFile]!.replace('SUMMARY:Picnic', 'SUMMARY:Picnic by the lake'));
  await sync();
  expect((await homeEvents()).map((e) => e.title).sort()).toEqual(['Daily standup', 'Holiday', 'Picnic by the lake']);

  // Deleted locally → deleted in the Home; deleted in the Home → deleted locally.
  fs.rmSync(path.join(local, 'Personal', picnicFile));
  await sync();
  expect((await homeEvents()).map((e) => e.title).sort()).toEqual(['Daily standup', 'Holiday']);
  expect((await inst.api('DELETE', '/api/v1/calendar/events/standup%40test', { token })).status).toBe(200);
  await sync();
  expect(Object.values(localFiles()).map((t) => /SUMMARY:(.*)/.exec(t)![1]!.trim())).toEqual(['Holiday']);
}, 120_000);

it('a new local collection becomes a calendar in the Home (extended MKCOL)', async () => {
  fs.mkdirSync(path.join(local, 'Work'));
  fs.writeFileSync(path.join(local, 'Work', 'review.ics'), ics('review-1', ['DTSTART:20260601T090000Z', 'SUMMARY:Review']));
  await discover();
  await sync();
  const events = await homeEvents();
  expect(events.filter((e) => e.calendar_id === 'Work').map((e) => e.title)).toEqual(['Review']);
  expect(fs.existsSync(path.join(inst.dataDir, 'homes', 'ann', 'Calendars', 'Work', 'review-1.ics'))).toBe(true);
}, 120_000);
