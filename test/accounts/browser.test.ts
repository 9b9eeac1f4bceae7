/**
 * The browser pages in headless Chromium (Debian package `chromium`, driven by playwright-core)
 * with a CDP virtual authenticator: set up the owner, sign out, approve a command-line sign-in
 * (which sends the browser through the passkey sign-in page first), and exchange the approval.
 */
import fs from 'node:fs';
import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { chromiumInstalled, launchChromium } from '../helpers/chromium.js';
import { startInstance, type TestInstance } from '../helpers/instance.js';

const haveChromium = chromiumInstalled('browser.test');

let inst: TestInstance;
let browser: Browser;
let page: Page;
let origin: string;

describe.skipIf(!haveChromium)('browser pages with a virtual authenticator', () => {
  beforeAll(async () => {
    inst = await startInstance();
    origin = inst.url.replace('127.0.0.1', 'localhost');
    browser = await launchChromium();
    const context = await browser.newContext();
    page = await context.newPage();
    const cdp = await context.newCDPSession(page);
    await cdp.send('WebAuthn.enable');
    await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
    });
  });
  afterAll(async () => {
    await browser?.close();
    await inst?.close();
  });

  it('sets up the owner with a passkey on the setup page', async () => {
    await page.goto(`${origin}/setup?token=${encodeURIComponent(inst.server.setupToken!)}`);
    await page.getByLabel('Username').fill('olive');
    await page.getByLabel('Display name').fill('Olive Owner');
    await page.getByRole('button', { name: /Create account/ }).click();
    await page.waitForURL(`${origin}/account`);
    await expect.poll(() => page.locator('#who').textContent()).toContain('olive');
    await expect.poll(() => page.locator('#passkeys li').allTextContents()).toEqual(['My passkey']);
    const users = JSON.parse(fs.readFileSync(`${inst.dataDir}/state/sidecar.json`, 'utf8')).users;
    expect(users.map((u: any) => [u.username, u.role])).toEqual([['olive', 'owner']]);
  });

  it('signs out, then approves a command-line sign-in after signing in with the passkey', async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(`${origin}/login`);

    const verifier = randomBytes(32).toString('base64url');
    const challenge = createHash('sha256').update(verifier).digest('base64url');
    const start = await inst.api('POST', '/api/v1/auth/cli/start', { body: { challenge, installation_name: 'build box' } });
    expect(start.status).toBe(201);
    // The approval URL the command line prints.
    await page.goto(start.body.verification_uri_complete);
    await page.waitForURL(/\/login\?next=/);
    await page.getByRole('button', { name: 'Sign in with a passkey' }).click();
    await page.waitForURL(/\/cli\/approve\?user_code=/);
    await expect.poll(() => page.locator('.installation-name').textContent()).toBe('build box');
    expect(await page.locator('.user-code').textContent()).toBe(start.body.user_code);
    await page.getByRole('button', { name: 'Approve' }).click();
    await expect.poll(() => page.locator('#status').textContent()).toMatch(/Approved/);

    const t = await inst.api('POST', '/api/v1/auth/cli/token', { body: { device_code: start.body.device_code, verifier } });
    expect(t.status, t.text).toBe(201);
    expect(t.body.user.username).toBe('olive');
    expect(t.body.session.installation_name).toBe('build box');
  });

  it('serves the pages with a strict content security policy and no inline script', async () => {
    const r = await fetch(`${inst.url}/login`);
    expect(r.headers.get('content-security-policy')).toContain("script-src 'self'");
    const html = await r.text();
    expect(html).not.toMatch(/<script>(?!<)/);
  });
});
