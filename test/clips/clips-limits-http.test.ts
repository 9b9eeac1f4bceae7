/**
 * notes_bookmarks_create against hostile input, end to end: the notes area's
 * title and tag limits under this action's field names, address lengths, and
 * pages that are huge or nested deep enough to take Readability half a
 * minute, served from a local HTTP server. The server must answer 4xx, write
 * nothing it should not, and keep answering other requests meanwhile.
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInstance, type TestInstance } from '../helpers/instance.js';

const ARTICLE_BODY =
  '<article><h1>Moss</h1>' +
  '<p>Moss grows on north-facing stones in shaded corners of old gardens, where the light is soft and the soil stays damp all year.</p>'.repeat(4) +
  '</article>';

const pageFor: Record<string, () => string> = {
  // Nesting that takes Readability tens of seconds (quadratic in depth).
  '/deep': () => `<html><body>${'<div>'.repeat(1500)}<p>deep</p>${'</div>'.repeat(1500)}</body></html>`,
  // 1.2 Mi characters of markup an article could hold.
  '/huge': () => `<html><body>${'<p>words words words</p>'.repeat(52_000)}</body></html>`,
  // Mostly inline script, as many real pages are: cut before extraction, so it clips.
  '/scripted': () =>
    `<html><head><title>Scripted</title><script>${'var x = "</p>";'.repeat(200_000)}</script><style>${'p{}'.repeat(100_000)}</style></head><body>${ARTICLE_BODY}</body></html>`,
  // A <title> of 100,000 characters.
  '/long-title': () => `<html><head><title>${'Long '.repeat(20_000)}</title></head><body>${ARTICLE_BODY}</body></html>`,
};

let pages: http.Server;
let base: string;
let requests = 0;
let inst: TestInstance;
let user: { id: string; token: string };
let home: string;

const api = (body: unknown) => inst.api('POST', '/api/v1/notes/bookmarks', { token: user.token, body });
const notesOnDisk = () => (fs.existsSync(path.join(home, 'Notes')) ? fs.readdirSync(path.join(home, 'Notes')).sort() : []);

beforeAll(async () => {
  pages = http.createServer((req, res) => {
    requests++;
    const page = pageFor[new URL(req.url ?? '/', 'http://x').pathname];
    if (!page) return res.writeHead(404).end();
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(page());
  });
  await new Promise<void>((r) => pages.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(pages.address() as AddressInfo).port}`;
  inst = await startInstance({ allowPrivateFetch: true });
  user = await inst.user('lena', 'member');
  home = path.join(inst.dataDir, 'homes', 'lena');
});
afterAll(async () => {
  await inst.close();
  pages.closeAllConnections();
  await new Promise((r) => pages.close(r));
});

describe('input limits, checked before anything is fetched or written', () => {
  it.each([
    ['a title of 1,001 characters', { title: 'T'.repeat(1001) }, 'body.title'],
    ['1,001 tags', { tags: Array.from({ length: 1001 }, (_, i) => `t${i}`) }, 'body.tags'],
    ['a tag of 201 characters', { tags: ['ok', 'x'.repeat(201)] }, 'body.tags[1]'],
    ['a url of 4,097 characters', { url: `${base}/scripted?q=${'q'.repeat(4097)}` }, 'body.url'],
    ['a favicon of 4,097 characters', { favicon: `https://example.org/${'f'.repeat(4090)}` }, 'body.favicon'],
  ])('answers 400 naming the field for %s', async (_, extra, field) => {
    const before = notesOnDisk();
    const fetched = requests;
    for (const kind of ['bookmark', 'clip']) {
      const r = await api({ url: `${base}/scripted`, kind, ...extra });
      expect(r.status).toBe(400);
      expect(r.body.error.details.field).toBe(field);
    }
    expect(requests).toBe(fetched);
    expect(notesOnDisk()).toEqual(before);
  });

  it('takes a title of exactly 1,000 characters and 1,000 tags of 200', async () => {
    const r = await api({ url: `${base}/x`, title: 'T'.repeat(1000), tags: Array.from({ length: 1000 }, (_, i) => `${i}`.padEnd(200, 'x')) });
    expect(r.status).toBe(201);
    expect(r.body.title).toBe('T'.repeat(1000));
    expect(r.body.tags).toHaveLength(1000);
  });
});

describe('pages that are costly to read', () => {
  it('keeps answering other requests while a deeply nested page is read, then refuses it', async () => {
    const order: string[] = [];
    const clip = api({ url: `${base}/deep`, kind: 'clip', title: 'Deep page' }).then((r) => (order.push('clip'), r));
    await new Promise((r) => setTimeout(r, 500));
    const info = await inst.api('GET', '/api/v1/system/info');
    order.push('info');
    expect(info.status).toBe(200);
    const r = await clip;
    expect(order).toEqual(['info', 'clip']);
    expect(r.status).toBe(400);
    expect(r.body.error.details.reason).toBe('too_complex');
    expect(notesOnDisk()).not.toContain('Deep page.md');
  }, 60_000);

  it('refuses a page with more than 1 Mi characters of markup besides scripts and styles', async () => {
    const r = await api({ url: `${base}/huge`, kind: 'clip', title: 'Huge page' });
    expect(r.status).toBe(400);
    expect(r.body.error.details).toMatchObject({ reason: 'too_large', limit: String(1024 * 1024) });
    expect(notesOnDisk()).not.toContain('Huge page.md');
  });

  it('clips a page that is mostly script and style: they are cut before reading', async () => {
    const r = await api({ url: `${base}/scripted`, kind: 'clip' });
    expect(r.status).toBe(201);
    expect(r.body.title).toBe('Scripted');
    const text = fs.readFileSync(path.join(home, r.body.path), 'utf8');
    expect(text).toContain('Moss grows on north-facing stones');
    expect(text).not.toContain('var x');
  });

  it('cuts a page title of 100,000 characters to 1,000', async () => {
    const r = await api({ url: `${base}/long-title`, kind: 'clip' });
    expect(r.status).toBe(201);
    expect(r.body.title.length).toBeLessThanOrEqual(1001);
    expect(r.body.title).toMatch(/^Long Long .*…$/);
  });
});
