import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { etagOf, formatEtag, ifMatchAccepts, normalizeEtag, parseEtagList, readWithEtag } from '../../src/vault/etag.js';
import { appError, tmpDir } from './helpers.js';

describe('etagOf', () => {
  it('is the whole sha256 in base64url, same for string and bytes', () => {
    const e = etagOf('hello');
    expect(e).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(etagOf(Buffer.from('hello'))).toBe(e);
    expect(e).toBe('LPJNul-wow4m6DsqxbninhsWHlwfp0JecwQzYpOLmCQ');
    expect(etagOf('hello!')).not.toBe(e);
  });
});

describe('If-Match helpers', () => {
  const e = etagOf('x');
  it.each([
    [e, true],
    [`"${e}"`, true],
    [`W/"${e}"`, true],
    [` "${e}" `, true],
    [`"other", "${e}"`, true],
    ['*', true],
    ['"other"', false],
    [`"${e.slice(0, 22)}"`, false],
  ])('%s accepts the current ETag: %s', (header, ok) => {
    expect(ifMatchAccepts(header, e)).toBe(ok);
  });

  it('nothing matches a missing file, not even *', () => {
    expect(ifMatchAccepts('*', null)).toBe(false);
    expect(ifMatchAccepts(`"${e}"`, null)).toBe(false);
  });

  it('formats and parses', () => {
    expect(formatEtag(e)).toBe(`"${e}"`);
    expect(normalizeEtag(formatEtag(e))).toBe(e);
    expect(parseEtagList(`W/"a", "b",*`)).toEqual(['a', 'b', '*']);
  });
});

describe('readWithEtag', () => {
  it('returns bytes and ETag, null when missing, conflict for a folder', async () => {
    const d = await tmpDir();
    await writeFile(path.join(d, 'a.md'), 'abc');
    const r = await readWithEtag(path.join(d, 'a.md'));
    expect(r?.bytes.toString()).toBe('abc');
    expect(r?.etag).toBe(etagOf('abc'));
    expect(await readWithEtag(path.join(d, 'nope.md'))).toBeNull();
    expect(await readWithEtag(path.join(d, 'a.md', 'under-a-file'))).toBeNull();
    await mkdir(path.join(d, 'f'));
    const err = await appError(() => readWithEtag(path.join(d, 'f'), 'f'));
    expect(err.details).toMatchObject({ path: 'f', reason: 'is_a_folder' });
  });
});
