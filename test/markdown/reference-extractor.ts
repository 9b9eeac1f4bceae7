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
import type { NoteFacts, TagOccurrence, Heading, BlockAnchor, Link, Task, TextRange } from '../../src/markdown/facts.js';
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
} from '../../src/markdown/common.js';

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
const plainProcessor = remark().use(remarkGfm);

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
  let tree = processor.parse(src) as unknown as MdNode;
  if (tree.children?.[0]?.type !== 'yaml' && src.startsWith('---')) {
    // micromark-extension-frontmatter bug: a first-line `---` that does not
    // open a block disables block quotes and lists for the rest of the
    // document. Without a block the extension must not change anything, so
    // parse again without it.
    tree = plainProcessor.parse(src) as unknown as MdNode;
  }
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

  /**
   * Scan one phrasing container (paragraph, heading, table cell). Every
   * source character between its first and last child is classified:
   * visible text (text nodes, emphasis markers), masked (code, HTML, links,
   * breaks) or container prefix (`>` and indentation that micromark strips at
   * the start of continuation lines). Wikilinks and tags are then found in
   * the visible text. Returns the masked text, its start offset and the raw
   * content with prefixes removed (for heading text).
   */
  function scanPhrasing(container: MdNode): { masked: string; start: number; raw: string } | null {
    const kids = container.children ?? [];
    if (kids.length === 0) return null;
    // Nodes made by mdast transforms (GFM autolink literals) carry no
    // positions; place such runs at the edges by their text.
    let cs = startOf(container);
    let ce = endOf(container);
    const firstPos = kids.findIndex((k) => k.position);
    if (firstPos === 0) cs = startOf(kids[0]!);
    else {
      const v = kids.slice(0, firstPos < 0 ? kids.length : firstPos).map(plainValue).join('');
      const want = firstPos > 0 ? startOf(kids[firstPos]!) : -1;
      for (let a = startOf(container); a < endOf(container); a++) {
        const e = matchLoose(a, v);
        if (e >= 0 && (want < 0 || e === want)) {
          cs = a;
          if (firstPos < 0) ce = e;
          break;
        }
      }
    }
    let lastPos = kids.length - 1;
    while (lastPos >= 0 && !kids[lastPos]!.position) lastPos--;
    if (lastPos === kids.length - 1) ce = endOf(kids[lastPos]!);
    else if (lastPos >= 0) {
      const e = matchLoose(endOf(kids[lastPos]!), kids.slice(lastPos + 1).map(plainValue).join(''));
      if (e >= 0) ce = e;
    }
    const kind = new Uint8Array(ce - cs); // 0 visible, 1 masked, 2 prefix
    const mark = (from: number, to: number, k: number) => {
      for (let i = Math.max(from, cs); i < Math.min(to, ce); i++) {
        if (k === 1 && (src[i] === '\n' || src[i] === '\r')) continue;
        kind[i - cs] = k;
      }
    };
    /** A run of text: mark the container prefixes at the start of its continuation lines. */
    const textRun = (a: number, b: number, value: string, atLineStart: boolean) => {
      const sLines = src.slice(a, b).split(/(\r\n|\r|\n)/);
      const vLines = value.split(/\r\n|\r|\n/);
      if ((sLines.length + 1) / 2 !== vLines.length) return;
      let off = a;
      for (let i = 0; i < vLines.length; i++) {
        const sl = sLines[2 * i]!;
        if (i > 0 || atLineStart) {
          const k = prefixLength(sl, vLines[i]!);
          mark(off, off + k, 2);
        }
        off += sl.length + (sLines[2 * i + 1]?.length ?? 0);
      }
    };
    const atLineStart = (a: number) => a > 0 && (src[a - 1] === '\n' || src[a - 1] === '\r');
    const walkChildren = (list: MdNode[], from: number, to: number) => {
      for (let i = 0; i < list.length; i++) {
        const n = list[i]!;
        if (!n.position) {
          // A run of position-less nodes: one text node spanning the gap.
          let j = i;
          let value = '';
          while (j < list.length && !list[j]!.position) value += plainValue(list[j++]!);
          const a = i > 0 ? endOf(list[i - 1]!) : from;
          const b = j < list.length ? startOf(list[j]!) : to;
          textRun(a, b, value, atLineStart(a));
          i = j - 1;
          continue;
        }
        // Source between two siblings belongs to no node: the container
        // prefix of a continuation line (after a line ending or a break).
        if (i > 0 && list[i - 1]!.position) mark(endOf(list[i - 1]!), startOf(n), 2);
        walk(n);
      }
    };
    const walk = (n: MdNode) => {
      switch (n.type) {
        case 'text':
          textRun(startOf(n), endOf(n), n.value ?? '', false);
          return;
        case 'footnoteReference':
        case 'imageReference':
          return;
        case 'emphasis':
        case 'strong':
        case 'delete':
        case 'linkReference':
          walkChildren(n.children ?? [], startOf(n), endOf(n));
          return;
        case 'link':
        case 'image': {
          const s = startOf(n);
          const first = src[s];
          if (n.type === 'link' && first !== '[' && first !== '<') {
            // A GFM autolink literal (www.x.com, https://…, a@b.c): plain text.
            walkChildren(n.children ?? [], s, endOf(n));
            return;
          }
          if (first !== '<') {
            recordMarkdownLink(n);
            // images inside a link's text are links too
            for (const k of n.children ?? []) if (k.position) walk(k);
          }
          mark(s, endOf(n), 1);
          return;
        }
        case 'break': {
          // `\` or trailing spaces, the line ending, and sometimes the next
          // line's container prefix: only the part up to the line ending is
          // the break.
          const s = startOf(n);
          const e = endOf(n);
          const nl = src.slice(s, e).search(/\r\n|\r|\n/);
          const after = nl < 0 ? e : s + nl + (src.startsWith('\r\n', s + nl) ? 2 : 1);
          mark(s, after, 1);
          mark(after, e, 2);
          return;
        }
        default:
          // inlineCode, html and anything unexpected: not text.
          mark(startOf(n), endOf(n), 1);
      }
    };
    walkChildren(kids, cs, ce);
    let masked = '';
    let raw = '';
    for (let i = cs; i < ce; i++) {
      const k = kind[i - cs];
      const c = src[i]!;
      if (k === 0) {
        masked += c;
        raw += c;
      } else if (k === 1) {
        masked += '\u0000';
        raw += c;
      } else masked += '\n';
    }
    masked = maskMath(masked);
    findWikilinksAndTags(masked, cs);
    return { masked, start: cs, raw };
  }

  /**
   * Match a node's value against the source from `a`, allowing character
   * escapes and container prefixes after line endings. Returns the end
   * offset, or -1.
   */
  function matchLoose(a: number, value: string): number {
    let i = a;
    let j = 0;
    while (j < value.length) {
      const c = src[i];
      if (c === undefined) return -1;
      if (c === value[j]) {
        i++;
        j++;
      } else if (c === '\\' && src[i + 1] === value[j] && /[!-/:-@[-`{-~]/.test(value[j]!)) {
        i += 2;
        j++;
      } else if ((c === ' ' || c === '\t' || c === '>') && j > 0 && (value[j - 1] === '\n' || value[j - 1] === '\r')) {
        i++;
      } else if ((c === ' ' || c === '\t') && (value[j] === '\n' || value[j] === '\r')) {
        i++;
      } else return -1;
    }
    return i;
  }

  function plainValue(n: MdNode): string {
    if (n.value !== undefined) return n.value;
    return (n.children ?? []).map(plainValue).join('');
  }

  /**
   * How many leading characters of a source line are container prefix, given
   * the text micromark kept for that line (its value line).
   */
  function prefixLength(sl: string, vl: string): number {
    const s = sl.replace(/[ \t]+$/, '');
    const v = vl.replace(/[ \t]+$/, '');
    const isPrefix = (k: number) => /^[ \t>]*$/.test(s.slice(0, k));
    if (s.endsWith(v) && isPrefix(s.length - v.length)) return s.length - v.length;
    // Escapes or character references make the source longer than the value.
    for (let k = 0; k <= s.length && isPrefix(k); k++) {
      const rest = s.slice(k);
      if (rest[0] !== ' ' && rest[0] !== '\t' && (rest === '' ? v === '' : rest[0] === v[0] || (rest[0] === '\\' || rest[0] === '&'))) {
        if (rest[0] !== '>' || v[0] === '>') return k;
      }
    }
    return /^[ \t]*/.exec(s)![0].length;
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
        const at = kids.length > 0 && kids[0]!.position ? startOf(kids[0]!) : startOf(n);
        const r = scanPhrasing(n);
        const text = r
          ? r.raw
              .split(/\r\n|\r|\n/)
              .map((l) => l.trim())
              .join(' ')
          : '';
        headings.push({ level: n.depth!, text, line: lineAt(at) });
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
