/**
 * The command line runs as one bundle (dist/bundle/, scripts/build.mjs
 * writeCliBundle), its files found through src/core/install.ts: `serve`
 * starts and answers (the spec's catalog, the web scripts and package.json
 * are read at start), its scan threads run their dist/ files, and a vault
 * command works in process. A loader hook records every module loaded.
 */
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { runCli, spawnServe } from '../helpers/cli.js';
import { tempDir } from '../helpers/instance.js';
import { stopProcess } from '../helpers/processes.js';
import { unbundled } from '../helpers/unbundled.js';

const REPO = path.resolve(__dirname, '../..');
const HOOK = path.join(REPO, 'test/helpers/record-imports.mjs');
const rel = (url: string) => path.relative(REPO, new URL(url).pathname);

/** The loader hook's environment, logging to a file in `dir`, and the modules it logged (paths from the repo). */
function importLog(dir: string): { env: Record<string, string>; loaded: () => string[] } {
  const log = path.join(dir, 'loaded.txt');
  fs.writeFileSync(log, '');
  return { env: { NODE_OPTIONS: `--import=${HOOK}`, QUIRE_IMPORT_LOG: log }, loaded: () => fs.readFileSync(log, 'utf8').split('\n').filter(Boolean).map(rel) };
}
/** The modules the process loaded so far, each chunk of the bundle replaced by the sources it holds (paths from the repo). */
const modulesIn = (logFile: string) => unbundled(fs.readFileSync(logFile, 'utf8').split('\n').filter(Boolean)).map(rel);

/** Modules of dist/ loaded from outside the bundle and the vendored packages. */
const outsideBundle = (loaded: string[]) => loaded.filter((f) => f.startsWith('dist/') && !f.startsWith('dist/bundle/') && !f.startsWith('dist/vendor/'));

