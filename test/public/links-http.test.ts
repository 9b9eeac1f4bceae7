/**
 * Public links end to end on a real server: the owner manages links (create, list, get, update,
 * revoke) and a visitor without a token uses every visitor action, with passwords, expiry,
 * previews with Range and If-None-Match, thumbnails and the canvas view.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CANARY, startPublicRig, visit, type PublicRig } from './fixture.js';

let rig: PublicRig;
let folder: any;
let note: any;

beforeAll(async () => {
  rig = await startPublicRig();
  folder = await rig.link({ target: { kind: 'folder', path: 'Share' }, permissions: { view: true, download: true } });
  note = await rig.link({ target: { kind: 'note', note_id: 'shared-1' }, permissions: { view: true, download: true } });
});
afterAll(async () => {
  await rig?.inst.close();
});

const pub = (slug: string, rest = '') => `/api/v1/public/${slug}${rest}`;

describe('managing links', () => {
  it('creates a link with a random unguessable slug and a url, and never shows the password hash', async () => {
    const l = await rig.link({ target: { kind: 'file', path: 'Share/data.txt' }, password: 'pw', expires_at: Date.now() + 3_600_000 });
    expect(l.slug).toMatch(/^[A-Za-z0-9][A-Za-z0-9_-]{21}$/);
    expect(l.url).toBe(`${rig.inst.url.replace('127.0.0.1', 'localhost')}/p/${l.slug}`);
    expect(l).toMatchObject({ target: { kind: 'file', path: 'Share/data.txt' }, has_password: true, status: 'active', revoked_at: null });
    expect(l.permissions).toEqual({ view: true, download: false, upload: false, edit: false });
    expect(JSON.stringify(l)).not.toContain('scrypt');
    const sidecar = fs.readFileSync(path.join(rig.inst.dataDir, 'state/sidecar.json'), 'utf8');
    expect(sidecar).toMatch(/"password_hash": "scrypt\$32768\$8\$1\$/);
    expect(sidecar).not.toContain('"pw"');
  });

  it('lists, gets and updates the owner\'s links; another user sees none of them', async () => {
    const list = await rig.inst.api('GET', '/api/v1/links', { token: rig.token });
    expect(list.status).toBe(200);
    expect(list.body.links.map((l: any) => l.id)).toEqual(expect.arrayContaining([folder.id, note.id]));
    const got = await rig.inst.api('GET', `/api/v1/links/${folder.id}`, { token: rig.token });
    expect(got.body).toEqual(folder);
    const upd = await rig.inst.api('PATCH', `/api/v1/links/${folder.id}`, { token: rig.token, body: { permissions: { upload: true } } });
    expect(upd.status, upd.text).toBe(200);
    expect(upd.body.permissions).toEqual({ view: true, download: true, upload: true, edit: false });
    const other = await rig.inst.user('bob');
    expect((await rig.inst.api('GET', `/api/v1/links/${folder.id}`, { token: other.token })).status).toBe(404);
    expect((await rig.inst.api('GET', '/api/v1/links', { token: other.token })).body.links).toEqual([]);
    expect((await rig.inst.api('DELETE', `/api/v1/links/${folder.id}`, { token: other.token })).status).toBe(404);
    expect((await rig.inst.api('GET', '/api/v1/links')).status).toBe(401);
  });

  it.each([
    ['no permission at all', { target: { kind: 'folder', path: 'Share' }, permissions: { view: false } }, 400, 'body.permissions'],
    ['upload on a note', { target: { kind: 'note', note_id: 'shared-1' }, permissions: { upload: true } }, 400, 'body.permissions.upload'],
    ['edit on a folder', { target: { kind: 'folder', path: 'Share' }, permissions: { edit: true } }, 400, 'body.permissions.edit'],
    ['an expiry in the past', { target: { kind: 'folder', path: 'Share' }, expires_at: 1000 }, 400, 'body.expires_at'],
    ['an empty password', { target: { kind: 'folder', path: 'Share' }, password: '' }, 400, 'body.password'],
    ['a bad slug', { target: { kind: 'folder', path: 'Share' }, slug: '../x' }, 400, 'body.slug'],
    ['an unknown note', { target: { kind: 'note', note_id: 'nope' } }, 404, 'body.target.note_id'],
    ['a note shared as canvas', { target: { kind: 'canvas', note_id: 'shared-1' } }, 400, 'body.target.note_id'],
    ['a file shared as folder', { target: { kind: 'folder', path: 'Share/data.txt' } }, 400, 'body.target.kind'],
    ['a missing folder', { target: { kind: 'folder', path: 'Nope' } }, 404, 'body.target.path'],
    ['a hidden file', { target: { kind: 'file', path: 'Share/.hidden.txt' } }, 400, 'body.target.path'],
    ['a folder through a symlink', { target: { kind: 'folder', path: 'Share/escape' } }, 404, 'body.target.path'],
    ['a climbing path', { target: { kind: 'folder', path: '../olive' } }, 400, 'body.target.path'],
    ['an unknown field', { target: { kind: 'folder', path: 'Share' }, owner: 'x' }, 400, undefined],
  ])('refuses %s', async (_name, body, status, field) => {
    const r = await rig.inst.api('POST', '/api/v1/links', { token: rig.token, body });
    expect(r.status, r.text).toBe(status);
    expect(r.body.error.message.length).toBeGreaterThan(10);
    if (field) expect(r.body.error.details.field).toBe(field);
  });

  it('refuses a slug that is taken (409), and accepts a free one', async () => {
    const a = await rig.link({ target: { kind: 'folder', path: 'Share' }, slug: 'my-share' });
    expect(a.slug).toBe('my-share');
    const b = await rig.inst.api('POST', '/api/v1/links', { token: rig.token, body: { target: { kind: 'folder', path: 'Share' }, slug: 'my-share' } });
    expect(b.status).toBe(409);
    expect(b.body.error.details.reason).toBe('slug_taken');
  });

  it('revokes at once: the visitor gets 404 revoked, the owner sees status revoked, and it cannot be changed again', async () => {
    const l = await rig.link({ target: { kind: 'folder', path: 'Share' } });
    expect((await visit(rig.inst, pub(l.slug))).status).toBe(200);
    const r = await rig.inst.api('DELETE', `/api/v1/links/${l.id}`, { token: rig.token });
    expect(r.body.status).toBe('revoked');
    const v = await visit(rig.inst, pub(l.slug));
    expect(v.status).toBe(404);
    expect(v.body.error.details.reason).toBe('revoked');
    expect((await visit(rig.inst, pub(l.slug, '/entries'))).status).toBe(404);
    expect((await rig.inst.api('PATCH', `/api/v1/links/${l.id}`, { token: rig.token, body: { expires_at: null } })).status).toBe(409);
  });

  it('expires: 404 expired once expires_at passes', async () => {
    const l = await rig.link({ target: { kind: 'folder', path: 'Share' }, expires_at: Date.now() + 700 });
    expect((await visit(rig.inst, pub(l.slug))).status).toBe(200);
    await new Promise((r) => setTimeout(r, 800));
    const v = await visit(rig.inst, pub(l.slug));
    expect(v.status).toBe(404);
    expect(v.body.error.details.reason).toBe('expired');
    expect((await rig.inst.api('GET', `/api/v1/links/${l.id}`, { token: rig.token })).body.status).toBe('expired');
  });

  it('answers 404 for an unknown slug', async () => {
    const v = await visit(rig.inst, pub('no-such-link-here'));
    expect(v.status).toBe(404);
    expect(v.body.error.code).toBe('not_found');
  });
});

describe('passwords', () => {
  let l: any;
  beforeAll(async () => {
    l = await rig.link({ target: { kind: 'note', note_id: 'plain-1' }, password: 'correct horse' });
  });

  it('needs X-Public-Password: 401 password_required without it or with a wrong one, 200 with it', async () => {
    for (const password of [undefined, 'wrong', '']) {
      const v = await visit(rig.inst, pub(l.slug), { password });
      expect(v.status).toBe(401);
      expect(v.body.error.details.reason).toBe('password_required');
    }
    const ok = await visit(rig.inst, pub(l.slug), { password: 'correct horse' });
    expect(ok.status).toBe(200);
    expect(ok.body.has_password).toBe(true);
  });

  it('a changed password takes over at once; removing it opens the link', async () => {
    await rig.inst.api('PATCH', `/api/v1/links/${l.id}`, { token: rig.token, body: { password: 'new one' } });
    expect((await visit(rig.inst, pub(l.slug), { password: 'correct horse' })).status).toBe(401);
    expect((await visit(rig.inst, pub(l.slug), { password: 'new one' })).status).toBe(200);
    await rig.inst.api('PATCH', `/api/v1/links/${l.id}`, { token: rig.token, body: { password: null } });
    expect((await visit(rig.inst, pub(l.slug))).status).toBe(200);
  });
});

describe('what a visitor gets', () => {
  it('info: details and allowed actions per kind', async () => {
    const f = await visit(rig.inst, pub(folder.slug));
    expect(f.status).toBe(200);
    expect(f.body).toMatchObject({ slug: folder.slug, kind: 'folder', title: 'Share', has_password: false, size: null });
    expect(f.body.allowed_actions).toEqual(expect.arrayContaining(['entries', 'public_download', 'public_preview', 'public_thumb', 'public_upload_create']));
    // Unix ms as every other time in the API: a whole number (file systems give fractions).
    expect(Number.isInteger(f.body.updated)).toBe(true);
    const n = await visit(rig.inst, pub(note.slug));
    expect(n.body).toMatchObject({ kind: 'note', title: 'Shared note', mime: 'text/markdown; charset=utf-8' });
    expect(n.body.allowed_actions).toEqual(['info', 'linked_note', 'public_download', 'public_linked_notes', 'public_preview']);
  });

  it('entries: visible files and folders only (no dot-names, no symlinks), stable ids, sub-folders by path or item', async () => {
    const e = await visit(rig.inst, pub(folder.slug, '/entries'));
    expect(e.status).toBe(200);
    expect(e.body.entries.map((x: any) => x.name)).toEqual(['sub', 'blob.bin', 'data.txt', 'page.html', 'photo.jpg', 'readme.md']);
    expect(e.body.next_cursor).toBeNull();
    const sub = e.body.entries[0];
    expect(sub).toMatchObject({ kind: 'folder', path: 'sub' });
    const byItem = await visit(rig.inst, pub(folder.slug, `/entries?item=${sub.id}`));
    const byPath = await visit(rig.inst, pub(folder.slug, '/entries?path=sub'));
    expect(byItem.body.entries).toEqual(byPath.body.entries);
    expect(byPath.body.entries.map((x: any) => x.path)).toEqual(['sub/inner.md']);
    const again = await visit(rig.inst, pub(folder.slug, '/entries'));
    expect(again.body.entries.map((x: any) => x.id)).toEqual(e.body.entries.map((x: any) => x.id));
    expect((await visit(rig.inst, pub(note.slug, '/entries'))).status).toBe(400);
  });

  it('entries pages through a large folder with next_cursor passed back as item', async () => {
    for (let i = 0; i < 230; i++) fs.writeFileSync(path.join(rig.home, 'Share/sub', `f${String(i).padStart(3, '0')}.txt`), 'x');
    const seen: string[] = [];
    let item: string | null = null;
    let pages = 0;
    do {
      const r = await visit(rig.inst, pub(folder.slug, item ? `/entries?item=${item}` : '/entries?path=sub'));
      expect(r.status, r.text).toBe(200);
      seen.push(...r.body.entries.map((x: any) => x.name));
      item = r.body.next_cursor;
      pages++;
    } while (item && pages < 5);
    expect(pages).toBe(2);
    expect(seen).toHaveLength(231);
    expect(new Set(seen).size).toBe(231);
    expect((await visit(rig.inst, pub(folder.slug, '/entries?item=c.garbage'))).status).toBe(400);
  });

  it('download: the bytes with an attachment name; 403 without the download permission', async () => {
    const d = await visit(rig.inst, pub(folder.slug, '/download?path=data.txt'));
    expect(d.status).toBe(200);
    expect(d.text).toBe('line one\nline two\n');
    expect(d.headers.get('content-disposition')).toContain('filename="data.txt"');
    expect(d.headers.get('x-content-type-options')).toBe('nosniff');
    const viewOnly = await rig.link({ target: { kind: 'folder', path: 'Share' } });
    const no = await visit(rig.inst, pub(viewOnly.slug, '/download?path=data.txt'));
    expect(no.status).toBe(403);
    expect(no.body.error.details).toMatchObject({ reason: 'permission_denied', permission: 'download' });
    const nd = await visit(rig.inst, pub(note.slug, '/download'));
    expect(nd.text).toContain('See [[Linked]]');
    expect((await visit(rig.inst, pub(folder.slug, '/download'))).status).toBe(400);
  });

  it('preview of a note: sanitised HTML, wikilinks to shared notes lead to their page, others are plain text', async () => {
    const p = await visit(rig.inst, pub(note.slug, '/preview'));
    expect(p.status).toBe(200);
    expect(p.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(p.headers.get('content-security-policy')).toContain('sandbox');
    expect(p.text).toContain(`<a href="/p/${note.slug}?note=linked-1"`);
    expect(p.text).toContain('the secret');
    expect(p.text).not.toMatch(/<a [^>]*>the secret/);
    expect(p.text).not.toMatch(/<script|href="javascript:|onerror/i);
    expect(p.text).toContain('<input type="checkbox" disabled checked />');
    const f = await visit(rig.inst, pub(folder.slug, '/preview?path=readme.md'));
    expect(f.text).toContain(`href="/p/${folder.slug}?path=sub%2Finner.md"`);
    expect(f.text).toContain(`<img src="/api/v1/public/${folder.slug}/preview?path=photo.jpg"`);
    expect(f.text).not.toMatch(/Private\.md|private-1|<img[^>]*onerror/);
  });

  it('preview of a linked note by item, and of files: images as they are, text and HTML files as text/plain, binaries 415', async () => {
    const ln = await visit(rig.inst, pub(note.slug, '/preview?item=linked-1'));
    expect(ln.status).toBe(200);
    expect(ln.text).toContain(`<a href="/p/${note.slug}"`);
    expect((await visit(rig.inst, pub(note.slug, '/preview?item=private-1'))).status).toBe(404);
    const img = await visit(rig.inst, pub(folder.slug, '/preview?path=photo.jpg'));
    expect(img.headers.get('content-type')).toBe('image/jpeg');
    expect(img.bytes.equals(fs.readFileSync(path.join(rig.home, 'Share/photo.jpg')))).toBe(true);
    const html = await visit(rig.inst, pub(folder.slug, '/preview?path=page.html'));
    expect(html.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    const bin = await visit(rig.inst, pub(folder.slug, '/preview?path=blob.bin'));
    expect(bin.status).toBe(415);
    expect(bin.body.error.details.reason).toBe('no_preview');
  });

  it('preview honours Range (206, suffix, open end, 416) and If-None-Match (304)', async () => {
    const full = await visit(rig.inst, pub(folder.slug, '/preview?path=data.txt'));
    const etag = full.headers.get('etag')!;
    expect(full.headers.get('accept-ranges')).toBe('bytes');
    const part = await visit(rig.inst, pub(folder.slug, '/preview?path=data.txt'), { headers: { range: 'bytes=5-7' } });
    expect(part.status).toBe(206);
    expect(part.text).toBe('one');
    expect(part.headers.get('content-range')).toBe('bytes 5-7/18');
    expect(part.headers.get('etag')).toBe(etag);
    expect((await visit(rig.inst, pub(folder.slug, '/preview?path=data.txt'), { headers: { range: 'bytes=-4' } })).text).toBe('two\n');
    expect((await visit(rig.inst, pub(folder.slug, '/preview?path=data.txt'), { headers: { range: 'bytes=9-' } })).text).toBe('line two\n');
    const bad = await visit(rig.inst, pub(folder.slug, '/preview?path=data.txt'), { headers: { range: 'bytes=100-' } });
    expect(bad.status).toBe(416);
    expect(bad.headers.get('content-range')).toBe('bytes */18');
    const same = await visit(rig.inst, pub(folder.slug, '/preview?path=data.txt'), { headers: { 'if-none-match': etag } });
    expect(same.status).toBe(304);
    expect(same.bytes.length).toBe(0);
    const other = await visit(rig.inst, pub(folder.slug, '/preview?path=data.txt'), { headers: { 'if-none-match': '"other"' } });
    expect(other.status).toBe(200);
  });

  it('a file over 32 MiB is streamed whole over HTTP (download and preview) and previewed in ranges (206, same ETag)', async () => {
    const big = Buffer.alloc(33 * 1024 * 1024, 'a');
    big.write('THE END', big.length - 7);
    fs.writeFileSync(path.join(rig.home, 'Share/big.txt'), big);
    const whole = await visit(rig.inst, pub(folder.slug, '/preview?path=big.txt'));
    expect(whole.status).toBe(200);
    expect(whole.bytes.equals(big)).toBe(true);
    const down = await visit(rig.inst, pub(folder.slug, '/download?path=big.txt'));
    expect(down.status).toBe(200);
    expect(down.headers.get('content-length')).toBe(String(big.length));
    expect(down.headers.get('etag')).toBe(`"${createHash('sha256').update(big).digest('base64url')}"`);
    expect(down.bytes.equals(big)).toBe(true);
    const tail = await visit(rig.inst, pub(folder.slug, '/preview?path=big.txt'), { headers: { range: 'bytes=-7' } });
    expect(tail.status).toBe(206);
    expect(tail.text).toBe('THE END');
    expect(tail.headers.get('content-range')).toBe(`bytes ${big.length - 7}-${big.length - 1}/${big.length}`);
    expect(tail.headers.get('etag')).toBe(`"${createHash('sha256').update(big).digest('base64url')}"`);
    const open = await visit(rig.inst, pub(folder.slug, '/preview?path=big.txt'), { headers: { range: 'bytes=0-' } });
    expect(open.headers.get('content-range')).toBe(`bytes 0-${32 * 1024 * 1024 - 1}/${big.length}`);
    fs.unlinkSync(path.join(rig.home, 'Share/big.txt'));
  });

  it('thumb: a JPEG whose longest side is s, cached outside the Home by hash and size', async () => {
    const t = await visit(rig.inst, pub(folder.slug, '/thumb?path=photo.jpg&s=100'));
    expect(t.status, t.text).toBe(200);
    expect(t.headers.get('content-type')).toBe('image/jpeg');
    const meta = await sharp(t.bytes).metadata();
    expect([meta.width, meta.height]).toEqual([100, 75]);
    const cacheDir = path.join(rig.inst.dataDir, 'state/cache/thumbs');
    const cached = fs.readdirSync(cacheDir, { recursive: true }).map(String).filter((f) => f.endsWith('-100.jpg'));
    expect(cached).toHaveLength(1);
    const again = await visit(rig.inst, pub(folder.slug, '/thumb?path=photo.jpg&s=100'));
    expect(again.bytes.equals(t.bytes)).toBe(true);
    expect(again.headers.get('etag')).toBe(t.headers.get('etag'));
    expect(fs.readdirSync(rig.home, { recursive: true }).map(String).some((f) => f.includes('thumb'))).toBe(false);
    const big = await visit(rig.inst, pub(folder.slug, '/thumb?path=photo.jpg&s=5000'));
    expect(big.status).toBe(400);
    expect(big.body.error.details.field).toBe('query.s');
    const def = await visit(rig.inst, pub(folder.slug, '/thumb?path=photo.jpg&s=0'));
    expect((await sharp(def.bytes).metadata()).width).toBe(256);
    expect((await visit(rig.inst, pub(folder.slug, '/thumb?path=data.txt&s=64'))).status).toBe(415);
    expect((await visit(rig.inst, pub(folder.slug, '/thumb?path=photo.jpg'))).status).toBe(400);
  });

  it('linked notes: the notes the shared note links to, as text; nothing else', async () => {
    const l = await visit(rig.inst, pub(note.slug, '/linked-notes'));
    expect(l.status).toBe(200);
    expect(l.body.notes.map((n: any) => n.id)).toEqual(['linked-1']);
    const one = await visit(rig.inst, pub(note.slug, '/linked-notes/linked-1'));
    expect(one.headers.get('content-type')).toBe('text/markdown; charset=utf-8');
    expect(one.text).toContain('Linked body');
    expect((await visit(rig.inst, pub(note.slug, '/linked-notes/plain-1'))).status).toBe(404);
    expect((await visit(rig.inst, pub(note.slug, '/linked-notes/private-1'))).text).not.toContain(CANARY);
    expect((await visit(rig.inst, pub(folder.slug, '/linked-notes'))).status).toBe(400);
  });

  it('canvas view: elements, with links into the Home and non-embedded images as placeholders', async () => {
    const c = await rig.link({ target: { kind: 'canvas', note_id: 'canvas-1' } });
    const v = await visit(rig.inst, pub(c.slug, '/canvas'));
    expect(v.status, v.text).toBe(200);
    expect(v.body).toMatchObject({ id: 'canvas-1', title: 'Drawing', placeholders: 2, app_state: { viewBackgroundColor: '#fafafa' } });
    const byId = Object.fromEntries(v.body.elements.map((e: any) => [e.id, e]));
    expect(byId.b).toMatchObject({ link: null, customData: { quire_placeholder: true } });
    expect(byId.c.link).toBe('https://example.org/');
    expect(byId.d.fileId).toBeUndefined();
    expect(byId.d.customData.quire_placeholder).toBe(true);
    expect(byId.e.fileId).toBe('f-inline');
    expect(Object.keys(v.body.files)).toEqual(['f-inline']);
    expect(v.text).not.toContain('Private');
    expect((await visit(rig.inst, pub(note.slug, '/canvas'))).status).toBe(400);
  });

  it('a link without view shows its info but nothing else (403)', async () => {
    const drop = await rig.link({ target: { kind: 'folder', path: 'Share' }, permissions: { view: false, upload: true } });
    expect((await visit(rig.inst, pub(drop.slug))).body.allowed_actions).toEqual(['info', 'public_upload_create', 'public_upload_head', 'public_upload_patch', 'public_upload_terminate']);
    for (const r of ['/entries', '/preview?path=data.txt', '/thumb?path=photo.jpg&s=10']) expect((await visit(rig.inst, pub(drop.slug, r))).status).toBe(403);
  });

  it('a note moved after sharing is still shared (by id); a deleted one answers 404 target_missing', async () => {
    const l = await rig.link({ target: { kind: 'note', note_id: 'plain-1' }, permissions: { view: true, download: true } });
    fs.mkdirSync(path.join(rig.home, 'Notes/Moved'), { recursive: true });
    fs.renameSync(path.join(rig.home, 'Notes/Plain.md'), path.join(rig.home, 'Notes/Moved/Plain.md'));
    // The watcher tells the index; until then the old path is gone and the link answers 404.
    await expect.poll(async () => (await visit(rig.inst, pub(l.slug, '/download'))).text, { timeout: 10_000 }).toContain('plain');
    fs.unlinkSync(path.join(rig.home, 'Notes/Moved/Plain.md'));
    const v = await visit(rig.inst, pub(l.slug));
    expect(v.status).toBe(404);
    expect(v.body.error.details.reason).toBe('target_missing');
    expect(v.text).not.toContain(CANARY);
  });
});
