/**
 * Quire syncing a real Radicale account both ways: discovery and the first mirror, remote
 * changes pulled, local creates/edits/deletes pushed with If-Match, a conflict kept as two
 * events, disable/enable and removal; wrong credentials, an unreachable endpoint and a
 * non-CalDAV server answer 400 with the Home untouched.
 */
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { paths } from '../../src/core/config.js';
import { startInstance, type TestInstance } from '../helpers/instance.js';
import { mkcalendar, startRadicale, vevent, type Radicale } from './sync-peers.js';

let rad: Radicale;
let inst: TestInstance;
let token: string;
let home: string;
let accountId: string;
let calendarId: string;

const api = (method: string, route: string, body?: unknown) => inst.api(method, route, { token, body });
const waitJob = async (job: { id: string } | null) => (job ? inst.server.services.jobs!.wait(job.id) : null);
const refresh = async () => {
  const r = await api('POST', `/api/v1/calendar/calendars/${encodeURIComponent(calendarId)}/refresh`);
  expect([200, 202]).toContain(r.status);
  const done = await waitJob(r.body.job);
  expect(done, JSON.stringify(done)).toMatchObject({ state: 'succeeded' });
  return done!.result as Record<string, number>;
};
const titles = async () => (await api('GET', '/api/v1/calendar/events')).body.events.filter((e: any) => e.calendar_id === calendarId).map((e: any) => e.title).sort();
const remoteText = async (href: string) => (await rad.dav('GET', href)).text();
const homeFiles = () => (fs.existsSync(path.join(home, 'Calendars')) ? fs.readdirSync(path.join(home, 'Calendars'), { recursive: true }).map(String).sort() : []);

beforeAll(async () => {
  rad = await startRadicale();
  expect((await rad.dav('MKCALENDAR', '/alice/work/', mkcalendar('Work'))).status).toBe(201);
  await rad.dav('PUT', '/alice/work/one.ics', vevent('one@r', 'One'));
  await rad.dav('PUT', '/alice/work/two.ics', vevent('two@r', 'Two'));
  inst = await startInstance({ allowPrivateFetch: true });
  token = (await inst.user('syn')).token;
  home = path.join(inst.dataDir, 'homes', 'syn');
}, 30_000);
afterAll(async () => {
  await inst?.close();
  await rad?.stop();
});

