/**
 * The page's cookie on a real server: the password form sets a signed, expiring grant (never the
 * password), which opens the page and the link's API routes until the link's password changes,
 * the link is revoked or the grant expires; a forged, expired or foreign grant, or a cookie
 * holding the password itself, opens nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { paths } from '../../src/core/config.js';
import { findLinkBySlug } from '../../src/public/link-store.js';
import { issuePageGrant, PAGE_GRANT_TTL_MS } from '../../src/public/page-token.js';
import { startPublicRig, type PublicRig } from './fixture.js';

let rig: PublicRig;

beforeAll(async () => {
  rig = await startPublicRig();
});
afterAll(async () => {
  await rig?.inst.close();
});

/** Posts the password form; returns the cookie value set (or null) and the status. */
async function signIn(slug: string, password: string) {
  const res = await fetch(`${rig.inst.url}/p/${slug}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ password }).toString(),
    redirect: 'manual',
  });
  const cookies = res.headers.getSetCookie();
  const value = cookies.length > 0 ? /^quire_public=([^;]*)/.exec(cookies[0]!)![1]! : null;
  return { status: res.status, cookies, value };
}

const page = (slug: string, cookie: string) => fetch(`${rig.inst.url}/p/${slug}`, { headers: { cookie: `quire_public=${cookie}` } });
const api = (slug: string, cookie: string) => fetch(`${rig.inst.url}/api/v1/public/${slug}/download?path=data.txt`, { headers: { cookie: `quire_public=${cookie}` } });

const folderLink = (password: string) => rig.link({ target: { kind: 'folder', path: 'Share' }, permissions: { view: true, download: true }, password });

describe('the page grant', () => {
  it('is a signed grant with an expiry, not the password, and opens the page and the API', async () => {
    const l = await folderLink('correct horse');
    const s = await signIn(l.slug, 'correct horse');
    expect(s.status).toBe(303);
    expect(s.value).toMatch(/^qpage_[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$/);
    expect(s.cookies.join('\n')).not.toContain('correct');
    expect(s.cookies.join('\n')).not.toContain('horse');
    expect(s.cookies[0]).toContain(`Max-Age=${PAGE_GRANT_TTL_MS / 1000}`);
    expect((await page(l.slug, s.value!)).status).toBe(200);
    const dl = await api(l.slug, s.value!);
    expect(dl.status).toBe(200);
    expect(await dl.text()).toBe('line one\nline two\n');
  });

  it('stops opening once the owner changes the password, and once the link is revoked', async () => {
    const l = await folderLink('first');
    const { value } = await signIn(l.slug, 'first');
    expect((await page(l.slug, value!)).status).toBe(200);
    const r = await rig.inst.api('PATCH', `/api/v1/links/${l.id}`, { token: rig.token, body: { password: 'second' } });
    expect(r.status).toBe(200);
    const after = await page(l.slug, value!);
    expect(after.status).toBe(401);
    expect(await after.text()).toContain('Your access to this link has ended');
    expect((await api(l.slug, value!)).status).toBe(401);
    // The new password earns a new grant, which opens.
    const again = await signIn(l.slug, 'second');
    expect((await page(l.slug, again.value!)).status).toBe(200);
    await rig.inst.api('DELETE', `/api/v1/links/${l.id}`, { token: rig.token });
    expect((await page(l.slug, again.value!)).status).toBe(404);
    expect((await api(l.slug, again.value!)).status).toBe(404);
  });

  it('refuses a forged, an expired, a foreign grant and a cookie holding the password itself', async () => {
    const l = await folderLink('pw one');
    const other = await folderLink('pw two');
    const { value } = await signIn(l.slug, 'pw one');
    const [body, sig] = value!.slice('qpage_'.length).split('.');
    const flipped = `qpage_${body}.${sig![0] === 'A' ? 'B' : 'A'}${sig!.slice(1)}`;
    // A body naming a later expiry, with the old signature.
    const claims = JSON.parse(Buffer.from(body!, 'base64url').toString('utf8'));
    const extended = `qpage_${Buffer.from(JSON.stringify({ ...claims, exp: claims.exp + 1e9 })).toString('base64url')}.${sig}`;
    const { services } = rig.inst.server;
    const stateDir = paths.state(services.config);
    const link = { id: l.id, password_hash: findLinkBySlug(services.store, l.slug)!.password_hash! };
    // Signed with the server's key for this link and its hash: only the expiry is wrong.
    expect((await page(l.slug, issuePageGrant(stateDir, link, Date.now()))).status).toBe(200);
    const expired = issuePageGrant(stateDir, link, Date.now() - PAGE_GRANT_TTL_MS - 1000);
    for (const bad of [flipped, extended, expired, 'pw%20one']) {
      expect((await page(l.slug, bad)).status, bad).toBe(401);
      expect((await api(l.slug, bad)).status, bad).toBe(401);
    }
    // A grant of one link does not open another.
    expect((await page(other.slug, value!)).status).toBe(401);
    expect((await api(other.slug, value!)).status).toBe(401);
    // Typed into the form, a grant is not a password: it cannot renew itself.
    const renew = await signIn(l.slug, value!);
    expect(renew.status).toBe(401);
    expect(renew.value).toBeNull();
  });
});
