/**
 * `quire login` with a browser at hand: it opens the approval page ($BROWSER
 * here: a script that records the address) and listens on a loopback
 * address the approval page sends the browser back to; with --no-browser it
 * only prints the address and the code.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QUIRE_BIN } from '../helpers/cli.js';
import { startInstance, tempDir, type TestInstance } from '../helpers/instance.js';
import { eventually } from '../helpers/wait.js';

let inst: TestInstance;
let owner: { id: string; token: string };
const home = tempDir('quire-cli-login-');
const opened = path.join(home, 'opened.txt');
const browser = path.join(home, 'browser.sh');

beforeAll(async () => {
  inst = await startInstance();
  owner = await inst.user('olive', 'owner');
  fs.writeFileSync(browser, `#!/bin/sh\necho "$1" >> '${opened}'\n`, { mode: 0o755 });
});
afterAll(async () => {
  await inst.close();
  fs.rmSync(home, { recursive: true, force: true });
});

function login(args: string[]) {
  const env = { ...process.env, QUIRE_SERVER: '', QUIRE_TOKEN: '', XDG_CONFIG_HOME: home, HOME: home, BROWSER: browser, DISPLAY: '', WAYLAND_DISPLAY: '' };
  const child = spawn(process.execPath, [QUIRE_BIN, 'login', '--server', inst.url, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (err += d));
  const exited = new Promise<number>((resolve) => child.on('close', (c) => resolve(c ?? -1)));
  return { exited, out: () => out, err: () => err, kill: () => child.kill('SIGKILL') };
}

const approvalPage = async (code: string) => (await inst.api('GET', `/api/v1/auth/cli/approve?user_code=${code}`, { token: owner.token })).text;

describe('quire login with a browser at hand', () => {
  it('opens the approval page and comes back through a loopback redirect', async () => {
    const run = login(['--name', 'desk']);
    const url = await eventually(() => (fs.existsSync(opened) ? fs.readFileSync(opened, 'utf8').trim() : undefined), 60_000, 50);
    const code = /user_code=([A-Z]{4}-[A-Z]{4})/.exec(url!)?.[1];
    expect(code).toBeTruthy();
    expect(run.err()).toContain(`code ${code}`); // the code is still shown, to compare with the page
    const redirect = /data-redirect-uri="([^"]+)"/.exec(await approvalPage(code!))?.[1];
    expect(redirect).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/quire-login\/[0-9a-f]{16}$/);

    expect((await inst.api('POST', `/api/v1/auth/cli/approve?user_code=${code}`, { token: owner.token })).status).toBe(200);
    // What the browser does after the approval: follow the redirect to the command's loopback page.
    const back = await fetch(redirect!);
    expect(back.status).toBe(200);
    expect(await back.text()).toContain('You can close this tab');
    expect(await run.exited).toBe(0);
    expect(run.out()).toMatch(/Signed in to .* as olive/);
    // The loopback page is gone once the command is done.
    await expect(fetch(redirect!)).rejects.toThrow();
  }, 120_000);

  it('--no-browser prints the address and code only, with no redirect', async () => {
    fs.rmSync(opened, { force: true });
    const run = login(['--no-browser', '--name', 'ssh']);
    const code = await eventually(() => /code ([A-Z]{4}-[A-Z]{4})/.exec(run.err())?.[1], 60_000, 50);
    expect(await approvalPage(code!)).not.toContain('data-redirect-uri');
    expect((await inst.api('POST', `/api/v1/auth/cli/approve?user_code=${code}`, { token: owner.token })).status).toBe(200);
    expect(await run.exited).toBe(0);
    expect(fs.existsSync(opened)).toBe(false);
  }, 120_000);
});
