import { mkdir, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { checkNewName, nameKey, resolveHomePath, validateRelPath } from '../../src/vault/paths.js';
import { appError, tmpDir } from './helpers.js';

let base: string;
let home: string;
let outside: string;

/**
 * home/
 *   notes/a.md, notes/deep/, notes/deep/esc -> ../../../outside
 *   Café.md (NFC), ΟΔΟΣ.md, STRASSE.md
 *   inner -> notes            (stays inside)
 *   file-in.md -> notes/a.md  (stays inside)
 *   out -> <outside>          (escapes, absolute target)
 *   file-out.md -> <outside>/secret.md
 *   dang -> /nonexistent/quire-nowhere
 *   loop -> loop
 * outside/secret.md
 */
beforeEach(async () => {
  base = await tmpDir();
  home = path.join(base, 'home');
  outside = path.join(base, 'outside');
  await mkdir(path.join(home, 'notes', 'deep'), { recursive: true });
  await mkdir(outside);
  await writeFile(path.join(outside, 'secret.md'), 'secret');
  await writeFile(path.join(home, 'notes', 'a.md'), 'a');
  await writeFile(path.join(home, 'Café.md'.normalize('NFC')), 'c');
  await writeFile(path.join(home, 'ΟΔΟΣ.md'), 'greek');
  await writeFile(path.join(home, 'STRASSE.md'), 's');
  await symlink('notes', path.join(home, 'inner'));
  await symlink('notes/a.md', path.join(home, 'file-in.md'));
  await symlink(outside, path.join(home, 'out'));
  await symlink(path.join(outside, 'secret.md'), path.join(home, 'file-out.md'));
  await symlink('../../../outside', path.join(home, 'notes', 'deep', 'esc'));
  await symlink('/nonexistent/quire-nowhere', path.join(home, 'dang'));
  await symlink('loop', path.join(home, 'loop'));
});

type Row =
  | { rel: string; ok: true; why: string }
  | { rel: string; code: string; reason: string; segment?: string; status?: number; why: string };

const long255 = 'n'.repeat(251) + '.md'; // 254 bytes
const rows: Row[] = [
  { rel: 'notes/a.md', ok: true, why: 'existing file' },
  { rel: 'new.md', ok: true, why: 'new file at the root' },
  { rel: 'new/deeper/x.md', ok: true, why: 'new file in new folders' },
  { rel: 'inner/a.md', ok: true, why: 'symlinked folder that stays inside' },
  { rel: 'file-in.md', ok: true, why: 'symlinked file that stays inside' },
  { rel: 'notes/' + long255, ok: true, why: '254-byte name' },
  { rel: 'é'.repeat(127), ok: true, why: '254 UTF-8 bytes' },
  { rel: 'notes/ spaced name .md', ok: true, why: 'spaces are fine' },
  { rel: '', code: 'bad_request', reason: 'empty', why: 'empty path' },
  { rel: '/etc/passwd', code: 'bad_request', reason: 'absolute', why: 'POSIX absolute' },
  { rel: 'C:/Windows/x', code: 'bad_request', reason: 'absolute', why: 'Windows drive with slash' },
  { rel: 'c:x.md', code: 'bad_request', reason: 'absolute', why: 'Windows drive-relative' },
  { rel: 'C:\\x.md', code: 'bad_request', reason: 'absolute', why: 'Windows drive with backslash' },
  { rel: '\\\\server\\share\\x', code: 'bad_request', reason: 'absolute', why: 'UNC with backslashes' },
  { rel: '//server/share/x', code: 'bad_request', reason: 'absolute', why: 'UNC with slashes' },
  { rel: 'notes\\a.md', code: 'bad_request', reason: 'backslash', segment: 'notes\\a.md', why: 'backslash separator' },
  { rel: '../x.md', code: 'bad_request', reason: 'dot_dot_segment', segment: '..', why: 'leading ..' },
  { rel: 'notes/../../x.md', code: 'bad_request', reason: 'dot_dot_segment', segment: '..', why: 'climbing ..' },
  { rel: 'notes/..', code: 'bad_request', reason: 'dot_dot_segment', segment: '..', why: 'trailing ..' },
  { rel: './a.md', code: 'bad_request', reason: 'dot_segment', segment: '.', why: 'leading .' },
  { rel: 'notes/./a.md', code: 'bad_request', reason: 'dot_segment', segment: '.', why: 'inner .' },
  { rel: 'notes//a.md', code: 'bad_request', reason: 'empty_segment', why: 'doubled slash' },
  { rel: 'notes/', code: 'bad_request', reason: 'empty_segment', why: 'trailing slash' },
  { rel: 'a\u0000b.md', code: 'bad_request', reason: 'control_character', segment: 'a\u0000b.md', why: 'NUL' },
  { rel: 'notes/a\nb.md', code: 'bad_request', reason: 'control_character', segment: 'a\nb.md', why: 'newline' },
  { rel: 'x\u001f.md', code: 'bad_request', reason: 'control_character', why: 'U+001F' },
  { rel: 'x\u007f.md', code: 'bad_request', reason: 'control_character', why: 'DEL' },
  { rel: 'bad\ud800.md', code: 'bad_request', reason: 'invalid_unicode', why: 'lone surrogate' },
  { rel: 'notes/' + 'x'.repeat(256), code: 'name_too_long', reason: 'segment_too_long', status: 400, why: '256 ASCII bytes' },
  { rel: 'é'.repeat(128), code: 'name_too_long', reason: 'segment_too_long', why: '256 UTF-8 bytes in 128 characters' },
  { rel: 'notes/.a.md.quire-tmp-0123abcd', code: 'bad_request', reason: 'reserved_name', segment: '.a.md.quire-tmp-0123abcd', why: 'our temp-file pattern' },
  { rel: 'out', code: 'bad_request', reason: 'symlink_escape', segment: 'out', why: 'link to a folder outside' },
  { rel: 'out/secret.md', code: 'bad_request', reason: 'symlink_escape', segment: 'out', why: 'existing file through an escaping link' },
  { rel: 'out/new/x.md', code: 'bad_request', reason: 'symlink_escape', segment: 'out', why: 'new file through an escaping link' },
  { rel: 'file-out.md', code: 'bad_request', reason: 'symlink_escape', segment: 'file-out.md', why: 'file link outside' },
  { rel: 'notes/deep/esc/secret.md', code: 'bad_request', reason: 'symlink_escape', segment: 'notes/deep/esc', why: 'relative link climbing out' },
  { rel: 'inner/deep/esc/x.md', code: 'bad_request', reason: 'symlink_escape', why: 'escape behind an inside link' },
  { rel: 'dang', code: 'bad_request', reason: 'symlink_unresolvable', segment: 'dang', why: 'dangling link' },
  { rel: 'dang/x.md', code: 'bad_request', reason: 'symlink_unresolvable', segment: 'dang', why: 'through a dangling link' },
  { rel: 'loop/x.md', code: 'bad_request', reason: 'symlink_unresolvable', segment: 'loop', why: 'link loop' },
];

describe('resolveHomePath', () => {
  it('has a table of at least 25 rows', () => {
    expect(rows.length).toBeGreaterThanOrEqual(25);
  });

  it.each(rows)('$rel → $why', async (row) => {
    if ('ok' in row) {
      const abs = await resolveHomePath(home, row.rel);
      expect(abs).toBe(path.join(home, ...row.rel.split('/')));
      return;
    }
    const err = await appError(() => resolveHomePath(home, row.rel));
    expect(err.code).toBe(row.code);
    expect(err.status).toBe(row.status ?? 400);
    expect(err.details?.reason).toBe(row.reason);
    expect(err.details?.path).toBe(row.rel);
    if (row.segment !== undefined) {
      expect(err.details?.segment).toBe(row.segment);
      // The message names the segment (JSON-quoted, so control characters stay visible).
      expect(err.message).toContain(JSON.stringify(row.segment).slice(1, -1).slice(0, 30));
    }
    expect(err.message).not.toContain(base); // never leaks server paths
  });

  it('names the offending control character', async () => {
    const err = await appError(() => resolveHomePath(home, 'a\u0007b'));
    expect(err.details?.character).toBe('U+0007');
    expect(err.message).toContain('U+0007');
  });

  it('accepts the root only when asked', async () => {
    await expect(resolveHomePath(home, '', { allowRoot: true })).resolves.toBe(path.resolve(home));
    expect(validateRelPath('', { allowRoot: true })).toEqual([]);
  });

  it('refuses non-strings', () => {
    expect(() => validateRelPath(42 as unknown as string)).toThrow(/must be a string/);
  });

  it('refuses absolute paths longer than PATH_MAX', async () => {
    const rel = Array.from({ length: 20 }, () => 'x'.repeat(250)).join('/');
    const err = await appError(() => resolveHomePath(home, rel));
    expect(err.code).toBe('name_too_long');
    expect(err.details?.reason).toBe('path_too_long');
  });
});

describe('checkNewName', () => {
  const conflict: Array<{ rel: string; existing: string; segment: string; why: string }> = [
    { rel: 'notes/A.md', existing: 'notes/a.md', segment: 'A.md', why: 'file differs by case' },
    { rel: 'NOTES/new.md', existing: 'notes', segment: 'NOTES', why: 'folder differs by case' },
    { rel: 'Notes/deep/x.md', existing: 'notes', segment: 'Notes', why: 'first level differs' },
    { rel: 'notes/DEEP/x.md', existing: 'notes/deep', segment: 'DEEP', why: 'second level differs' },
    { rel: 'CAFÉ.md', existing: 'Café.md', segment: 'CAFÉ.md', why: 'non-ASCII upper case' },
    { rel: 'Cafe\u0301.md', existing: 'Café.md', segment: 'Cafe\u0301.md', why: 'NFD twin of an NFC name' },
    { rel: 'οδος.md', existing: 'ΟΔΟΣ.md', segment: 'οδος.md', why: 'Greek with final sigma' },
    { rel: 'Inner/x.md', existing: 'inner', segment: 'Inner', why: 'case twin of a symlink' },
  ];

  it.each(conflict)('refuses $rel ($why)', async ({ rel, existing, segment }) => {
    const err = await appError(() => checkNewName(home, rel));
    expect(err.code).toBe('name_conflict_case');
    expect(err.status).toBe(409);
    expect(err.details).toMatchObject({ path: rel, reason: 'case_conflict', existing: existing.normalize('NFC'), segment });
    expect(err.message).toContain(JSON.stringify(existing.normalize('NFC')));
  });

  it.each(['notes/a.md', 'notes/b.md', 'notes/deep/new/x.md', 'brand/new/file.md', 'Straße.md', 'inner/zz.md'])(
    'accepts %s',
    async (rel) => {
      await expect(checkNewName(home, rel)).resolves.toBeUndefined();
    },
  );

  it('ignores the item being renamed (case-only rename)', async () => {
    await expect(checkNewName(home, 'notes/A.md', { ignore: 'notes/a.md' })).resolves.toBeUndefined();
  });

  it('compares NFC + lower case', () => {
    expect(nameKey('Cafe\u0301')).toBe(nameKey('CAFÉ'));
    expect(nameKey('ΟΔΟΣ')).toBe(nameKey('οδος'));
    expect(nameKey('Straße')).not.toBe(nameKey('STRASSE'));
  });
});
