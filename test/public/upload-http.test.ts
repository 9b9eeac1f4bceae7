/**
 * The file drop over tus 1.0 with a plain HTTP client (fetch, as curl would send it): the table of
 * statuses, checksums, conflict policies, links without `upload`, and the spec's base64 encoding
 * that the command line and MCP use. The bytes end up in the owner's Home.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../helpers/wait.js';
import { startPublicRig, type PublicRig } from './fixture.js';

let rig: PublicRig;
let drop: any;

beforeAll(async () => {
  rig = await startPublicRig();
  drop = await rig.link({ target: { kind: 'folder', path: 'Share' }, permissions: { view: true, upload: true } });
});
afterAll(async () => {
  await rig?.inst.close();
});

const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');
const sha1 = (b: Buffer) => `sha1 ${createHash('sha1').update(b).digest('base64')}`;
const V = { 'tus-resumable': '1.0.0' };

async function tus(method: string, route: string, headers: Record<string, string> = {}, body?: Buffer | string) {
  const res = await fetch(rig.inst.url + route, { method, headers, body: body as BodyInit | undefined });
  const text = await res.text();
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, text, json };
}

const uploads = (slug = drop.slug) => `/api/v1/public/${slug}/uploads`;

async function create(name: string, length: number, extra: Record<string, string> = {}, slug = drop.slug) {
  const r = await tus('POST', uploads(slug), { ...V, 'upload-length': String(length), 'upload-metadata': `filename ${b64(name)}`, ...extra });
  return { ...r, url: r.headers.get('location') };
}

const patch = (url: string, offset: number, body: Buffer, extra: Record<string, string> = {}) =>
  tus('PATCH', url, { ...V, 'upload-offset': String(offset), 'content-type': 'application/offset+octet-stream', ...extra }, body);

const inHome = (rel: string) => path.join(rig.home, rel);

describe('the tus protocol', () => {
  it('creates an upload (201, Location), takes chunks with sha1 checksums (204, Upload-Offset), answers HEAD, and places the file in the shared folder', async () => {
    const bytes = Buffer.from('first half|second half');
    const c = await create('report.txt', bytes.length);
    expect(c.status, c.text).toBe(201);
    expect(c.url).toMatch(new RegExp(`^/api/v1/public/${drop.slug}/uploads/[0-9a-f]{32}$`));
    expect(c.headers.get('tus-resumable')).toBe('1.0.0');
    const p1 = await patch(c.url!, 0, bytes.subarray(0, 11), { 'upload-checksum': sha1(bytes.subarray(0, 11)) });
    expect(p1.status, p1.text).toBe(204);
    expect(p1.headers.get('upload-offset')).toBe('11');
    const h = await tus('HEAD', c.url!, V);
    expect(h.status).toBe(200);
    expect(h.headers.get('upload-offset')).toBe('11');
    expect(h.headers.get('upload-length')).toBe(String(bytes.length));
    expect(h.headers.get('cache-control')).toBe('no-store');
    // The server's own metadata (link id, policy, Home path) is not echoed to the visitor.
    expect(h.headers.get('upload-metadata')).toBe(`filename ${Buffer.from('report.txt').toString('base64')}`);
    expect(fs.existsSync(inHome('Share/report.txt'))).toBe(false);
    const p2 = await patch(c.url!, 11, bytes.subarray(11), { 'upload-checksum': sha1(bytes.subarray(11)) });
    expect(p2.status, p2.text).toBe(204);
    expect(p2.headers.get('quire-upload-path')).toBe('report.txt');
    expect(fs.readFileSync(inHome('Share/report.txt'))).toEqual(bytes);
    expect((await tus('HEAD', c.url!, V)).headers.get('upload-metadata')).toBe(`filename ${Buffer.from('report.txt').toString('base64')}`);
    // Nothing is left behind in the Home but the file; the bytes' store keeps only the record.
    expect(fs.readdirSync(inHome('Share')).filter((n) => n.includes('report'))).toEqual(['report.txt']);
    const after = await tus('HEAD', c.url!, V);
    expect(after.headers.get('upload-offset')).toBe(String(bytes.length));
  });

  it('a dropped note is indexed like a file another program wrote: the watcher sees it, the owner finds it', async () => {
    const bytes = Buffer.from('---\nid: dropped-1\n---\n# Dropped\n\nfrom a visitor\n');
    const c = await create('Dropped.md', bytes.length);
    expect((await patch(c.url!, 0, bytes)).status).toBe(204);
    const note = await eventually(async () => {
      const r = await rig.inst.api('GET', '/api/v1/notes/dropped-1', { token: rig.token });
      return r.status === 200 ? r.body : null;
    });
    expect(JSON.stringify(note)).toContain('Share/Dropped.md');
  });

  it('creation-with-upload: the POST body carries the whole file', async () => {
    const bytes = Buffer.from('all at once');
    const r = await fetch(rig.inst.url + uploads(), {
      method: 'POST',
      headers: { ...V, 'upload-length': String(bytes.length), 'upload-metadata': `filename ${b64('once2.bin')}`, 'content-type': 'application/offset+octet-stream', 'upload-checksum': sha1(bytes) },
      body: bytes,
    });
    expect(r.status).toBe(201);
    expect(r.headers.get('quire-upload-path')).toBe('once2.bin');
    expect(r.headers.get('upload-offset')).toBe(String(bytes.length));
    expect(fs.readFileSync(inHome('Share/once2.bin'))).toEqual(bytes);
  });

  it('a chunk whose checksum differs is 460 and is not appended; an unknown algorithm is 400', async () => {
    const c = await create('sum.txt', 10);
    const bad = await patch(c.url!, 0, Buffer.from('01234'), { 'upload-checksum': sha1(Buffer.from('xxxxx')) });
    expect(bad.status).toBe(460);
    expect(bad.json.error).toMatchObject({ code: 'bad_request', details: { reason: 'checksum_mismatch' } });
    expect((await tus('HEAD', c.url!, V)).headers.get('upload-offset')).toBe('0');
    const algo = await patch(c.url!, 0, Buffer.from('01234'), { 'upload-checksum': 'crc32 AAAA' });
    expect(algo.status).toBe(400);
    expect(algo.json.error.details.reason).toBe('checksum_algorithm');
    const ok = await patch(c.url!, 0, Buffer.from('01234'), { 'upload-checksum': sha1(Buffer.from('01234')) });
    expect(ok.status).toBe(204);
    expect(ok.headers.get('upload-offset')).toBe('5');
  });

  it('answers the rest of the table in the envelope: 409 offset, 412 version, 415 type, 413 length, 404 unknown, 204 then 404 after termination', async () => {
    const c = await create('table.txt', 10);
    const off = await patch(c.url!, 3, Buffer.from('abc'));
    expect(off.status).toBe(409);
    expect(off.json.error.code).toBe('conflict');
    const noVersion = await tus('HEAD', c.url!, {});
    expect(noVersion.status).toBe(412);
    const oldVersion = await tus('POST', uploads(), { 'tus-resumable': '0.2.2', 'upload-length': '1', 'upload-metadata': `filename ${b64('v.txt')}` });
    expect(oldVersion.status).toBe(412);
    expect(oldVersion.headers.get('tus-version')).toBe('1.0.0');
    expect(oldVersion.json.error.details.reason).toBe('tus_version');
    const type = await tus('PATCH', c.url!, { ...V, 'upload-offset': '0', 'content-type': 'text/plain' }, 'abc');
    expect(type.status).toBe(415);
    const big = await create('huge.iso', 2 ** 50);
    expect(big.status).toBe(413);
    expect(big.json.error.details.reason).toBe('too_large');
    const over = await patch(c.url!, 0, Buffer.alloc(11));
    expect(over.status).toBe(413);
    expect((await tus('HEAD', `${uploads()}/${'0'.repeat(32)}`, V)).status).toBe(404);
    expect((await tus('HEAD', `${uploads()}/..%2F..%2Fsidecar`, V)).status).toBe(404);
    const del = await tus('DELETE', c.url!, V);
    expect(del.status).toBe(204);
    const gone = await tus('HEAD', c.url!, V);
    expect(gone.status).toBe(404);
    expect((await patch(c.url!, 0, Buffer.from('a'))).status).toBe(404);
    expect(fs.existsSync(inHome('Share/table.txt'))).toBe(false);
  });

  it('refuses a missing Upload-Length, a bad or hidden file name, and reserved metadata keys', async () => {
    expect((await tus('POST', uploads(), { ...V, 'upload-metadata': `filename ${b64('a.txt')}` })).status).toBe(400);
    for (const name of ['../escape.txt', 'sub/x.txt', '.hidden', 'x.quire-tmp-abc']) {
      const r = await create(name, 1);
      expect(r.status, name).toBe(400);
      expect(r.json.error.details.field).toBe('headers.upload-metadata');
    }
    const none = await tus('POST', uploads(), { ...V, 'upload-length': '1', 'upload-metadata': `type ${b64('x')}` });
    expect(none.json.error.details.reason).toBe('filename_required');
    expect((await create('ok.txt', 1, { 'upload-metadata': `filename ${b64('ok.txt')},quire_link ${b64('x')}` })).status).toBe(400);
  });
});

describe('conflict policies', () => {
  const send = async (name: string, text: string, policy?: string) => {
    const bytes = Buffer.from(text);
    const c = await create(name, bytes.length, policy ? { 'upload-conflict-policy': policy } : {});
    if (c.status !== 201) return c;
    return patch(c.url!, 0, bytes);
  };

  it('rename (the default) keeps both: "name (2).ext", then "(3)"', async () => {
    expect((await send('data.txt', 'second')).headers.get('quire-upload-path')).toBe('data (2).txt');
    expect((await send('data.txt', 'third', 'rename')).headers.get('quire-upload-path')).toBe('data (3).txt');
    expect(fs.readFileSync(inHome('Share/data.txt'), 'utf8')).toBe('line one\nline two\n');
    expect(fs.readFileSync(inHome('Share/data (2).txt'), 'utf8')).toBe('second');
  });

  it('replace overwrites the file; reject is 409 at creation, before any byte is sent', async () => {
    fs.writeFileSync(inHome('Share/swap.txt'), 'old');
    expect((await send('swap.txt', 'new', 'replace')).status).toBe(204);
    expect(fs.readFileSync(inHome('Share/swap.txt'), 'utf8')).toBe('new');
    const r = await send('swap.txt', 'again', 'reject');
    expect(r.status).toBe(409);
    expect(r.json.error.details.reason).toBe('name_taken');
    expect(fs.readFileSync(inHome('Share/swap.txt'), 'utf8')).toBe('new');
    expect((await send('fresh.txt', 'x', 'reject')).status).toBe(204);
    expect((await send('x.txt', 'x', 'sideways')).status).toBe(400);
  });

  it('reject is checked again when the file arrives: a name taken meanwhile is 409 and the Home keeps the other file', async () => {
    const c = await create('race.txt', 3, { 'upload-conflict-policy': 'reject' });
    fs.writeFileSync(inHome('Share/race.txt'), 'theirs');
    const r = await patch(c.url!, 0, Buffer.from('our'));
    expect(r.status).toBe(409);
    expect(fs.readFileSync(inHome('Share/race.txt'), 'utf8')).toBe('theirs');
  });
});

describe('who may upload', () => {
  it('a link without upload is 403, an unknown slug 404, a password link needs its password; an upload of another link is 404', async () => {
    const view = await rig.link({ target: { kind: 'folder', path: 'Share' }, permissions: { view: true } });
    const r = await create('no.txt', 1, {}, view.slug);
    expect(r.status).toBe(403);
    expect(r.json.error.details.reason).toBe('permission_denied');
    expect((await create('no.txt', 1, {}, 'no-such-slug-here')).status).toBe(404);
    const locked = await rig.link({ target: { kind: 'folder', path: 'Share' }, permissions: { upload: true }, password: 'sesame' });
    const p = await create('pw.txt', 2, {}, locked.slug);
    expect(p.status).toBe(401);
    expect(p.json.error.details.reason).toBe('password_required');
    const ok = await create('pw.txt', 2, { 'x-public-password': 'sesame' }, locked.slug);
    expect(ok.status).toBe(201);
    // The same upload id through another link: not found.
    const id = ok.url!.slice(ok.url!.lastIndexOf('/') + 1);
    expect((await tus('HEAD', `${uploads()}/${id}`, V)).status).toBe(404);
    expect((await tus('HEAD', ok.url!, { ...V, 'x-public-password': 'sesame' })).status).toBe(200);
    const revoked = await rig.inst.api('DELETE', `/api/v1/links/${locked.id}`, { token: rig.token });
    expect(revoked.status).toBe(200);
    expect((await tus('HEAD', ok.url!, { ...V, 'x-public-password': 'sesame' })).status).toBe(404);
  });
});

describe('the owner\'s quota', () => {
  it('counts: 413 at creation when the length does not fit, 507 when the file no longer fits at the end, and nothing is placed then', async () => {
    const owner = await rig.inst.user('quota-owner', 'owner');
    const tiny = await rig.inst.user('tiny');
    expect((await rig.inst.api('PATCH', `/api/v1/auth/users/${tiny.id}/quota`, { token: owner.token, body: { quota_override_bytes: 1000 } })).status).toBe(200);
    fs.mkdirSync(path.join(rig.inst.dataDir, 'homes/tiny/Drop'), { recursive: true });
    const made = await rig.inst.api('POST', '/api/v1/links', { token: tiny.token, body: { target: { kind: 'folder', path: 'Drop' }, permissions: { upload: true } } });
    expect(made.status, made.text).toBe(201);
    const slug = made.body.slug;
    const tooBig = await create('big.bin', 2000, {}, slug);
    expect(tooBig.status).toBe(413);
    expect(tooBig.json.error.details.reason).toBe('quota_exceeded');
    // Two uploads that each fit, but not together: the second to finish is refused.
    const a = await create('a.bin', 600, {}, slug);
    const b = await create('b.bin', 600, {}, slug);
    expect([a.status, b.status]).toEqual([201, 201]);
    expect((await patch(a.url!, 0, Buffer.alloc(600, 1))).status).toBe(204);
    const late = await patch(b.url!, 0, Buffer.alloc(600, 2));
    expect(late.status).toBe(507);
    expect(late.json.error.details.reason).toBe('quota_exceeded');
    expect(fs.readdirSync(path.join(rig.inst.dataDir, 'homes/tiny/Drop'))).toEqual(['a.bin']);
    // Counted at once, not when the watcher gets to it.
    expect((await create('c.bin', 600, {}, slug)).status).toBe(413);
  });
});

describe('the base64 encoding (command line, MCP)', () => {
  it('creates and patches with JSON string bodies of base64 bytes and answers JSON', async () => {
    const api = (method: string, route: string, headers: Record<string, string>, body: unknown) =>
      rig.inst.api(method, route, { headers, body: JSON.stringify(body) });
    const c = await api('POST', uploads(), { ...V, 'upload-length': '10', 'upload-metadata': `filename ${b64('cli.txt')}` }, Buffer.from('hello').toString('base64'));
    expect(c.status, c.text).toBe(201);
    expect(c.body).toMatchObject({ offset: 5 });
    expect(c.body.id).toMatch(/^[0-9a-f]{32}$/);
    const p = await api('PATCH', `${uploads()}/${c.body.id}`, { ...V, 'upload-offset': '5', 'upload-checksum': sha1(Buffer.from('world')) }, Buffer.from('world').toString('base64'));
    expect(p.status, p.text).toBe(200);
    expect(p.body).toEqual({ offset: 10, path: 'cli.txt' });
    expect(fs.readFileSync(inHome('Share/cli.txt'), 'utf8')).toBe('helloworld');
    const bad = await api('PATCH', `${uploads()}/${c.body.id}`, { ...V, 'upload-offset': '0' }, 'not base64!');
    expect(bad.status).toBe(400);
    expect(bad.body.error.details.field).toBe('body');
  });
});
