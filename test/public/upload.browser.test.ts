/**
 * The drop zone of a file drop page in headless Chromium (Debian's `chromium`, playwright-core):
 * a file chosen with the button and a file dropped on the zone both go up with tus-js-client,
 * show their progress, and arrive in the owner's Home, under the page's strict CSP; a password
 * link's uploads carry the page's cookie.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { chromiumInstalled, launchChromium } from '../helpers/chromium.js';
import { startPublicRig, type PublicRig } from './fixture.js';

const haveChromium = chromiumInstalled('upload.browser.test');

let rig: PublicRig;
let browser: Browser;
let page: Page;
const cspErrors: string[] = [];

describe.skipIf(!haveChromium)('file drop page in Chromium', () => {
  beforeAll(async () => {
    rig = await startPublicRig();
    fs.mkdirSync(path.join(rig.home, 'Inbox'), { recursive: true });
    browser = await launchChromium();
    page = await (await browser.newContext()).newPage();
    page.on('console', (m) => {
      if (/Content Security Policy/i.test(m.text())) cspErrors.push(m.text());
    });
  });
  afterAll(async () => {
    await browser?.close();
    await rig?.inst.close();
  });

  it('uploads a chosen file and a dropped file, with progress, into the shared folder', { timeout: 60_000 }, async () => {
    const l = await rig.link({ target: { kind: 'folder', path: 'Inbox' }, permissions: { view: true, upload: true } });
    await page.goto(`${rig.inst.url}/p/${l.slug}`);
    await page.waitForSelector('#drop-zone[data-ready="true"]');
    const chosen = randomBytes(3 * 1024 * 1024 + 17);
    await page.setInputFiles('#drop-input', { name: 'chosen photo.jpg', mimeType: 'image/jpeg', buffer: chosen });
    const first = page.locator('#drop-list li').first();
    await expect.poll(() => first.locator('.status').textContent(), { timeout: 20_000 }).toBe('Uploaded as chosen photo.jpg');
    expect(await first.locator('progress').evaluate((p: HTMLProgressElement) => p.value)).toBe(100);
    // Buffer.equals: a deep equality of 3 MB takes vitest half a minute.
    expect(fs.readFileSync(path.join(rig.home, 'Inbox', 'chosen photo.jpg')).equals(chosen)).toBe(true);

    // A drop: the same events a file dragged from the desktop fires.
    await page.evaluate(() => {
      const dt = new DataTransfer();
      dt.items.add(new File(['dropped text\n'], 'notes.txt', { type: 'text/plain' }));
      const zone = document.getElementById('drop-zone')!;
      zone.dispatchEvent(new DragEvent('dragover', { dataTransfer: dt, bubbles: true, cancelable: true }));
      zone.dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
    });
    const second = page.locator('#drop-list li').nth(1);
    await expect.poll(() => second.locator('.status').textContent(), { timeout: 20_000 }).toBe('Uploaded as notes.txt');
    expect(fs.readFileSync(path.join(rig.home, 'Inbox', 'notes.txt'), 'utf8')).toBe('dropped text\n');

    // The folder list shows both files once the uploads end, without a reload (the marker survives).
    await page.evaluate(() => ((window as any).notReloaded = true));
    await expect.poll(() => page.locator('#entries > li > a').allTextContents(), { timeout: 20_000 }).toEqual(['chosen photo.jpg', 'notes.txt']);
    expect(await page.evaluate(() => (window as any).notReloaded)).toBe(true);
    expect(await page.locator('#drop-list li').count()).toBe(2);

    // The same name again is kept beside the first, as the page says.
    await page.setInputFiles('#drop-input', { name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('second\n') });
    await expect.poll(() => page.locator('#drop-list li').nth(2).locator('.status').textContent(), { timeout: 20_000 }).toBe('Uploaded as notes (2).txt');
    expect(cspErrors).toEqual([]);
  });

  it('behind a password: the uploads carry the page\'s cookie; a failure is shown', { timeout: 60_000 }, async () => {
    const l = await rig.link({ target: { kind: 'folder', path: 'Inbox' }, permissions: { upload: true }, password: 'drop it' });
    await page.goto(`${rig.inst.url}/p/${l.slug}`);
    await page.getByLabel('Password').fill('drop it');
    await page.getByRole('button', { name: 'Open' }).click();
    await page.waitForSelector('#drop-zone[data-ready="true"]');
    await page.setInputFiles('#drop-input', { name: 'secret.pdf', mimeType: 'application/pdf', buffer: Buffer.from('%PDF-1.4\n') });
    await expect.poll(() => page.locator('#drop-list li .status').first().textContent(), { timeout: 20_000 }).toBe('Uploaded as secret.pdf');
    expect(fs.readFileSync(path.join(rig.home, 'Inbox', 'secret.pdf'), 'utf8')).toBe('%PDF-1.4\n');
    await page.setInputFiles('#drop-input', { name: '.hidden', mimeType: 'text/plain', buffer: Buffer.from('x') });
    await expect.poll(() => page.locator('#drop-list li .status').nth(1).textContent(), { timeout: 20_000 }).toMatch(/^Failed: Upload-Metadata filename must not start with "\."/);
    expect(fs.existsSync(path.join(rig.home, 'Inbox', '.hidden'))).toBe(false);
  });
});
