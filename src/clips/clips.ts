/**
 * Web clips: `notes_bookmarks_create`. A `bookmark` writes a Note that links
 * the page (nothing is fetched); a `clip` fetches the page (src/clips/fetch.ts),
 * extracts the readable article (extract.ts: Readability on a linkedom DOM,
 * Turndown to Markdown) on a worker thread and stores it. Both land in the
 * flat `Notes/` root with an `id` and `source` in the frontmatter;
 * highlights and the selected text become blockquotes.
 */
import { randomUUID } from 'node:crypto';
import { startWorker } from '../core/worker.js';
import { Turns } from '../core/turns.js';
import { AppError, errors } from '../core/errors.js';
import { editFrontmatter } from '../notes/frontmatter.js';
import { checkTagList, checkTitle } from '../notes/limits.js';
import { fileNameFor, noteRecord, writeNewNote, type NoteRecord } from '../notes/notes.js';
import type { Scope } from '../notes/access.js';
import { checkScheme, fetchPage, refuse, type FetchLimits } from './fetch.js';
import { clean, EXTRACT_MAX_CHARS, short, stripInert, type Article } from './extract.js';

/** Longest `url` and `favicon`, in characters (browsers and servers commonly stop well below). */
export const URL_MAX = 4096;
/** Longest an extraction may run on its worker thread before the clip is refused. */
export const EXTRACT_TIMEOUT_MS = 10_000;
/** Extractions running at once; more wait their turn (each takes a core while it runs). */
export const EXTRACT_CONCURRENCY = 2;
/** Most requests waiting for their turn; more are answered 503 with Retry-After. */
export const EXTRACT_QUEUE_MAX = 8;

export interface WebNoteInput {
  url: string;
  kind?: 'bookmark' | 'clip';
  title?: string | null;
  description?: string | null;
  favicon?: string | null;
  selected_text?: string | null;
  highlights?: string[];
  tags?: string[];
}

/** Text as a Markdown blockquote, every line prefixed (blank lines too, so it stays one quote). */
export function blockquote(text: string): string {
  return text
    .replace(/\r\n?/g, '\n')
    .trim()
    .split('\n')
    .map((l) => (l.trim() === '' ? '>' : `> ${l}`))
    .join('\n');
}

const escapeLinkText = (s: string) => s.replace(/([\\[\]])/g, '\\$1');

function checkUrlLength(value: string | null | undefined, field: string): void {
  if (typeof value === 'string' && value.length > URL_MAX) {
    throw errors.badRequest(`${field.replace(/^body\./, '')} is ${value.length} characters long; the most is ${URL_MAX}`, {
      field,
      reason: 'too_long',
      max: String(URL_MAX),
    });
  }
}

function parseUrl(raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new AppError('bad_request', 'url must be an absolute http or https address', {
      details: { field: 'body.url', reason: 'invalid_url' },
    });
  }
  checkScheme(url);
  return url;
}

const turns = new Turns(EXTRACT_CONCURRENCY, EXTRACT_QUEUE_MAX, (running, waiting) => `${running} pages are being read for clips and ${waiting} more wait; try again shortly`);

/**
 * `extractArticle` on a worker thread, ended after EXTRACT_TIMEOUT_MS: a
 * large or deeply nested page costs a worker seconds, never the server's
 * main thread. The page is first cut to what an article can hold
 * (`stripInert`) and refused above EXTRACT_MAX_CHARS.
 */
export async function extractOffThread(html: string, pageUrl: URL, timeoutMs = EXTRACT_TIMEOUT_MS): Promise<Article> {
  const page = stripInert(html);
  if (page.length > EXTRACT_MAX_CHARS) {
    throw refuse('too_large', `The page has ${page.length} characters of HTML besides scripts and styles; the most a clip reads is ${EXTRACT_MAX_CHARS}`, {
      url: pageUrl.href,
      limit: String(EXTRACT_MAX_CHARS),
    });
  }
  const done = await turns.take();
  try {
    const worker = startWorker('clips/extract-worker.js', { html: page, url: pageUrl.href }, 'quire-clip');
    return await new Promise<Article>((resolve, reject) => {
      const timer = setTimeout(() => {
        void worker.terminate();
        reject(refuse('too_complex', `The page could not be read within ${timeoutMs} ms`, { url: pageUrl.href, limit: String(timeoutMs) }));
      }, timeoutMs);
      const fail = (why: string) =>
        reject(refuse('extract_failed', `The page could not be read: ${why}`, { url: pageUrl.href }));
      worker.once('message', (m: { article?: Article; error?: string }) => (m.article ? resolve(m.article) : fail(m.error ?? 'no answer')));
      worker.once('error', (e) => fail(e.message));
      worker.once('exit', () => {
        clearTimeout(timer);
        fail('the reader stopped');
      });
    });
  } finally {
    done();
  }
}

