/**
 * Password guessing is limited per link (10 failures a minute, from anywhere) and per client
 * address (20 a minute, over all links), over HTTP on a real server. Its own file: once the
 * address limit trips, every password request from 127.0.0.1 waits a minute.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPublicRig, visit, type PublicRig } from './fixture.js';

let rig: PublicRig;
beforeAll(async () => {
  rig = await startPublicRig();
});
afterAll(async () => {
  await rig?.inst.close();
});

describe('password rate limits', () => {
  it('stops guesses on one link after 10 failures (429 with Retry-After), while another link still answers', async () => {
    const a = await rig.link({ target: { kind: 'folder', path: 'Share' }, password: 'right-a' });
    const b = await rig.link({ target: { kind: 'folder', path: 'Share' }, password: 'right-b' });
    const statuses: number[] = [];
    for (let i = 0; i < 11; i++) statuses.push((await visit(rig.inst, `/api/v1/public/${a.slug}`, { password: `guess ${i}` })).status);
    expect(statuses).toEqual([...Array(10).fill(401), 429]);
    const limited = await visit(rig.inst, `/api/v1/public/${a.slug}`, { password: 'right-a' });
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(limited.body.error.details.reason).toBe('rate_limited');
    expect((await visit(rig.inst, `/api/v1/public/${b.slug}`, { password: 'right-b' })).status).toBe(200);
  });

  it('stops an address after 20 failures over all links, before hashing anything', async () => {
    // 10 failures were counted above; ten links take one wrong guess each to reach 20.
    const links = await Promise.all(Array.from({ length: 10 }, (_, i) => rig.link({ target: { kind: 'folder', path: 'Share' }, password: `pw${i}` })));
    for (const l of links) expect((await visit(rig.inst, `/api/v1/public/${l.slug}`, { password: 'wrong' })).status).toBe(401);
    const fresh = await rig.link({ target: { kind: 'folder', path: 'Share' }, password: 'fresh' });
    const r = await visit(rig.inst, `/api/v1/public/${fresh.slug}`, { password: 'fresh' });
    expect(r.status).toBe(429);
    expect(r.body.error.message).toMatch(/from this address/);
    // A link without a password is not held back: the limit is on guessing.
    const open = await rig.link({ target: { kind: 'folder', path: 'Share' } });
    expect((await visit(rig.inst, `/api/v1/public/${open.slug}`)).status).toBe(200);
  });
});
