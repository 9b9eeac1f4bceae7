import { lstat, mkdir, readFile, readlink, symlink, writeFile } from 'node:fs/promises';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { etagOf } from '../../src/vault/etag.js';
import { Home, type HomeEvent } from '../../src/vault/home.js';
import { TEMP_MARKER } from '../../src/vault/ignore.js';
import { allFiles, appError, tmpDir } from './helpers.js';

async function newHome(opts: ConstructorParameters<typeof Home>[1] = {}): Promise<Home> {
  return new Home(await tmpDir('quire-home-'), opts);
}

describe('Home.write', () => {
  it('creates, then replaces, reporting created and the ETag of the bytes', async () => {
    const home = await newHome();
    const r1 = await home.write('notes/a.md', 'one');
    expect(r1).toEqual({ path: 'notes/a.md', etag: etagOf('one'), bytesWritten: 3, created: true });
    const r2 = await home.write('notes/a.md', Buffer.from('two!'));
    expect(r2).toEqual({ path: 'notes/a.md', etag: etagOf('two!'), bytesWritten: 4, created: false });
    const read = await home.read('notes/a.md');
    expect(read.bytes.toString()).toBe('two!');
    expect(read.etag).toBe(r2.etag);
    expect(await home.etag('notes/a.md')).toBe(r2.etag);
    expect(await home.etag('nope.md')).toBeNull();
  });

  it('If-Match: fresh (bare, quoted, weak) writes; stale is 412 with the current ETag; nothing changes', async () => {
    const home = await newHome();
    const { etag } = await home.write('a.md', 'v1');
    const r = await home.write('a.md', 'v2', { ifMatch: `"${etag}"` });
    await home.write('a.md', 'v3', { ifMatch: `W/"${r.etag}"` });
    const err = await appError(() => home.write('a.md', 'v4', { ifMatch: etag }));
    expect(err.status).toBe(412);
    expect(err.code).toBe('conflict');
    expect(err.details).toMatchObject({ reason: 'etag_mismatch', current_etag: etagOf('v3') });
    expect((await home.read('a.md')).bytes.toString()).toBe('v3');
  });

  it('If-Match compares against the bytes on disk, including outside edits', async () => {
    const home = await newHome();
    const { etag } = await home.write('a.md', 'server');
    await writeFile(path.join(home.root, 'a.md'), 'edited in vim');
    const err = await appError(() => home.write('a.md', 'server again', { ifMatch: etag }));
    expect(err.status).toBe(412);
    expect(err.details?.current_etag).toBe(etagOf('edited in vim'));
    await home.write('a.md', 'merged', { ifMatch: etagOf('edited in vim') });
  });

  it('If-Match on a missing file is 412 and creates nothing', async () => {
    const home = await newHome();
    const err = await appError(() => home.write('ghost.md', 'x', { ifMatch: etagOf('x') }));
    expect(err.status).toBe(412);
    expect(err.details?.reason).toBe('etag_mismatch');
    expect(err.details?.current_etag).toBeUndefined();
    expect(await allFiles(home.root)).toEqual([]);
    // null / blank If-Match means "no condition"
    await expect(home.write('ghost.md', 'x', { ifMatch: null })).resolves.toMatchObject({ created: true });
  });

  it('If-None-Match: * creates new files and refuses existing ones with 412', async () => {
    const home = await newHome();
    await home.write('n.md', 'first', { ifNoneMatch: '*' });
    const err = await appError(() => home.write('n.md', 'second', { ifNoneMatch: '*' }));
    expect(err.status).toBe(412);
    expect(err.details).toMatchObject({ path: 'n.md', reason: 'already_exists', current_etag: etagOf('first') });
    expect((await home.read('n.md')).bytes.toString()).toBe('first');
  });

  it('refuses a new name that differs from a sibling only by case (409)', async () => {
    const home = await newHome();
    await home.write('Projects/Plan.md', 'p');
    const e1 = await appError(() => home.write('projects/other.md', 'x'));
    expect(e1.code).toBe('name_conflict_case');
    expect(e1.details).toMatchObject({ existing: 'Projects', segment: 'projects' });
    const e2 = await appError(() => home.write('Projects/PLAN.md', 'x'));
    expect(e2.details?.existing).toBe('Projects/Plan.md');
    // the exact name is an overwrite, not a conflict
    await home.write('Projects/Plan.md', 'p2');
    await home.settleDisplaced(); // the replaced file is kept aside for a moment
    expect(await allFiles(home.root)).toEqual(['Projects/Plan.md']);
  });

  it('refuses bad paths before touching the disk', async () => {
    const home = await newHome();
    expect((await appError(() => home.write('../escape.md', 'x'))).details?.reason).toBe('dot_dot_segment');
    expect((await appError(() => home.write(`a${TEMP_MARKER}x`, 'x'))).details?.reason).toBe('reserved_name');
    expect(await allFiles(home.root)).toEqual([]);
  });

  it('writes through a symlink to its target inside the Home, keeping the link', async () => {
    const home = await newHome();
    await home.write('notes/real.md', 'old');
    await symlink('notes/real.md', path.join(home.root, 'link.md'));
    const r = await home.write('link.md', 'new');
    expect(r.path).toBe('notes/real.md');
    expect(await readlink(path.join(home.root, 'link.md'))).toBe('notes/real.md');
    expect(await readFile(path.join(home.root, 'notes/real.md'), 'utf8')).toBe('new');
  });

  it('serialises concurrent conditional writes: one wins, the other gets 412', async () => {
    const home = await newHome();
    const { etag } = await home.write('race.md', 'base');
    const results = await Promise.allSettled([
      home.write('race.md', 'from A', { ifMatch: etag }),
      home.write('race.md', 'from B', { ifMatch: etag }),
    ]);
    expect(results.map((r) => r.status).sort()).toEqual(['fulfilled', 'rejected']);
    const rejected = results.find((r) => r.status === 'rejected') as PromiseRejectedResult;
    expect(rejected.reason.status).toBe(412);
    // Either may win: writes take the lock when their temp file is ready, not in call order (docs/vault-disk.md).
    const won = (results.find((r) => r.status === 'fulfilled') as PromiseFulfilledResult<{ etag: string }>).value;
    expect((await home.read('race.md')).etag).toBe(won.etag);
  });

  it('two Home objects on the same root share one writer lock', async () => {
    const root = await tmpDir();
    expect(new Home(root).lock).toBe(new Home(path.join(root, '.')).lock);
  });
});