const dirs: string[] = [];
let child: ChildProcess | undefined;
afterAll(async () => {
  if (child) await stopProcess(child, ...dirs);
  else for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

/** A folder of `n` linked notes: from 500 notes a first index is made by scan threads (src/vault/scan-pool.ts). */
function vaultOf(n: number): string {
  const vault = tempDir('quire-bundle-vault-');
  dirs.push(vault);
  for (let i = 1; i <= n; i++) fs.writeFileSync(path.join(vault, `Note ${i}.md`), `# Note ${i}\n\nSee [[Note ${(i % n) + 1}]]. #t${i % 7}\n`);
  return vault;
}

/** `serve --vault` on a folder of three notes, with the loader hook logging to `loaded.txt` in its own state folder. */
function serveLogged(prefix: string): { started: ReturnType<typeof spawnServe>; logFile: string } {
  const vault = vaultOf(3);
  const state = tempDir(prefix);
  dirs.push(state);
  const log = importLog(state);
  const started = spawnServe(['--vault', vault, '--port', '0'], {
    env: { XDG_STATE_HOME: state, XDG_RUNTIME_DIR: path.join(state, 'run'), ...log.env },
    untilIndexReady: true,
  });
  return { started, logFile: path.join(state, 'loaded.txt') };
}

it('serve --vault runs from the bundle, its scan threads from dist/, and answers', async () => {
  const vault = vaultOf(600);
  const state = tempDir('quire-bundle-state-');
  dirs.push(state);
  const log = importLog(state);
  const started = spawnServe(['--vault', vault, '--port', '0'], {
    env: { XDG_STATE_HOME: state, XDG_RUNTIME_DIR: path.join(state, 'run'), ...log.env },
    untilIndexReady: true,
  });
  child = started.child;
  const { url, token, out } = await started.ready;
  expect(out()).toMatch(/^index ready: 600 notes .*600 parsed/m);
  const loaded = log.loaded();
  expect(loaded).toContain('dist/bundle/main.js');
  expect(loaded).toContain('dist/vault/scan-worker.js');
  // Only a worker's modules come from the tree: the command line's own are in the bundle, never loaded twice.
  for (const tree of ['dist/surfaces/cli/main.js', 'dist/server.js', 'dist/actions/registry.js']) expect(loaded).not.toContain(tree);

  const res = await fetch(`${url}/api/v1/notes?limit=5`, { headers: { authorization: `Bearer ${token}` } });
  expect(res.status).toBe(200);
  expect(((await res.json()) as { items: unknown[] }).items).toHaveLength(5);
  const system = await fetch(`${url}/api/v1/system/info`, { headers: { authorization: `Bearer ${token}` } });
  const pkg = JSON.parse(fs.readFileSync(path.join(REPO, 'package.json'), 'utf8')) as { version: string };
  expect(await system.json()).toMatchObject({ version: pkg.version });
}, 90_000);

it('a vault command runs in process from the bundle', async () => {
  const vault = vaultOf(3);
  const logDir = tempDir('quire-bundle-log-');
  dirs.push(logDir);
  const log = importLog(logDir);
  const r = await runCli(['backlinks', 'Note 2', '--vault', vault, '--json'], { env: log.env });
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  const loaded = log.loaded();
  expect(loaded).toContain('dist/bundle/main.js');
  expect(outsideBundle(loaded)).toEqual([]);
  expect(JSON.stringify(JSON.parse(r.stdout))).toContain('Note 1.md');
  expect(fs.readdirSync(vault).sort()).toEqual(['Note 1.md', 'Note 2.md', 'Note 3.md']);
});

it('the vault daemon a call starts runs from the bundle too', async () => {
  const vault = vaultOf(3);
  const state = tempDir('quire-bundle-daemon-');
  dirs.push(state);
  const log = importLog(state);
  // The daemon inherits the call's environment, the loader hook included.
  const env = { QUIRE_DAEMON: 'on', XDG_STATE_HOME: state, XDG_RUNTIME_DIR: path.join(state, 'run'), ...log.env };
  try {
    const r = await runCli(['backlinks', 'Note 2', '--vault', vault, '--json'], { env });
    expect(r.stderr).toBe('');
    expect(JSON.stringify(JSON.parse(r.stdout))).toContain('Note 1.md');
    const loaded = log.loaded();
    expect(loaded).toContain('dist/bundle/daemon.js');
    expect(outsideBundle(loaded)).toEqual([]);
  } finally {
    await runCli(['daemon', 'stop', '--vault', vault], { env });
  }
});

it('the bundle leaves out what Fastify requires only when called and the server never calls', () => {
  // Compiled at every start when bundled (0.39 MB of the app chunk); scripts/build.mjs FASTIFY_UNCALLED.
  const inputs = JSON.parse(fs.readFileSync(path.join(REPO, 'dist/bundle/inputs.json'), 'utf8')) as Record<string, string[]>;
  const bundled = Object.values(inputs).flat();
  for (const pkg of ['@fastify/ajv-compiler', '@fastify/fast-json-stringify-compiler', 'light-my-request', 'pino', 'thread-stream', 'semver']) {
    expect(bundled.filter((f) => f.includes(`node_modules/${pkg}/`))).toEqual([]);
  }
});

it('a server start loads no calendar code (ical.js) and no input validation (ajv); the first call that needs them does', async () => {
  const { started, logFile } = serveLogged('quire-bundle-lazy-');
  const serve = started.child;
  try {
    const { url, token } = await started.ready;
    // Listening and indexed: the whole start is behind this line.
    const atStart = modulesIn(logFile);
    expect(atStart.some((f) => f.includes('node_modules/fastify/'))).toBe(true);
    expect(atStart.filter((f) => /node_modules\/(ical\.js|ajv|ajv-formats)\/|dist\/calendar\/(events|ics|recurrence|zones)\.js$|dist\/actions\/validate\.js$/.test(f))).toEqual([]);

    const auth = { headers: { authorization: `Bearer ${token}` } };
    expect((await fetch(`${url}/api/v1/notes?limit=1`, auth)).status).toBe(200);
    expect(modulesIn(logFile)).toContain('node_modules/ajv/dist/ajv.js');
    const calendars = await fetch(`${url}/api/v1/calendar/calendars`, auth);
    expect(calendars.status).toBe(200);
    expect(modulesIn(logFile)).toContain('node_modules/ical.js/dist/ical.js');
  } finally {
    await stopProcess(serve);
  }
}, 90_000);

it("the bundle's router writes a route's code at its first request, Node's HTTP/2, TLS and zlib are not loaded, and routing is as before", async () => {
  const vault = vaultOf(3);
  const state = tempDir('quire-bundle-router-');
  dirs.push(state);
  // Counts the functions made from source (`new Function`) until the server says it listens, and lists Node's own modules loaded by then.
  const hook = path.join(state, 'count-functions.cjs');
  const counted = path.join(state, 'at-listening.json');
  fs.writeFileSync(
    hook,
    `const fs = require('node:fs');
let n = 0;
globalThis.Function = new Proxy(globalThis.Function, { construct: (t, a, nt) => (n++, Reflect.construct(t, a, nt)) });
const write = process.stdout.write;
process.stdout.write = function (chunk, ...rest) {
  if (/^quire listening/m.test(String(chunk))) fs.writeFileSync(${JSON.stringify(counted)}, JSON.stringify({ n, builtins: process.moduleLoadList }));
  return write.call(this, chunk, ...rest);
};
`,
  );
  const started = spawnServe(['--vault', vault, '--port', '0'], {
    env: { XDG_STATE_HOME: state, XDG_RUNTIME_DIR: path.join(state, 'run'), NODE_OPTIONS: `--require=${hook}` },
    untilIndexReady: true,
  });
  const serve = started.child;
  try {
    const { url, token } = await started.ready;
    // find-my-way made one per static node and two per handler as each route was added: 1,371; and Fastify required
    // node:http2 and node:https for options the server never sets (scripts/build.mjs PACKAGE_EDITS).
    const atListening = JSON.parse(fs.readFileSync(counted, 'utf8')) as { n: number; builtins: string[] };
    expect(atListening.n).toBeLessThan(200);
    // Nor TLS and zlib, which only an outbound fetch uses (src/core/outbound.ts).
    expect(atListening.builtins.filter((m) => /^NativeModule (http2|https|tls|_tls_wrap|zlib)$/.test(m))).toEqual([]);

    const get = (p: string, method = 'GET') => fetch(`${url}${p}`, { method, headers: { authorization: `Bearer ${token}` } });
    const list = await get('/api/v1/notes?limit=5');
    expect(list.status).toBe(200);
    const items = ((await list.json()) as { items: Array<{ id: string; path: string }> }).items;
    const note = items.find((n) => n.path === 'Note 1.md')!;
    const one = await get(`/api/v1/notes/${encodeURIComponent(note.id)}`);
    expect(one.status).toBe(200);
    expect(((await one.json()) as { path: string }).path).toBe('Note 1.md');
    const backlinks = await get(`/api/v1/notes/${encodeURIComponent(note.id)}/backlinks`);
    expect(backlinks.status).toBe(200);
    expect(JSON.stringify(await backlinks.json())).toContain('Note 3.md');
    const byTag = await get('/api/v1/notes/tags/t1');
    expect(byTag.status).toBe(200);
    expect(JSON.stringify(await byTag.json())).toContain('Note 1.md');
    const head = await get('/api/v1/notes?limit=5', 'HEAD');
    expect(head.status).toBe(200);
    expect(await head.text()).toBe('');
    for (const miss of ['/api/v1/notez', '/api/v1/note', '/api/v2/notes']) {
      const res = await get(miss);
      expect(res.status).toBe(404);
      expect(((await res.json()) as { error: { message: string } }).error.message).toBe(`No route GET ${miss}`);
    }
  } finally {
    await stopProcess(serve);
  }
}, 90_000);

it("a server start loads no tasks, journal, tag-rewrite, composer, templates or clips code; each area's first call does", async () => {
  const { started, logFile } = serveLogged('quire-bundle-areas-');
  const serve = started.child;
  // Only their handlers call these (src/{tasks,journal,tags,notes}/lazy.ts): 160 KB of the bundle compiled by every start before.
  const areaCode = {
    tasks: 'dist/tasks/expr.js',
    journal: 'dist/journal/journal.js',
    tags: 'dist/tags/rewrite.js',
    notes: 'dist/composer/composer.js',
  };
  try {
    const { url, token } = await started.ready;
    const atStart = modulesIn(logFile);
    expect(atStart.filter((f) => /^dist\/(tasks\/(expr|views|base-rows|tasks|attach)|journal\/journal|tags\/rewrite(-text)?|composer\/composer|templates\/templates|clips\/clips)\.js$/.test(f))).toEqual([]);

    const call = (p: string, method = 'GET', body?: unknown) =>
      fetch(`${url}/api/v1${p}`, {
        method,
        headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
        body: body ? JSON.stringify(body) : undefined,
      });
    expect((await call('/notes/tasks')).status).toBe(200);
    expect(modulesIn(logFile)).toContain(areaCode.tasks);
    expect((await call('/notes/daily?date=2026-01-02')).status).toBe(200);
    expect(modulesIn(logFile)).toContain(areaCode.journal);
    expect((await call('/tags/rewrites/none')).status).toBe(404);
    expect(modulesIn(logFile)).toContain(areaCode.tags);
    expect((await call('/notes/templates')).status).toBe(200);
    expect(modulesIn(logFile)).toContain(areaCode.notes);
  } finally {
    await stopProcess(serve);
  }
}, 90_000);
