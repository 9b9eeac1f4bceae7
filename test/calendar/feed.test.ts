/**
 * Published feeds end to end: the feed actions on a real server, the public URL read
 * without a bearer token and parsed by an independent parser (node-ical).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fs from 'node:fs';
import path from 'node:path';
import ical from 'node-ical';
import { startInstance, type TestInstance } from '../helpers/instance.js';

let inst: TestInstance;
let token: string;
let other: string;

let annId: string;

/** Arranges a file in Ann's Home through the server's own vault (as an editor saving it would). */
async function homeWrite(path: string, text: string): Promise<void> {
  const { vault } = await inst.server.services.vaults.forCaller({ userId: annId } as never);
  await vault.home.write(path, text);
}

async function log(text: string, now: string, timezone = 'Europe/Berlin') {
  const r = await inst.api('POST', '/api/v1/notes/journal/log', { token, body: { text, now, timezone } });
  expect(r.status, r.text).toBeLessThan(300);
  return r.body;
}

/** The feed at `url` (its path asked of the test server: the URL names the configured public host). */
async function fetchFeed(url: string, headers: Record<string, string> = {}) {
  const res = await fetch(inst.url + new URL(url).pathname, { headers });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

const vevents = (text: string) => Object.values(ical.sync.parseICS(text)).filter((c: any) => c.type === 'VEVENT') as any[];

beforeAll(async () => {
  inst = await startInstance();
  ({ id: annId, token } = await inst.user('ann'));
  other = (await inst.user('bob')).token;
  await log('09:00-10:30 Standup with the team #work', '2026-03-02T08:00');
  await log('14:00 Dentist #health', '2026-03-02T08:00');
  // An entry without a time is no event: written by hand (the composer gives new entries the current time).
  await homeWrite('Journal/2026-03-04.md', '## Log\n- no time here #work\n');
  await homeWrite('Projects/Launch.md', '---\ndate: 2026-03-10\ntags: [work]\n---\n# Launch\n\n- [ ] Ship it 📅 2026-03-12\n- [x] Done already 📅 2026-03-01\n');
}, 60_000);

afterAll(async () => inst?.close());

describe('journal feed', () => {
  let feed: any;

  it('creates a feed whose URL serves the timed log entries, parsed by node-ical', async () => {
    const r = await inst.api('POST', '/api/v1/calendar/feeds', { token, body: { name: 'My journal', detail: 'full', source: 'journal', color: '#3366cc' } });
    expect(r.status, r.text).toBe(201);
    feed = r.body;
    expect(feed).toMatchObject({ name: 'My journal', detail: 'full', source: 'journal', source_id: null, include_notes: false, include_tasks: false, color: '#3366cc' });
    expect(new URL(feed.url).pathname).toMatch(/^\/feeds\/qfeed_[A-Za-z0-9_-]{40,}\.ics$/);

    const res = await fetchFeed(feed.url);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/calendar/);
    const evs = vevents(res.text);
    expect(evs.map((e) => e.summary).sort()).toEqual(['Dentist #health', 'Standup with the team #work']);
    const standup = evs.find((e) => e.summary.startsWith('Standup'));
    // 09:00 in Berlin in March (CET, +01:00) is 08:00 UTC.
    expect(new Date(standup.start).toISOString()).toBe('2026-03-02T08:00:00.000Z');
    expect(new Date(standup.end).toISOString()).toBe('2026-03-02T09:30:00.000Z');
    expect(res.text).toContain('X-WR-CALNAME:My journal');
  });

  it('answers a conditional GET with 304 until the journal changes', async () => {
    const first = await fetchFeed(feed.url);
    const etag = first.headers.get('etag')!;
    expect(etag).toMatch(/^"[^"]+"$/);
    const again = await fetchFeed(feed.url, { 'if-none-match': etag });
    expect(again.status).toBe(304);
    expect(again.text).toBe('');
    // A change elsewhere in the Home rebuilds the document to the same bytes: still 304
    // (a second later, so a build-time DTSTAMP would differ).
    await new Promise((r) => setTimeout(r, 1100));
    await homeWrite('Notes/Unrelated.md', '# Unrelated\n');
    expect((await fetchFeed(feed.url, { 'if-none-match': etag })).status).toBe(304);
    await log('18:00-19:00 Choir', '2026-03-03T08:00');
    const changed = await fetchFeed(feed.url, { 'if-none-match': etag });
    expect(changed.status).toBe(200);
    expect(changed.headers.get('etag')).not.toBe(etag);
    expect(vevents(changed.text).map((e) => e.summary)).toContain('Choir');
  });

  it('lists, updates and shows notes and tasks when asked', async () => {
    const list = await inst.api('GET', '/api/v1/calendar/feeds', { token });
    expect(list.body.items.map((f: any) => f.id)).toEqual([feed.id]);
    expect((await inst.api('GET', '/api/v1/calendar/feeds', { token: other })).body.items).toEqual([]);

    const up = await inst.api('PUT', `/api/v1/calendar/feeds/${feed.id}`, {
      token,
      body: { name: 'Journal+', detail: 'full', source: 'journal', include_notes: true, include_tasks: true },
    });
    expect(up.status, up.text).toBe(200);
    expect(up.body).toMatchObject({ name: 'Journal+', include_notes: true, include_tasks: true, url: feed.url, color: null });
    const evs = vevents((await fetchFeed(feed.url)).text);
    const launch = evs.find((e) => e.summary === 'Launch');
    expect(launch.datetype).toBe('date');
    expect(launch.start.toISOString().slice(0, 10)).toBe('2026-03-10');
    const task = evs.find((e) => e.summary === 'Ship it');
    expect(task.datetype).toBe('date');
    expect(evs.some((e) => e.summary.includes('Done already'))).toBe(false);
  });

  it('rotates the link: the old URL answers 404 at once, the new one serves', async () => {
    const r = await inst.api('POST', `/api/v1/calendar/feeds/${feed.id}/link`, { token });
    expect(r.status, r.text).toBe(200);
    expect(r.body.url).not.toBe(feed.url);
    const old = await fetchFeed(feed.url);
    expect(old.status).toBe(404);
    expect(JSON.parse(old.text).error.code).toBe('not_found');
    expect((await fetchFeed(r.body.url)).status).toBe(200);
    feed = r.body;
  });

  it('revokes the link: url null and the URL gone; rotating gives a new one', async () => {
    const r = await inst.api('DELETE', `/api/v1/calendar/feeds/${feed.id}/link`, { token });
    expect(r.status, r.text).toBe(200);
    expect(r.body.url).toBeNull();
    expect((await fetchFeed(feed.url)).status).toBe(404);
    const again = await inst.api('POST', `/api/v1/calendar/feeds/${feed.id}/link`, { token });
    expect(again.body.url).toMatch(/\/feeds\/qfeed_/);
    feed = again.body;
  });

  it('deletes the feed: its URL answers 404 and it is no longer listed', async () => {
    expect((await inst.api('DELETE', `/api/v1/calendar/feeds/${feed.id}`, { token: other })).status).toBe(404);
    const r = await inst.api('DELETE', `/api/v1/calendar/feeds/${feed.id}`, { token });
    expect(r.status, r.text).toBe(200);
    expect((await fetchFeed(feed.url)).status).toBe(404);
    expect((await inst.api('GET', '/api/v1/calendar/feeds', { token })).body.items).toEqual([]);
  });
});