describe('quota', () => {
  it('refuses a write that would exceed the quota (507, forbidden) and writes nothing', async () => {
    const home = await newHome({ quotaBytes: 100 });
    await home.write('a.md', 'x'.repeat(60));
    const err = await appError(() => home.write('b.md', 'y'.repeat(50)));
    expect(err.code).toBe('forbidden');
    expect(err.status).toBe(507);
    expect(err.details).toMatchObject({ reason: 'quota_exceeded', quota_bytes: '100', usage_bytes: '60', needed_bytes: '50', path: 'b.md' });
    expect(err.message).toContain('100-byte quota');
    expect(err.message).toContain('uses 60');
    expect(await allFiles(home.root)).toEqual(['a.md']);
    // Growing an existing file counts only the difference.
    const e2 = await appError(() => home.write('a.md', 'x'.repeat(101)));
    expect(e2.details?.needed_bytes).toBe('41');
    expect((await home.read('a.md')).size).toBe(60);
    await home.write('a.md', 'x'.repeat(100));
    expect(await home.usage()).toBe(100);
  });

  it('a per-write quota overrides the Home; 0 means unlimited', async () => {
    const home = await newHome({ quotaBytes: 10 });
    await home.write('big.md', 'z'.repeat(50), { quotaBytes: 0 });
    expect((await appError(() => home.write('more.md', 'z', { quotaBytes: 20 }))).status).toBe(507);
  });

  it('a Home over its quota can still shrink or delete', async () => {
    const home = await newHome();
    await home.write('a.md', 'x'.repeat(80));
    home.quotaBytes = 50;
    await home.write('a.md', 'x'.repeat(70));
    await home.delete('a.md');
    expect(await home.usage()).toBe(0);
  });

  it('counts content files only: not .quire/cache, temp files, .git', async () => {
    const home = await newHome();
    await mkdir(path.join(home.root, '.quire', 'cache'), { recursive: true });
    await writeFile(path.join(home.root, '.quire', 'cache', 'index.bin'), 'c'.repeat(1000));
    await mkdir(path.join(home.root, '.git'));
    await writeFile(path.join(home.root, '.git', 'HEAD'), 'h'.repeat(500));
    await writeFile(path.join(home.root, `.a.md${TEMP_MARKER}abc`), 't'.repeat(700));
    await writeFile(path.join(home.root, 'note.md'), 'n'.repeat(30));
    await mkdir(path.join(home.root, 'sub'));
    await writeFile(path.join(home.root, 'sub', 'x.md'), 'x'.repeat(12));
    expect(await home.usage()).toBe(42);
  });

  it('keeps usage current through writes, deletes and moves without walking again', async () => {
    const home = await newHome();
    await writeFile(path.join(home.root, 'pre.md'), '12345');
    expect(await home.usage()).toBe(5);
    await writeFile(path.join(home.root, 'unseen.md'), 'not counted until a watcher or refresh');
    await home.write('a.md', 'abc');
    await home.write('f/b.md', 'de');
    await home.move('f', 'g');
    await home.delete('pre.md');
    expect(await home.usage()).toBe(5); // 3 + 2: cached, the outside file is not walked
    expect(await home.usage({ refresh: true })).toBe(5 + 'not counted until a watcher or refresh'.length);
    home.applyExternalChanges([{ kind: 'delete', path: 'unseen.md' }]);
    expect(await home.usage()).toBe(5);
  });
});

