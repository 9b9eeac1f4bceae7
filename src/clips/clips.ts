/**
 * Web clips: `notes_bookmarks_create`. A `bookmark` writes a Note that links
 * the page (nothing is fetched); a `clip` fetches the page (src/clips/fetch.ts),
 * extracts the readable article with Readability on a linkedom DOM and stores
 * it as Markdown (Turndown). Both land in the flat `Notes/` root with an `id`
 * and `source` in the frontmatter; highlights and the selected text become
 * blockquotes.
 */
import { randomUUID } from 'node:crypto';
import { Readability } from '@mozilla/readability';
import { parseHTML } from 'linkedom';
import TurndownService from 'turndown';
import { AppError } from '../core/errors.js';
import { editFrontmatter } from '../notes/frontmatter.js';
import { fileNameFor, noteRecord, writeNewNote, type NoteRecord } from '../notes/notes.js';
import type { Scope } from '../notes/access.js';
import { checkScheme, fetchPage, type FetchLimits } from './fetch.js';

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

export interface Article {
  title: string | null;
  site: string | null;
  byline: string | null;
  excerpt: string | null;
  markdown: string;
}

const clean = (s: string | null | undefined): string | null => {
  const t = (s ?? '').replace(/\s+/g, ' ').trim();
  return t === '' ? null : t;
};

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

/** Makes every link and media address in the document absolute against the page's base. */
function absolutise(document: any, pageUrl: URL): void {
  let base = pageUrl;
  const baseHref = document.querySelector('base[href]')?.getAttribute('href');
  if (baseHref) {
    try {
      base = new URL(baseHref, pageUrl);
    } catch {
      /* keep the page URL */
    }
  }
  const fix = (el: any, attr: string) => {
    const v = el.getAttribute(attr);
    if (v === null) return;
    if (/^\s*(javascript|vbscript|data):/i.test(v) && attr === 'href') {
      el.removeAttribute(attr);
      return;
    }
    try {
      el.setAttribute(attr, new URL(v.trim(), base).href);
    } catch {
      el.removeAttribute(attr);
    }
  };
  for (const el of document.querySelectorAll('a[href], area[href]')) fix(el, 'href');
  for (const el of document.querySelectorAll('img[src], video[src], audio[src], source[src], video[poster]')) {
    fix(el, 'src');
    if (el.hasAttribute('poster')) fix(el, 'poster');
    el.removeAttribute('srcset');
  }
  for (const el of document.querySelectorAll('source[srcset], img[srcset]')) el.removeAttribute('srcset');
}

function turndown(): TurndownService {
  const td = new TurndownService({
    headingStyle: 'atx',
    codeBlockStyle: 'fenced',
    bulletListMarker: '-',
    emDelimiter: '*',
    hr: '---',
  });
  td.remove(['script', 'style', 'noscript', 'iframe', 'form', 'button', 'input', 'select', 'textarea'] as any);
  return td;
}

/** The readable article of an HTML page, as Markdown with absolute links. */
export function extractArticle(html: string, pageUrl: URL): Article {
  const { document } = parseHTML(html);
  absolutise(document, pageUrl);
  const metaSite = clean(document.querySelector('meta[property="og:site_name"]')?.getAttribute('content'));
  const docTitle = clean(document.querySelector('title')?.textContent);
  let parsed: ReturnType<Readability['parse']> = null;
  try {
    parsed = new Readability(document as any, { keepClasses: false }).parse();
  } catch {
    parsed = null;
  }
  let contentHtml = parsed?.content ?? null;
  if (!contentHtml) {
    // Readability found no article: keep the body without its page furniture.
    const { document: fallback } = parseHTML(html);
    absolutise(fallback, pageUrl);
    for (const el of fallback.querySelectorAll('script, style, noscript, nav, header, footer, aside, form, iframe')) el.remove();
    contentHtml = fallback.body?.innerHTML ?? '';
  }
  const markdown = turndown().turndown(contentHtml).trim();
  return {
    title: clean(parsed?.title) ?? docTitle,
    site: clean(parsed?.siteName) ?? metaSite,
    byline: clean(parsed?.byline),
    excerpt: clean(parsed?.excerpt),
    markdown,
  };
}

function normaliseTags(tags: string[] | undefined): string[] {
  const out: string[] = [];
  for (const t of tags ?? []) {
    const tag = t.replace(/^#/, '').trim();
    if (tag && !out.includes(tag)) out.push(tag);
  }
  return out;
}

function quotes(input: WebNoteInput): string[] {
  const out: string[] = [];
  if (input.selected_text?.trim()) out.push(blockquote(input.selected_text));
  for (const h of input.highlights ?? []) if (h.trim()) out.push(blockquote(h));
  return out;
}

/** The full text of a bookmark Note (frontmatter and body). */
export function bookmarkText(input: WebNoteInput, url: URL, id: string, now: Date): { title: string; text: string } {
  const title = clean(input.title) ?? url.host;
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
  const title = clean(input.title) ?? article.title ?? article.site ?? url.host;
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
  const url = parseUrl(input.url);
  const id = randomUUID();
  let note: { title: string; text: string };
  if ((input.kind ?? 'bookmark') === 'clip') {
    const page = await fetchPage(url, limits);
    note = clipText(input, url, extractArticle(page.html, page.finalUrl), id, now);
  } else {
    note = bookmarkText(input, url, id, now);
  }
  const path = await writeNewNote(scope, fileNameFor(note.title), '.md', note.text);
  const entry = scope.index.noteByPath(path);
  if (!entry) throw new AppError('internal', 'The note was written but is not in the index');
  return noteRecord(entry);
}
