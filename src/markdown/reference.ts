/**
 * The REFERENCE fact extractor: slow, built on remark (micromark CommonMark +
 * GFM + frontmatter). It lets the mdast tree decide everything structural —
 * what is frontmatter, code (fenced, indented, inline), HTML, a heading, a
 * paragraph, a list item, a table cell, a Markdown link — and only then looks
 * for the things remark does not know (wikilinks, `#tags`, `^ids`, `$$` math,
 * task checkboxes other than `[ ]`/`[x]`) in the source of the `text` nodes.
 *
 * It is the truth the fast extractor (extract.ts) is tested against.
 */
import { remark } from 'remark';
import remarkGfm from 'remark-gfm';
import remarkFrontmatter from 'remark-frontmatter';
import type { NoteFacts, TagOccurrence, Heading, BlockAnchor, Link, Task, TextRange } from './facts.js';
import {
  assembleFacts,
  countWords,
  findDue,
  isValidTag,
  lineOf,
  lineStarts,
  parseMarkdownDestination,
  parseWikilinkInner,
  TRAILING_ID_RE,
} from './common.js';

interface Point {
  line: number;
  column: number;
  offset?: number;
}
interface MdNode {
  type: string;
  position?: { start: Point; end: Point };
  children?: MdNode[];
  value?: string;
  depth?: number;
  checked?: boolean | null;
  url?: string;
  alt?: string | null;
}

const processor = remark().use(remarkFrontmatter, ['yaml']).use(remarkGfm);

/** Mask character for source that is not visible text (code, HTML, links …). */
const MASK = '\u0000';

