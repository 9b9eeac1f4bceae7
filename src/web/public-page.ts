/**
 * The page a visitor opens: `GET /p/{slug}` (a folder's sub-folders and files: `?path=`; a note
 * the shared note links to: `?note=`). Rendered on the server, so it works without JavaScript:
 * a note as sanitised HTML, a folder as a list with thumbnails and downloads, a password form
 * when the link has a password. The form posts to `/p/{slug}`; a right password earns a signed,
 * expiring grant (page-token.ts, never the password itself) kept in an HttpOnly, SameSite=Strict
 * cookie `quire_public` scoped to `/p/{slug}` and to `/api/v1/public/{slug}` (so the page's images
 * and downloads, plain links to the API, carry it), never in a URL. docs/public-links.md, "The page".
 *
 * Also the HTTP side of the password limits: a wrong `X-Public-Password` counts against the
 * sender's address, and an address over the limit gets 429 before any hashing. A grant is not a
 * guess (it cannot be made without the key): it neither counts nor waits.
 */
import fs from 'node:fs';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, toAppError } from '../core/errors.js';
import type { Services } from '../core/services.js';
import { paths } from '../core/config.js';
import { codeFile } from '../core/install.js';
import { locate, locateRel, openLink, readLocated, type OpenLink } from '../public/access.js';
import { previewKind } from '../public/media.js';
import { isPageGrant, isPasswordGuess, issuePageGrant, PAGE_GRANT_TTL_MS } from '../public/page-token.js';
import { ipWait, passwordRequired, recordIpFailure } from '../public/passwords.js';
import { breadcrumb, escapeHtml as esc, noteHtml } from '../public/render.js';
import { entries, listLinkedNotes, resolverFor } from '../public/visitor.js';

const COOKIE = 'quire_public';
const API_PREFIX = '/api/v1/public/';
/** The drop zone's script (issue 23, file drop): loaded only on pages of links with `upload`. */
const DROP_SCRIPT = fs.readFileSync(codeFile('web/public-drop.browser.js'), 'utf8');
const TEXT_SHOWN = 256 * 1024;

/** The policy of the sign-in pages: no inline script or style, nothing from elsewhere. */
const HEADERS = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
};

/** The page's grant, if the request carries one (a cookie of an older server, holding the password itself, is ignored). */
function cookieOf(req: FastifyRequest): string | undefined {
  const header = req.headers.cookie;
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === COOKIE) {
      try {
        const value = decodeURIComponent(part.slice(eq + 1).trim());
        return isPageGrant(value) ? value : undefined;
      } catch {
        return undefined;
      }
    }
  }
  return undefined;
}

function grantCookies(req: FastifyRequest, slug: string, grant: string): string[] {
  const secure = req.protocol === 'https' ? '; Secure' : '';
  const s = encodeURIComponent(slug);
  const age = Math.floor(PAGE_GRANT_TTL_MS / 1000);
  return [`/p/${s}`, `/api/v1/public/${s}`].map((p) => `${COOKIE}=${grant}; Path=${p}; Max-Age=${age}; HttpOnly; SameSite=Strict${secure}`);
}

/**
 * The API routes of public links take the cookie's grant as `X-Public-Password` (openLink checks
 * its signature, link and expiry there, as for any sender of the header), and the per-address limit.
 */
function installPublicHooks(app: FastifyInstance): void {
  app.addHook('onRequest', (req: FastifyRequest, res: FastifyReply, done: () => void) => {
    if (!req.url.startsWith(API_PREFIX)) return done();
    if (req.headers['x-public-password'] === undefined) {
      const c = cookieOf(req);
      if (c !== undefined) req.headers['x-public-password'] = c;
    }
    if (isPasswordGuess(req.headers['x-public-password'])) {
      const wait = ipWait(req.ip);
      if (wait > 0) {
        const err = tooManyFromHere(wait);
        return void res.code(429).headers(err.headers ?? {}).type('application/json; charset=utf-8').send(err.toEnvelope());
      }
    }
    done();
  });
  app.addHook('onResponse', (req: FastifyRequest, res: FastifyReply, done: () => void) => {
    if (res.statusCode === 401 && req.url.startsWith(API_PREFIX) && isPasswordGuess(req.headers['x-public-password'])) recordIpFailure(req.ip);
    done();
  });
}

const tooManyFromHere = (wait: number) =>
  new AppError('too_many_requests', `Too many wrong passwords from this address; retry in ${wait} s`, {
    details: { reason: 'rate_limited', retry_after: String(wait) },
    headers: { 'retry-after': String(wait) },
  });

