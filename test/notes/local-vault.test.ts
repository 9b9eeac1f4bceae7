/** Local vault mode: the same handlers on a folder, with no server and no account. */
import fs from 'node:fs';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QUIRE_BIN, runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/instance.js';

let dir: string;
let cacheHome: string;
beforeAll(() => {
  dir = tempDir('quire-local-');
  cacheHome = tempDir('quire-xdg-cache-');
  // The child processes inherit it (runCli spreads process.env): the caches go here, not to the real ~/.cache.
  process.env.XDG_CACHE_HOME = cacheHome;
  fs.cpSync(path.resolve(__dirname, '../../vault-fixtures/demo'), dir, { recursive: true });
});
afterAll(() => {
  fs.rmSync(dir, { recursive: true, force: true });
  fs.rmSync(cacheHome, { recursive: true, force: true });
});

describe('quire action run --vault', () => {
  it('reads notes from a folder and caches the index in the user cache folder, not in the vault', async () => {
    const r = await runCli(['action', 'run', 'notes_list', '--vault', dir, '--json']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const titles = JSON.parse(r.stdout).items.map((n: any) => n.title);
    expect(titles).toEqual(expect.arrayContaining(['Welcome to Quire', 'Projects', 'Reading list']));
    expect(fs.existsSync(path.join(dir, '.quire'))).toBe(false);
    const [key] = fs.readdirSync(path.join(cacheHome, 'quire', 'vaults'));
    expect(key).toMatch(new RegExp(`^${path.basename(dir)}-[0-9a-f]{16}$`));
    expect(fs.existsSync(path.join(cacheHome, 'quire', 'vaults', key!, 'index.ndjson'))).toBe(true);
  });

  it('writes through the same handlers, and refuses without --confirm', async () => {
    const refused = await runCli(['action', 'run', 'create', '--vault', dir, '--input', '{"body":{"title":"Local"}}']);
    expect(refused.code).toBe(2);
    expect(fs.existsSync(path.join(dir, 'Notes/Local.md'))).toBe(false);
    const ok = await runCli(['action', 'run', 'create', '--vault', dir, '--input', '{"body":{"title":"Local","body":"hi\\n"}}', '--confirm', '--json']);
    expect(ok.code).toBe(0);
    expect(JSON.parse(ok.stdout).path).toBe('Notes/Local.md');
    expect(fs.readFileSync(path.join(dir, 'Notes/Local.md'), 'utf8').endsWith('hi\n')).toBe(true);
    const back = await runCli(['action', 'run', 'backlinks', '--vault', dir, '--input', '{"query":{"path":"Notes/Welcome.md"}}', '--json']);
    expect(JSON.parse(back.stdout).items.map((b: any) => b.path)).toContain('Notes/Projects.md');
  });

  it('refuses actions that are not content actions', async () => {
    const r = await runCli(['action', 'run', 'list_users', '--vault', dir, '--json']);
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout).error.details.reason).toBe('not_a_content_action');
  });
});

describe('quire mcp --vault', () => {
  it('serves the tools on a local folder', async () => {
    const client = new Client({ name: 't', version: '1' });
    await client.connect(new StdioClientTransport({ command: process.execPath, args: [QUIRE_BIN, 'mcp', '--vault', dir], stderr: 'pipe', env: { ...(process.env as Record<string, string>) } }));
    try {
      const r = await client.callTool({ name: 'svc_api_by_tag', arguments: { path: { tag: 'garden' } } });
      expect(r.isError).toBeFalsy();
      const items = JSON.parse((r.content as any)[0].text).items;
      expect(items.map((n: any) => n.path)).toEqual(['Notes/Projects.md']);
    } finally {
      await client.close();
    }
  });
});
