/** The file drop's pure rules, table-style: file names, conflict policies, rename names, checksum headers, routes. */
import { describe, expect, it } from 'vitest';
import { tusRoute } from '../../src/public/tus-route.js';
import { parseChecksum, parseConflictPolicy, renamedName, uploadFileName } from '../../src/public/upload.js';

describe('uploadFileName', () => {
  it.each(['report.pdf', 'photo 1.JPG', 'Ünïcödé.md', 'no-extension', 'a.b.c'])('accepts %j', (name) => {
    expect(uploadFileName(name)).toBe(name);
  });
  it.each([
    [undefined, 'filename_required'],
    ['', 'filename_required'],
    ['../up.txt', 'filename_is_path'],
    ['dir/file.txt', 'filename_is_path'],
    ['back\\slash.txt', 'filename_is_path'],
    ['.hidden', 'filename_hidden'],
    ['.obsidian', 'filename_hidden'],
    ['..', 'filename_hidden'],
    ['nul\u0000byte', 'filename_invalid'],
    ['x'.repeat(300), 'filename_invalid'],
    ['note.md.quire-tmp-0a1b2c', 'filename_invalid'],
    ['note.md~', 'filename_ignored'],
    ['Thumbs.db', 'filename_ignored'],
    ['draft.swp', 'filename_ignored'],
  ])('refuses %j (%s)', (name, reason) => {
    expect(() => uploadFileName(name)).toThrow(expect.objectContaining({ status: 400, details: expect.objectContaining({ reason }) }));
  });
});

describe('parseConflictPolicy', () => {
  it.each([
    [undefined, 'rename'],
    [null, 'rename'],
    ['', 'rename'],
    ['rename', 'rename'],
    ['Replace', 'replace'],
    [' reject ', 'reject'],
  ])('%j → %s', (v, want) => expect(parseConflictPolicy(v)).toBe(want));
  it.each(['overwrite', 'skip', 'rename,reject'])('refuses %j', (v) => {
    expect(() => parseConflictPolicy(v)).toThrow(expect.objectContaining({ status: 400 }));
  });
});

describe('renamedName', () => {
  it.each([
    ['data.txt', 1, 'data.txt'],
    ['data.txt', 2, 'data (2).txt'],
    ['archive.tar.gz', 3, 'archive.tar (3).gz'],
    ['README', 2, 'README (2)'],
    ['photo.JPG', 10, 'photo (10).JPG'],
  ])('%s, try %i → %s', (name, n, want) => expect(renamedName(name, n)).toBe(want));
});

describe('parseChecksum', () => {
  it.each([
    [undefined, null],
    ['', null],
    ['sha1 Kq5sNclPz7QV2+lfQIuc6R7oRu0=', { algorithm: 'sha1', digest: 'Kq5sNclPz7QV2+lfQIuc6R7oRu0=' }],
    ['SHA256 abc=', { algorithm: 'sha256', digest: 'abc=' }],
    ['md5 AAAA', { algorithm: 'md5', digest: 'AAAA' }],
  ])('%j', (v, want) => expect(parseChecksum(v)).toEqual(want));
  it.each([
    ['crc32 AAAA', 'checksum_algorithm'],
    ['sha1', 'bad_checksum'],
    ['sha1 not base64!', 'bad_checksum'],
  ])('refuses %j (%s)', (v, reason) => {
    expect(() => parseChecksum(v)).toThrow(expect.objectContaining({ status: 400, details: expect.objectContaining({ reason }) }));
  });
});

describe('tusRoute', () => {
  it.each([
    ['/api/v1/public/abc/uploads', { slug: 'abc', id: null }],
    ['/api/v1/public/abc/uploads/', { slug: 'abc', id: null }],
    ['/api/v1/public/abc/uploads?x=1', { slug: 'abc', id: null }],
    ['/api/v1/public/abc/uploads/0123', { slug: 'abc', id: '0123' }],
    ['/api/v1/public/a%20b/uploads/x', { slug: 'a b', id: 'x' }],
    ['/api/v1/public/abc/download', null],
    ['/api/v1/public/abc/uploads/x/y', null],
    ['/api/v1/public/%E0%A4%A/uploads', null],
  ])('%s', (url, want) => expect(tusRoute(url)).toEqual(want));
});