const WIKILINK_RE = /\[\[([^[\]\r\n\u0000]+)\]\]/g;
const TAG_RE = /(?<=^|\s)#([\p{L}\p{M}\p{N}_\-/\p{Extended_Pictographic}\p{Emoji_Modifier}\u200D\uFE0F]+)/gu;
const BLOCK_ID_RE = /(?:^|\s)\^([A-Za-z0-9-]+)[ \t]*$/;
const CHECKBOX_RE = /^\[( |[^\s[\]\\`])\](?=[ \t]|$)/u;
const MARKER_RE = /^[ \t]*(?:[-+*]|[0-9]{1,9}[.)])/;

function startOf(n: MdNode): number {
  return n.position!.start.offset!;
}
function endOf(n: MdNode): number {
  return n.position!.end.offset!;
}

function backslashesBefore(s: string, i: number): number {
  let n = 0;
  while (i - 1 - n >= 0 && s.charCodeAt(i - 1 - n) === 92) n++;
  return n;
}

export function referenceFacts(text: string, path: string): NoteFacts {
  const bom = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  const src = bom ? text.slice(1) : text;
  const tree = processor.parse(src) as unknown as MdNode;
  const starts = lineStarts(text);
  const lineAt = (srcOffset: number) => lineOf(starts, srcOffset + bom);
  const colAt = (srcOffset: number) => srcOffset + bom - starts[lineAt(srcOffset) - 1]! + 1;

  const excluded = new Uint8Array(src.length); // 1 = not counted as words
  const exclude = (from: number, to: number) => excluded.fill(1, from, to);

  let frontmatterRange: TextRange | null = null;
  let frontmatterRaw: string | null = null;
  const tagOccurrences: TagOccurrence[] = [];
  const headings: Heading[] = [];
  const blocks: BlockAnchor[] = [];
  const links: Link[] = [];
  const tasks: Task[] = [];

  // ---------------------------------------------------------------- inline

  /** Scan one phrasing container; returns the masked content and its start offset. */
  function scanPhrasing(container: MdNode): { masked: string; start: number } | null {
    const kids = container.children ?? [];
    if (kids.length === 0) return null;
    const cs = startOf(kids[0]!);
    const ce = endOf(kids[kids.length - 1]!);
    const chars = src.slice(cs, ce).split('');
    const mask = (from: number, to: number) => {
      for (let i = from; i < to; i++) {
        const c = chars[i - cs]!;
        if (c !== '\n' && c !== '\r') chars[i - cs] = MASK;
      }
    };
    const walk = (n: MdNode) => {
      switch (n.type) {
        case 'text':
        case 'footnoteReference':
        case 'imageReference':
          return;
        case 'emphasis':
        case 'strong':
        case 'delete':
        case 'linkReference':
          for (const k of n.children ?? []) walk(k);
          return;
        case 'link':
        case 'image': {
          const s = startOf(n);
          const first = src[s];
          if (n.type === 'link' && first !== '[' && first !== '<') {
            // A GFM autolink literal (www.x.com, https://…, a@b.c): plain text.
            for (const k of n.children ?? []) walk(k);
            return;
          }
          if (first !== '<') {
            recordMarkdownLink(n);
            // images inside a link's text are links too
            for (const k of n.children ?? []) walk(k);
          }
          mask(s, endOf(n));
          return;
        }
        default:
          // inlineCode, html, break and anything unexpected: not text.
          mask(startOf(n), endOf(n));
      }
    };
    for (const k of kids) walk(k);
    // Container prefixes (`>`, indentation) at the start of continuation lines.
    for (let i = 0; i < chars.length; i++) {
      const c = chars[i];
      if (c === '\n' || (c === '\r' && chars[i + 1] !== '\n')) {
        let j = i + 1;
        while (j < chars.length && (chars[j] === ' ' || chars[j] === '\t' || chars[j] === '>')) {
          chars[j] = '\n';
          j++;
        }
        i = j - 1;
      }
    }
    let masked = chars.join('');
    masked = maskMath(masked);
    findWikilinksAndTags(masked, cs);
    return { masked, start: cs };
  }

  function maskMath(s: string): string {
    if (!s.includes('$$')) return s;
    const out = s.split('');
    let open = -1;
    for (let i = 0; i + 1 < s.length; i++) {
      if (s[i] === '$' && s[i + 1] === '$' && backslashesBefore(s, i) % 2 === 0) {
        if (open < 0) {
          open = i;
          i++;
        } else {
          for (let k = open; k < i + 2; k++) if (out[k] !== '\n' && out[k] !== '\r') out[k] = MASK;
          open = -1;
          i++;
        }
      }
    }
    return out.join('');
  }

  function findWikilinksAndTags(masked: string, base: number) {
    let s = masked;
    WIKILINK_RE.lastIndex = 0;
    let m: RegExpExecArray | null;
    const spans: Array<[number, number]> = [];
    while ((m = WIKILINK_RE.exec(masked)) !== null) {
      const i = m.index;
      if (backslashesBefore(masked, i) % 2 === 1) {
        WIKILINK_RE.lastIndex = i + 1;
        continue;
      }
      const parts = parseWikilinkInner(m[1]!);
      if (parts === null) {
        WIKILINK_RE.lastIndex = i + 1;
        continue;
      }
      const embed = i > 0 && masked[i - 1] === '!' && backslashesBefore(masked, i - 1) % 2 === 0;
      const start = embed ? i - 1 : i;
      const end = i + m[0].length;
      spans.push([start, end]);
      links.push({
        kind: 'wikilink',
        embed,
        target: parts.target,
        heading: parts.heading,
        blockId: parts.blockId,
        alias: parts.alias,
        line: lineAt(base + start),
        column: colAt(base + start),
        start: base + start + bom,
        end: base + end + bom,
      });
    }
    if (spans.length > 0) {
      const arr = s.split('');
      for (const [a, b] of spans) for (let k = a; k < b; k++) arr[k] = MASK;
      s = arr.join('');
    }
    TAG_RE.lastIndex = 0;
    while ((m = TAG_RE.exec(s)) !== null) {
      const tag = m[1]!;
      if (!isValidTag(tag)) continue;
      const at = base + m.index;
      tagOccurrences.push({ tag, line: lineAt(at), column: colAt(at), offset: at + bom });
    }
  }

  function recordMarkdownLink(n: MdNode) {
    const parts = parseMarkdownDestination(n.url ?? '');
    if (parts === null) return;
    const s = startOf(n);
    let alias: string;
    if (n.type === 'link') {
      const kids = n.children ?? [];
      alias = kids.length === 0 ? '' : src.slice(startOf(kids[0]!), endOf(kids[kids.length - 1]!));
    } else {
      // Images carry no children: read their label by parsing `[alt](…)` alone.
      const sub = processor.parse(src.slice(s + 1, endOf(n))) as unknown as MdNode;
      const para = sub.children?.[0];
      const link = para?.children?.[0];
      const kids = link?.type === 'link' ? (link.children ?? []) : [];
      alias = kids.length === 0 ? '' : src.slice(s + 1 + startOf(kids[0]!), s + 1 + endOf(kids[kids.length - 1]!));
    }
    links.push({
      kind: 'markdown',
      embed: n.type === 'image',
      target: parts.target,
      heading: parts.heading,
      blockId: parts.blockId,
      alias,
      line: lineAt(s),
      column: colAt(s),
      start: s + bom,
      end: endOf(n) + bom,
    });
  }

  // ----------------------------------------------------------------- blocks

  function headingText(n: MdNode): string {
    const kids = n.children ?? [];
    if (kids.length === 0) return '';
    const raw = src.slice(startOf(kids[0]!), endOf(kids[kids.length - 1]!));
    return raw
      .split(/\r\n|\r|\n/)
      .map((l, i) => (i === 0 ? l : l.replace(/^[ \t>]*/, '')).trim())
      .join(' ');
  }

  /** Returns the block anchor found at the end of a paragraph, if any. */
  function paragraph(n: MdNode): BlockAnchor | null {
    const r = scanPhrasing(n);
    if (!r) return null;
    const m = BLOCK_ID_RE.exec(r.masked);
    if (!m) return null;
    const caret = r.start + m.index + m[0].indexOf('^');
    const b: BlockAnchor = { id: m[1]!, line: lineAt(caret), column: colAt(caret) };
    blocks.push(b);
    return b;
  }

  function listItem(n: MdNode, depth: number, parentTaskLine: number | null) {
    const s = startOf(n);
    const lineEndIdx = (() => {
      const a = src.indexOf('\n', s);
      const b = src.indexOf('\r', s);
      const e = a < 0 ? b : b < 0 ? a : Math.min(a, b);
      return e < 0 ? src.length : e;
    })();
    const firstLine = src.slice(s, lineEndIdx);
    const mm = MARKER_RE.exec(firstLine)!;
    const markerEnd = s + mm[0].length;
    exclude(s, markerEnd);
    const kids = n.children ?? [];
    let task: Task | null = null;
    const first = kids[0];
    if (first && first.type === 'paragraph') {
      const afterMarker = firstLine.slice(mm[0].length);
      const lead = /^[ \t]*/.exec(afterMarker)![0].length;
      const cb = CHECKBOX_RE.exec(afterMarker.slice(lead));
      if (cb) {
        const cbEnd = markerEnd + lead + cb[0].length;
        exclude(s, cbEnd);
        const status = cb[1]!;
        task = {
          line: lineAt(s),
          status,
          checked: status === 'x' || status === 'X',
          cancelled: status === '-',
          text: src.slice(cbEnd, lineEndIdx).trim(),
          blockId: null,
          due: null,
          depth,
          parentTaskLine,
        };
        tasks.push(task);
      }
    }
    for (let i = 0; i < kids.length; i++) {
      const k = kids[i]!;
      if (i === 0 && task && k.type === 'paragraph') {
        const b = paragraph(k);
        if (b && b.line === task.line) {
          const m = TRAILING_ID_RE.exec(task.text);
          if (m && m[1] === b.id) {
            task.blockId = b.id;
            task.text = task.text.slice(0, m.index).trim();
          }
        }
        continue;
      }
      visit(k, depth + 1, task ? task.line : parentTaskLine);
    }
    if (task) task.due = findDue(task.text);
  }

  function visit(n: MdNode, depth: number, parentTaskLine: number | null) {
    switch (n.type) {
      case 'root':
      case 'blockquote':
      case 'list':
      case 'footnoteDefinition':
      case 'table':
      case 'tableRow':
        for (const k of n.children ?? []) visit(k, depth, parentTaskLine);
        return;
      case 'listItem':
        listItem(n, depth, parentTaskLine);
        return;
      case 'yaml': {
        const s = startOf(n);
        let e = endOf(n);
        exclude(s, e);
        const raw = src.slice(s, e);
        const firstEol = /\r\n|\r|\n/.exec(raw)!;
        const contentStart = firstEol.index + firstEol[0].length;
        const lastLineStart = Math.max(raw.lastIndexOf('\n'), raw.lastIndexOf('\r')) + 1;
        frontmatterRaw =
          lastLineStart <= contentStart ? '' : raw.slice(contentStart, lastLineStart).replace(/(\r\n|\r|\n)$/, '');
        while (src[e] === ' ' || src[e] === '\t') e++;
        if (src[e] === '\r' && src[e + 1] === '\n') e += 2;
        else if (src[e] === '\n' || src[e] === '\r') e += 1;
        frontmatterRange = { start: s + bom, end: e + bom };
        return;
      }
      case 'code':
        exclude(startOf(n), endOf(n));
        return;
      case 'heading': {
        const kids = n.children ?? [];
        const at = kids.length > 0 ? startOf(kids[0]!) : startOf(n);
        headings.push({ level: n.depth!, text: headingText(n), line: lineAt(at) });
        scanPhrasing(n);
        return;
      }
      case 'paragraph':
        paragraph(n);
        return;
      case 'tableCell':
        scanPhrasing(n);
        return;
      default:
        // html, definition, thematicBreak: no facts.
        return;
    }
  }

  visit(tree, 0, null);

  let words = src;
  if (excluded.includes(1)) {
    const arr = src.split('');
    for (let i = 0; i < arr.length; i++) if (excluded[i]) arr[i] = ' ';
    words = arr.join('');
  }

  return assembleFacts(path, {
    frontmatterRange,
    frontmatterRaw,
    tagOccurrences,
    headings,
    blocks,
    links,
    tasks,
    wordCount: countWords(words),
  });
}
