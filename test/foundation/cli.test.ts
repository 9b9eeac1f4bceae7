/** The `quire` command as a user runs it: a child process against a real server. */
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registry } from '../../src/actions/registry.js';
import { runCli } from '../helpers/cli.js';
import { startInstance, tempDir, type TestInstance } from '../helpers/instance.js';

let inst: TestInstance;
let owner: { id: string; token: string };

beforeAll(async () => {
  inst = await startInstance();
  owner = await inst.user('olivia', 'owner');
});
afterAll(() => inst.close());

const remote = () => ['--server', inst.url, '--token', owner.token];

describe('quire actions list', () => {
  it('prints the whole catalog with what is implemented', async () => {
    const r = await runCli(['actions', 'list', '--json']);
    expect(r.code).toBe(0);
    const rows = JSON.parse(r.stdout);
    expect(rows).toHaveLength(registry.length);
    const me = rows.find((x: any) => x.name === 'current_user');
    expect(me).toMatchObject({ method: 'GET', route: '/api/v1/auth/me', scopes: ['account'], effect: 'read', implemented: true, tool: 'svc_api_current_user' });
    expect(rows.find((x: any) => x.name === 'appearance_get').implemented).toBe(false);
    const text = await runCli(['actions', 'list']);
    expect(text.stdout).toMatch(/appearance_get.*\[not implemented\]/);
  });
});

describe('quire action run', () => {
  it('runs a read action and prints JSON', async () => {
    const r = await runCli(['action', 'run', 'current_user', '--json', ...remote()]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ username: 'olivia', role: 'owner' });
  });

  it('takes the server and token from the environment', async () => {
    const r = await runCli(['action', 'run', 'system_info', '--json'], { env: { QUIRE_SERVER: inst.url } });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).api_version).toBe('v1');
  });

  it('passes path and body from --input', async () => {
    const m = await inst.user('max', 'member');
    const input = JSON.stringify({ path: { id: m.id }, body: { role: 'guest' } });
    const r = await runCli(['action', 'run', 'update_role', '--input', input, '--confirm', '--json', ...remote()]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ id: m.id, role: 'guest' });
  });

  it('refuses a destructive action without --confirm before sending anything (exit 2)', async () => {
    // The token is bogus: had a request been sent, the server would answer 401 (exit 1).
    const r = await runCli(['action', 'run', 'sign_out', '--server', inst.url, '--token', 'qs_bogus']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--confirm');
    const j = await runCli(['action', 'run', 'sign_out', '--json', '--server', 'http://127.0.0.1:9']);
    expect(j.code).toBe(2);
    expect(JSON.parse(j.stdout).error.details.reason).toBe('confirmation_required');
  });

  it('prints the envelope with --json and a readable line without, exiting 1', async () => {
    const j = await runCli(['action', 'run', 'current_user', '--json', '--server', inst.url, '--token', 'qs_nope']);
    expect(j.code).toBe(1);
    expect(JSON.parse(j.stdout).error.code).toBe('unauthorized');
    const t = await runCli(['action', 'run', 'list_users', '--server', inst.url, '--token', 'qs_nope']);
    expect(t.code).toBe(1);
    expect(t.stderr).toMatch(/^error: unauthorized: /);
    const v = await runCli(['action', 'run', 'update_role', '--input', '{"path":{"id":"x"},"body":{"role":"x"}}', '--confirm', ...remote()]);
    expect(v.code).toBe(1);
    expect(v.stderr).toContain('bad_request');
  });

  it('reports usage errors with exit 2', async () => {
    expect((await runCli(['action', 'run', 'no_such_action', ...remote()])).code).toBe(2);
    const bad = await runCli(['action', 'run', 'current_user', '--input', '{nope', ...remote()]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--input');
    expect((await runCli(['action', 'run', 'current_user'])).stderr).toContain('--server');
  });

  it('has clear help', async () => {
    const h = await runCli(['--help']);
    expect(h.code).toBe(0);
    for (const cmd of ['serve', 'admin', 'action', 'actions', 'mcp']) expect(h.stdout).toContain(cmd);
    const r = await runCli(['action', 'run', '--help']);
    expect(r.stdout).toContain('--confirm');
    expect(r.stdout).toContain('--input');
  });
});

describe('quire admin', () => {
  it('adds a user with a Home and a working token, and issues another token', async () => {
    const r = await runCli(['admin', 'user', 'add', '--data', inst.dataDir, '--username', 'cli-user', '--role', 'member', '--display-name', 'Cli User']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const { user, token } = JSON.parse(r.stdout);
    expect(user).toMatchObject({ username: 'cli-user', display_name: 'Cli User', role: 'member' });
    expect(fs.statSync(`${inst.dataDir}/homes/cli-user`).isDirectory()).toBe(true);
    // The running server sees the user the command line just wrote.
    const me = await inst.api('GET', '/api/v1/auth/me', { token });
    expect(me.status).toBe(200);
    const again = await runCli(['admin', 'token', '--data', inst.dataDir, '--username', 'cli-user']);
    expect(again.code).toBe(0);
    expect((await inst.api('GET', '/api/v1/auth/me', { token: JSON.parse(again.stdout).token })).status).toBe(200);
  });

  it('refuses a duplicate username ignoring case', async () => {
    const r = await runCli(['admin', 'user', 'add', '--data', inst.dataDir, '--username', 'OLIVIA', '--role', 'member']);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('name_conflict_case');
  });
});

describe('quire serve', () => {
  it('prints a setup token on first start and the URL when ready', async () => {
    const dir = tempDir();
    const { spawn } = await import('node:child_process');
    const { QUIRE_BIN } = await import('../helpers/cli.js');
    const child = spawn(process.execPath, [QUIRE_BIN, 'serve', '--data', dir, '--port', '0']);
    let out = '';
    await new Promise<void>((resolve, reject) => {
      const t = setTimeout(() => reject(new Error(`no ready line: ${out}`)), 20_000);
      child.stdout.on('data', (d) => {
        out += d;
        if (/listening on http/.test(out)) {
          clearTimeout(t);
          resolve();
        }
      });
    });
    expect(out).toMatch(/setup token: qsetup_/);
    const url = /listening on (http:\/\/\S+)/.exec(out)![1]!;
    const info = await fetch(`${url}/api/v1/system/info`);
    expect(info.status).toBe(200);
    child.kill('SIGTERM');
    await new Promise((r) => child.on('close', r));
    fs.rmSync(dir, { recursive: true, force: true });
  });
});
