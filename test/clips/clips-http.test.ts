/**
 * notes_bookmarks_create end to end: pages served from a local HTTP server on
 * 127.0.0.1, a Quire instance that allows private fetches (and one that does
 * not), and checks of both the answers and the Notes on disk.
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { startInstance, type TestInstance } from '../helpers/instance.js';
import { fetchPage } from '../../src/clips/fetch.js';

const ARTICLE = `<!doctype html>
<html><head>
  <meta charset="utf-8">
  <title>The Quiet Garden | Example Journal</title>
  <meta property="og:site_name" content="Example Journal">
  <script>window.tracker = "TRACKER_SCRIPT_JUNK";</script>
  <style>.x { color: red }</style>
</head><body>
  <nav><a href="/home">NAV_HOME_JUNK</a> <a href="/about">NAV_ABOUT_JUNK</a></nav>
  <article>
    <h1>The Quiet Garden</h1>
    <p class="byline">By Ada Gardener</p>
    <p>The first paragraph talks about moss and how it grows on north-facing stones in shaded corners of old gardens, where the light is soft and the soil stays damp all year round.</p>
    <p>The second paragraph links to <a href="/plants/fern">a page about ferns</a> and to <a href="notes/shade.html">shade notes</a>, and shows a picture <img src="img/moss.png" alt="moss">. Ferns like the same damp corners as the moss does, and they unfold slowly in spring.</p>
    <p>The third paragraph mentions <a href="https://elsewhere.example/absolute">an absolute link</a> that should stay as it is, plus more words about gardens, quiet afternoons, watering cans and the patience that gardening asks of everyone.</p>
    <script>document.write("INLINE_SCRIPT_JUNK")</script>
  </article>
  <footer>FOOTER_JUNK copyright</footer>
</body></html>`;

let pages: http.Server;
let base: string;

function startPages(): Promise<void> {
  pages = http.createServer((req, res) => {
    const u = new URL(req.url ?? '/', 'http://x');
    const p = u.pathname;
    if (p === '/articles/garden') {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      return res.end(ARTICLE);
    }
    const hop = /^\/hop\/(\d+)$/.exec(p);
    if (hop) {
      const n = Number(hop[1]);
      res.writeHead(302, { location: n <= 1 ? '/articles/garden' : `/hop/${n - 1}` });
      return res.end();
    }
    if (p === '/big') {
      // Streamed without a Content-Length: 6 MiB in 64 KiB chunks.
      res.writeHead(200, { 'content-type': 'text/html' });
      const chunk = Buffer.alloc(64 * 1024, 'a');
      let sent = 0;
      const pump = () => {
        while (sent < 6 * 1024 * 1024) {
          sent += chunk.length;
          if (!res.write(chunk)) return res.once('drain', pump);
        }
        res.end();
      };
      res.on('error', () => undefined);
      return pump();
    }
    if (p === '/json') {
      res.writeHead(200, { 'content-type': 'application/json' });
      return res.end('{"a":1}');
    }
    if (p === '/missing') {
      res.writeHead(404, { 'content-type': 'text/html' });
      return res.end('<p>gone</p>');
    }
    if (p === '/to-ftp') {
      res.writeHead(301, { location: 'ftp://files.example/x.html' });
      return res.end();
    }
    if (p === '/slow') {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.write('<html>');
      return; // never ends
    }
    res.writeHead(404);
    res.end();
  });
  return new Promise((resolve) =>
    pages.listen(0, '127.0.0.1', () => {
      base = `http://127.0.0.1:${(pages.address() as AddressInfo).port}`;
      resolve();
    }),
  );
}

let inst: TestInstance;
let user: { id: string; token: string };
let home: string;

const api = (body: unknown) => inst.api('POST', '/api/v1/notes/bookmarks', { token: user.token, body });
const notesOnDisk = () => (fs.existsSync(path.join(home, 'Notes')) ? fs.readdirSync(path.join(home, 'Notes')).sort() : []);
const read = (rel: string) => fs.readFileSync(path.join(home, rel), 'utf8');

beforeAll(async () => {
  await startPages();
  inst = await startInstance({ allowPrivateFetch: true });
  user = await inst.user('clara', 'member');
  home = path.join(inst.dataDir, 'homes', 'clara');
});
afterAll(async () => {
  await inst.close();
  pages.closeAllConnections();
  await new Promise((r) => pages.close(r));
});

describe('bookmark', () => {
  it('writes a Note linking the page, with frontmatter, description and quotes, without fetching', async () => {
    let fetched = 0;
    pages.once('request', () => fetched++);
    const r = await api({
      url: `${base}/articles/garden?ref=feed`,
      kind: 'bookmark',
      title: 'Garden [essay]',
      description: 'A calm essay about moss.',
      favicon: 'https://example.org/favicon.ico',
      selected_text: 'Moss grows\non stones.',
      highlights: ['Ferns unfold slowly.', 'Patience.'],
      tags: ['#reading', 'garden'],
    });
    expect(r.status).toBe(201);
    expect(r.body.path).toBe('Notes/Garden essay.md');
    expect(r.body.title).toBe('Garden [essay]');
    expect(r.body.tags).toEqual(expect.arrayContaining(['reading', 'garden']));
    expect(fetched).toBe(0);
    const text = read('Notes/Garden essay.md');
    const [, fm, body] = /^---\n([\s\S]*?)\n---\n([\s\S]*)$/.exec(text)!;
    expect(fm).toMatch(new RegExp(`^id: ${r.body.id}$`, 'm'));
    expect(fm).toContain(`url: ${base}/articles/garden?ref=feed`);
    expect(fm).toContain('description: A calm essay about moss.');
    expect(fm).toContain('favicon: https://example.org/favicon.ico');
    expect(fm).toContain('tags: [reading, garden]');
    expect(fm).toMatch(/^created: \d{4}-\d\d-\d\dT/m);
    expect(fm).toMatch(/^source: bookmark$/m);
    expect(body).toBe(
      `[Garden \\[essay\\]](<${base}/articles/garden?ref=feed>)\n\nA calm essay about moss.\n\n> Moss grows\n> on stones.\n\n> Ferns unfold slowly.\n\n> Patience.\n`,
    );
  });

  it('defaults the title to the host and the kind to bookmark', async () => {
    const r = await api({ url: 'https://news.example.org/a/b' });
    expect(r.status).toBe(201);
    expect(r.body.title).toBe('news.example.org');
    const text = read(r.body.path);
    expect(text).toContain('source: bookmark');
    expect(text).not.toContain('description:');
    expect(text.endsWith('[news.example.org](<https://news.example.org/a/b>)\n')).toBe(true);
  });

  it('refuses a non-HTTP url at validation', async () => {
    const r = await api({ url: 'ftp://files.example/x', kind: 'bookmark' });
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe('bad_request');
  });
});

describe('clip', () => {
  it('extracts the readable article as Markdown with absolute links and no page junk', async () => {
    const r = await api({ url: `${base}/articles/garden`, kind: 'clip', tags: ['garden'], highlights: ['Quiet.'] });
    expect(r.status).toBe(201);
    expect(r.body.title).toMatch(/The Quiet Garden/);
    const text = read(r.body.path);
    expect(text).toMatch(/^source: clip$/m);
    expect(text).toMatch(/^site: Example Journal$/m);
    expect(text).toMatch(/^excerpt: .+/m);
    expect(text).toMatch(/^byline: By Ada Gardener$/m);
    expect(text).toContain(`url: ${base}/articles/garden`);
    expect(text).toContain('tags: [garden]');
    expect(text).toContain('The first paragraph talks about moss');
    expect(text).toContain('The second paragraph links to');
    expect(text).toContain('The third paragraph mentions');
    expect(text).toContain(`[a page about ferns](${base}/plants/fern)`);
    expect(text).toContain(`[shade notes](${base}/articles/notes/shade.html)`);
    expect(text).toContain(`(${base}/articles/img/moss.png)`);
    expect(text).toContain('[an absolute link](https://elsewhere.example/absolute)');
    for (const junk of ['TRACKER_SCRIPT_JUNK', 'INLINE_SCRIPT_JUNK', 'NAV_HOME_JUNK', 'FOOTER_JUNK', 'color: red', '<p>']) {
      expect(text).not.toContain(junk);
    }
    expect(text.trimEnd().endsWith('> Quiet.')).toBe(true);
    // The paragraphs are separate Markdown paragraphs.
    expect(text).toMatch(/north-facing stones[^\n]*\n\n[^\n]*The second paragraph/);
  });

  it('follows a redirect chain of 5 hops and resolves links against the final address', async () => {
    const r = await api({ url: `${base}/hop/5`, kind: 'clip', title: 'Via redirects' });
    expect(r.status).toBe(201);
    expect(r.body.path).toBe('Notes/Via redirects.md');
    const text = read('Notes/Via redirects.md');
    expect(text).toContain(`url: ${base}/hop/5`);
    expect(text).toContain(`[a page about ferns](${base}/plants/fern)`);
  });

  it('refuses a chain of 6 redirects', async () => {
    const before = notesOnDisk();
    const r = await api({ url: `${base}/hop/6`, kind: 'clip', title: 'Too far' });
    expect(r.status).toBe(400);
    expect(r.body.error.details.reason).toBe('too_many_redirects');
    expect(notesOnDisk()).toEqual(before);
  });

  it('refuses an oversized page and writes no note', async () => {
    const before = notesOnDisk();
    const r = await api({ url: `${base}/big`, kind: 'clip', title: 'Huge page' });
    expect(r.status).toBe(400);
    expect(r.body.error.details.reason).toBe('too_large');
    expect(notesOnDisk()).toEqual(before);
  });

  it('refuses a page that is not HTML', async () => {
    const r = await api({ url: `${base}/json`, kind: 'clip' });
    expect(r.status).toBe(400);
    expect(r.body.error.details).toMatchObject({ reason: 'not_html', content_type: 'application/json' });
  });

  it('reports the upstream status of a failed fetch', async () => {
    const r = await api({ url: `${base}/missing`, kind: 'clip' });
    expect(r.status).toBe(400);
    expect(r.body.error.details).toMatchObject({ reason: 'fetch_failed', status: '404' });
  });

  it('refuses a redirect to ftp://', async () => {
    const r = await api({ url: `${base}/to-ftp`, kind: 'clip' });
    expect(r.status).toBe(400);
    expect(r.body.error.details.reason).toBe('scheme_not_allowed');
  });

  it('gives up after the time limit', async () => {
    await expect(fetchPage(`${base}/slow`, { allowPrivate: true, timeoutMs: 300 })).rejects.toMatchObject({
      status: 400,
      details: { reason: 'timeout' },
    });
  });

  it('works through the command line', async () => {
    const input = JSON.stringify({ body: { url: `${base}/articles/garden`, kind: 'clip', title: 'From the CLI' } });
    const r = await runCli([
      'action', 'run', 'notes_bookmarks_create', '--input', input, '--confirm', '--json', '--server', inst.url, '--token', user.token,
    ]);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).path).toBe('Notes/From the CLI.md');
    expect(read('Notes/From the CLI.md')).toContain('The first paragraph talks about moss');
  });
});

describe('with the default configuration', () => {
  it('refuses to clip a loopback address and writes nothing', async () => {
    const strict = await startInstance();
    try {
      const u = await strict.user('dora', 'member');
      const r = await strict.api('POST', '/api/v1/notes/bookmarks', {
        token: u.token,
        body: { url: `${base}/articles/garden`, kind: 'clip' },
      });
      expect(r.status).toBe(400);
      expect(r.body.error.details).toMatchObject({ reason: 'address_not_allowed', address: '127.0.0.1' });
      expect(fs.existsSync(path.join(strict.dataDir, 'homes', 'dora', 'Notes', 'The Quiet Garden.md'))).toBe(false);
      const localhost = await strict.api('POST', '/api/v1/notes/bookmarks', {
        token: u.token,
        body: { url: base.replace('127.0.0.1', 'localhost') + '/articles/garden', kind: 'clip' },
      });
      expect(localhost.status).toBe(400);
      expect(localhost.body.error.details.reason).toBe('address_not_allowed');
      // A bookmark fetches nothing, so it is still fine.
      const b = await strict.api('POST', '/api/v1/notes/bookmarks', { token: u.token, body: { url: `${base}/articles/garden` } });
      expect(b.status).toBe(201);
    } finally {
      await strict.close();
    }
  });
});
