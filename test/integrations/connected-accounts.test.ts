/**
 * Connected Accounts end to end: IMAP sign-in checked against Debian's Dovecot, SMTP against a
 * minimal responder, the CalDAV side connected to Radicale and synced into the Home; wrong
 * credentials and preset overrides answer 400 with nothing stored; toggles, removal, and the
 * idempotent start-up migration of legacy calendar accounts.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { paths } from '../../src/core/config.js';
import { migrateLegacyCalendarAccounts } from '../../src/integrations/integration-store.js';
import { startInstance, type TestInstance } from '../helpers/instance.js';
import { mkcalendar, startRadicale, vevent, type Radicale } from '../caldav/sync-peers.js';
import { startDovecot, startSmtp, type Peer } from './peers.js';

const USER = 'alice';
const PASS = 'app-pw-1';
let rad: Radicale;
let imap: Peer;
let smtp: Peer;
let inst: TestInstance;
let token: string;
let home: string;

const api = (method: string, route: string, body?: unknown) => inst.api(method, route, { token, body });
const base = () => ({ provider: 'other', email: 'alice@example.test', username: USER, imap_host: `imap://127.0.0.1:${imap.port}`, smtp_host: `smtp://127.0.0.1:${smtp.port}`, caldav_endpoint: rad.url });

beforeAll(async () => {
  [rad, imap, smtp] = await Promise.all([startRadicale(USER, PASS), startDovecot(USER, PASS), startSmtp(USER, PASS)]);
  await rad.dav('MKCALENDAR', `/${USER}/home/`, mkcalendar('Family'));
  await rad.dav('PUT', `/${USER}/home/a.ics`, vevent('a@fam', 'Dinner'));
  inst = await startInstance({ allowPrivateFetch: true });
  token = (await inst.user('conn')).token;
  home = path.join(inst.dataDir, 'homes', 'conn');
}, 30_000);
afterAll(async () => {
  await inst?.close();
  await Promise.all([rad?.stop(), imap?.stop(), smtp?.stop()]);
});

describe('Connected Accounts', () => {
  let id: string;

  it('refuses a wrong password (IMAP says so), host overrides on a preset and a missing host, storing nothing', async () => {
    const bad = await api('POST', '/api/v1/system/integrations/accounts', { ...base(), app_password: 'wrong' });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details.reason).toBe('imap_auth_failed');
    const preset = await api('POST', '/api/v1/system/integrations/accounts', { ...base(), provider: 'provider_1', app_password: PASS });
    expect(preset.status).toBe(400);
    expect(preset.body.error.details.reason).toBe('override_not_allowed');
    const { imap_host: _drop, ...noImap } = base();
    const missing = await api('POST', '/api/v1/system/integrations/accounts', { ...noImap, app_password: PASS });
    expect(missing.status).toBe(400);
    expect(missing.body.error.details.field).toBe('body.imap_host');
    expect((await api('GET', '/api/v1/system/integrations/accounts')).body.accounts).toEqual([]);
    expect(fs.existsSync(path.join(home, 'Calendars'))).toBe(false);
  });

  it('verifies IMAP and SMTP sign-in and connects the CalDAV side, whose calendar is synced into the Home', async () => {
    const r = await api('POST', '/api/v1/system/integrations/accounts', { ...base(), app_password: PASS });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    expect(r.body.account).toMatchObject({ mail_enabled: true, calendar_enabled: true, provider: 'other' });
    expect(JSON.stringify(r.body)).not.toContain(PASS);
    id = r.body.account.id;
    expect((await inst.server.services.jobs!.wait(r.body.job.id))!.state).toBe('succeeded');
    const cal = await api('GET', '/api/v1/calendar/accounts');
    expect(cal.body.accounts).toHaveLength(1);
    expect(cal.body.accounts[0].integration_id).toBe(id);
    const events = await api('GET', '/api/v1/calendar/events');
    expect(events.body.events.map((e: any) => e.title)).toEqual(['Dinner']);
  });

  it('toggles each side: calendar off hides its calendars, mail off and on again re-verifies', async () => {
    const off = await api('PATCH', `/api/v1/system/integrations/accounts/${id}`, { calendar_enabled: false, mail_enabled: false });
    expect(off.status).toBe(200);
    expect(off.body.account).toMatchObject({ calendar_enabled: false, mail_enabled: false });
    expect((await api('GET', '/api/v1/calendar/accounts')).body.accounts[0].enabled).toBe(false);
    const on = await api('PATCH', `/api/v1/system/integrations/accounts/${id}`, { mail_enabled: true });
    expect(on.body.account.mail_enabled).toBe(true);
  });

  it('deleting it removes the calendar side and its mirrored folder', async () => {
    const r = await api('DELETE', `/api/v1/system/integrations/accounts/${id}`);
    expect(r.status).toBe(200);
    expect((await api('GET', '/api/v1/calendar/accounts')).body.accounts).toEqual([]);
    expect(fs.readdirSync(path.join(home, 'Calendars'))).toEqual([]);
  });

  it('migrates legacy calendar accounts once, at start-up or again, and reports it', async () => {
    const store = inst.server.services.store;
    const userId = store.snapshot().users.find((u) => u.username === 'conn')!.id;
    await store.transact((d) => {
      (d.calendar_accounts ??= []).push({ id: 'legacy-1', user_id: userId, endpoint: rad.url, username: USER, secret: 'v1.x.y.z', enabled: true, calendars: [], created_ms: 1, updated_ms: 1, last_sync_ms: null, last_error: null } as any);
    });
    expect((await api('GET', '/api/v1/system/integrations/legacy-migration')).body).toMatchObject({ pending: 1 });
    expect(await migrateLegacyCalendarAccounts(store)).toEqual({ migrated: 1 });
    expect(await migrateLegacyCalendarAccounts(store)).toEqual({ migrated: 0 });
    const status = (await api('GET', '/api/v1/system/integrations/legacy-migration')).body;
    expect(status).toMatchObject({ state: 'completed', pending: 0 });
    expect(status.migrated).toHaveLength(1);
    const list = (await api('GET', '/api/v1/system/integrations/accounts')).body.accounts;
    expect(list).toHaveLength(1);
    expect(list[0]).toMatchObject({ provider: 'other', caldav_endpoint: rad.url, calendar_account_id: 'legacy-1', mail_enabled: false });
    expect(fs.readFileSync(paths.sidecar(inst.server.services.config), 'utf8')).not.toContain(PASS);
  });
});