describe('busy-only and area feeds', () => {
  it('a busy-only feed carries only busy blocks: no title, description, notes or tasks', async () => {
    const r = await inst.api('POST', '/api/v1/calendar/feeds', {
      token,
      body: { name: 'Availability', detail: 'busy_only', source: 'journal', include_notes: true, include_tasks: true },
    });
    const text = (await fetchFeed(r.body.url)).text;
    const evs = vevents(text);
    expect(evs.length).toBe(3);
    for (const e of evs) {
      expect(e.summary).toBe('Busy');
      expect(e.description).toBeUndefined();
      expect(e.categories).toBeUndefined();
    }
    expect(text).not.toMatch(/Standup|Dentist|Choir|Launch|Ship|#work/);
  });

  it('an area feed publishes the log entries, notes and tasks of one tag', async () => {
    const r = await inst.api('POST', '/api/v1/calendar/feeds', {
      token,
      body: { name: 'Work', detail: 'full', source: 'area', source_id: '#Work', include_notes: true, include_tasks: true },
    });
    expect(r.status, r.text).toBe(201);
    expect(r.body.source_id).toBe('work');
    const names = vevents((await fetchFeed(r.body.url)).text).map((e) => e.summary).sort();
    expect(names).toEqual(['Launch', 'Ship it', 'Standup with the team #work']);
  });
});

describe('calendar feeds', () => {
  it('a file another program drops into the calendar folder reaches the feed (new ETag); HEAD answers without a body', async () => {
    const ics = (uid: string, summary: string) =>
      `BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//test//EN\r\nBEGIN:VEVENT\r\nUID:${uid}\r\nDTSTAMP:20260101T000000Z\r\nDTSTART:20260305T100000Z\r\nDTEND:20260305T110000Z\r\nSUMMARY:${summary}\r\nX-FROM-CLIENT:yes\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n`;
    expect((await inst.api('POST', '/api/v1/calendar/events', { token, body: { icalendar: ics('api@test', 'Made by the API') } })).status).toBe(201);
    const feed = (await inst.api('POST', '/api/v1/calendar/feeds', { token, body: { name: 'Cal', detail: 'full', source: 'calendar' } })).body;
    const first = await fetchFeed(feed.url);
    expect(vevents(first.text).map((e) => e.summary)).toEqual(['Made by the API']);
    expect(first.text).toContain('X-FROM-CLIENT:yes');

    fs.writeFileSync(path.join(inst.dataDir, 'homes', 'ann', 'Calendars', 'Personal', 'vim.ics'), ics('vim@test', 'Written in vim'));
    let now = first;
    for (let i = 0; i < 100 && !now.text.includes('Written in vim'); i++) {
      await new Promise((r) => setTimeout(r, 100));
      now = await fetchFeed(feed.url, { 'if-none-match': first.headers.get('etag')! });
    }
    expect(now.status).toBe(200);
    expect(vevents(now.text).map((e) => e.summary).sort()).toEqual(['Made by the API', 'Written in vim']);

    const head = await fetch(inst.url + new URL(feed.url).pathname, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers.get('etag')).toBe(now.headers.get('etag'));
    expect(await head.text()).toBe('');
  });
});

describe('bad input', () => {
  const body = { name: 'x', detail: 'full', source: 'journal' };
  it.each([
    [{ ...body, detail: 'some' }, 'body.detail'],
    [{ ...body, source: 'inbox' }, 'body.source'],
    [{ ...body, name: '  ' }, 'body.name'],
    [{ ...body, color: 'blue' }, 'body.color'],
    [{ ...body, source_id: 'x' }, 'body.source_id'],
    [{ ...body, source: 'area' }, 'body.source_id'],
    [{ ...body, source: 'area', source_id: '#' }, 'body.source_id'],
    [{ ...body, extra: 1 }, 'body.extra'],
  ])('400 naming the field: %j', async (b, field) => {
    const r = await inst.api('POST', '/api/v1/calendar/feeds', { token, body: b });
    expect(r.status, r.text).toBe(400);
    expect(JSON.stringify(r.body.error)).toContain(field);
  });

  it('404 for a calendar that does not exist, and for unknown feed ids', async () => {
    const r = await inst.api('POST', '/api/v1/calendar/feeds', { token, body: { ...body, source: 'calendar', source_id: 'nope' } });
    expect(r.status).toBe(404);
    expect(r.body.error.details.field).toBe('body.source_id');
    for (const [m, route] of [
      ['PUT', '/api/v1/calendar/feeds/nope'],
      ['DELETE', '/api/v1/calendar/feeds/nope'],
      ['POST', '/api/v1/calendar/feeds/nope/link'],
      ['DELETE', '/api/v1/calendar/feeds/nope/link'],
    ] as const) {
      const x = await inst.api(m, route, { token, body: m === 'PUT' ? body : undefined });
      expect(x.status, `${m} ${route}`).toBe(404);
    }
    expect((await fetchFeed(`${inst.url}/feeds/qfeed_nope.ics`)).status).toBe(404);
  });

  it('feeds need a bearer token to manage', async () => {
    expect((await inst.api('GET', '/api/v1/calendar/feeds')).status).toBe(401);
  });
});
