/**
 * Symlinks are never followed out of a Home: not by the index, search,
 * listings, tags, tasks, the watcher, nor any write. A real server on
 * loopback with the default config, and a Home holding every kind of link:
 * file and folder links out, a loop, a dangling link, links inside the Home,
 * and links made while the server runs.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/core/config.js';
import { Vault } from '../../src/vault/vault.js';
import { startInstance, tempDir, type TestInstance } from '../helpers/instance.js';
import { eventually } from '../helpers/wait.js';

/** Every marker of the outside files: none may appear in any answer. */
const SECRETS = ['xylophonic', 'Outside Secret', 'leakedtag', 'leaked chore', 'Folder Secret'];
const OUTSIDE_NOTE = '---\ntags: [leakedtag]\n---\n# Outside Secret\n\nThe xylophonic plan. #leakedtag\n\n- [ ] leaked chore ^leak\n';
const OUTSIDE_FOLDER_NOTE = '# Folder Secret\n\nMore xylophonic words #leakedtag\n\n- [ ] leaked chore two\n';

let inst: TestInstance;
let token: string;
let home: string;
const outside = tempDir('quire-outside-');

const api = (method: string, route: string, body?: unknown, headers?: Record<string, string>) => inst.api(method, route, { token, body, headers });

function write(root: string, rel: string, text: string) {
  fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
  fs.writeFileSync(path.join(root, rel), text);
}

/** The answers of every reading action that could show an indexed file. */
async function answers(): Promise<Record<string, { status: number; text: string }>> {
  const routes: Record<string, string> = {
    notes_search: '/api/v1/notes/search?q=xylophonic',
    notes_search_title: '/api/v1/notes/search?q=Outside%20Secret',
    notes_list: '/api/v1/notes?limit=500',
    tag_page: '/api/v1/tags/leakedtag',
    tags_list: '/api/v1/tags',
    notes_tasks_list: '/api/v1/notes/tasks?limit=500',
    notes_task_view_rows: '/api/v1/notes/tasks/views/open/rows',
    list_file_assignments: '/api/v1/tags/items',
  };
  for (const p of ['out.md', 'outdir/secret2.md', 'late.md', 'latedir/secret2.md', 'swap.md']) {
    routes[`get_file_assignment ${p}`] = `/api/v1/tags/items/${encodeURIComponent(p)}`;
  }
  const out: Record<string, { status: number; text: string }> = {};
  for (const [name, route] of Object.entries(routes)) {
    const r = await api('GET', route);
    out[name] = { status: r.status, text: r.text };
  }
  return out;
}

async function expectNoLeak() {
  const all = await answers();
  for (const [name, { status, text }] of Object.entries(all)) {
    expect(status, `${name}: ${text}`).toBeLessThan(500);
    // The tag page's 404 names the tag asked for: that echo is not outside content.
    const shown = name === 'tag_page' ? text.replaceAll('leakedtag', '') : text;
    for (const secret of SECRETS) expect(shown, `${name} shows "${secret}"`).not.toContain(secret);
  }
  expect(all.tag_page!.status).toBe(404);
  const list = JSON.parse(all.notes_list!.text);
  const paths: string[] = list.items.map((n: { path: string }) => n.path);
  for (const link of ['out.md', 'outdir/secret2.md', 'alias.md', 'RealLink/Inside.md', 'dangling.md', 'loop1.md', 'late.md', 'latedir/secret2.md']) {
    expect(paths, `notes_list lists ${link}`).not.toContain(link);
  }
  return all;
}

