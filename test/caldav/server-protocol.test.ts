/**
 * The CalDAV server's answers as the RFCs ask for them, with plain HTTP requests: discovery
 * without a client library, sign-in and its refusals, what an App Password's Home prefix
 * and scopes allow, the precondition bodies of refused writes, PROPPATCH and MKCALENDAR
 * through the calendar functions, and the setup profile's principal URL.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInstance, type TestInstance } from '../helpers/instance.js';
import { eventually } from '../helpers/wait.js';
import { ics } from '../helpers/ics.js';

let inst: TestInstance;
let token: string;
let password: string;

const basic = (user: string, pass: string) => `Basic ${Buffer.from(`${user}:${pass}`).toString('base64')}`;

interface DavOpts {
  auth?: string | null;
  headers?: Record<string, string>;
  body?: string;
}

async function dav(method: string, route: string, o: DavOpts = {}) {
  const headers: Record<string, string> = { ...(o.headers ?? {}) };
  const auth = o.auth === undefined ? basic('ann', password) : o.auth;
  if (auth) headers.authorization = auth;
  if (o.body !== undefined) headers['content-type'] ??= o.body.startsWith('BEGIN:') ? 'text/calendar; charset=utf-8' : 'application/xml; charset=utf-8';
  const res = await fetch(inst.url + route, { method, headers, body: o.body, redirect: 'manual' });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

const propfind = (props: string) => `<?xml version="1.0"?><d:propfind xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav" xmlns:cs="http://calendarserver.org/ns/" xmlns:i="http://apple.com/ns/ical/"><d:prop>${props}</d:prop></d:propfind>`;

async function appPassword(body: Record<string, unknown>): Promise<string> {
  const r = await inst.api('POST', '/api/v1/auth/app-passwords', { token, body: { name: `p${Math.random()}`, ...body } });
  expect(r.status, r.text).toBe(201);
  return r.body.password;
}

beforeAll(async () => {
  inst = await startInstance();
  token = (await inst.user('ann')).token;
  password = await appPassword({});
  const r = await inst.api('POST', '/api/v1/calendar/events', { token, body: { icalendar: ics('standup@test', ['DTSTART:20260302T090000Z', 'DTEND:20260302T093000Z', 'SUMMARY:Standup', 'LOCATION:Room 1']) } });
  expect(r.status, r.text).toBe(201);
}, 60_000);

afterAll(() => inst?.close());

describe('discovery', () => {
  it('redirects /.well-known/caldav to the DAV root for any method, before sign-in', async () => {
    for (const method of ['GET', 'PROPFIND']) {
      const r = await dav(method, '/.well-known/caldav', { auth: null });
      expect(r.status).toBe(301);
      expect(r.headers.get('location')).toBe('/dav/');
    }
    // A PROPFIND of the server's root (a client given only the address) is sent the same way.
    const root = await dav('PROPFIND', '/', { auth: null });
    expect([root.status, root.headers.get('location')]).toEqual([301, '/dav/']);
  });

  it('answers OPTIONS with the DAV classes and calendar-access', async () => {
    const r = await dav('OPTIONS', '/dav/calendars/ann/Personal/', { auth: null });
    expect(r.status).toBe(200);
    expect(r.headers.get('dav')).toBe('1, 3, calendar-access');
    expect(r.headers.get('allow')).toContain('REPORT');
  });

  it('leads from the root to the principal, the calendar home and the calendar', async () => {
    const root = await dav('PROPFIND', '/dav/', { headers: { depth: '0' }, body: propfind('<d:current-user-principal/>') });
    expect(root.status).toBe(207);
    expect(root.text).toContain('<d:current-user-principal><d:href>/dav/principals/ann/</d:href></d:current-user-principal>');
    const principal = await dav('PROPFIND', '/dav/principals/ann/', { headers: { depth: '0' }, body: propfind('<c:calendar-home-set/><d:resourcetype/><d:displayname/>') });
    expect(principal.text).toContain('<c:calendar-home-set><d:href>/dav/calendars/ann/</d:href></c:calendar-home-set>');
    expect(principal.text).toContain('<d:resourcetype><d:principal/></d:resourcetype>');
    const home = await dav('PROPFIND', '/dav/calendars/ann/', {
      headers: { depth: '1' },
      body: propfind('<d:resourcetype/><d:displayname/><cs:getctag/><d:sync-token/><c:supported-calendar-component-set/><d:current-user-privilege-set/><x:unknown xmlns:x="urn:example"/>'),
    });
    expect(home.status).toBe(207);
    expect(home.text).toContain('<d:href>/dav/calendars/ann/Personal/</d:href>');
    expect(home.text).toContain('<d:resourcetype><d:collection/><c:calendar/></d:resourcetype>');
    expect(home.text).toContain('<c:supported-calendar-component-set><c:comp name="VEVENT"/></c:supported-calendar-component-set>');
    expect(home.text).toMatch(/<cs:getctag>[^<]+<\/cs:getctag>/);
    expect(home.text).toContain('<d:privilege><d:write/></d:privilege>');
    // An unknown property is answered 404, in its own namespace.
    expect(home.text).toMatch(/<x0:unknown\/><\/d:prop><d:status>HTTP\/1.1 404 Not Found<\/d:status>/);
    expect(home.text).toContain('xmlns:x0="urn:example"');
  });

  it('refuses Depth: infinity with DAV:propfind-finite-depth and bad XML with 400', async () => {
    const inf = await dav('PROPFIND', '/dav/calendars/ann/', { headers: { depth: 'infinity' }, body: propfind('<d:displayname/>') });
    expect(inf.status).toBe(403);
    expect(inf.text).toContain('<d:propfind-finite-depth/>');
    const bad = await dav('PROPFIND', '/dav/calendars/ann/', { headers: { depth: '0' }, body: '<d:propfind xmlns:d="DAV:"><d:prop>' });
    expect(bad.status).toBe(400);
    const dtd = await dav('PROPFIND', '/dav/calendars/ann/', { headers: { depth: '0' }, body: '<!DOCTYPE x [<!ENTITY a "b">]><d:propfind xmlns:d="DAV:"/>' });
    expect(dtd.status).toBe(400);
  });
});

describe('sign-in', () => {
  it('asks for Basic credentials, refuses a wrong password or another username, takes a session token', async () => {
    const none = await dav('PROPFIND', '/dav/', { auth: null, headers: { depth: '0' } });
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toBe('Basic realm="Quire calendars", charset="UTF-8"');
    expect((await dav('PROPFIND', '/dav/', { auth: basic('ann', 'qa_wrong'), headers: { depth: '0' } })).status).toBe(401);
    await inst.user('bob');
    expect((await dav('PROPFIND', '/dav/', { auth: basic('bob', password), headers: { depth: '0' } })).status).toBe(401);
    // Usernames ignore case; a session's bearer token works as well.
    expect((await dav('PROPFIND', '/dav/', { auth: basic('ANN', password), headers: { depth: '0' } })).status).toBe(207);
    expect((await dav('PROPFIND', '/dav/', { auth: `Bearer ${token}`, headers: { depth: '0' } })).status).toBe(207);
    // Another user's tree is not there for ann.
    expect((await dav('PROPFIND', '/dav/calendars/bob/', { headers: { depth: '0' } })).status).toBe(404);
  });

  it('throttles repeated wrong passwords per address, as the API does, but still serves a valid one', async () => {
    const config = inst.server.services.config;
    const before = config.bearerFailureLimitPerMinute;
    config.bearerFailureLimitPerMinute = 3;
    try {
      const codes: number[] = [];
      for (let i = 0; i < 5; i++) codes.push((await dav('PROPFIND', '/dav/', { auth: basic('ann', `qa_guess${i}`), headers: { depth: '0' } })).status);
      // Earlier tests' failures count too: the limit is reached within these five.
      expect(codes[0]).toBe(401);
      expect(codes.slice(-2)).toEqual([429, 429]);
      expect(codes.every((c) => c === 401 || c === 429)).toBe(true);
      expect((await dav('PROPFIND', '/dav/', { headers: { depth: '0' } })).status).toBe(207);
    } finally {
      config.bearerFailureLimitPerMinute = before;
    }
  });
});

describe('what an App Password sees', () => {
  it('with a Home prefix outside Calendars/: no calendars, no events, no writes', async () => {
    const notes = await appPassword({ home_prefix: 'Notes/' });
    const auth = basic('ann', notes);
    const home = await dav('PROPFIND', '/dav/calendars/ann/', { auth, headers: { depth: '1' }, body: propfind('<d:resourcetype/>') });
    expect(home.status).toBe(207);
    expect(home.text).not.toContain('Personal');
    expect((await dav('GET', '/dav/calendars/ann/Personal/standup@test.ics', { auth })).status).toBe(404);
    const put = await dav('PUT', '/dav/calendars/ann/Personal/new.ics', { auth, body: ics('new-1', ['DTSTART:20260401T090000Z']) });
    expect(put.status).toBe(409);
    const mk = await dav('MKCALENDAR', '/dav/calendars/ann/Sneaky/', { auth });
    expect(mk.status).toBe(403);
    expect(fs.existsSync(path.join(inst.dataDir, 'homes', 'ann', 'Calendars', 'Sneaky'))).toBe(false);
  });

  it('with Calendars/Work/ as prefix: that calendar only', async () => {
    expect((await dav('MKCALENDAR', '/dav/calendars/ann/Work/')).status).toBe(201);
    const auth = basic('ann', await appPassword({ home_prefix: 'Calendars/Work/' }));
    const home = await dav('PROPFIND', '/dav/calendars/ann/', { auth, headers: { depth: '1' }, body: propfind('<d:resourcetype/>') });
    expect(home.text).toContain('/dav/calendars/ann/Work/');
    expect(home.text).not.toContain('/dav/calendars/ann/Personal/');
    expect((await dav('PUT', '/dav/calendars/ann/Work/w1.ics', { auth, body: ics('w1', ['DTSTART:20260401T090000Z']) })).status).toBe(201);
  });

  it('read-only and account-only App Passwords', async () => {
    const reader = basic('ann', await appPassword({ scopes: [{ scope: 'data', access: 'read' }] }));
    expect((await dav('GET', '/dav/calendars/ann/Personal/standup@test.ics', { auth: reader })).status).toBe(200);
    const put = await dav('PUT', '/dav/calendars/ann/Personal/r.ics', { auth: reader, body: ics('r1', ['DTSTART:20260401T090000Z']) });
    expect(put.status).toBe(403);
    expect(put.text).toContain('<d:need-privileges/>');
    const privs = await dav('PROPFIND', '/dav/calendars/ann/Personal/', { auth: reader, headers: { depth: '0' }, body: propfind('<d:current-user-privilege-set/>') });
    expect(privs.text).not.toContain('<d:write/>');
    const account = basic('ann', await appPassword({ scopes: [{ scope: 'account', access: 'write' }] }));
    expect((await dav('PROPFIND', '/dav/', { auth: account, headers: { depth: '0' } })).status).toBe(403);
  });
});

describe('events', () => {
  it('GET answers the file with its ETag; conditional PUTs and DELETEs', async () => {
    const get = await dav('GET', '/dav/calendars/ann/Personal/standup@test.ics');
    expect(get.status).toBe(200);
    expect(get.headers.get('content-type')).toContain('text/calendar');
    const etag = get.headers.get('etag')!;
    const api = await inst.api('GET', '/api/v1/calendar/events/standup%40test', { token });
    expect(etag).toBe(`"${api.body.etag}"`);
    // If-None-Match: * on an existing resource, and a stale If-Match: 412, nothing written.
    expect((await dav('PUT', '/dav/calendars/ann/Personal/standup@test.ics', { headers: { 'if-none-match': '*' }, body: get.text })).status).toBe(412);
    expect((await dav('PUT', '/dav/calendars/ann/Personal/standup@test.ics', { headers: { 'if-match': '"stale"' }, body: get.text.replace('Standup', 'X') })).status).toBe(412);
    expect((await dav('DELETE', '/dav/calendars/ann/Personal/standup@test.ics', { headers: { 'if-match': '"stale"' } })).status).toBe(412);
    const put = await dav('PUT', '/dav/calendars/ann/Personal/standup@test.ics', { headers: { 'if-match': etag }, body: get.text.replace('SUMMARY:Standup', 'SUMMARY:Stand-up') });
    expect(put.status).toBe(204);
    const after = await dav('GET', '/dav/calendars/ann/Personal/standup@test.ics');
    expect(after.text).toContain('SUMMARY:Stand-up');
    expect(put.headers.get('etag')).toBe(after.headers.get('etag'));
  });

  it('refuses bad calendar data with the CalDAV precondition and writes nothing', async () => {
    const bad = await dav('PUT', '/dav/calendars/ann/Personal/bad.ics', { body: 'BEGIN:VCALENDAR\r\nnot ical' });
    expect(bad.status).toBe(403);
    expect(bad.text).toContain('<c:valid-calendar-data/>');
    const todo = await dav('PUT', '/dav/calendars/ann/Personal/todo.ics', { body: 'BEGIN:VCALENDAR\r\nVERSION:2.0\r\nBEGIN:VTODO\r\nUID:t1\r\nEND:VTODO\r\nEND:VCALENDAR\r\n' });
    expect(todo.status).toBe(403);
    expect(todo.text).toContain('<c:supported-calendar-component/>');
    // A second resource for a UID the Home has already.
    const dup = await dav('PUT', '/dav/calendars/ann/Personal/other-name.ics', { body: ics('standup@test', ['DTSTART:20260302T090000Z']) });
    expect(dup.status).toBe(409);
    expect(dup.text).toContain('<c:no-uid-conflict><d:href>/dav/calendars/ann/Personal/standup@test.ics</d:href></c:no-uid-conflict>');
    // (The vault may still hold the previous write's temp file for a moment: not an event.)
    const files = fs.readdirSync(path.join(inst.dataDir, 'homes', 'ann', 'Calendars', 'Personal')).filter((f) => !f.includes('.quire-tmp-')).sort();
    expect(files, files.join()).toEqual(['calendar.json', 'standup@test.ics']);
  });

  it('calendar-query: time range and a text match on a property', async () => {
    const q = (filter: string) =>
      dav('REPORT', '/dav/calendars/ann/Personal/', {
        headers: { depth: '1' },
        body: `<c:calendar-query xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav"><d:prop><d:getetag/></d:prop><c:filter><c:comp-filter name="VCALENDAR"><c:comp-filter name="VEVENT">${filter}</c:comp-filter></c:comp-filter></c:filter></c:calendar-query>`,
      });
    expect((await q('<c:time-range start="20260302T000000Z" end="20260303T000000Z"/>')).text).toContain('standup@test.ics');
    expect((await q('<c:time-range start="20260303T000000Z" end="20260304T000000Z"/>')).text).not.toContain('standup@test.ics');
    expect((await q('<c:time-range start="20260301T000000Z"/>')).text).toContain('standup@test.ics');
    expect((await q('<c:prop-filter name="LOCATION"><c:text-match>room</c:text-match></c:prop-filter>')).text).toContain('standup@test.ics');
    expect((await q('<c:prop-filter name="LOCATION"><c:text-match negate-condition="yes">room</c:text-match></c:prop-filter>')).text).not.toContain('standup@test.ics');
    const unsupported = await q('<c:prop-filter name="DTSTART"><c:param-filter name="TZID"/></c:prop-filter>');
    expect(unsupported.status).toBe(403);
    expect(unsupported.text).toContain('<c:supported-filter/>');
  });

  it('sync-collection: a token this server never gave is refused (valid-sync-token); a limit cuts the answer (507)', async () => {
    const body = (t: string) => `<d:sync-collection xmlns:d="DAV:"><d:sync-token>${t}</d:sync-token><d:sync-level>1</d:sync-level><d:prop><d:getetag/></d:prop></d:sync-collection>`;
    const r = await dav('REPORT', '/dav/calendars/ann/Personal/', { body: body('https://quire.invalid/ns/sync/other/3') });
    expect(r.status).toBe(403);
    expect(r.text).toContain('<d:valid-sync-token/>');
    // With a limit, the answer is cut with 507 for the collection and a token that resumes after it.
    for (const uid of ['s1', 's2']) expect((await dav('PUT', `/dav/calendars/ann/Personal/${uid}.ics`, { body: ics(uid, ['DTSTART:20260501T090000Z']) })).status).toBe(201);
    const limited = (t: string) => dav('REPORT', '/dav/calendars/ann/Personal/', { body: body(t).replace('<d:prop>', '<d:limit><d:nresults>2</d:nresults></d:limit><d:prop>') });
    const hrefsOf = (text: string) => [...text.matchAll(/<d:href>([^<]+)<\/d:href>/g)].map((m) => m[1]!.split('/').filter(Boolean).pop());
    const tokenOf = (text: string) => /<d:sync-token>([^<]+)<\/d:sync-token>/.exec(text)![1]!;
    const first = await limited('');
    expect(first.status).toBe(207);
    expect(hrefsOf(first.text)).toEqual(['standup@test.ics', 's1.ics', 'Personal']);
    expect(first.text).toContain('<d:status>HTTP/1.1 507 Insufficient Storage</d:status>');
    const rest = await limited(tokenOf(first.text));
    expect(hrefsOf(rest.text)).toEqual(['s2.ics']);
    expect(rest.text).not.toContain('507 Insufficient Storage');
  });
});

describe('calendars', () => {
  it('PROPPATCH changes the display name and colour in calendar.json (and the ctag); other properties fail all together', async () => {
    const ctag = async () => /<cs:getctag>([^<]+)</.exec((await dav('PROPFIND', '/dav/calendars/ann/Personal/', { headers: { depth: '0' }, body: propfind('<cs:getctag/>') })).text)![1];
    const before = await ctag();
    const r = await dav('PROPPATCH', '/dav/calendars/ann/Personal/', {
      body: '<d:propertyupdate xmlns:d="DAV:" xmlns:i="http://apple.com/ns/ical/"><d:set><d:prop><d:displayname>Private</d:displayname><i:calendar-color>#FF8800FF</i:calendar-color></d:prop></d:set></d:propertyupdate>',
    });
    expect(r.status).toBe(207);
    expect(r.text).not.toContain('424');
    const cal = (await inst.api('GET', '/api/v1/calendar/calendars', { token })).body.calendars.find((c: { id: string }) => c.id === 'Personal');
    expect([cal.name, cal.color]).toEqual(['Private', '#ff8800']);
    // Clients look for a new name or colour when the ctag moves.
    expect(await ctag()).not.toBe(before);
    const mixed = await dav('PROPPATCH', '/dav/calendars/ann/Personal/', {
      body: '<d:propertyupdate xmlns:d="DAV:" xmlns:x="urn:x"><d:set><d:prop><d:displayname>Again</d:displayname><x:thing>1</x:thing></d:prop></d:set></d:propertyupdate>',
    });
    expect(mixed.text).toContain('HTTP/1.1 424 Failed Dependency');
    expect(mixed.text).toContain('HTTP/1.1 403 Forbidden');
    const still = (await inst.api('GET', '/api/v1/calendar/calendars', { token })).body.calendars.find((c: { id: string }) => c.id === 'Personal');
    expect(still.name).toBe('Private');
    const color = await dav('PROPFIND', '/dav/calendars/ann/Personal/', { headers: { depth: '0' }, body: propfind('<i:calendar-color/><d:displayname/>') });
    expect(color.text).toContain('<ical:calendar-color>#FF8800</ical:calendar-color>');
  });

  it("a subscription's read-only mirror is read-only over DAV too: no PUT, no DELETE, no write privilege", async () => {
    const dir = path.join(inst.dataDir, 'homes', 'ann', 'Calendars', 'Holidays');
    fs.mkdirSync(dir);
    fs.writeFileSync(path.join(dir, 'calendar.json'), JSON.stringify({ name: 'Holidays', read_only: true, source: { kind: 'subscription', id: 'x' } }));
    fs.writeFileSync(path.join(dir, 'h1.ics'), ics('h1', ['DTSTART;VALUE=DATE:20261225', 'SUMMARY:Christmas']));
    const url = '/dav/calendars/ann/Holidays/h1.ics';
    const got = await eventually(async () => {
      const r = await dav('GET', url);
      return r.status === 200 ? r : null;
    });
    const put = await dav('PUT', url, { headers: { 'if-match': got!.headers.get('etag')! }, body: got!.text.replace('Christmas', 'Xmas') });
    expect(put.status).toBe(403);
    expect(put.text).toContain('<d:need-privileges/>');
    expect((await dav('PUT', '/dav/calendars/ann/Holidays/new.ics', { body: ics('h2', ['DTSTART;VALUE=DATE:20261226']) })).status).toBe(403);
    expect((await dav('DELETE', url)).status).toBe(403);
    expect(fs.readdirSync(dir).sort()).toEqual(['calendar.json', 'h1.ics']);
    const privs = await dav('PROPFIND', '/dav/calendars/ann/Holidays/', { headers: { depth: '0' }, body: propfind('<d:current-user-privilege-set/>') });
    expect(privs.text).not.toContain('<d:write-content/>');
    expect(privs.text).toContain('<d:read/>');
  });

  it('MKCALENDAR makes a calendar folder with its name; a second one answers resource-must-be-null', async () => {
    const body = '<c:mkcalendar xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav"><d:set><d:prop><d:displayname>Family</d:displayname></d:prop></d:set></c:mkcalendar>';
    expect((await dav('MKCALENDAR', '/dav/calendars/ann/family/', { body })).status).toBe(201);
    const cal = (await inst.api('GET', '/api/v1/calendar/calendars', { token })).body.calendars.find((c: { id: string }) => c.id === 'family');
    expect(cal.name).toBe('Family');
    const again = await dav('MKCALENDAR', '/dav/calendars/ann/family/', { body });
    expect(again.status).toBe(405);
    expect(again.text).toContain('<d:resource-must-be-null/>');
  });
});

describe('hostile or odd requests get a 4xx (or their answer), never a 5xx, and change nothing', () => {
  const C = 'xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav"';
  it.each([
    ['PUT', '/dav/calendars/ann/', 'BEGIN:VCALENDAR\r\nEND:VCALENDAR\r\n', {}, 405],
    ['PUT', '/dav/calendars/ann/Nope/x.ics', ics('nope-1', ['DTSTART:20260101T000000Z']), {}, 409],
    ['PUT', `/dav/calendars/ann/Personal/${'n'.repeat(300)}.ics`, ics('long-1', ['DTSTART:20260101T000000Z']), {}, 400],
    ['PUT', '/dav/calendars/ann/Personal/x.ics', '\u0000\u0001binary', {}, 403],
    ['PUT', '/dav/calendars/ann/Personal/x.ics', ics('x-1', ['DTSTART:20260101T000000Z']), { 'if-match': 'garbage' }, 412],
    ['DELETE', '/dav/calendars/ann/Personal/', undefined, {}, 403],
    ['DELETE', '/dav/calendars/ann/Personal/missing.ics', undefined, {}, 404],
    ['REPORT', '/dav/calendars/ann/Personal/', undefined, {}, 400],
    ['REPORT', '/dav/calendars/ann/Personal/', `<d:expand-property ${C}/>`, {}, 403],
    ['REPORT', '/dav/calendars/ann/', `<d:sync-collection ${C}><d:sync-token/></d:sync-collection>`, {}, 403],
    ['REPORT', '/dav/calendars/ann/Personal/', `<d:sync-collection ${C}><d:sync-token/><d:limit><d:nresults>-1</d:nresults></d:limit></d:sync-collection>`, {}, 400],
    ['REPORT', '/dav/calendars/ann/Personal/', `<c:calendar-multiget ${C}><d:prop><d:getetag/></d:prop><d:href>http://[::1</d:href><d:href>/dav/calendars/bob/P/x.ics</d:href></c:calendar-multiget>`, {}, 207],
    ['REPORT', '/dav/calendars/ann/Personal/', `<c:calendar-query ${C}><c:filter><c:comp-filter/></c:filter></c:calendar-query>`, {}, 403],
    ['PROPFIND', '/dav/calendars/ann/Personal/', undefined, { depth: 'two' }, 400],
    ['PROPFIND', '/dav/calendars/ann/Personal/', `<d:propertyupdate ${C}/>`, { depth: '0' }, 400],
    ['PROPPATCH', '/dav/calendars/ann/Personal/', undefined, {}, 400],
    ['PROPPATCH', '/dav/calendars/ann/Personal/', `<d:propertyupdate ${C}><d:set><d:prop><d:displayname>  </d:displayname></d:prop></d:set></d:propertyupdate>`, {}, 207],
    ['MKCALENDAR', '/dav/calendars/ann/Personal/x.ics', undefined, {}, 403],
    ['MKCALENDAR', '/dav/calendars/ann/.hidden/', undefined, {}, 403],
    ['MKCOL', '/dav/calendars/ann/Plain/', undefined, {}, 403],
    ['MKCOL', '/dav/calendars/ann/Plain/', `<d:mkcol ${C}><d:set><d:prop><d:resourcetype><d:collection/></d:resourcetype></d:prop></d:set></d:mkcol>`, {}, 403],
    // Fastify refuses a malformed percent-encoding before the route (the app's 400).
    ['GET', '/dav/calendars/ann/Personal/%E0%A4%A.ics', undefined, {}, 400],
  ] as const)('%s %s', async (method, route, body, headers, status) => {
    const before = fs.readdirSync(path.join(inst.dataDir, 'homes', 'ann', 'Calendars')).sort();
    const r = await dav(method, route, { body, headers: { ...headers } });
    expect(r.status, r.text).toBe(status);
    expect(fs.readdirSync(path.join(inst.dataDir, 'homes', 'ann', 'Calendars')).sort()).toEqual(before);
  });
});

it("the setup profile's principal URL, port and TLS flag lead to this server's principal", async () => {
  const ap = await inst.api('POST', '/api/v1/auth/app-passwords', { token, body: { name: 'iPhone' } });
  const c = await inst.api('POST', `/api/v1/auth/app-passwords/${ap.body.app_password.id}/profiles`, { token, body: { password: ap.body.password } });
  expect(c.status, c.text).toBe(201);
  const xml = await (await fetch(c.body.items[0].url.replace('localhost', '127.0.0.1'))).text();
  const value = (key: string) => new RegExp(`<key>${key}</key><(?:string|integer)>([^<]*)<`).exec(xml)?.[1];
  const principal = new URL(value('CalDAVPrincipalURL')!);
  expect(Number(value('CalDAVPort'))).toBe(Number(new URL(inst.url).port));
  expect(xml).toContain('<key>CalDAVUseSSL</key><false/>');
  const r = await dav('PROPFIND', principal.pathname, { auth: basic(value('CalDAVUsername')!, ap.body.password), headers: { depth: '0' }, body: propfind('<c:calendar-home-set/>') });
  expect(r.status).toBe(207);
  expect(r.text).toContain('<c:calendar-home-set><d:href>/dav/calendars/ann/</d:href></c:calendar-home-set>');
});