function normaliseTags(tags: string[] | undefined): string[] {
  const out = new Set<string>();
  for (const t of tags ?? []) {
    const tag = t.replace(/^#/, '').trim();
    if (tag) out.add(tag);
  }
  return [...out];
}

/**
 * The limits a Note created any other way has (src/notes/limits.ts), named
 * by this action's fields, plus the addresses' length; checked before
 * anything is fetched or written.
 */
export function checkWebNoteInput(input: WebNoteInput): void {
  checkUrlLength(input.url, 'body.url');
  checkUrlLength(input.favicon, 'body.favicon');
  if (clean(input.title) !== null) checkTitle(clean(input.title)!, 'body.title');
  if (input.tags) checkTagList(input.tags, 'body.tags');
}

function quotes(input: WebNoteInput): string[] {
  const out: string[] = [];
  if (input.selected_text?.trim()) out.push(blockquote(input.selected_text));
  for (const h of input.highlights ?? []) if (h.trim()) out.push(blockquote(h));
  return out;
}

/** The full text of a bookmark Note (frontmatter and body). */
export function bookmarkText(input: WebNoteInput, url: URL, id: string, now: Date): { title: string; text: string } {
  const title = clean(input.title) ?? short(url.host)!;
  const description = clean(input.description);
  const fm: Record<string, unknown> = { id, title, url: url.href };
  if (description) fm.description = description;
  if (clean(input.favicon)) fm.favicon = clean(input.favicon);
  const tags = normaliseTags(input.tags);
  if (tags.length) fm.tags = tags;
  fm.created = now.toISOString();
  fm.source = 'bookmark';
  const parts = [`[${escapeLinkText(title)}](<${url.href}>)`];
  if (description) parts.push(description);
  parts.push(...quotes(input));
  return { title, text: editFrontmatter('', null, fm) + parts.join('\n\n') + '\n' };
}

/** The full text of a clip Note from an extracted article. */
export function clipText(
  input: WebNoteInput,
  url: URL,
  article: Article,
  id: string,
  now: Date,
): { title: string; text: string } {
  const title = clean(input.title) ?? article.title ?? article.site ?? short(url.host)!;
  const description = clean(input.description);
  const fm: Record<string, unknown> = { id, title, url: url.href };
  if (description) fm.description = description;
  if (clean(input.favicon)) fm.favicon = clean(input.favicon);
  const tags = normaliseTags(input.tags);
  if (tags.length) fm.tags = tags;
  fm.created = now.toISOString();
  if (article.site) fm.site = article.site;
  if (article.byline) fm.byline = article.byline;
  if (article.excerpt) fm.excerpt = article.excerpt;
  fm.source = 'clip';
  const parts: string[] = [];
  if (article.markdown) parts.push(article.markdown);
  parts.push(...quotes(input));
  return { title, text: editFrontmatter('', null, fm) + parts.join('\n\n') + '\n' };
}

/** `notes_bookmarks_create`: writes the Note and returns its record. */
export async function createWebNote(
  scope: Scope,
  input: WebNoteInput,
  limits: FetchLimits,
  now = new Date(),
): Promise<NoteRecord> {
  checkWebNoteInput(input);
  const url = parseUrl(input.url);
  const id = randomUUID();
  let note: { title: string; text: string };
  if ((input.kind ?? 'bookmark') === 'clip') {
    const page = await fetchPage(url, limits);
    note = clipText(input, url, await extractOffThread(page.html, page.finalUrl), id, now);
  } else {
    note = bookmarkText(input, url, id, now);
  }
  const path = await writeNewNote(scope, fileNameFor(note.title), '.md', note.text);
  const entry = scope.index.noteByPath(path);
  if (!entry) throw new AppError('internal', 'The note was written but is not in the index');
  return noteRecord(entry);
}
