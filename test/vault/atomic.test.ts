import { chmod, mkdir, readFile, readdir, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { removeFile, renameAtomic, tempPathFor, writeFileAtomic } from '../../src/vault/atomic.js';
import { TEMP_MARKER } from '../../src/vault/ignore.js';
import { allFiles, appError, tmpDir } from './helpers.js';

const enospc = () => Object.assign(new Error('ENOSPC: no space left on device'), { code: 'ENOSPC' });

async function noTemps(dir: string): Promise<void> {
  const files = await allFiles(dir);
  expect(files.filter((f) => f.includes(TEMP_MARKER))).toEqual([]);
}

describe('writeFileAtomic', () => {
  it('creates missing folders, writes the bytes, leaves no temp file', async () => {
    const d = await tmpDir();
    const target = path.join(d, 'a', 'b', 'c.md');
    await writeFileAtomic(target, 'hello');
    expect(await readFile(target, 'utf8')).toBe('hello');
    await writeFileAtomic(target, Buffer.from('again'));
    expect(await readFile(target, 'utf8')).toBe('again');
    await noTemps(d);
  });

  it('keeps the permission bits of the file it replaces', async () => {
    const d = await tmpDir();
    const target = path.join(d, 'x.md');
    await writeFile(target, 'old');
    await chmod(target, 0o640);
    await writeFileAtomic(target, 'new');
    expect((await stat(target)).mode & 0o777).toBe(0o640);
  });

  it('handles a 255-byte name (temp name stays within 255 bytes)', async () => {
    const d = await tmpDir();
    const name = 'é'.repeat(125) + '.md'; // 253 bytes
    const tmp = path.basename(tempPathFor(path.join(d, name)));
    expect(Buffer.byteLength(tmp)).toBeLessThanOrEqual(255);
    expect(tmp).toContain(TEMP_MARKER);
    expect(tmp.startsWith('.')).toBe(true);
    await writeFileAtomic(path.join(d, name), 'ok');
    expect(await readFile(path.join(d, name), 'utf8')).toBe('ok');
  });

  it.each([
    [
      'mid-write',
      {
        write: async (fh: import('node:fs/promises').FileHandle, bytes: Uint8Array) => {
          await fh.write(bytes.subarray(0, bytes.length >> 1));
          throw enospc();
        },
      },
    ],
    ['at fsync', { sync: async () => Promise.reject(enospc()) }],
    ['at rename', { rename: async () => Promise.reject(enospc()) }],
  ])('a failure %s leaves the old file whole and no temp file', async (_when, io) => {
    const d = await tmpDir();
    const target = path.join(d, 'note.md');
    await writeFile(target, 'the old bytes');
    const err = await appError(() => writeFileAtomic(target, 'x'.repeat(100_000), { label: 'note.md', io }));
    expect(err.status).toBe(507);
    expect(err.details).toMatchObject({ path: 'note.md', reason: 'disk_full' });
    expect(await readFile(target, 'utf8')).toBe('the old bytes');
    await noTemps(d);
  });

  it('a failure when creating leaves nothing behind', async () => {
    const d = await tmpDir();
    const target = path.join(d, 'new.md');
    await appError(() => writeFileAtomic(target, 'x', { io: { rename: async () => Promise.reject(enospc()) } }));
    expect(await readdir(d)).toEqual([]);
  });

  it('refuses to replace a folder', async () => {
    const d = await tmpDir();
    await mkdir(path.join(d, 'dir.md'));
    const err = await appError(() => writeFileAtomic(path.join(d, 'dir.md'), 'x', { label: 'dir.md' }));
    expect(err.details?.reason).toBe('is_a_folder');
  });

  it('a concurrent reader never sees a half-written file', async () => {
    const d = await tmpDir();
    const target = path.join(d, 'big.md');
    const A = 'a'.repeat(300_000);
    const B = 'b'.repeat(200_000);
    await writeFileAtomic(target, A);
    let stop = false;
    let reads = 0;
    const reader = (async () => {
      while (!stop) {
        const s = await readFile(target, 'utf8');
        expect(s === A || s === B).toBe(true);
        reads++;
      }
    })();
    for (let i = 0; i < 30; i++) await writeFileAtomic(target, i % 2 ? A : B);
    stop = true;
    await reader;
    expect(reads).toBeGreaterThan(0);
    await noTemps(d);
  });
});

describe('removeFile', () => {
  it('removes, reports missing files, refuses folders', async () => {
    const d = await tmpDir();
    await writeFile(path.join(d, 'x.md'), 'x');
    await expect(removeFile(path.join(d, 'x.md'))).resolves.toBe(true);
    await expect(removeFile(path.join(d, 'x.md'), { missingOk: true })).resolves.toBe(false);
    expect((await appError(() => removeFile(path.join(d, 'x.md'), { label: 'x.md' }))).code).toBe('not_found');
    await mkdir(path.join(d, 'f'));
    expect((await appError(() => removeFile(path.join(d, 'f')))).details?.reason).toBe('is_a_folder');
  });
});

describe('renameAtomic', () => {
  it('moves a file into new folders', async () => {
    const d = await tmpDir();
    await writeFile(path.join(d, 'a.md'), 'A');
    await renameAtomic(path.join(d, 'a.md'), path.join(d, 'x', 'y', 'b.md'));
    expect(await allFiles(d)).toEqual(['x/y/b.md']);
    expect(await readFile(path.join(d, 'x', 'y', 'b.md'), 'utf8')).toBe('A');
  });

  it('refuses to overwrite unless asked, leaving both files intact', async () => {
    const d = await tmpDir();
    await writeFile(path.join(d, 'a.md'), 'A');
    await writeFile(path.join(d, 'b.md'), 'B');
    const err = await appError(() => renameAtomic(path.join(d, 'a.md'), path.join(d, 'b.md'), { labelFrom: 'a.md', labelTo: 'b.md' }));
    expect(err.code).toBe('conflict');
    expect(err.status).toBe(409);
    expect(err.details).toMatchObject({ path: 'b.md', reason: 'target_exists' });
    expect(await readFile(path.join(d, 'a.md'), 'utf8')).toBe('A');
    expect(await readFile(path.join(d, 'b.md'), 'utf8')).toBe('B');
    await renameAtomic(path.join(d, 'a.md'), path.join(d, 'b.md'), { overwrite: true });
    expect(await allFiles(d)).toEqual(['b.md']);
    expect(await readFile(path.join(d, 'b.md'), 'utf8')).toBe('A');
  });

  it('moves folders, refusing an existing target', async () => {
    const d = await tmpDir();
    await mkdir(path.join(d, 'f1'));
    await writeFile(path.join(d, 'f1', 'n.md'), 'n');
    await mkdir(path.join(d, 'f2'));
    expect((await appError(() => renameAtomic(path.join(d, 'f1'), path.join(d, 'f2')))).details?.reason).toBe('target_exists');
    await renameAtomic(path.join(d, 'f1'), path.join(d, 'f3'));
    expect(await allFiles(d)).toEqual(['f3/n.md']);
  });

  it('reports a missing source as not_found', async () => {
    const d = await tmpDir();
    const err = await appError(() => renameAtomic(path.join(d, 'nope.md'), path.join(d, 'b.md'), { labelFrom: 'nope.md' }));
    expect(err.code).toBe('not_found');
    expect(err.details?.path).toBe('nope.md');
  });
});