describe('Home.read', () => {
  it('reads small and large files byte-exact with their ETag and mtime', async () => {
    const home = await newHome();
    const small = Buffer.from('# Small\nnote é\n');
    const large = Buffer.alloc(600 * 1024, 'abcdefgh\n');
    await writeFile(path.join(home.root, 'small.md'), small);
    await writeFile(path.join(home.root, 'large.md'), large);
    await writeFile(path.join(home.root, 'empty.md'), '');
    for (const [name, bytes] of [['small.md', small], ['large.md', large], ['empty.md', Buffer.alloc(0)]] as const) {
      const r = await home.read(name);
      expect(r.bytes.equals(bytes)).toBe(true);
      expect(r).toMatchObject({ path: name, etag: etagOf(bytes), size: bytes.length });
      expect(Date.parse(r.mtime)).toBeGreaterThan(0);
    }
  });

  it('says what is wrong with a folder, a FIFO or a missing file, without waiting', async () => {
    const home = await newHome();
    await mkdir(path.join(home.root, 'folder'));
    execFileSync('mkfifo', [path.join(home.root, 'pipe.md')]);
    expect(await appError(() => home.read('folder'))).toMatchObject({ status: 409, details: { reason: 'is_a_folder' } });
    expect(await appError(() => home.read('pipe.md'))).toMatchObject({ status: 409, details: { reason: 'not_a_file' } });
    expect(await appError(() => home.read('missing.md'))).toMatchObject({ status: 404 });
  });
});

