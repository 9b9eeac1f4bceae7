/**
 * The commands that need no index start fast: `quire --help`, `quire
 * actions list` and a call to a server load no index, vault, area or HTTP
 * server code (each command's code is imported when it runs, and the
 * catalog's facts come from the catalog.json the build writes). A loader
 * hook records every module the `quire` process loads (a chunk of the
 * command line's bundle counted as the modules it holds).
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registry } from '../../src/actions/registry.js';
import { catalogEntries } from '../../src/surfaces/cli/catalog.js';
import { runCli } from '../helpers/cli.js';
import { startInstance, tempDir, type TestInstance } from '../helpers/instance.js';
import { unbundled } from '../helpers/unbundled.js';

const REPO = path.resolve(__dirname, '../..');
const HOOK = path.join(REPO, 'test/helpers/record-imports.mjs');

/** Runs `quire args`; the exit code, stdout and every module URL it loaded. */
async function traced(args: string[]) {
  const log = path.join(tempDir('quire-imports-'), 'loaded.txt');
  fs.writeFileSync(log, '');
  const r = await runCli(args, { env: { NODE_OPTIONS: `--import=${HOOK}`, QUIRE_IMPORT_LOG: log } });
  const loaded = unbundled(fs.readFileSync(log, 'utf8').split('\n').filter(Boolean));
  fs.rmSync(path.dirname(log), { recursive: true, force: true });
  return { ...r, loaded };
}

/** Modules a command without a local vault or server has no use for. */
const HEAVY = [/\/dist\/(index|vault|notes|journal|tasks|calendar|collab|server\.js)/, /\/dist\/actions\/registry\.js/, /\/node_modules\/fastify\//, /\/node_modules\/ajv\//];
const heavy = (loaded: string[]) => loaded.filter((u) => HEAVY.some((re) => re.test(u)));

let inst: TestInstance;
let owner: { token: string };

beforeAll(async () => {
  inst = await startInstance();
  owner = await inst.user('olivia', 'owner');
});
afterAll(() => inst.close());

describe('commands that need no index', () => {
  it('quire --help loads only the command table', async () => {
    const r = await traced(['--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('actions');
    expect(r.loaded.some((u) => u.endsWith('/dist/surfaces/cli/main.js'))).toBe(true);
    expect(heavy(r.loaded)).toEqual([]);
    // The short commands' flags come from the catalog's facts (catalog.js, shortcuts.js); nothing else of the command line loads.
    const light = ['/main.js', '/usage.js', '/catalog.js', '/shortcuts.js'];
    expect(r.loaded.filter((u) => u.includes('/dist/surfaces/cli/') && !light.some((l) => u.endsWith(l)))).toEqual([]);
  });

  it('quire actions list reads the built catalog, not the registry', async () => {
    const r = await traced(['actions', 'list', '--json']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toHaveLength(registry.length);
    expect(heavy(r.loaded)).toEqual([]);
  });

  it('quire action run --server calls the server with the catalog facts alone', async () => {
    const r = await traced(['action', 'run', 'current_user', '--json', '--server', inst.url, '--token', owner.token]);
    expect(r.stderr).toBe('');
    expect(JSON.parse(r.stdout)).toMatchObject({ username: 'olivia' });
    expect(heavy(r.loaded)).toEqual([]);
  });

  it('the built catalog is the registry without handlers', () => {
    const built = JSON.parse(fs.readFileSync(path.join(REPO, 'dist/surfaces/cli/catalog.json'), 'utf8'));
    expect(built).toEqual(JSON.parse(JSON.stringify(catalogEntries(registry))));
  });
});
