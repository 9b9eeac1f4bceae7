/** The pure rules of public links, table-style: permissions per target, ranges, previews, note HTML. */
import { describe, expect, it } from 'vitest';
import { permissionProblems, statusOf } from '../../src/public/links.js';
import { looksLikeText, mimeOf, previewKind } from '../../src/public/media.js';
import { noteHtml, type LinkResolver } from '../../src/public/render.js';
import { thumbSize } from '../../src/public/thumbs.js';
import { parseRange } from '../../src/public/visitor.js';

const P = (view: boolean, download: boolean, upload: boolean, edit: boolean) => ({ view, download, upload, edit });

describe('permissionProblems', () => {
  it.each([
    ['folder', P(true, true, true, false), []],
    ['folder', P(false, false, true, false), []],
    ['folder', P(false, false, false, false), ['permissions']],
    ['folder', P(true, false, false, true), ['permissions.edit']],
    ['note', P(true, true, false, true), []],
    ['note', P(true, false, true, false), ['permissions.upload']],
    ['file', P(true, true, false, false), []],
    ['file', P(true, false, true, true), ['permissions.upload', 'permissions.edit']],
    ['canvas', P(true, false, false, true), []],
    ['canvas', P(true, true, false, false), ['permissions.download']],
  ] as const)('%s %o -> %o', (kind, p, fields) => {
    expect(permissionProblems(kind, p).map(([f]) => f)).toEqual(fields);
  });
});

describe('statusOf', () => {
  const base = { revoked_at: null, expires_at: null } as any;
  it.each([
    [{}, 'active'],
    [{ expires_at: 2000 }, 'active'],
    [{ expires_at: 1000 }, 'expired'],
    [{ expires_at: 999 }, 'expired'],
    [{ revoked_at: 5, expires_at: 999 }, 'revoked'],
  ])('%o at 1000 -> %s', (over, status) => {
    expect(statusOf({ ...base, ...over }, 1000)).toBe(status);
  });
});

describe('parseRange (size 100)', () => {
  it.each([
    [undefined, null],
    ['', null],
    ['bytes=0-9', { start: 0, end: 9 }],
    ['bytes=90-', { start: 90, end: 99 }],
    ['bytes=90-500', { start: 90, end: 99 }],
    ['bytes=-10', { start: 90, end: 99 }],
    ['bytes=-500', { start: 0, end: 99 }],
    ['bytes=100-', 'unsatisfiable'],
    ['bytes=-0', 'unsatisfiable'],
    ['bytes=9-2', null],
    ['bytes=0-1,5-6', null],
    ['items=0-1', null],
    ['bytes=-', null],
    ['bytes=abc', null],
  ])('%s -> %o', (header, out) => {
    expect(parseRange(header, 100)).toEqual(out);
  });
});

describe('media', () => {
  it.each([
    ['a/b.PNG', 'image/png'],
    ['x.jpeg', 'image/jpeg'],
    ['notes.md', 'text/markdown; charset=utf-8'],
    ['.hidden', null],
    ['noext', null],
  ])('mimeOf(%s) = %s', (name, mime) => expect(mimeOf(name)).toBe(mime));

  it.each([
    ['n.md', 'x', 'note'],
    ['p.jpg', '\u0000\u0001', 'as_is'],
    ['d.pdf', '%PDF', 'as_is'],
    ['page.html', '<script>', 'text'],
    ['data.csv', 'a,b', 'text'],
    ['b.bin', '\u0000abc', null],
  ])('previewKind(%s)', (name, body, kind) => expect(previewKind(name, Buffer.from(body, 'latin1'))).toBe(kind));

  it('looksLikeText accepts UTF-8 cut at the sniff boundary and refuses invalid UTF-8', () => {
    expect(looksLikeText(Buffer.from('é'.repeat(5000), 'utf8'))).toBe(true);
    expect(looksLikeText(Buffer.from([0xc3, 0x28, 0x41]))).toBe(false);
  });
});

describe('thumbSize', () => {
  it.each([
    [0, 256],
    [1, 1],
    [2048, 2048],
  ])('%d -> %d', (s, out) => expect(thumbSize(s)).toBe(out));
  it('refuses more than 2048', () => expect(() => thumbSize(2049)).toThrow(/1 to 2048/));
});

describe('noteHtml', () => {
  const links: LinkResolver = {
    href: (t) => (t === 'Shared' || t === 'Shared.md' ? '/p/s?path=Shared.md' : null),
    imageSrc: (t) => (t === 'pic.png' ? '/api/v1/public/s/preview?path=pic.png' : null),
  };
  it.each([
    ['[[Shared]]', '<p><a href="/p/s?path=Shared.md" rel="noopener noreferrer nofollow">Shared</a></p>'],
    ['[[Shared|the one]]', '<p><a href="/p/s?path=Shared.md" rel="noopener noreferrer nofollow">the one</a></p>'],
    ['[[Secret]]', '<p>Secret</p>'],
    ['[[Secret#Part]]', '<p>Secret › Part</p>'],
    ['[[#Supported types]]', '<p>Supported types</p>'],
    ['[[#^block-1]]', '<p>block-1</p>'],
    ['![[pic.png]]', '<p><img src="/api/v1/public/s/preview?path=pic.png" alt="pic.png" /></p>'],
    ['![[other.png]]', '<p>other.png</p>'],
    ['[md](Shared.md)', '<p><a href="/p/s?path=Shared.md" rel="noopener noreferrer nofollow">md</a></p>'],
    ['[md](Secret.md)', '<p>md</p>'],
    ['![alt](pic.png)', '<p><img src="/api/v1/public/s/preview?path=pic.png" alt="alt" /></p>'],
    ['![alt](../x.png)', '<p>alt</p>'],
    ['[web](https://example.org)', '<p><a href="https://example.org" rel="noopener noreferrer nofollow">web</a></p>'],
    ['<img src=x onerror=alert(1)>', '<p>&lt;img src=x onerror=alert(1)&gt;</p>'],
    ['[x](javascript:alert(1))', '<p>[x](javascript:alert(1))</p>'],
    ['---\nsecret: 1\n---\nbody', '<p>body</p>'],
    ['a %%hidden%% b', '<p>a  b</p>'],
  ])('%j', (md, html) => {
    expect(noteHtml(md, links).trim()).toBe(html);
  });
});
