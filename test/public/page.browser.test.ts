/**
 * The visitor's page `/p/{slug}` in headless Chromium (Debian's `chromium`, driven by
 * playwright-core): a note as HTML with working wikilinks, a folder with thumbnails and
 * downloads, the password form and its cookie, the drop-zone container only with `upload`,
 * and no script or style the strict CSP blocks.
 */
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { chromiumInstalled, launchChromium } from '../helpers/chromium.js';
import { CANARY, startPublicRig, type PublicRig } from './fixture.js';

const haveChromium = chromiumInstalled('page.browser.test');

let rig: PublicRig;
let browser: Browser;
let context: BrowserContext;
let page: Page;
const cspErrors: string[] = [];

describe.skipIf(!haveChromium)('public link page in Chromium', () => {
  beforeAll(async () => {
    rig = await startPublicRig();
    browser = await launchChromium();
    context = await browser.newContext({ acceptDownloads: true });
    page = await context.newPage();
    page.on('console', (m) => {
      if (/Content Security Policy/i.test(m.text())) cspErrors.push(m.text());
    });
  });
  afterAll(async () => {
    await browser?.close();
    await rig?.inst.close();
  });

  it('shows a shared note as HTML; a wikilink to a linked note opens it, a link to nothing shared is text', async () => {
    const l = await rig.link({ target: { kind: 'note', note_id: 'shared-1' } });
    await page.goto(`${rig.inst.url}/p/${l.slug}`);
    await expect.poll(() => page.locator('h1').first().textContent()).toBe('Shared note');
    expect(await page.locator('#note h1').textContent()).toBe('Shared');
    expect(await page.locator('#note a', { hasText: 'the secret' }).count()).toBe(0);
    expect(await page.locator('#note').textContent()).toContain('the secret');
    expect(await page.locator('#note script').count()).toBe(0);
    await page.locator('#note a', { hasText: 'Linked' }).click();
    await page.waitForURL(/\?note=linked-1$/);
    expect(await page.locator('#note').textContent()).toContain('Linked body');
    expect(await page.content()).not.toContain(CANARY);
  });

  it('lists a folder with thumbnails that load and downloads that arrive; sub-folders open', async () => {
    const l = await rig.link({ target: { kind: 'folder', path: 'Share' }, permissions: { view: true, download: true } });
    await page.goto(`${rig.inst.url}/p/${l.slug}`);
    const names = await page.locator('#entries > li > a:not(.download)').allTextContents();
    expect(names).toEqual(['sub/', 'blob.bin', 'data.txt', 'page.html', 'photo.jpg', 'readme.md']);
    const thumb = page.locator('#entries img');
    await expect.poll(() => thumb.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth)).toBe(64);
    const [download] = await Promise.all([page.waitForEvent('download'), page.locator('li', { hasText: 'data.txt' }).locator('a.download').click()]);
    expect(download.suggestedFilename()).toBe('data.txt');
    expect(fs.readFileSync((await download.path())!, 'utf8')).toBe('line one\nline two\n');
    await page.locator('a', { hasText: 'readme.md' }).click();
    await page.waitForURL(/path=readme\.md/);
    await expect.poll(() => page.locator('#note img').evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth)).toBe(640);
    await page.locator('#note a', { hasText: 'inner' }).click();
    expect(await page.locator('#note').textContent()).toContain('inside');
    expect(await page.locator('#drop-zone').count()).toBe(0);
  });

  it('asks for the password, refuses a wrong one, and remembers the right one for this link only (HttpOnly cookie)', async () => {
    const l = await rig.link({ target: { kind: 'folder', path: 'Share' }, password: 'open sesame' });
    const other = await rig.link({ target: { kind: 'note', note_id: 'linked-1' }, password: 'other' });
    await page.goto(`${rig.inst.url}/p/${l.slug}?path=sub`);
    await page.getByLabel('Password').fill('nope');
    await page.getByRole('button', { name: 'Open' }).click();
    await expect.poll(() => page.locator('#error').textContent()).toContain('wrong');
    await page.getByLabel('Password').fill('open sesame');
    await page.getByRole('button', { name: 'Open' }).click();
    await page.waitForURL(new RegExp(`/p/${l.slug}\\?path=sub$`));
    expect(await page.locator('#entries li').allTextContents()).toEqual(['inner.md 16 B']);
    // The thumbnails and downloads of the page reach the API with the cookie.
    await page.goto(`${rig.inst.url}/p/${l.slug}`);
    await expect.poll(() => page.locator('#entries img').evaluate((img: HTMLImageElement) => img.naturalWidth)).toBe(64);
    const cookies = await context.cookies();
    expect(cookies.filter((c) => c.name === 'quire_public').map((c) => [c.path, c.httpOnly, c.sameSite])).toEqual(
      expect.arrayContaining([
        [`/p/${l.slug}`, true, 'Strict'],
        [`/api/v1/public/${l.slug}`, true, 'Strict'],
      ]),
    );
    expect(await page.evaluate(() => document.cookie)).toBe('');
    // The cookie is a signed grant: the password never goes back to the browser.
    for (const c of cookies.filter((c) => c.name === 'quire_public')) {
      expect(c.value).toMatch(/^qpage_/);
      expect(decodeURIComponent(c.value)).not.toContain('sesame');
      expect(c.expires).toBeGreaterThan(Date.now() / 1000);
    }
    await page.goto(`${rig.inst.url}/p/${other.slug}`);
    expect(await page.locator('#password-form').count()).toBe(1);
    // The owner changes the password: the page asks again, and the new one opens it.
    await rig.inst.api('PATCH', `/api/v1/links/${l.id}`, { token: rig.token, body: { password: 'new sesame' } });
    await page.goto(`${rig.inst.url}/p/${l.slug}`);
    expect(await page.locator('#ended').textContent()).toContain('enter its password again');
    await page.getByLabel('Password').fill('new sesame');
    await page.getByRole('button', { name: 'Open' }).click();
    await page.waitForURL(new RegExp(`/p/${l.slug}$`));
    await expect.poll(() => page.locator('#entries img').evaluate((img: HTMLImageElement) => img.naturalWidth)).toBe(64);
  });

  it('a sub-folder and a file in it lead back to their parent and to the link\'s root (breadcrumb)', async () => {
    const l = await rig.link({ target: { kind: 'folder', path: 'Share' } });
    await page.goto(`${rig.inst.url}/p/${l.slug}`);
    expect(await page.locator('#breadcrumb').count()).toBe(0);
    await page.locator('#entries a', { hasText: 'sub/' }).click();
    await page.waitForURL(/\?path=sub$/);
    expect(await page.locator('#breadcrumb li').allTextContents()).toEqual(['Share', 'sub']);
    expect(await page.locator('#breadcrumb [aria-current="page"]').textContent()).toBe('sub');
    await page.locator('#entries a', { hasText: 'inner.md' }).click();
    await page.waitForURL(/\?path=sub%2Finner\.md$/);
    expect(await page.locator('#breadcrumb li').allTextContents()).toEqual(['Share', 'sub', 'inner.md']);
    await page.locator('#breadcrumb a', { hasText: 'sub' }).click();
    await page.waitForURL(/\?path=sub$/);
    expect(await page.locator('#entries li').allTextContents()).toEqual(['inner.md 16 B']);
    await page.locator('#breadcrumb a', { hasText: 'Share' }).click();
    await page.waitForURL(new RegExp(`/p/${l.slug}$`));
    expect(await page.locator('#entries > li > a').first().textContent()).toBe('sub/');
  });

  it('has the drop-zone container and its script only with upload', async () => {
    const l = await rig.link({ target: { kind: 'folder', path: 'Share' }, permissions: { view: true, upload: true } });
    await page.goto(`${rig.inst.url}/p/${l.slug}`);
    const zone = page.locator('#drop-zone');
    expect(await zone.getAttribute('data-endpoint')).toBe(`/api/v1/public/${l.slug}/uploads`);
    expect(await page.locator('script[src="/assets/public-drop.js"]').count()).toBe(1);
  });

  it('says so when a link is revoked, and serves every page with a strict CSP that nothing on it violates', async () => {
    const l = await rig.link({ target: { kind: 'folder', path: 'Share' } });
    await rig.inst.api('DELETE', `/api/v1/links/${l.id}`, { token: rig.token });
    const res = await page.goto(`${rig.inst.url}/p/${l.slug}`);
    expect(res!.status()).toBe(404);
    expect(await page.locator('h1').textContent()).toContain('turned off');
    const r = await fetch(`${rig.inst.url}/p/${l.slug}`);
    expect(r.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(await r.text()).not.toMatch(/<script>|style=/);
    expect(cspErrors).toEqual([]);
  });
});