describe('a Radicale account', () => {
  it('refuses wrong credentials, an unreachable endpoint and a non-CalDAV server with 400, writing nothing', async () => {
    const plain = http.createServer((_q, s) => s.writeHead(200, { 'content-type': 'text/html' }).end('<p>hello</p>'));
    await new Promise<void>((r) => plain.listen(0, '127.0.0.1', r));
    const plainUrl = `http://127.0.0.1:${(plain.address() as import('node:net').AddressInfo).port}/`;
    try {
      for (const [body, reason] of [
        [{ endpoint: rad.url, username: 'alice', app_password: 'wrong' }, 'caldav_auth_failed'],
        [{ endpoint: 'http://127.0.0.1:1/', username: 'alice', app_password: 'x' }, 'fetch_failed'],
        [{ endpoint: plainUrl, username: 'alice', app_password: 'x' }, 'not_caldav'],
        [{ endpoint: 'not a url', username: 'alice', app_password: 'x' }, 'invalid_url'],
      ] as const) {
        const r = await api('POST', '/api/v1/calendar/accounts', body);
        expect(r.status, JSON.stringify(r.body)).toBe(400);
        expect(r.body.error.details.reason).toBe(reason);
      }
    } finally {
      plain.close();
    }
    expect(homeFiles()).toEqual([]);
    expect((await api('GET', '/api/v1/calendar/accounts')).body.accounts).toEqual([]);
  });

  it('discovers the calendars and mirrors them; the secret is never returned and is sealed at rest', async () => {
    const r = await api('POST', '/api/v1/calendar/accounts', { endpoint: rad.url, username: 'alice', app_password: rad.password });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    accountId = r.body.account.id;
    calendarId = r.body.account.calendars[0].calendar_id;
    expect(calendarId).toBe('Work');
    expect((await waitJob(r.body.job))!.state).toBe('succeeded');
    expect(await titles()).toEqual(['One', 'Two']);
    const meta = JSON.parse(fs.readFileSync(path.join(home, 'Calendars', 'Work', 'calendar.json'), 'utf8'));
    expect(meta.source).toEqual({ kind: 'caldav', id: accountId });
    const list = await api('GET', '/api/v1/calendar/accounts');
    expect(JSON.stringify(list.body)).not.toContain(rad.password);
    expect(fs.readFileSync(paths.sidecar(inst.server.services.config), 'utf8')).not.toContain(rad.password);
    expect(fs.statSync(path.join(inst.dataDir, 'state', 'account-secrets.key')).mode & 0o777).toBe(0o600);
  });

  it('pulls remote creates, edits and deletes', async () => {
    await rad.dav('PUT', '/alice/work/three.ics', vevent('three@r', 'Three'));
    await rad.dav('PUT', '/alice/work/one.ics', vevent('one@r', 'One edited'));
    await rad.dav('DELETE', '/alice/work/two.ics');
    const counts = await refresh();
    expect(counts).toMatchObject({ pulled: 2, deleted_local: 1 });
    expect(await titles()).toEqual(['One edited', 'Three']);
    expect((await refresh())).toMatchObject({ pulled: 0, pushed: 0 });
  });

  it('pushes local creates, edits and deletes', async () => {
    const created = await api('POST', '/api/v1/calendar/events', { calendar_id: calendarId, icalendar: vevent('local@q', 'Made here') });
    expect(created.status).toBe(201);
    const ev = (await api('GET', '/api/v1/calendar/events/three@r')).body;
    expect((await api('PUT', '/api/v1/calendar/events/three@r', { icalendar: ev.icalendar.replace('SUMMARY:Three', 'SUMMARY:Three edited here') })).status).toBe(200);
    expect((await api('DELETE', '/api/v1/calendar/events/one@r')).status).toBe(200);
    const counts = await refresh();
    expect(counts).toMatchObject({ pushed: 2, deleted_remote: 1 });
    expect(await remoteText('/alice/work/three.ics')).toContain('SUMMARY:Three edited here');
    expect((await rad.dav('GET', '/alice/work/one.ics')).status).toBe(404);
    expect(await remoteText('/alice/work/local@q.ics')).toContain('SUMMARY:Made here');
  });

  it('keeps both versions of an event changed on both sides', async () => {
    await rad.dav('PUT', '/alice/work/three.ics', vevent('three@r', 'Three remote'));
    const ev = (await api('GET', '/api/v1/calendar/events/three@r')).body;
    await api('PUT', '/api/v1/calendar/events/three@r', { icalendar: ev.icalendar.replace(/SUMMARY:.*/, 'SUMMARY:Three local') });
    const counts = await refresh();
    expect(counts.conflicts).toBe(1);
    const t = await titles();
    expect(t).toContain('Three remote');
    expect(t).toContain('Conflict copy: Three local');
    // The copy reached the server too: both sides show both versions.
    await refresh();
    const listing = await (await rad.dav('PROPFIND', '/alice/work/', undefined, { depth: '1' })).text();
    expect(listing).toMatch(/three%40r-conflict-|three@r-conflict-/);
  });

  it('disabling hides the calendars and stops refreshes; enabling shows them again', async () => {
    const off = await api('PATCH', `/api/v1/calendar/accounts/${accountId}`, { enabled: false });
    expect(off.status).toBe(200);
    expect(off.body.enabled).toBe(false);
    const cal = (await api('GET', '/api/v1/calendar/calendars')).body.calendars.find((c: any) => c.id === calendarId);
    expect(cal.visible).toBe(false);
    expect((await api('POST', `/api/v1/calendar/calendars/${encodeURIComponent(calendarId)}/refresh`)).status).toBe(409);
    await api('PATCH', `/api/v1/calendar/accounts/${accountId}`, { enabled: true });
    expect((await api('GET', '/api/v1/calendar/calendars')).body.calendars.find((c: any) => c.id === calendarId).visible).toBe(true);
  });

  it('removing the account removes its mirrored folders and leaves the server as it is', async () => {
    const r = await api('DELETE', `/api/v1/calendar/accounts/${accountId}`);
    expect(r.status).toBe(200);
    expect(fs.existsSync(path.join(home, 'Calendars', calendarId))).toBe(false);
    expect((await api('GET', '/api/v1/calendar/accounts')).body.accounts).toEqual([]);
    expect(await remoteText('/alice/work/three.ics')).toContain('Three remote');
    expect(fs.existsSync(path.join(inst.dataDir, 'state', 'calendar-sync', `${accountId}.json`))).toBe(false);
  });
});
