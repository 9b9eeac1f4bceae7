/**
 * The CalDAV server's pure parts, table-style: XML in (namespaces resolved whatever the
 * prefixes) and out (multistatus), the DAV paths, filter parts, Apple colours, and the change
 * log behind sync tokens (over a stand-in for the calendar index: the log only reads it).
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { CalendarIndex } from '../../src/calendar/calendar-index.js';
import { parseEvent } from '../../src/calendar/ics.js';
import { hrefs, parseDavPath } from '../../src/caldav/paths.js';
import { parseFilter, parseUtc, textMatches, type TextMatch } from '../../src/caldav/query.js';
import { UserDavState } from '../../src/caldav/state.js';
import { colorFromApple } from '../../src/caldav/writes.js';
import { errorXml, multistatus, NS, parseXml, Prefixes, responseXml, XmlError } from '../../src/caldav/xml.js';
import { tempDir } from '../helpers/instance.js';

describe('XML in', () => {
  it.each([
    ['<d:propfind xmlns:d="DAV:"><d:prop><d:getetag/></d:prop></d:propfind>'],
    ['<propfind xmlns="DAV:"><prop><getetag/></prop></propfind>'],
    ['<A:propfind xmlns:A="DAV:"><A:prop><A:getetag/></A:prop></A:propfind>'],
    ['<?xml version="1.0"?>\n<x:propfind xmlns:x="DAV:">\n  <x:prop>\n    <x:getetag />\n  </x:prop>\n</x:propfind>'],
  ])('resolves namespaces whatever the prefix: %s', (body) => {
    const root = parseXml(body);
    expect([root.ns, root.name]).toEqual([NS.dav, 'propfind']);
    expect(root.children[0]!.children.map((c) => [c.ns, c.name])).toEqual([[NS.dav, 'getetag']]);
  });

  it('scopes declarations to their element and decodes entities in text and attributes', () => {
    const root = parseXml('<d:a xmlns:d="DAV:"><d:b xmlns:d="urn:x" n="a&amp;b">1 &lt; 2 &#x41;</d:b><d:c/></d:a>');
    expect(root.children.map((c) => [c.ns, c.name])).toEqual([['urn:x', 'b'], [NS.dav, 'c']]);
    expect(root.children[0]!.text).toBe('1 < 2 A');
    expect(root.children[0]!.attrs.n).toBe('a&b');
  });

  it.each([
    ['<d:a xmlns:d="DAV:"><d:b></d:a>', /closing tag/],
    ['<x:a/>', /undeclared namespace prefix "x"/],
    ['<!DOCTYPE a [<!ENTITY e "x">]><a/>', /DTD/],
    ['   ', /no XML element|.+/],
  ])('refuses %s', (body, message) => {
    expect(() => parseXml(body)).toThrow(message);
  });
});

it('refuses a body nested too deep as malformed XML, not as an internal error', () => {
  const body = `<d:a xmlns:d="DAV:">${'<d:b>'.repeat(20_000)}${'</d:b>'.repeat(20_000)}</d:a>`;
  expect(() => parseXml(body)).toThrow(XmlError);
});

describe('XML out', () => {
  it('groups properties by status and declares the namespaces clients brought', () => {
    const px = new Prefixes();
    const r = responseXml(px, '/dav/a b&c', [
      { ns: NS.dav, name: 'getetag', status: 200, value: { text: '"x<y"' } },
      { ns: 'urn:example', name: 'thing', status: 404 },
      { ns: NS.dav, name: 'displayname', status: 200, value: { text: 'Tom & Jerry' } },
    ]);
    const doc = multistatus(px, [r]);
    expect(doc).toContain('<d:href>/dav/a b&amp;c</d:href>');
    expect(doc).toContain('<d:propstat><d:prop><d:getetag>&quot;x&lt;y&quot;</d:getetag><d:displayname>Tom &amp; Jerry</d:displayname></d:prop><d:status>HTTP/1.1 200 OK</d:status></d:propstat>');
    expect(doc).toContain('<d:propstat><d:prop><x0:thing/></d:prop><d:status>HTTP/1.1 404 Not Found</d:status></d:propstat>');
    expect(doc).toContain('xmlns:x0="urn:example"');
    // What it writes, it reads back.
    expect(parseXml(doc).children[0]!.children.map((c) => c.name)).toEqual(['href', 'propstat', 'propstat']);
  });

  it('writes a member that is gone as href and status, and an error body naming the precondition', () => {
    const px = new Prefixes();
    expect(responseXml(px, '/x', { status: 404 })).toBe('<d:response><d:href>/x</d:href><d:status>HTTP/1.1 404 Not Found</d:status></d:response>');
    const err = errorXml(NS.caldav, 'valid-calendar-data', 'line 3: <bad>');
    expect(err).toContain('<c:valid-calendar-data/><q:message>line 3: &lt;bad&gt;</q:message>');
  });
});

describe('paths', () => {
  it.each([
    ['/dav', { kind: 'root' }],
    ['/dav/', { kind: 'root' }],
    ['/dav/principals/', { kind: 'principals' }],
    ['/dav/principals/ann/', { kind: 'principal', user: 'ann' }],
    ['/dav/calendars/ann', { kind: 'home', user: 'ann' }],
    ['/dav/calendars/ann/Work%20stuff/', { kind: 'calendar', user: 'ann', calendar: 'Work stuff' }],
    ['/dav/calendars/ann/Personal/a%2540b.ics', { kind: 'object', user: 'ann', calendar: 'Personal', name: 'a%40b.ics' }],
    ['/quire/dav/calendars/ann/', { kind: 'home', user: 'ann' }, '/quire'],
    ['/dav/calendars/ann/P/x/y', null],
    ['/dav/calendars/ann/%2e%2e/x.ics', null],
    ['/dav/calendars/ann/a%2Fb/', null],
    ['/dav/calendars/ann/%E0%A4%A/', null],
    ['/dav/other/', null],
    ['/api/v1/calendar', null],
  ] as const)('%s', (p, expected, base?: string) => {
    expect(parseDavPath(p, base)).toEqual(expected);
  });

  it('encodes names so that they come back the same (a file name holding %XX included)', () => {
    const h = hrefs('/q');
    for (const name of ['a%20b.ics', 'x@host.ics', 'sp ace+plus.ics', 'ü.ics']) {
      expect(parseDavPath(h.object('ann', 'My cal', name), '/q')).toEqual({ kind: 'object', user: 'ann', calendar: 'My cal', name });
    }
    expect(h.object('ann', 'P', 'x@host.ics')).toBe('/q/dav/calendars/ann/P/x@host.ics');
  });
});

describe('filters', () => {
  it.each([
    ['20260301T000000Z', Date.UTC(2026, 2, 1)],
    ['20261231T235959Z', Date.UTC(2026, 11, 31, 23, 59, 59)],
    ['20260301T000000', null],
    ['2026-03-01T00:00:00Z', null],
  ])('parseUtc(%s)', (v, ms) => expect(parseUtc(v)).toBe(ms));

  const tm = (text: string, o: Partial<TextMatch> = {}): TextMatch => ({ text, negate: false, collation: 'i;ascii-casemap', matchType: 'contains', ...o });
  it.each([
    ['Room 1', tm('room'), true],
    ['Room 1', tm('room', { collation: 'i;octet' }), false],
    ['Room 1', tm('room', { negate: true }), false],
    ['Straße', tm('STRASSE'), false],
    ['ÄRGER', tm('ärger', { collation: 'i;unicode-casemap' }), true],
    ['ÄRGER', tm('ärger'), false],
    ['abc', tm('abc', { matchType: 'equals' }), true],
    ['abc', tm('ab', { matchType: 'equals' }), false],
    ['abc', tm('ab', { matchType: 'starts-with' }), true],
    ['abc', tm('bc', { matchType: 'ends-with' }), true],
  ] as const)('text-match %s / %o → %s', (value, m, hit) => expect(textMatches(value, m)).toBe(hit));

  const filter = (inner: string) => parseFilter(parseXml(`<c:filter xmlns:c="urn:ietf:params:xml:ns:caldav">${inner}</c:filter>`));
  it('reads comp-filters with a time range, open at either end', () => {
    const f = filter('<c:comp-filter name="VCALENDAR"><c:comp-filter name="VEVENT"><c:time-range start="20260301T000000Z"/></c:comp-filter></c:comp-filter>');
    expect(f!.comps[0]!.timeRange!.from).toBe(Date.UTC(2026, 2, 1));
    expect(f!.comps[0]!.timeRange!.to).toBeGreaterThan(Date.UTC(2100, 0, 1));
  });
  it.each([
    ['<c:comp-filter name="VEVENT"/>', 'valid-filter'],
    ['<c:comp-filter name="VCALENDAR"><c:comp-filter name="VEVENT"><c:time-range/></c:comp-filter></c:comp-filter>', 'valid-filter'],
    ['<c:comp-filter name="VCALENDAR"><c:comp-filter name="VEVENT"><c:time-range start="2026"/></c:comp-filter></c:comp-filter>', 'valid-filter'],
    ['<c:comp-filter name="VCALENDAR"><c:comp-filter name="VEVENT"><c:comp-filter name="VALARM"/></c:comp-filter></c:comp-filter>', 'supported-filter'],
    ['<c:comp-filter name="VCALENDAR"><c:comp-filter name="VEVENT"><c:prop-filter name="SUMMARY"><c:text-match collation="i;klingon">x</c:text-match></c:prop-filter></c:comp-filter></c:comp-filter>', 'supported-collation'],
  ])('refuses %s with %s', (inner, name) => {
    let err: unknown;
    try {
      filter(inner);
    } catch (e) {
      err = e;
    }
    expect((err as { status: number; precondition: { name: string } }).status).toBe(403);
    expect((err as { precondition: { name: string } }).precondition.name).toBe(name);
  });
});

it.each([
  ['#FF8800FF', '#ff8800'],
  ['#ff8800', '#ff8800'],
  [' #A0B1C2 ', '#a0b1c2'],
  ['#FF88', null],
  ['red', null],
])('Apple colour %s → %s', (v, c) => expect(colorFromApple(v)).toBe(c));

describe('the change log behind sync tokens', () => {
  /** A stand-in for the calendar index with what the log reads: calendars, events by path and UID, generation. */
  function fakeIndex() {
    const files = new Map<string, string>();
    const metas = new Map<string, string | null>();
    const idx = {
      generation: 0,
      set(path: string, summary: string | null) {
        if (summary === null) files.delete(path);
        else files.set(path, summary);
        const cal = path.split('/')[1]!;
        if (!metas.has(cal)) metas.set(cal, null);
        this.generation++;
      },
      dropCalendar(id: string) {
        for (const p of [...files.keys()]) if (p.startsWith(`Calendars/${id}/`)) files.delete(p);
        metas.delete(id);
        this.generation++;
      },
      entry(path: string) {
        const summary = files.get(path);
        if (summary === undefined) return undefined;
        const uid = path.slice(path.lastIndexOf('/') + 1, -4);
        const text = `BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\nUID:${uid}\r\nDTSTART:20260101T100000Z\r\nSUMMARY:${summary}\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n`;
        return { path, calendarId: path.split('/')[1]!, etag: `${uid}-${summary}`, text, ics: parseEvent(text, { field: 'x', strict: false }), error: null, expansion: null };
      },
      cache: new Map<string, ReturnType<any>>(),
      calendars() {
        return [...metas.keys()].sort().map((id) => ({ id, meta: { name: id, color: null, visible: true }, metaEtag: metas.get(id) ?? null, events: new Set([...files.keys()].filter((p) => p.startsWith(`Calendars/${id}/`))) }));
      },
      calendarById(id: string) {
        return this.calendars().find((c) => c.id === id);
      },
      eventByPath(path: string) {
        const key = `${path} ${files.get(path)}`;
        if (!this.cache.has(key)) this.cache.set(key, this.entry(path));
        return this.cache.get(key);
      },
      eventByUid(uid: string) {
        const p = [...files.keys()].find((k) => k.endsWith(`/${uid}.ics`));
        return p === undefined ? undefined : this.eventByPath(p);
      },
    };
    return idx;
  }

  const names = (c: ReturnType<UserDavState['changesSince']>) =>
    c === 'invalid' ? 'invalid' : { changed: c.changed.map((x) => x.name), removed: c.removed.map((x) => x.name) };

  it('reports what changed since a token, in order, and survives a restart', async () => {
    const dir = tempDir('quire-davstate-');
    const file = path.join(dir, 'caldav', 'u1.json');
    const idx = fakeIndex();
    const index = idx as unknown as CalendarIndex;
    idx.set('Calendars/P/a.ics', 'A');
    idx.set('Calendars/P/b.ics', 'B');
    const s = new UserDavState(file);
    const t0 = await s.current(index);
    expect(names(s.changesSince('P', null, t0))).toEqual({ changed: ['a.ics', 'b.ics'], removed: [] });
    const token = s.tokenAt(t0);
    expect(fs.existsSync(file)).toBe(true);

    idx.set('Calendars/P/b.ics', 'B2');
    idx.set('Calendars/P/c.ics', 'C');
    idx.set('Calendars/P/a.ics', null);
    const t1 = await s.current(index);
    expect(names(s.changesSince('P', token, t1))).toEqual({ changed: ['b.ics', 'c.ics'], removed: ['a.ics'] });
    expect(names(s.changesSince('P', s.tokenAt(t1), t1))).toEqual({ changed: [], removed: [] });

    // A new process reads the log: old tokens still answer, and a change made meanwhile shows.
    idx.set('Calendars/P/c.ics', 'C2');
    const again = new UserDavState(file);
    const t2 = await again.current(index);
    expect(names(again.changesSince('P', token, t2))).toEqual({ changed: ['b.ics', 'c.ics'], removed: ['a.ics'] });
    expect(names(again.changesSince('P', s.tokenAt(t1), t2))).toEqual({ changed: ['c.ics'], removed: [] });
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it.each([
    ['another log', (s: UserDavState, t: number) => s.tokenAt(t).replace(/sync\/[^/]+\//, 'sync/other/')],
    ['a number it never gave', (s: UserDavState, t: number) => s.tokenAt(t + 5)],
    ['not a token', () => 'hello'],
  ])('refuses a token from %s', async (_what, make) => {
    const dir = tempDir('quire-davstate-');
    const idx = fakeIndex();
    idx.set('Calendars/P/a.ics', 'A');
    const s = new UserDavState(path.join(dir, 'x.json'));
    const t = await s.current(idx as unknown as CalendarIndex);
    expect(s.changesSince('P', make(s, t), t)).toBe('invalid');
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('a calendar removed and made again under the same name does not answer tokens of the old one', async () => {
    const dir = tempDir('quire-davstate-');
    const idx = fakeIndex();
    const index = idx as unknown as CalendarIndex;
    idx.set('Calendars/P/a.ics', 'A');
    const s = new UserDavState(path.join(dir, 'x.json'));
    const old = s.tokenAt(await s.current(index));
    idx.dropCalendar('P');
    await s.current(index);
    idx.set('Calendars/P/z.ics', 'Z');
    const t = await s.current(index);
    expect(s.changesSince('P', old, t)).toBe('invalid');
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('names an event by the alias a client chose, unless a file in the folder has that name', async () => {
    const dir = tempDir('quire-davstate-');
    const idx = fakeIndex();
    const index = idx as unknown as CalendarIndex;
    idx.set('Calendars/P/u1.ics', 'A');
    idx.set('Calendars/P/taken.ics', 'B');
    const s = new UserDavState(path.join(dir, 'x.json'));
    await s.setAlias('u1', 'mine.ics');
    expect([...s.view(index, 'P').byName.keys()].sort()).toEqual(['mine.ics', 'taken.ics']);
    await s.setAlias('u1', 'taken.ics');
    expect([...s.view(index, 'P').byName.keys()].sort()).toEqual(['taken.ics', 'u1.ics']);
    fs.rmSync(dir, { recursive: true, force: true });
  });
});