describe('delete, move, list, events', () => {
  it('delete honours If-Match', async () => {
    const home = await newHome();
    const { etag } = await home.write('d.md', 'keep me');
    expect((await appError(() => home.delete('d.md', { ifMatch: etagOf('other') }))).status).toBe(412);
    expect(await allFiles(home.root)).toEqual(['d.md']);
    await home.delete('d.md', { ifMatch: etag });
    await home.settleDisplaced(); // the deleted file is kept aside for a moment
    expect(await allFiles(home.root)).toEqual([]);
    expect((await appError(() => home.delete('d.md'))).code).toBe('not_found');
    expect((await appError(() => home.delete('d.md', { ifMatch: etag }))).status).toBe(412);
  });

  it('deletes empty folders only', async () => {
    const home = await newHome();
    await home.write('f/x.md', 'x');
    expect((await appError(() => home.delete('f'))).details?.reason).toBe('folder_not_empty');
    await home.delete('f/x.md');
    await expect(home.delete('f')).resolves.toEqual({ path: 'f', folder: true });
  });

  it('move: If-Match, no overwrite, case-only rename, not into itself', async () => {
    const home = await newHome();
    const { etag } = await home.write('a.md', 'A');
    await home.write('b.md', 'B');
    expect((await appError(() => home.move('a.md', 'c.md', { ifMatch: etagOf('zzz') }))).status).toBe(412);
    const exists = await appError(() => home.move('a.md', 'b.md'));
    expect(exists.status).toBe(409);
    expect(exists.details?.reason).toBe('target_exists');
    expect((await appError(() => home.move('a.md', 'B.md'))).code).toBe('name_conflict_case');
    await expect(home.move('a.md', 'A.md', { ifMatch: etag })).resolves.toMatchObject({ path: 'A.md', etag });
    expect(await allFiles(home.root)).toEqual(['A.md', 'b.md']);
    await home.write('dir/x.md', 'x');
    expect((await appError(() => home.move('dir', 'dir/sub'))).details?.reason).toBe('into_itself');
    await home.move('dir', 'moved/dir2');
    expect(await allFiles(home.root)).toEqual(['A.md', 'b.md', 'moved/dir2/x.md']);
  });

  it('list: folders first, sizes, Home-relative paths, hides temp/ignored files and escaping links', async () => {
    const home = await newHome();
    await home.write('n/b.md', 'bb');
    await home.write('n/a.md', 'a');
    await mkdir(path.join(home.root, 'n', 'sub'));
    await writeFile(path.join(home.root, 'n', '.DS_Store'), '');
    await writeFile(path.join(home.root, 'n', `.a.md${TEMP_MARKER}1`), '');
    await symlink('/etc', path.join(home.root, 'n', 'etc-link'));
    const entries = await home.list('n');
    expect(entries.map((e) => [e.kind, e.name, e.path, e.size])).toEqual([
      ['folder', 'sub', 'n/sub', 0],
      ['file', 'a.md', 'n/a.md', 1],
      ['file', 'b.md', 'n/b.md', 2],
    ]);
    expect(Number.isNaN(Date.parse(entries[1]!.mtime))).toBe(false);
    expect((await home.list('n', { includeIgnored: true })).map((e) => e.name)).toContain('.DS_Store');
    expect((await home.list('')).map((e) => e.name)).toEqual(['n']);
    expect((await appError(() => home.list('n/a.md'))).details?.reason).toBe('not_a_folder');
    expect((await appError(() => home.list('nope'))).code).toBe('not_found');
  });

  it('onWritten hears writes, deletes and moves in order, and records own writes', async () => {
    const home = await newHome();
    const events: HomeEvent[] = [];
    const off = home.onWritten((e) => {
      events.push(e);
    });
    home.onWritten(() => {
      throw new Error('a broken listener does not break writes');
    });
    const errors: unknown[] = [];
    (home as unknown as { onListenerError: (e: unknown) => void }).onListenerError = (e) => errors.push(e);
    const w = await home.write('e.md', 'x');
    await home.move('e.md', 'f.md');
    await home.delete('f.md');
    expect(events.map((e) => [e.kind, e.path])).toEqual([
      ['write', 'e.md'],
      ['move', 'f.md'],
      ['delete', 'f.md'],
    ]);
    expect(events[0]).toMatchObject({ etag: w.etag, created: true });
    expect((events[0] as { bytes: Buffer }).bytes.toString()).toBe('x');
    expect(errors).toHaveLength(3);
    expect(home.recentWrites.lastEtag('e.md')).toBe(w.etag);
    off();
    await home.write('g.md', 'y');
    expect(events).toHaveLength(3);
  });

  it('a listener may write to the Home (queued after, not a re-entry error)', async () => {
    const home = await newHome();
    let follow: Promise<unknown> | undefined;
    home.onWritten((e) => {
      if (e.kind === 'write' && e.path === 'a.md') follow = home.write('a.log', 'saw a.md');
    });
    await home.write('a.md', 'a');
    await follow;
    expect(await allFiles(home.root)).toEqual(['a.log', 'a.md']);
  });

  it('a file where a folder should be is a clear 409, not a 500', async () => {
    const home = await newHome();
    await home.write('plain.md', 'p');
    const err = await appError(() => home.write('plain.md/child.md', 'c'));
    expect(err.status).toBe(409);
    expect(err.details?.reason).toBe('parent_not_folder');
    await home.write('dir/x.md', 'x');
    expect((await appError(() => home.write('dir', 'x'))).details?.reason).toBe('is_a_folder');
  });

  it('read of a folder or missing file is a clear error', async () => {
    const home = await newHome();
    await home.write('f/x.md', 'x');
    expect((await appError(() => home.read('f'))).details?.reason).toBe('is_a_folder');
    expect((await appError(() => home.read('f/y.md'))).code).toBe('not_found');
    expect((await lstat(path.join(home.root, 'f'))).isDirectory()).toBe(true);
  });
});
