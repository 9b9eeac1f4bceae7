import { mkdir, readFile, rename, rm, symlink, unlink, writeFile } from 'node:fs/promises';
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, readdirSync, readlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Home } from '../../src/vault/home.js';
import { watchHome, type HomeWatcher, type WatchChange, type WatchOptions } from '../../src/vault/watcher.js';
import { allFiles, tmpDir, waitFor } from './helpers.js';

const open: HomeWatcher[] = [];
afterEach(async () => {
  while (open.length > 0) await open.pop()!.close();
});

/**
 * A consumer like the index: applies batches to a map path → content,
 * reading each upserted file when the batch arrives.
 */
function consumer(root: string) {
  const state = new Map<string, string>();
  const batches: WatchChange[][] = [];
  const onBatch = async (changes: WatchChange[]) => {
    batches.push(changes);
    for (const c of changes) {
      if (c.kind === 'delete') state.delete(c.path);
      else {
        try {
          state.set(c.path, await readFile(path.join(root, c.path), 'utf8'));
        } catch {
          /* deleted again already; its delete follows */
        }
      }
    }
  };
  const all = () => batches.flat();
  return { state, batches, onBatch, all };
}

async function start(root: string, opts: Partial<WatchOptions> & Pick<WatchOptions, 'onBatch'>): Promise<HomeWatcher> {
  const w = watchHome(root, { debounceMs: 40, ...opts });
  open.push(w);
  await w.ready;
  return w;
}

async function diskState(root: string): Promise<Map<string, string>> {
  const m = new Map<string, string>();
  for (const f of await allFiles(root)) m.set(f, await readFile(path.join(root, f), 'utf8'));
  return m;
}

function sameMap(a: Map<string, string>, b: Map<string, string>): boolean {
  if (a.size !== b.size) return false;
  for (const [k, v] of a) if (b.get(k) !== v) return false;
  return true;
}

function diff(a: Map<string, string>, b: Map<string, string>): string {
  const missing = [...b.keys()].filter((k) => !a.has(k));
  const extra = [...a.keys()].filter((k) => !b.has(k));
  const stale = [...a.keys()].filter((k) => b.has(k) && a.get(k) !== b.get(k));
  return `missing ${missing.length} [${missing.slice(0, 5)}], extra ${extra.length} [${extra.slice(0, 5)}], stale ${stale.length} [${stale.slice(0, 5)}]`;
}

