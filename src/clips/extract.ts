/**
 * The readable article of a fetched page: Mozilla Readability on a linkedom
 * DOM, then Turndown to Markdown. Pure and synchronous, and slow on large or
 * deeply nested pages (about 6 s per MiB of HTML, and Readability is
 * quadratic in nesting: 1,000 nested `<div>`s take half a minute), so the
 * server runs it on a worker thread (extract-worker.ts, started by
 * `extractOffThread` in clips.ts) with a time limit, after `stripInert` has
 * cut what no article holds and the rest is checked against
 * EXTRACT_MAX_CHARS. See docs/clips.md, "Limits".
 */
import { createRequire } from 'node:module';
import type { Readability as ReadabilityType } from '@mozilla/readability';
import type TurndownService from 'turndown';

/**
 * Readability, linkedom and Turndown are loaded when an article is first
 * extracted (on the extraction worker), not by every module that imports
 * this one for its small helpers (clips.ts, in the server): docs/performance.md, "Start-up".
 */
const require = createRequire(import.meta.url);
const readability = () => require('@mozilla/readability') as { Readability: typeof ReadabilityType };
const linkedom = () => require('linkedom') as typeof import('linkedom');

/** Most HTML handed to extraction, after `stripInert`, in UTF-16 code units (1 Mi: a few seconds of worker time). */
export const EXTRACT_MAX_CHARS = 1024 * 1024;
/** Longest title, site name and byline taken from a page (the Note title's own limit is TITLE_MAX). */
export const PAGE_FIELD_MAX = 1000;

export interface Article {
  title: string | null;
  site: string | null;
  byline: string | null;
  excerpt: string | null;
  markdown: string;
}

export const clean = (s: string | null | undefined): string | null => {
  const t = (s ?? '').replace(/\s+/g, ' ').trim();
  return t === '' ? null : t;
};

/** At most PAGE_FIELD_MAX characters (a page's `<title>` can be megabytes; the frontmatter holds these). */
export function short(s: string | null): string | null {
  if (s === null || s.length <= PAGE_FIELD_MAX) return s;
  return s.slice(0, PAGE_FIELD_MAX).replace(/[\uD800-\uDBFF]$/, '').trimEnd() + '…';
}

/**
 * The page without `<script>` (JSON-LD kept: Readability reads the byline and
 * site from it), `<style>` and comments, which no article holds and which
 * are most of many pages' bytes. One linear pass with indexOf (a lazy regex
 * is quadratic on many unclosed tags); an unclosed one runs to the end, as
 * in a browser.
 */
export function stripInert(html: string): string {
  const lower = html.toLowerCase();
  let out = '';
  let pos = 0;
  for (;;) {
    let at = -1;
    let close = '';
    for (let from = pos; ; ) {
      const i = lower.indexOf('<', from);
      if (i < 0) break;
      if (lower.startsWith('<!--', i)) {
        [at, close] = [i, '-->'];
        break;
      }
      const name = /^<(script|style)[\s/>]/.exec(lower.slice(i, i + 8))?.[1];
      if (name) {
        // Only the tag's first 200 characters are looked at: a search for its `>` could run to the end every time.
        const tag = lower.slice(i, i + 200).split('>', 1)[0]!;
        if (!(name === 'script' && tag.includes('ld+json'))) {
          [at, close] = [i, `</${name}`];
          break;
        }
      }
      from = i + 1;
    }
    if (at < 0) return out + html.slice(pos);
    out += html.slice(pos, at);
    const end = lower.indexOf(close, at + 4);
    if (end < 0) return out;
    const gt = close === '-->' ? end + 2 : lower.indexOf('>', end);
    if (gt < 0) return out;
    pos = gt + 1;
  }
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
  const Turndown = require('turndown') as typeof TurndownService;
  const td = new Turndown({
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
  const { parseHTML } = linkedom();
  const { document } = parseHTML(html);
  absolutise(document, pageUrl);
  const metaSite = clean(document.querySelector('meta[property="og:site_name"]')?.getAttribute('content'));
  const docTitle = clean(document.querySelector('title')?.textContent);
  const { Readability } = readability();
  let parsed: ReturnType<ReadabilityType['parse']> = null;
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
    title: short(clean(parsed?.title) ?? docTitle),
    site: short(clean(parsed?.siteName) ?? metaSite),
    byline: short(clean(parsed?.byline)),
    excerpt: short(clean(parsed?.excerpt)),
    markdown,
  };
}

