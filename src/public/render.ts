/**
 * A note as HTML for visitors: markdown-it (raw HTML in the note is shown as text), wikilinks and
 * relative Markdown links resolved by the caller, then sanitize-html as the last word on what
 * reaches a browser (no scripts, styles, event handlers or `javascript:` URLs, whatever the
 * renderer let through). Pure: the caller says where a link target leads, or that it leads
 * nowhere a visitor may go (then it is plain text).
 */
import { createRequire } from 'node:module';
import type MarkdownIt from 'markdown-it';
import type sanitizeHtml from 'sanitize-html';

type Md = InstanceType<typeof MarkdownIt>;

/** markdown-it and sanitize-html are loaded at the first page rendered, not at every server's start (docs/performance.md, "Start-up"). */
const require = createRequire(import.meta.url);
const markdownIt = () => require('markdown-it') as typeof MarkdownIt;
const sanitizer = () => require('sanitize-html') as typeof sanitizeHtml;

export interface LinkResolver {
  /** The URL a link to `target` (as written: `Note`, `Sub/Note.md#Heading`) leads to, or null. */
  href(target: string, kind: 'wikilink' | 'markdown'): string | null;
  /** The URL of an embedded image, or null (then the embed shows as text). */
  imageSrc(target: string, kind: 'wikilink' | 'markdown'): string | null;
}

