// Home.write writes and fsyncs its temp file before taking the writer lock
// (docs/vault-disk.md, "Preparing outside the lock"). These tests hold the
// lock themselves to stop a write between its preparation and its checks.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { Home } from '../../src/vault/home.js';
import { TEMP_MARKER } from '../../src/vault/ignore.js';
import { allFiles, appError, tmpDir, waitFor } from './helpers.js';

/** A Home whose writes report when their temp file has been fsynced, and a way to hold its lock meanwhile. */
async function setup() {
  const dir = await tmpDir('quire-prepare-');
  let synced = 0;
  const home = new Home(dir, { io: { sync: async (fh) => (await fh.sync(), void synced++) } });
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  const holding = home.lock.run(() => held);
  return { dir, home, synced: () => synced, release: async () => (release(), await holding) };
}

const visible = async (dir: string) => (await allFiles(dir)).filter((f) => !f.includes(TEMP_MARKER));

describe('Home.write prepares its bytes outside the writer lock', () => {
  it('writes and fsyncs the temp file while another write holds the lock, and writes only after it', async () => {
    const { dir, home, synced, release } = await setup();
    const write = home.write('a.md', 'new text');
    await waitFor(() => synced() === 1, 5000, () => 'the temp file was not fsynced while the lock was held');
    expect(fs.existsSync(path.join(dir, 'a.md'))).toBe(false);
    await release();
    expect((await write).created).toBe(true);
    expect(fs.readFileSync(path.join(dir, 'a.md'), 'utf8')).toBe('new text');
    expect(await allFiles(dir)).toEqual(['a.md']);
  });

  it('removes the prepared temp file when the checks refuse the write', async () => {
    const { dir, home, synced, release } = await setup();
    fs.writeFileSync(path.join(dir, 'a.md'), 'old');
    fs.writeFileSync(path.join(dir, 'Case.md'), 'x');
    const refused = [
      home.write('a.md', 'v2', { ifMatch: 'not-the-etag' }), // 412
      home.write('a.md', 'v2', { ifNoneMatch: '*' }), // 412 already_exists
      home.write('b.md', 'far too long', { quotaBytes: 5 }), // 507
      home.write('case.md', 'v2'), // 409 name_conflict_case
    ].map((p) => appError(() => p));
    await waitFor(() => synced() === 4);
    await release();
    expect((await Promise.all(refused)).map((e) => e.status)).toEqual([412, 412, 507, 409]);
    expect(await allFiles(dir)).toEqual(['Case.md', 'a.md']);
  });

  it('does not create a missing folder before the case check', async () => {
    const { dir, home, release } = await setup();
    fs.mkdirSync(path.join(dir, 'Notes'));
    const err = appError(() => home.write('notes/a.md', 'x'));
    await release();
    expect((await err).details).toMatchObject({ reason: 'case_conflict', existing: 'Notes' });
    expect(fs.readdirSync(dir)).toEqual(['Notes']);
  });

  it('writes at the path when the folder of the prepared temp file was moved meanwhile', async () => {
    const { dir, home, synced, release } = await setup();
    fs.mkdirSync(path.join(dir, 'F'));
    const write = home.write('F/n.md', 'text');
    await waitFor(() => synced() === 1);
    fs.renameSync(path.join(dir, 'F'), path.join(dir, 'G')); // a person's `mv F G`, with the temp file in it
    await release();
    expect((await write).path).toBe('F/n.md');
    expect(fs.readFileSync(path.join(dir, 'F/n.md'), 'utf8')).toBe('text');
    expect(await visible(dir)).toEqual(['F/n.md']);
  });

  it('gives the file the permission bits it has at the check, not those it had when the temp file was made', async () => {
    const { dir, home, synced, release } = await setup();
    const file = path.join(dir, 'a.md');
    fs.writeFileSync(file, 'old');
    fs.chmodSync(file, 0o644);
    const write = home.write('a.md', 'new');
    await waitFor(() => synced() === 1);
    fs.chmodSync(file, 0o600);
    await release();
    await write;
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(fs.readFileSync(file, 'utf8')).toBe('new');
    await home.settleDisplaced();
    expect(await allFiles(dir)).toEqual(['a.md']);
  });
});
