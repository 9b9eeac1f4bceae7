/**
 * Serving an existing folder: `quire serve --vault DIR` (the real command,
 * as a child process) makes it one owner's Home in place, keeps every bit of
 * server state outside it, and prints a URL and a token that work; `quire
 * admin user add --home` does the same for one user of an instance, refusing
 * folders that overlap the data folder or another Home.
 */
import { execFileSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/core/config.js';
import { openServices, startServer } from '../../src/server.js';
import { vaultServerDataDir } from '../../src/surfaces/client/user-dirs.js';
import { addUser, homeRefusal } from '../../src/surfaces/cli/admin.js';
import { serveVault } from '../../src/surfaces/cli/serve-vault.js';
import { runCli, spawnServe } from '../helpers/cli.js';
import { tempDir } from '../helpers/instance.js';

const cleanup: Array<() => unknown> = [];
afterAll(async () => {
  for (const c of cleanup.reverse()) await c();
});

const git = (dir: string, ...args: string[]) =>
  execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.org', '-c', 'init.defaultBranch=main', ...args], { cwd: dir, encoding: 'utf8' });

/** An Obsidian vault under git, as people have them. */
function makeVault(): string {
  const dir = tempDir('quire-existing-vault-');
  cleanup.push(() => fs.rmSync(dir, { recursive: true, force: true }));
  const put = (rel: string, text: string) => {
    fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    fs.writeFileSync(path.join(dir, rel), text);
  };
  put('Welcome.md', '# Welcome\n\nSee [[Ideas]].\n');
  put('Projects/Ideas.md', '---\ntags: [idea]\n---\n# Ideas\n\n- [ ] write more\n');
  put('.obsidian/app.json', '{"newFileLocation":"current"}\n');
  git(dir, 'init', '-q');
  git(dir, 'add', '-A');
  git(dir, 'commit', '-q', '-m', 'my vault');
  return dir;
}

/** Every entry of a folder (but .git/) with its size and mtime: what "nothing was written" is checked against. */
function treeOf(dir: string): string[] {
  const out: string[] = [];
  const walk = (rel: string) => {
    for (const e of fs.readdirSync(path.join(dir, rel), { withFileTypes: true })) {
      const r = rel ? `${rel}/${e.name}` : e.name;
      if (r === '.git') continue;
      const st = fs.lstatSync(path.join(dir, r));
      out.push(`${r} ${e.isDirectory() ? 'dir' : st.size} ${st.mtimeMs}`);
      if (e.isDirectory()) walk(r);
    }
  };
  walk('');
  return out.sort();
}

/** Starts `quire serve …` and waits for the URL and the token it prints. */
async function serve(args: string[], env: Record<string, string>): Promise<{ child: ChildProcess; url: string; token: string; out: () => string }> {
  const { child, ready } = spawnServe(args, { env });
  cleanup.push(() => stop(child));
  return { child, ...(await ready) };
}

function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

const get = async (url: string, token: string, route: string) => {
  const res = await fetch(url + route, { headers: { authorization: `Bearer ${token}` } });
  return { status: res.status, body: (await res.json()) as any };
};

describe('quire serve --vault', () => {
  it('serves an existing folder in place and writes nothing into it', async () => {
    const vault = makeVault();
    const stateHome = tempDir('quire-xdg-state-');
    cleanup.push(() => fs.rmSync(stateHome, { recursive: true, force: true }));
    const before = treeOf(vault);
    const env = { XDG_STATE_HOME: stateHome, USER: 'olivia' };

    const first = await serve(['--vault', vault, '--port', '0'], env);
    expect(first.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(first.out()).not.toMatch(/setup token/i);
    const notes = await get(first.url, first.token, '/api/v1/notes');
    expect(notes.status).toBe(200);
    expect(notes.body.items.map((n: any) => n.path).sort()).toEqual(['Projects/Ideas.md', 'Welcome.md']);
    const me = await get(first.url, first.token, '/api/v1/auth/me');
    expect(me.body).toMatchObject({ username: 'olivia', role: 'owner' });
    await stop(first.child);

    // The next run finds the same owner by the folder's path, with its state where it was left.
    const second = await serve(['--vault', vault, '--port', '0'], env);
    expect((await get(second.url, second.token, '/api/v1/auth/me')).body.id).toBe(me.body.id);
    expect((await get(second.url, first.token, '/api/v1/notes')).status).toBe(200);
    await stop(second.child);

    expect(treeOf(vault)).toEqual(before);
    expect(git(vault, 'status', '--porcelain', '--untracked-files=all', '--ignored')).toBe('');
    const dataDir = vaultServerDataDir(vault, { ...process.env, ...env });
    expect(dataDir.startsWith(path.join(stateHome, 'quire') + path.sep)).toBe(true);
    expect(fs.existsSync(path.join(dataDir, 'state', 'sidecar.json'))).toBe(true);
    expect(fs.existsSync(path.join(dataDir, 'homes'))).toBe(false);
  });

  it('refuses a data folder inside the vault, and a missing folder', async () => {
    const vault = makeVault();
    const inside = await runCli(['serve', '--vault', vault, '--data', path.join(vault, 'server-state'), '--port', '0'], { timeoutMs: 60_000 });
    expect(inside.code).toBe(1);
    expect(inside.stderr).toContain('contains the data folder');
    expect(fs.existsSync(path.join(vault, 'server-state'))).toBe(false);
    await expect(serveVault({ vault: path.join(vault, 'nope'), port: '0', log: () => undefined })).rejects.toMatchObject({
      code: 'not_found',
      message: expect.stringContaining('--vault takes an existing folder'),
    });
    const flag = await runCli(['serve', '--follow-symlinks', '--port', '0'], { timeoutMs: 60_000 });
    expect(flag.code).toBe(2);
    expect(flag.stderr).toContain('--follow-symlinks goes with --vault');
  });

  it('--follow-symlinks turns on the server setting; it is off otherwise', async () => {
    const vault = makeVault();
    const dataDir = tempDir('quire-vault-data-');
    cleanup.push(() => fs.rmSync(dataDir, { recursive: true, force: true }));
    const on = await serveVault({ vault, data: dataDir, host: '127.0.0.1', port: '0', followSymlinks: true, log: () => undefined });
    expect(on.services.config.followSymlinks).toBe(true);
    await on.close();
    const off = await serveVault({ vault, data: dataDir, host: '127.0.0.1', port: '0', log: () => undefined });
    expect(off.services.config.followSymlinks).toBe(false);
    await off.close();
  });
});

describe('quire admin user add --home', () => {
  it.each([
    ['/srv/quire/homes/bob/notes', 'home_inside_data'],
    ['/srv/quire', 'home_inside_data'],
    ['/srv', 'home_contains_data'],
    ['/vaults/ann/Sub', 'home_overlaps'],
    ['/vaults', 'home_overlaps'],
    ['/vaults/anna', null],
    ['/srv/quire-notes', null],
  ])('%s: %s', (home, reason) => {
    expect(homeRefusal(home, '/srv/quire', [{ username: 'ann', home: '/vaults/ann' }])?.reason ?? null).toBe(reason);
  });

  it('makes an existing folder a Home in place, and refuses overlapping ones with a clear message', async () => {
    const dataDir = tempDir('quire-home-data-');
    cleanup.push(() => fs.rmSync(dataDir, { recursive: true, force: true }));
    const vault = makeVault();
    const services = await openServices(loadConfig({ dataDir }));
    cleanup.push(() => services.jobs?.close());
    const ann = await addUser(services, { username: 'ann', role: 'owner', home: vault });
    expect(ann.home).toBe(fs.realpathSync(vault));
    await expect(addUser(services, { username: 'bob', role: 'member', home: path.join(vault, 'Projects') })).rejects.toMatchObject({
      code: 'conflict',
      message: expect.stringContaining("inside ann's Home"),
    });
    await expect(addUser(services, { username: 'cat', role: 'member', home: path.dirname(dataDir) })).rejects.toMatchObject({
      code: 'conflict',
      message: expect.stringContaining('contains the data folder'),
    });
    await expect(addUser(services, { username: 'dan', role: 'member', home: path.join(vault, 'missing') })).rejects.toMatchObject({ code: 'not_found' });
    expect(services.store.snapshot().users.map((u) => u.username)).toEqual(['ann']);

    // A server opens that folder as ann's Home; nothing goes under <data>/homes/.
    const server = await startServer({ dataDir, host: '127.0.0.1', port: 0, log: () => undefined });
    cleanup.push(() => server.close());
    const notes = await get(server.url, ann.token, '/api/v1/notes');
    expect(notes.body.items.map((n: any) => n.path).sort()).toEqual(['Projects/Ideas.md', 'Welcome.md']);
    expect(fs.existsSync(path.join(dataDir, 'homes', 'ann'))).toBe(false);
  });

  it('answers 503 for a Home folder that is gone, and does not recreate it empty', async () => {
    const dataDir = tempDir('quire-home-gone-');
    cleanup.push(() => fs.rmSync(dataDir, { recursive: true, force: true }));
    const vault = makeVault();
    const services = await openServices(loadConfig({ dataDir }));
    cleanup.push(() => services.jobs?.close());
    const ann = await addUser(services, { username: 'ann', role: 'owner', home: vault });
    const unmounted = vault + '.away';
    fs.renameSync(vault, unmounted); // as an unmounted drive looks
    const server = await startServer({ dataDir, host: '127.0.0.1', port: 0, log: () => undefined });
    cleanup.push(() => server.close());
    const gone = await get(server.url, ann.token, '/api/v1/notes');
    expect(gone.status).toBe(503);
    expect(gone.body.error).toMatchObject({ code: 'service_unavailable', details: { reason: 'home_missing' } });
    expect(fs.existsSync(vault)).toBe(false);
    fs.renameSync(unmounted, vault); // mounted again: served without a restart
    const back = await get(server.url, ann.token, '/api/v1/notes');
    expect(back.status).toBe(200);
    expect(back.body.items.map((n: any) => n.path).sort()).toEqual(['Projects/Ideas.md', 'Welcome.md']);
  });

  it('works from the command line', async () => {
    const dataDir = tempDir('quire-home-cli-');
    cleanup.push(() => fs.rmSync(dataDir, { recursive: true, force: true }));
    const vault = makeVault();
    const ok = await runCli(['admin', 'user', 'add', '--data', dataDir, '--username', 'eve', '--role', 'owner', '--home', vault], { timeoutMs: 60_000 });
    expect(ok.stderr).toBe('');
    expect(JSON.parse(ok.stdout)).toMatchObject({ user: { username: 'eve' }, home: fs.realpathSync(vault) });
    const inData = await runCli(['admin', 'user', 'add', '--data', dataDir, '--username', 'fay', '--role', 'member', '--home', dataDir], { timeoutMs: 60_000 });
    expect(inData.code).toBe(1);
    expect(inData.stderr).toContain('is inside the data folder');
    const dataInVault = await runCli(['admin', 'user', 'add', '--data', path.join(vault, 'data'), '--username', 'gus', '--role', 'owner', '--home', vault], { timeoutMs: 60_000 });
    expect(dataInVault.code).toBe(1);
    expect(dataInVault.stderr).toContain('contains the data folder');
    expect(fs.existsSync(path.join(vault, 'data'))).toBe(false);
  });
});
