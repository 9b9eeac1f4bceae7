/**
 * What `quire serve` loads before its Home is ready: a heavy library is
 * imported where it is first used (passkeys, mail checks, thumbnails, MCP,
 * the file drop's tus server, CalDAV sync, push, sign-in with OIDC, public
 * pages' rendering, web clips, the collaboration server, date formatting,
 * YAML beyond the fast path), not at start,
 * and @sinclair/typebox comes from its one-file bundle in dist/vendor/
 * (scripts/build.mjs). A loader
 * hook records every module the process loads; the list is read at the
 * `index ready` line, which comes after the server listens, so a request
 * made then is answered from the index.
 */
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { spawnServe } from '../helpers/cli.js';
import { unbundled } from '../helpers/unbundled.js';
import { tempDir } from '../helpers/instance.js';
import { stopProcess } from '../helpers/processes.js';

const REPO = path.resolve(__dirname, '../..');
const HOOK = path.join(REPO, 'test/helpers/record-imports.mjs');
// Packages loaded with require() where first used (createRequire) do not pass the ES module loader.
const REQUIRE_HOOK = path.join(REPO, 'test/helpers/record-requires-live.cjs');

/** Packages a start has no use for until a request needs them. */
const LAZY = [
  '@simplewebauthn/server',
  'imapflow',
  'nodemailer',
  'sharp',
  '@modelcontextprotocol/sdk',
  '@tus/server',
  '@tus/file-store',
  'srvx',
  'tsdav',
  'web-push',
  'openid-client',
  'markdown-it',
  'sanitize-html',
  '@resvg/resvg-js',
  '@mozilla/readability',
  '@hocuspocus/server',
  'ws',
  // Loaded where first used: Daily notes and templates format dates with moment; most frontmatter is read without yaml.
  'moment',
  'yaml',
  // renameat2 through koffi: only a Home file's replacement uses it, not the store's writes at start.
  'koffi',
  // The collaboration history and undo: loaded with the first document opened or the first undo.
  'yjs',
  // Bundled into dist/vendor/: never loaded from node_modules by the server.
  '@sinclair/typebox',
];
const packageOf = (url: string) => /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url)?.[1] ?? null;

const dirs: string[] = [];
let child: ChildProcess | undefined;
afterAll(async () => {
  if (child) await stopProcess(child, ...dirs);
  else for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

it('serve --vault loads no heavy library before index ready, and answers from the index once it says so', async () => {
  const vault = tempDir('quire-start-vault-');
  const state = tempDir('quire-start-state-');
  dirs.push(vault, state);
  fs.writeFileSync(path.join(vault, 'Welcome.md'), '# Welcome\n\nSee [[Ideas]].\n');
  fs.writeFileSync(path.join(vault, 'Ideas.md'), '# Ideas\n');
  const log = path.join(state, 'loaded.txt');
  fs.writeFileSync(log, '');
  let loadedAtReady: string[] | null = null;
  const started = spawnServe(['--vault', vault, '--port', '0'], {
    env: { XDG_STATE_HOME: state, XDG_RUNTIME_DIR: path.join(state, 'run'), NODE_OPTIONS: `--import=${HOOK} --require=${REQUIRE_HOOK}`, QUIRE_IMPORT_LOG: log },
    untilIndexReady: true,
    onOutput: (out) => {
      if (loadedAtReady === null && /^index ready/m.test(out)) loadedAtReady = unbundled(fs.readFileSync(log, 'utf8').split('\n').filter(Boolean));
    },
  });
  child = started.child;
  const { url, token, out: printed } = await started.ready;
  const out = printed();

  const loaded = loadedAtReady as unknown as string[];
  // The list sees packages, also those inside the bundle's chunks: Fastify is loaded by then.
  expect(loaded.some((u) => u.includes('/node_modules/fastify/'))).toBe(true);
  expect(loaded.some((u) => u.endsWith('/dist/vendor/sinclair-typebox.js'))).toBe(true);
  const early = [...new Set(loaded.map(packageOf))].filter((p): p is string => p !== null && LAZY.includes(p));
  expect(early).toEqual([]);

  // The line says the server listens and the Home is indexed.
  expect(out.indexOf('quire listening on')).toBeGreaterThanOrEqual(0);
  expect(out.indexOf('quire listening on')).toBeLessThan(out.indexOf('index ready'));
  const res = await fetch(`${url}/api/v1/notes`, { headers: { authorization: `Bearer ${token}` } });
  expect(res.status).toBe(200);
  const body = (await res.json()) as { items: Array<{ path: string }> };
  expect(body.items.map((n) => n.path).sort()).toEqual(['Ideas.md', 'Welcome.md']);
}, 90_000);