function shell(title: string, body: string, scripts: string[] = []): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${esc(title)}</title>
<link rel="stylesheet" href="/assets/quire.css">
${scripts.map((s) => `<script src="${s}" defer></script>`).join('\n')}
</head>
<body data-page="public">
<main>
${body}
</main>
</body>
</html>
`;
}

const sizeText = (n: number) => (n < 1024 ? `${n} B` : n < 1024 * 1024 ? `${(n / 1024).toFixed(1)} KB` : `${(n / 1024 / 1024).toFixed(1)} MB`);

function passwordForm(slug: string, query: string, wrong: boolean, ended = false): string {
  return `<h1>This link is protected</h1>
<form method="post" action="/p/${encodeURIComponent(slug)}${query}" id="password-form">
<label for="password">Password</label><input id="password" name="password" type="password" autocomplete="current-password" required autofocus>
<button type="submit">Open</button>
</form>
${wrong ? '<p id="error" role="alert">That password is wrong.</p>' : ended ? '<p id="ended" role="status">Your access to this link has ended: enter its password again.</p>' : ''}`;
}

interface PageQuery {
  path?: string;
  note?: string;
}

async function content(open: OpenLink, q: PageQuery): Promise<{ title: string; html: string }> {
  const slug = encodeURIComponent(open.link.slug);
  const api = `/api/v1/public/${slug}`;
  const p = open.link.permissions;
  const kind = open.link.target.kind;
  const parts: string[] = [];
  const rootName = open.targetPath.slice(open.targetPath.lastIndexOf('/') + 1);
  let title = open.note?.title ?? rootName;
  if (!p.view) {
    parts.push(`<h1>${esc(title)}</h1>`, p.upload ? '<p>Drop files for the owner of this link below.</p>' : '<p>This link shares nothing to look at.</p>');
  } else if (kind === 'canvas') {
    parts.push(`<h1>${esc(title)}</h1><p>A drawing: open it with an app that reads public canvases (action <code>public_canvas_view</code>).</p>`);
  } else if (kind === 'folder' && (await locate(open, { path: q.path })).kind === 'folder') {
    const list = await entries(open, { path: q.path });
    const rel = list.folder.path;
    title = rel === '' ? title : `${title}/${rel}`;
    parts.push(
      breadcrumb(open.link.slug, rootName, rel),
      `<h1>${esc(title)}</h1>`,
      `<ul id="entries">${list.entries
        .map((e) => {
          const qp = encodeURIComponent(e.path);
          const thumb = e.mime?.startsWith('image/') && e.mime !== 'image/svg+xml' ? `<img src="${api}/thumb?path=${qp}&amp;s=64" alt="" loading="lazy" width="32" height="32"> ` : '';
          const dl = e.kind === 'file' && p.download ? ` <a class="download" href="${api}/download?path=${qp}" download>Download</a>` : '';
          return `<li class="${e.kind}">${thumb}<a href="/p/${slug}?path=${qp}">${esc(e.name)}${e.kind === 'folder' ? '/' : ''}</a>${e.kind === 'file' ? ` <small>${sizeText(e.size)}</small>` : ''}${dl}</li>`;
        })
        .join('\n')}</ul>`,
      list.next_cursor ? `<p>Only the first ${list.entries.length} entries are shown.</p>` : '',
    );
  } else {
    const note = q.note !== undefined && kind === 'note' ? listLinkedNotes(open).notes.find((n) => n.id === q.note) : undefined;
    if (q.note !== undefined && !note) throw new AppError('not_found', 'The shared note links to no note with this id');
    const target = note ? await fileOfLinked(open, note.id) : await locate(open, { path: q.path });
    const bytes = await readLocated(target);
    const name = target.path.slice(target.path.lastIndexOf('/') + 1);
    const pk = previewKind(target.path, bytes);
    const query = note ? `item=${encodeURIComponent(note.id)}` : `path=${encodeURIComponent(target.rel)}`;
    title = note?.title ?? (target.rel === '' ? title : name.replace(/\.md$/i, ''));
    if (kind === 'folder') parts.push(breadcrumb(open.link.slug, rootName, target.rel));
    parts.push(`<h1>${esc(title)}</h1>`);
    if (pk === 'note') parts.push(`<article id="note">${noteHtml(bytes.toString('utf8'), resolverFor(open, target.path))}</article>`);
    else if (pk === 'as_is' && !name.toLowerCase().endsWith('.pdf')) parts.push(`<img id="preview" src="${api}/preview?${query}" alt="${esc(name)}">`);
    else if (pk === 'text') parts.push(`<pre id="text">${esc(bytes.subarray(0, TEXT_SHOWN).toString('utf8'))}</pre>`);
    else parts.push(`<p>${esc(name)} · ${sizeText(bytes.length)}</p>`);
    if (p.download && !note) parts.push(`<p><a class="download" href="${api}/download?${query}" download>Download ${esc(name)}</a></p>`);
    if (kind === 'note' && !note) {
      const linked = listLinkedNotes(open).notes;
      if (linked.length > 0) {
        parts.push(`<h2>Linked notes</h2><ul id="linked">${linked.map((n) => `<li><a href="/p/${slug}?note=${encodeURIComponent(n.id)}">${esc(n.title)}</a></li>`).join('')}</ul>`);
      }
    }
    if (note) parts.push(`<p><a href="/p/${slug}">Back to ${esc(open.note!.title)}</a></p>`);
  }
  if (p.upload && kind === 'folder') {
    // The drop zone (issue 23, file drop) mounts here: container and script, only with `upload`.
    parts.push(`<section id="drop-zone" data-endpoint="${api}/uploads" data-slug="${esc(open.link.slug)}" aria-label="Drop files here"></section>`);
  }
  return { title, html: parts.join('\n') };
}

/** A note the shared note links to (listed by listLinkedNotes, so visible to the link). */
async function fileOfLinked(open: OpenLink, id: string) {
  const n = open.scope.index.noteById(id)!;
  return locateRel({ ...open, targetPath: n.path, note: n }, '');
}

function errorPage(res: FastifyReply, err: AppError) {
  const reason = err.details?.reason;
  const text =
    reason === 'expired' ? 'This link has expired.' : reason === 'revoked' ? 'This link was turned off by its owner.' : err.status === 404 ? 'There is nothing here.' : err.message;
  return res.code(err.status).headers({ ...HEADERS, ...(err.headers ?? {}) }).type('text/html; charset=utf-8').send(shell('Public link', `<h1>${esc(text)}</h1>`));
}

async function renderPage(services: Services, req: FastifyRequest, res: FastifyReply, slug: string, grant: string | undefined) {
  const q = req.query as Record<string, unknown>;
  const pq: PageQuery = { path: typeof q.path === 'string' ? q.path : undefined, note: typeof q.note === 'string' ? q.note : undefined };
  const back = req.url.includes('?') ? req.url.slice(req.url.indexOf('?')) : '';
  let open: OpenLink;
  try {
    open = await openLink(services, slug, grant);
  } catch (e) {
    const err = toAppError(e);
    if (err.details?.reason === 'password_required') {
      // A grant that no longer opens (expired, or the password changed) is not a guess.
      return res.code(401).headers(HEADERS).type('text/html; charset=utf-8').send(shell('Password needed', passwordForm(slug, back, false, grant !== undefined)));
    }
    return errorPage(res, err);
  }
  try {
    const { title, html } = await content(open, pq);
    const upload = open.link.permissions.upload && open.link.target.kind === 'folder';
    return res.headers(HEADERS).type('text/html; charset=utf-8').send(shell(title, html, upload ? ['/assets/public-drop.js'] : []));
  } catch (e) {
    return errorPage(res, toAppError(e));
  }
}

/** `/p/{slug}` (GET: the page; POST: the password form), the drop zone's script and the API hooks. */
export function registerPublicPages(app: FastifyInstance, services: Services): void {
  installPublicHooks(app);
  app.get('/assets/public-drop.js', (_req, res) => res.headers(HEADERS).type('text/javascript; charset=utf-8').send(DROP_SCRIPT));
  app.get('/p/:slug', (req, res) => {
    const { slug } = req.params as { slug: string };
    return renderPage(services, req, res, slug, cookieOf(req));
  });
  // The form's body is parsed in this plugin only: no API route accepts form bodies.
  void app.register(async (scope) => {
    scope.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: 8192 }, (_req, body, done) =>
      done(null, new URLSearchParams(body as string)),
    );
    scope.post('/p/:slug', async (req, res) => {
      const { slug } = req.params as { slug: string };
      const wait = ipWait(req.ip);
      if (wait > 0) return errorPage(res, tooManyFromHere(wait));
      const password = req.body instanceof URLSearchParams ? (req.body.get('password') ?? '') : '';
      let open: OpenLink;
      try {
        // A grant typed in the form would renew itself for ever: the form takes passwords only.
        if (isPageGrant(password)) throw passwordRequired('The password for this public link is wrong');
        open = await openLink(services, slug, password);
      } catch (e) {
        const err = toAppError(e);
        if (err.details?.reason !== 'password_required') return errorPage(res, err);
        recordIpFailure(req.ip);
        const back = req.url.includes('?') ? req.url.slice(req.url.indexOf('?')) : '';
        return res.code(401).headers(HEADERS).type('text/html; charset=utf-8').send(shell('Password needed', passwordForm(slug, back, true)));
      }
      const back = req.url.includes('?') ? req.url.slice(req.url.indexOf('?')) : '';
      const hash = open.link.password_hash;
      // A link without a password needs no grant: the form only redirects back to the page.
      if (hash !== null) res.header('set-cookie', grantCookies(req, slug, issuePageGrant(paths.state(services.config), { id: open.link.id, password_hash: hash }, Date.now())));
      return res.code(303).header('location', `/p/${encodeURIComponent(slug)}${back}`).headers(HEADERS).send();
    });
  });
}