describe('watchHome', () => {
  it('reports outside create, change, delete and rename with Home-relative paths', async () => {
    const root = await tmpDir('quire-watch-');
    const c = consumer(root);
    await start(root, { onBatch: c.onBatch });

    await mkdir(path.join(root, 'notes'));
    await writeFile(path.join(root, 'notes', 'a.md'), 'one');
    await waitFor(() => c.state.get('notes/a.md') === 'one', 5000, () => JSON.stringify(c.batches));

    await writeFile(path.join(root, 'notes', 'a.md'), 'two');
    await waitFor(() => c.state.get('notes/a.md') === 'two');

    await rename(path.join(root, 'notes', 'a.md'), path.join(root, 'notes', 'b.md'));
    await waitFor(() => !c.state.has('notes/a.md') && c.state.get('notes/b.md') === 'two');
    // A rename is a delete plus an upsert, in the same or consecutive batches.
    const i = c.batches.findIndex((b) => b.some((x) => x.kind === 'delete' && x.path === 'notes/a.md'));
    const j = c.batches.findIndex((b) => b.some((x) => x.kind === 'upsert' && x.path === 'notes/b.md'));
    expect(Math.abs(i - j)).toBeLessThanOrEqual(1);

    await unlink(path.join(root, 'notes', 'b.md'));
    await waitFor(() => c.state.size === 0);
    expect(c.all().every((x) => !x.path.startsWith('/') && !x.path.includes('\\'))).toBe(true);
  });

  it('reports files in new folders, folder renames and folder removal', async () => {
    const root = await tmpDir('quire-watch-');
    const c = consumer(root);
    await start(root, { onBatch: c.onBatch });

    await mkdir(path.join(root, 'p', 'q', 'r'), { recursive: true });
    await writeFile(path.join(root, 'p', 'q', 'r', 'deep.md'), 'd');
    await writeFile(path.join(root, 'p', 'top.md'), 't');
    await waitFor(() => c.state.size === 2, 5000, () => JSON.stringify([...c.state]));

    await rename(path.join(root, 'p'), path.join(root, 'P2'));
    await waitFor(async () => sameMap(c.state, await diskState(root)), 5000, () => JSON.stringify([...c.state]));
    expect([...c.state.keys()].sort()).toEqual(['P2/q/r/deep.md', 'P2/top.md']);

    await rm(path.join(root, 'P2'), { recursive: true });
    await waitFor(() => c.state.size === 0, 5000, () => JSON.stringify([...c.state]));
  });

  it('keeps watching a folder that git deletes and makes again under the same name', async () => {
    const root = await tmpDir('quire-watch-');
    const git = (...args: string[]) => execFileSync('git', args, { cwd: root, stdio: 'ignore' });
    git('init', '-q', '-b', 'main');
    git('config', 'user.email', 't@example.org');
    git('config', 'user.name', 'T');
    const commit = (files: Record<string, string>) => {
      for (const f of ['A', 'top.md']) execFileSync('rm', ['-rf', path.join(root, f)]);
      for (const [f, text] of Object.entries(files)) {
        mkdirSync(path.dirname(path.join(root, f)), { recursive: true });
        writeFileSync(path.join(root, f), text);
      }
      git('add', '-A');
      git('commit', '-q', '--allow-empty', '-m', 'c');
      return execFileSync('git', ['rev-parse', 'HEAD'], { cwd: root, encoding: 'utf8' }).trim();
    };
    const withA = commit({ 'A/one.md': '1', 'A/two.md': '2', 'top.md': 't1' });
    const withoutA = commit({ 'top.md': 't2' });
    const otherA = commit({ 'A/three.md': '3', 'top.md': 't3' });
    const c = consumer(root);
    await start(root, { onBatch: c.onBatch });
    const worktree = async () => new Map([...(await diskState(root))].filter(([k]) => !k.startsWith('.git/')));
    for (let round = 0; round < 6; round++) {
      // A folder emptied and filled again among other changes: its watch must follow the new folder.
      git('checkout', '-q', '-f', withA);
      git('checkout', '-q', '-f', withoutA);
      git('checkout', '-q', '-f', round % 2 ? withA : otherA);
      await waitFor(async () => sameMap(c.state, await worktree()), 5000, () => JSON.stringify([...c.state]));
      // A file written into the new folder afterwards is seen only through the new folder's watch.
      await writeFile(path.join(root, 'A', `later${round}.md`), 'later');
      await waitFor(async () => sameMap(c.state, await worktree()), 5000, () => `round ${round}: ${JSON.stringify([...c.state])}`);
      await rm(path.join(root, 'A', `later${round}.md`));
    }
  });

  it('does not follow symlinks: a link made, a file replaced by a link, a folder link', async () => {
    const root = await tmpDir('quire-watch-');
    const away = await tmpDir('quire-away-');
    await writeFile(path.join(away, 'secret.md'), 'secret');
    await mkdir(path.join(away, 'dir'));
    await writeFile(path.join(away, 'dir', 'inner.md'), 'inner');
    await writeFile(path.join(root, 'swap.md'), 'plain');
    const c = consumer(root);
    await start(root, { onBatch: c.onBatch, ignoreInitial: false });
    expect([...c.state.keys()]).toEqual(['swap.md']);
    await symlink(path.join(away, 'secret.md'), path.join(root, 'link.md'));
    await symlink(path.join(away, 'dir'), path.join(root, 'linkdir'));
    await unlink(path.join(root, 'swap.md'));
    await symlink(path.join(away, 'secret.md'), path.join(root, 'swap.md'));
    await writeFile(path.join(away, 'dir', 'new.md'), 'new');
    await writeFile(path.join(root, 'control.md'), 'control');
    await waitFor(() => c.state.has('control.md') && !c.state.has('swap.md'), 5000, () => JSON.stringify([...c.state]));
    await new Promise((r) => setTimeout(r, 150));
    expect([...c.state.keys()]).toEqual(['control.md']);
    expect(c.all().filter((x) => x.kind === 'upsert').map((x) => x.path).sort()).toEqual(['control.md', 'swap.md']);
  });

  it('ignores editor swap/backup/temp files, .git, Obsidian workspace and internal folders', async () => {
    const root = await tmpDir('quire-watch-');
    const c = consumer(root);
    await start(root, { onBatch: c.onBatch });

    const junk = [
      '.note.md.swp',
      '.note.md.swx',
      'note.md~',
      '4913',
      '.#note.md',
      '#note.md#',
      '.DS_Store',
      'sub/.DS_Store',
      '.git/HEAD',
      '.git/objects/ab/cdef',
      '.obsidian/workspace.json',
      '.obsidian/workspace-mobile.json',
      '.obsidian/app.json',
      '.hg/store/data',
      '.quire/cache/index.bin',
      '.note.md.quire-tmp-0a1b2c3d4e5f',
      'note.md___jb_tmp___',
    ];
    for (const j of junk) {
      await mkdir(path.dirname(path.join(root, j)), { recursive: true });
      await writeFile(path.join(root, j), 'junk');
    }
    await writeFile(path.join(root, 'sub', 'real.md'), 'real');
    await writeFile(path.join(root, '2024'), 'a note named like a number');
    await waitFor(() => c.state.has('sub/real.md') && c.state.has('2024'));
    // Let any straggling events through, then check nothing junk was reported.
    await new Promise((r) => setTimeout(r, 150));
    const reported = new Set(c.all().map((x) => x.path));
    expect([...reported].sort()).toEqual(['2024', 'sub/real.md']);
  });

  it('reports existing files at start unless ignoreInitial; ready resolves', async () => {
    const root = await tmpDir('quire-watch-');
    await mkdir(path.join(root, 'a', 'b'), { recursive: true });
    await writeFile(path.join(root, 'x.md'), 'x');
    await writeFile(path.join(root, 'a', 'b', 'y.md'), 'y');
    await writeFile(path.join(root, 'a', '.y.md.swp'), 'swap');

    const quiet = consumer(root);
    const w1 = await start(root, { onBatch: quiet.onBatch }); // ignoreInitial defaults to true
    expect(quiet.batches).toEqual([]);
    expect(w1.stats().knownFiles).toBe(2);

    const loud = consumer(root);
    await start(root, { onBatch: loud.onBatch, ignoreInitial: false });
    expect([...loud.state.keys()].sort()).toEqual(['a/b/y.md', 'x.md']);
  });

  it('flags the server\'s own writes, deletes and moves; outside edits are not flagged', async () => {
    const root = await tmpDir('quire-watch-');
    const home = new Home(root);
    const c = consumer(root);
    const w = home.watch({ onBatch: c.onBatch, debounceMs: 40 });
    open.push(w);
    await w.ready;

    await home.write('own.md', 'by the server');
    await waitFor(() => c.all().some((x) => x.path === 'own.md'));
    expect(c.all().filter((x) => x.path === 'own.md')).toEqual([{ kind: 'upsert', path: 'own.md', size: 13, own: true }]);

    // A late event of the server's own write may still come (flagged, rightly); the edit must come unflagged.
    const before = c.all().length;
    await writeFile(path.join(root, 'own.md'), 'by vim');
    // Wait for both, in whichever order they come: writeFile truncates, then writes, so on a busy machine an
    // unflagged batch can read the empty file between the two (the write's own event follows), and a late
    // flagged event of the server's write can be read after vim's bytes landed, before vim's event arrives.
    await waitFor(
      () => c.state.get('own.md') === 'by vim' && c.all().slice(before).some((x) => x.path === 'own.md' && x.own === undefined),
      5000,
      () => JSON.stringify({ content: c.state.get('own.md'), since: c.all().slice(before) }),
    );

    await home.move('own.md', 'moved.md');
    await waitFor(() => c.state.has('moved.md') && !c.state.has('own.md'));
    // The old path's delete and the new path's upsert, in whichever order the events came.
    const last = c.all().slice(-2).sort((a, b) => (a.path < b.path ? -1 : 1));
    expect(last).toEqual([
      { kind: 'upsert', path: 'moved.md', size: 6, own: true },
      { kind: 'delete', path: 'own.md', own: true },
    ]);

    await home.delete('moved.md');
    await waitFor(() => !c.state.has('moved.md'));
    expect(c.all().at(-1)).toEqual({ kind: 'delete', path: 'moved.md', own: true });
    // The watcher kept usage in step with the outside edit.
    expect(await home.usage()).toBe(0);
  });

  it('can drop own writes entirely', async () => {
    const root = await tmpDir('quire-watch-');
    const home = new Home(root);
    const c = consumer(root);
    const w = home.watch({ onBatch: c.onBatch, debounceMs: 40, dropOwnWrites: true });
    open.push(w);
    await w.ready;
    await home.write('mine.md', 'server');
    await writeFile(path.join(root, 'theirs.md'), 'outside');
    await waitFor(() => c.state.has('theirs.md'));
    await new Promise((r) => setTimeout(r, 100));
    expect(c.all().map((x) => x.path)).toEqual(['theirs.md']);
  });

  it('coalesces a 1,000-file checkout into the final state', async () => {
    const root = await tmpDir('quire-watch-');
    const c = consumer(root);
    const w = await start(root, { onBatch: c.onBatch });
    const names = Array.from({ length: 1000 }, (_, i) => `d${i % 10}/n${i}.md`);
    for (let d = 0; d < 10; d++) await mkdir(path.join(root, `d${d}`));
    await Promise.all(names.map((n) => writeFile(path.join(root, n), `v1 ${n}`)));
    await waitFor(async () => sameMap(c.state, await diskState(root)), 8000, () => diff(c.state, readSync(root)));

    // "git checkout": rewrite a quarter in place, replace a quarter (unlink + create), delete half, add new files
    // in a new folder, and remove one folder completely.
    const ops: Promise<unknown>[] = [];
    names.forEach((n, i) => {
      const abs = path.join(root, n);
      if (i % 4 === 0) ops.push(writeFile(abs, `v2 ${n}`));
      else if (i % 4 === 1) ops.push(unlink(abs).then(() => writeFile(abs, `v3 ${n}`)));
      else ops.push(unlink(abs));
    });
    await Promise.all(ops);
    await rm(path.join(root, 'd9'), { recursive: true });
    await mkdir(path.join(root, 'fresh', 'deeper'), { recursive: true });
    await Promise.all(Array.from({ length: 50 }, (_, i) => writeFile(path.join(root, 'fresh', 'deeper', `f${i}.md`), `new ${i}`)));

    const disk = await diskState(root);
    expect(disk.size).toBe(450 + 50);
    await waitFor(() => sameMap(c.state, disk), 8000, () => diff(c.state, disk));
    expect(w.stats().knownFiles).toBe(500);
  }, 20_000);

  it('uses one inotify watch per folder, not per file (Linux)', async () => {
    if (process.platform !== 'linux') return;
    const root = await tmpDir('quire-watch-');
    for (let d = 0; d < 5; d++) {
      await mkdir(path.join(root, `d${d}`));
      await Promise.all(Array.from({ length: 100 }, (_, i) => writeFile(path.join(root, `d${d}`, `${i}.md`), 'x')));
    }
    const before = inotifyWatches();
    const c = consumer(root);
    const w = await start(root, { onBatch: c.onBatch });
    const added = inotifyWatches() - before;
    expect(added).toBeGreaterThanOrEqual(1);
    expect(added).toBeLessThanOrEqual(6); // root + 5 folders, for 500 files
    expect(w.stats()).toMatchObject({ knownFiles: 500, knownFolders: 5 });
  });

  it('rescan() reconciles everything with the disk', async () => {
    const root = await tmpDir('quire-watch-');
    const c = consumer(root);
    let hide = true;
    const w = await start(root, { onBatch: c.onBatch, ignore: (rel) => hide && rel.startsWith('hidden') });
    await writeFile(path.join(root, 'hidden.md'), 'h');
    await writeFile(path.join(root, 'seen.md'), 's');
    await waitFor(() => c.state.has('seen.md'));
    expect(c.state.has('hidden.md')).toBe(false);
    hide = false; // stands in for events that never arrived (network file system, watch limit)
    await w.rescan();
    expect(c.state.get('hidden.md')).toBe('h');
  });
});

function readSync(root: string): Map<string, string> {
  const m = new Map<string, string>();
  for (const e of readdirSync(root, { recursive: true, withFileTypes: true })) {
    if (!e.isFile()) continue;
    const abs = path.join(e.parentPath, e.name);
    m.set(path.relative(root, abs), readFileSync(abs, 'utf8'));
  }
  return m;
}

/** inotify watches held by this process (Linux /proc). */
function inotifyWatches(): number {
  let n = 0;
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      if (readlinkSync(`/proc/self/fd/${fd}`) !== 'anon_inode:inotify') continue;
      n += readFileSync(`/proc/self/fdinfo/${fd}`, 'utf8')
        .split('\n')
        .filter((l) => l.startsWith('inotify wd:')).length;
    } catch {
      /* fd closed meanwhile */
    }
  }
  return n;
}