beforeAll(async () => {
  write(outside, 'secret.md', OUTSIDE_NOTE);
  write(outside, 'folder/secret2.md', OUTSIDE_FOLDER_NOTE);
  inst = await startInstance();
  const u = await inst.user('links', 'member');
  token = u.token;
  home = path.join(inst.dataDir, 'homes', 'links');
  // The Home before its index opens: the opening scan meets every kind of link.
  write(home, 'Real/Inside.md', '# Inside\n\nThe inwordzz note. #insidetag\n\n- [ ] inside chore\n');
  write(home, 'swap.md', '# Swap\n\nAn ordinary note, for now.\n');
  fs.symlinkSync(path.join(outside, 'secret.md'), path.join(home, 'out.md')); // file link out
  fs.symlinkSync(path.join(outside, 'folder'), path.join(home, 'outdir')); // folder link out
  fs.symlinkSync('loop2.md', path.join(home, 'loop1.md')); // link loop
  fs.symlinkSync('loop1.md', path.join(home, 'loop2.md'));
  fs.symlinkSync('.', path.join(home, 'self')); // a folder link to the Home itself
  fs.symlinkSync(path.join(outside, 'nothing-here.md'), path.join(home, 'dangling.md')); // dangling
  fs.symlinkSync('Real/Inside.md', path.join(home, 'alias.md')); // inside → inside, file
  fs.symlinkSync('Real', path.join(home, 'RealLink')); // inside → inside, folder
  const view = await api('POST', '/api/v1/notes/tasks/views', { view: { id: 'open', name: 'Open', filters: 'task.status == " "' } });
  expect(view.status, view.text).toBeLessThan(300);
});

afterAll(async () => {
  await inst.close();
  fs.rmSync(outside, { recursive: true, force: true });
});

describe('symlinks in a Home (default config)', () => {
  it('the index shows no outside content, and a note reached through an in-Home link only once, under its own path', async () => {
    const all = await expectNoLeak();
    const list = JSON.parse(all.notes_list!.text);
    expect(list.items.filter((n: { title: string }) => n.title === 'Inside').map((n: { path: string }) => n.path)).toEqual(['Real/Inside.md']);
    const search = JSON.parse((await api('GET', '/api/v1/notes/search?q=inwordzz')).text);
    expect(search.items.map((h: { path: string }) => h.path)).toEqual(['Real/Inside.md']);
    const tasks = JSON.parse(all.notes_tasks_list!.text);
    expect(JSON.stringify(tasks).match(/inside chore/g)).toHaveLength(1);
  });

  it('file actions refuse paths through links out, and no write goes through them', async () => {
    const before = fs.readFileSync(path.join(outside, 'secret.md'), 'utf8');
    const read = await api('GET', '/api/v1/files/content?path=out.md');
    expect(read.status).toBe(400);
    expect(read.body.error.details.reason).toBe('symlink_escape');
    const inFolder = await api('GET', '/api/v1/files/content?path=outdir/secret2.md');
    expect(inFolder.status).toBe(400);
    const put = await api('PUT', '/api/v1/files/content?path=out.md', { content: 'overwritten' }, { 'if-match': '*' });
    expect(put.status).toBe(400);
    const create = await api('PUT', '/api/v1/files/content?path=outdir/new.md', { content: 'planted' }, { 'if-none-match': '*' });
    expect(create.status).toBe(400);
    const assign = await api('PUT', '/api/v1/tags/items', { path: 'out.md', tags: ['x'] });
    expect(assign.status).toBeGreaterThanOrEqual(400);
    expect(assign.status).toBeLessThan(500);
    expect(fs.readFileSync(path.join(outside, 'secret.md'), 'utf8')).toBe(before);
    expect(fs.existsSync(path.join(outside, 'folder/new.md'))).toBe(false);
    const listing = await api('GET', '/api/v1/files');
    expect(listing.status).toBe(200);
    expect(listing.text).not.toContain('out.md');
    expect(listing.text).not.toContain('outdir');
  });

  it('links made while the server runs are not followed either, and a note replaced by a link leaves the index', async () => {
    expect((await api('GET', '/api/v1/notes?limit=500')).text).toContain('swap.md');
    fs.symlinkSync(path.join(outside, 'secret.md'), path.join(home, 'late.md'));
    fs.symlinkSync(path.join(outside, 'folder'), path.join(home, 'latedir'));
    fs.unlinkSync(path.join(home, 'swap.md'));
    fs.symlinkSync(path.join(outside, 'secret.md'), path.join(home, 'swap.md'));
    // A link inside a folder link out: reached only through the link, so never seen.
    write(outside, 'folder/fresh.md', '# Fresh\n\nxylophonic again\n');
    write(home, 'control.md', '# Control\n\nWritten with the links.\n');
    await eventually(async () => (await api('GET', '/api/v1/notes?limit=500')).text.includes('control.md'), 5000);
    await eventually(async () => !(await api('GET', '/api/v1/notes?limit=500')).text.includes('swap.md'), 5000);
    await expectNoLeak();
  });

  it('temp files of atomic writes are never indexed', async () => {
    write(home, '.note.md.quire-tmp-0123456789ab', '# Temp\n\nquirktempword\n');
    write(home, 'control2.md', '# Control two\n');
    await eventually(async () => (await api('GET', '/api/v1/notes?limit=500')).text.includes('control2.md'), 5000);
    const list = await api('GET', '/api/v1/notes?limit=500');
    expect(list.text).not.toContain('quire-tmp');
    expect((await api('GET', '/api/v1/notes/search?q=quirktempword')).text).not.toContain('quire-tmp');
  });
});