const FRONTMATTER = /^---\r?\n[\s\S]*?\r?\n(?:---|\.\.\.)[ \t]*(?:\r?\n|$)/;
const EXTERNAL = /^(?:[a-z][a-z0-9+.-]*:|\/\/|#)/i;

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

function wikilinks(md: Md, links: LinkResolver): void {
  md.inline.ruler.before('link', 'wikilink', (state, silent) => {
    const src = state.src;
    let pos = state.pos;
    const embed = src.charCodeAt(pos) === 0x21; /* ! */
    if (embed) pos++;
    if (src.charCodeAt(pos) !== 0x5b || src.charCodeAt(pos + 1) !== 0x5b) return false;
    const close = src.indexOf(']]', pos + 2);
    if (close < 0) return false;
    const inner = src.slice(pos + 2, close);
    if (inner.length === 0 || inner.includes('\n') || inner.includes('[')) return false;
    if (!silent) {
      const bar = inner.indexOf('|');
      const target = (bar < 0 ? inner : inner.slice(0, bar)).trim();
      // `[[#Heading]]` (a heading of the same note) reads as the heading alone, not " › Heading".
      const label = bar < 0 ? target.replace(/^#\^?/, '').replace(/#\^?/, ' › ') : inner.slice(bar + 1).trim();
      const src2 = embed ? links.imageSrc(target, 'wikilink') : null;
      if (src2 !== null) {
        const t = state.push('image', 'img', 0);
        t.attrs = [['src', src2], ['alt', label]];
        // The renderer takes alt text from the children, as for ![label](src).
        const alt = new state.Token('text', '', 0);
        alt.content = label;
        t.children = [alt];
        t.content = label;
        t.meta = { wikilink: true };
      } else {
        const href = links.href(target, 'wikilink');
        if (href !== null) {
          const open = state.push('link_open', 'a', 1);
          open.attrs = [['href', href]];
          open.meta = { wikilink: true };
          state.push('text', '', 0).content = label;
          state.push('link_close', 'a', -1);
        } else {
          state.push('text', '', 0).content = label;
        }
      }
    }
    state.pos = close + 2;
    return true;
  });
}

/** Markdown links and images to Home files go through the resolver; a target it refuses becomes plain text. */
function relativeLinks(md: Md, links: LinkResolver): void {
  md.core.ruler.push('public_links', (state) => {
    for (const block of state.tokens) {
      const children = block.children;
      if (!children) continue;
      for (let i = 0; i < children.length; i++) {
        const t = children[i]!;
        if (t.meta?.wikilink) continue;
        if (t.type === 'image') {
          const src = String(t.attrGet('src') ?? '');
          if (EXTERNAL.test(src)) continue;
          const to = links.imageSrc(safeDecode(src), 'markdown');
          if (to !== null) t.attrSet('src', to);
          else children[i] = Object.assign(new state.Token('text', '', 0), { content: t.content });
        } else if (t.type === 'link_open') {
          const href = String(t.attrGet('href') ?? '');
          if (EXTERNAL.test(href)) continue;
          const to = links.href(safeDecode(href), 'markdown');
          if (to !== null) {
            t.attrSet('href', to);
            continue;
          }
          // Drop the link, keep its text: find the matching close at the same level.
          let depth = 0;
          for (let j = i; j < children.length; j++) {
            if (children[j]!.type === 'link_open') depth++;
            else if (children[j]!.type === 'link_close' && --depth === 0) {
              children.splice(j, 1);
              break;
            }
          }
          children.splice(i, 1);
          i--;
        }
      }
    }
  });
}

const SANITIZE = (defaults: sanitizeHtml.IDefaults): sanitizeHtml.IOptions => ({
  allowedTags: [...defaults.allowedTags, 'img', 'del', 's', 'input'],
  allowedAttributes: {
    a: ['href', 'title', 'rel'],
    img: ['src', 'alt', 'title'],
    th: ['align', 'style'],
    td: ['align', 'style'],
    ol: ['start'],
    input: ['type', 'checked', 'disabled'],
  },
  allowedStyles: { th: { 'text-align': [/^(left|right|center)$/] }, td: { 'text-align': [/^(left|right|center)$/] } },
  allowedSchemes: ['http', 'https', 'mailto'],
  allowedSchemesByTag: { img: ['http', 'https'] },
  allowProtocolRelative: false,
  transformTags: {
    a: (tagName, attribs) => ({ tagName, attribs: { ...attribs, rel: 'noopener noreferrer nofollow' } }),
  },
  exclusiveFilter: (frame) => frame.tag === 'input' && frame.attribs.type !== 'checkbox',
});

/** The body HTML of a note (frontmatter left out), sanitised. */
export function noteHtml(text: string, links: LinkResolver): string {
  const md = new (markdownIt())({ html: false, linkify: true, typographer: false });
  wikilinks(md, links);
  relativeLinks(md, links);
  // Task list items: `[ ]` / `[x]` become disabled checkboxes.
  const body = text.replace(FRONTMATTER, '').replace(/%%[\s\S]*?%%/g, '');
  const html = md.render(body).replace(/<li>\[( |x|X)\] /g, (_m, c: string) => `<li><input type="checkbox" disabled${c === ' ' ? '' : ' checked'}> `);
  const sanitize = sanitizer();
  return sanitize(html, SANITIZE(sanitize.defaults));
}

const esc = (s: string) => s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/** A whole document around a note's HTML, for `public_preview` (opened by itself in a browser). */
export function noteDocument(title: string, bodyHtml: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(title)}</title></head>
<body><article>
<h1>${esc(title)}</h1>
${bodyHtml}
</article></body></html>
`;
}

/**
 * The trail of a folder link's page: the link's root, each folder above, and where the visitor is
 * (not a link). `rel` is the path below the shared folder ('' = the root: no trail).
 */
export function breadcrumb(slug: string, rootName: string, rel: string): string {
  if (rel === '') return '';
  const segs = rel.split('/');
  const page = `/p/${encodeURIComponent(slug)}`;
  const items = [`<li><a href="${page}">${esc(rootName)}</a></li>`];
  segs.forEach((seg, i) => {
    const at = segs.slice(0, i + 1).join('/');
    items.push(i === segs.length - 1 ? `<li aria-current="page">${esc(seg)}</li>` : `<li><a href="${page}?path=${encodeURIComponent(at)}">${esc(seg)}</a></li>`);
  });
  return `<nav aria-label="Breadcrumb" id="breadcrumb"><ol>${items.join('')}</ol></nav>`;
}

export { esc as escapeHtml };
