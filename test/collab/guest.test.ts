/**
 * Guests editing through a public link with `edit`: a guest session (password checked), a
 * collaboration ticket for it, guest edits reaching the file as history points by the guest,
 * edit_read and edit_write at If-Match (a stale ETag is 412, the file untouched), and a revoked
 * link refusing the guest at connect time.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInstance, type TestInstance } from '../helpers/instance.js';
import { connect, settled, textOf, waitFor } from './helpers.js';

let inst: TestInstance;
let ann: { id: string; token: string };
let home: string;
const file = () => fs.readFileSync(path.join(home, 'Notes/Open.md'), 'utf8');
const pub = (method: string, route: string, headers: Record<string, string> = {}) => inst.api(method, route, { headers });

beforeAll(async () => {
  inst = await startInstance();
  ann = await inst.user('ann');
  home = path.join(inst.dataDir, 'homes', 'ann');
  fs.mkdirSync(path.join(home, 'Notes'), { recursive: true });
  fs.writeFileSync(path.join(home, 'Notes/Open.md'), '---\nid: open\n---\nWelcome.\n');
  fs.writeFileSync(path.join(home, 'Notes/ViewOnly.md'), '---\nid: viewonly\n---\nLook only.\n');
  expect((await inst.api('GET', '/api/v1/notes/open', { token: ann.token })).status).toBe(200);
  const mk = async (slug: string, note_id: string, edit: boolean, password?: string) =>
    expect((await inst.api('POST', '/api/v1/links', { token: ann.token, body: { slug, target: { kind: 'note', note_id }, permissions: { view: true, edit }, ...(password ? { password } : {}) } })).status).toBe(201);
  await mk('open-door', 'open', true, 'sesame');
  await mk('look-only', 'viewonly', false);
  await mk('side-door', 'viewonly', true);
});
afterAll(() => inst.close());

describe('guest editing', () => {
  it('needs the password and the edit permission', async () => {
    expect((await pub('POST', '/api/v1/public/open-door/edit/session')).status).toBe(401);
    expect((await pub('POST', '/api/v1/public/open-door/edit/session', { 'x-public-password': 'wrong' })).status).toBe(401);
    expect((await pub('POST', '/api/v1/public/look-only/edit/session')).status).toBe(403);
    expect((await pub('GET', '/api/v1/collab/public/open-door')).status).toBe(401);
    expect((await pub('GET', '/api/v1/collab/public/open-door', { 'x-guest-session': 'qcollab_forged.x' })).status).toBe(401);
  });

  it('a guest types through the link; the file and the history have it, by the guest', async () => {
    const s = await pub('POST', '/api/v1/public/open-door/edit/session', { 'x-public-password': 'sesame' });
    expect(s.status).toBe(200);
    expect(s.body.guest).toMatch(/^g_/);
    // A session for one link is no key to another.
    expect((await pub('GET', '/api/v1/collab/public/side-door', { 'x-guest-session': s.body.guest_session })).status).toBe(401);
    // A link that does not allow editing is no editable link at all, whatever the caller holds.
    expect((await pub('GET', '/api/v1/collab/public/look-only', { 'x-guest-session': s.body.guest_session })).status).toBe(404);
    const c = await pub('GET', '/api/v1/collab/public/open-door', { 'x-guest-session': s.body.guest_session });
    expect(c.status).toBe(200);
    const g = await connect(c.body);
    textOf(g).insert(textOf(g).length, 'A guest was here.\n');
    await settled(g);
    await waitFor('the file to have the guest text', () => file().endsWith('Welcome.\nA guest was here.\n'));
    const points = (await inst.api('GET', '/api/v1/collab/history/open', { token: ann.token })).body.points;
    expect(points[points.length - 1].author).toEqual({ guest: s.body.guest, link: 'open-door' });

    const read = await pub('GET', '/api/v1/public/open-door/edit', { 'x-public-password': 'sesame' });
    expect(read.status).toBe(200);
    expect(read.body.text).toBe(file());

    // A stale ETag: 412, and the file is untouched.
    const before = file();
    const stale = await pub('PUT', '/api/v1/public/open-door/edit', { 'x-public-password': 'sesame', 'if-match': '"stale"' });
    expect(stale.status).toBe(412);
    expect(file()).toBe(before);
    const ok = await pub('PUT', '/api/v1/public/open-door/edit', { 'x-public-password': 'sesame', 'if-match': `"${read.body.etag}"` });
    expect(ok.status).toBe(200);
    expect(ok.body.committed).toBe(true);
    expect(ok.body.etag).toBe(read.body.etag);

    // Revoking the link: the guest's next connect is refused.
    const links = (await inst.api('GET', '/api/v1/links', { token: ann.token })).body.links;
    const id = links.find((l: any) => l.slug === 'open-door').id;
    expect((await inst.api('DELETE', `/api/v1/links/${id}`, { token: ann.token })).status).toBeLessThan(300);
    g.destroy();
    await expect(connect(c.body)).rejects.toThrow(/refused: not-shared/);
  });
});