describe('followSymlinks (opt-in)', () => {
  it('comes from QUIRE_FOLLOW_SYMLINKS=1 and is off by default', () => {
    expect(loadConfig({}, {}).followSymlinks).toBe(false);
    expect(loadConfig({}, { QUIRE_FOLLOW_SYMLINKS: '1' }).followSymlinks).toBe(true);
    expect(loadConfig({ followSymlinks: true }, {}).followSymlinks).toBe(true);
  });

  it('indexes links out under the link path, once; links inside and loops are still not followed', async () => {
    const root = tempDir('quire-follow-');
    const away = tempDir('quire-follow-away-');
    try {
      write(away, 'a.md', '# Away A\n');
      write(away, 'sub/b.md', '# Away B\n');
      fs.symlinkSync(away, path.join(away, 'sub/loop')); // a loop inside the outside folder
      fs.symlinkSync(root, path.join(away, 'back')); // and a way back into the Home
      write(root, 'Real/Inside.md', '# Inside\n');
      fs.symlinkSync(path.join(away, 'a.md'), path.join(root, 'link-a.md'));
      fs.symlinkSync(away, path.join(root, 'awaydir'));
      fs.symlinkSync('Real/Inside.md', path.join(root, 'alias.md'));
      const vault = new Vault({ root, cacheFile: null, followSymlinks: true });
      try {
        await vault.ready;
        const paths = () => [...vault.index.notes()].map((n) => n.path).sort();
        expect(paths()).toEqual(['Real/Inside.md', 'awaydir/a.md', 'awaydir/sub/b.md', 'link-a.md']);
        // The watcher follows them too: a new link out is indexed under its path.
        fs.symlinkSync(path.join(away, 'sub/b.md'), path.join(root, 'link-b.md'));
        await eventually(() => vault.index.noteByPath('link-b.md')?.title === 'Away B', 5000);
        expect(paths()).toEqual(['Real/Inside.md', 'awaydir/a.md', 'awaydir/sub/b.md', 'link-a.md', 'link-b.md']);
        // File actions follow them as well, under the link's path: what the index lists can be read and changed.
        expect((await vault.home.read('link-a.md')).bytes.toString()).toBe('# Away A\n');
        expect((await vault.home.list('awaydir')).map((e) => e.name)).toEqual(['back', 'sub', 'a.md']);
        const put = await vault.home.write('link-a.md', '# Away A, edited\n');
        expect(put.path).toBe('link-a.md');
        expect(fs.readFileSync(path.join(away, 'a.md'), 'utf8')).toBe('# Away A, edited\n');
        expect(fs.lstatSync(path.join(root, 'link-a.md')).isSymbolicLink()).toBe(true);
        await vault.home.write('awaydir/new.md', '# New away\n');
        expect(fs.readFileSync(path.join(away, 'new.md'), 'utf8')).toBe('# New away\n');
      } finally {
        await vault.close();
      }
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
      fs.rmSync(away, { recursive: true, force: true });
    }
  });
});
