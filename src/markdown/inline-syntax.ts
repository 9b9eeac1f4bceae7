/**
 * Inline syntax: the phrasing scanner that the block scanner (block-syntax.ts)
 * runs over each paragraph, heading and table cell. Left to right it finds
 * code spans, autolinks, raw HTML and Markdown links (their tails and
 * reference labels: link-syntax.ts), masks them, then finds wikilinks and
 * tags in the text that stays visible. Emphasis, entities and the rest carry
 * no facts and are never parsed.
 */
import type { Link, TagOccurrence } from './facts.js';
import { isSpaceCode, parseMarkdownDestination, parseWikilinkInner, TAG_CHAR_RE } from './common.js';
import { isPunct, linkLabelLength, normalizeLabel, parseLinkTail } from './link-syntax.js';

const TAGNAME = '[A-Za-z][A-Za-z0-9-]*';
const ATTRIBUTE = '(?:\\s+[a-zA-Z_:][a-zA-Z0-9:._-]*(?:\\s*=\\s*(?:[^"\'=<>`\\x00-\\x20]+|\'[^\']*\'|"[^"]*"))?)';
export const OPENTAG = '<' + TAGNAME + ATTRIBUTE + '*\\s*/?>';
export const CLOSETAG = '</' + TAGNAME + '\\s*>';

// Inline (sticky) patterns, tried at a `<`.
const RE_AUTOLINK_URI = /<[A-Za-z][A-Za-z0-9+.-]{1,31}:[^\x00-\x20<>]*>/y;
const RE_AUTOLINK_EMAIL =
  /<[a-zA-Z0-9.!#$%&'*+/=?^_`{|}~-]+@[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)*>/y;
const RE_INLINE_HTML = new RegExp(
  '(?:' +
    OPENTAG +
    '|' +
    CLOSETAG +
    '|<!-->|<!--->|<!--[\\s\\S]*?-->|<[?][\\s\\S]*?[?]>|<![A-Za-z][^>]*>|<!\\[CDATA\\[[\\s\\S]*?\\]\\]>)',
  'y',
);

const INLINE_SPECIAL = /[`<[\]#^$]/;
/**
 * The characters the scan stops at (`\\`, `` ` ``, `<`, `!`, `[`, `]`): a table
 * looked up code unit by code unit, where a regex search from each stop cost
 * a call into the regex engine per stop (about 4% of extracting a note).
 */
const INLINE_NEXT = new Uint8Array(128);
for (const ch of '\\`<![]') INLINE_NEXT[ch.charCodeAt(0)] = 1;

/** Replace the masked ranges (pairs, possibly nested) with NUL characters. */
function applyMasks(p: string, masks: number[]): string {
  const order: number[] = [];
  for (let q = 0; q < masks.length; q += 2) order.push(q);
  order.sort((a, b) => masks[a]! - masks[b]!);
  let out = '';
  let pos = 0;
  for (const q of order) {
    const a = Math.max(masks[q]!, pos);
    const b = masks[q + 1]!;
    if (b <= a) continue;
    out += p.slice(pos, a) + '\u0000'.repeat(b - a);
    pos = b;
  }
  return out + p.slice(pos);
}

const TAG_ASCII = new Uint8Array(128);
for (const ch of 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-/') TAG_ASCII[ch.charCodeAt(0)] = 1;

const tagCharCache = new Map<number, boolean>();
/** Non-ASCII tag characters (see TAG_CHAR_RE), cached per code point. */
function isTagCodePoint(cp: number): boolean {
  let v = tagCharCache.get(cp);
  if (v === undefined) {
    v = TAG_CHAR_RE.test(String.fromCodePoint(cp));
    if (tagCharCache.size < 65536) tagCharCache.set(cp, v);
  }
  return v;
}

function backslashesBefore(s: string, i: number): number {
  let n = 0;
  while (i - 1 - n >= 0 && s.charCodeAt(i - 1 - n) === 92) n++;
  return n;
}

/**
 * Index of the `^` of a block id ending `s` (`(^|\s)\^[A-Za-z0-9-]+[ \t]*$`), or -1.
 */
export function trailingBlockId(s: string): number {
  let e = s.length;
  while (e > 0 && (s.charCodeAt(e - 1) === 32 || s.charCodeAt(e - 1) === 9)) e--;
  let i = e;
  for (;;) {
    const c = s.charCodeAt(i - 1);
    if ((c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 45) i--;
    else break;
  }
  if (i === e || i === 0 || s.charCodeAt(i - 1) !== 94) return -1;
  const caret = i - 1;
  if (caret > 0 && !isSpaceCode(s.charCodeAt(caret - 1))) return -1;
  return caret;
}

/** Mask `$$ … $$` pairs (math) in visible text, line breaks excepted. */
function maskMath(s: string): string {
  let i = s.indexOf('$$');
  if (i < 0) return s;
  let out = '';
  let copied = 0;
  let open = -1;
  for (; i >= 0 && i + 1 < s.length; ) {
    if (backslashesBefore(s, i) % 2 === 0) {
      if (open < 0) open = i;
      else {
        out += s.slice(copied, open) + s.slice(open, i + 2).replace(/[^\n\r]/g, '\u0000');
        copied = i + 2;
        open = -1;
      }
      i = s.indexOf('$$', i + 2);
    } else i = s.indexOf('$$', i + 1);
  }
  return copied === 0 ? s : out + s.slice(copied);
}

/** A piece of phrasing content: one string plus how to map its indices back to the source. */
export interface Segment {
  /** Content; lines joined by '\n'. */
  p: string;
  /** Index in `p` where each line starts. */
  segStarts: number[];
  /** Source offset of each line's first content character. */
  srcStarts: number[];
  /** Line number of each line. */
  lineNos: number[];
  /** Source offset of each line's start (for columns). */
  lineStartOffs: number[];
}

/**
 * Scans the phrasing content of one note (`scan`, once per segment), adding
 * its links and tag occurrences to `links` and `tagOccurrences`.
 */
export class PhrasingScanner {
  readonly links: Link[] = [];
  readonly tagOccurrences: TagOccurrence[] = [];

  /**
   * `text`: the whole note (link aliases are sliced from it). `labels`: the
   * normalized labels of the note's link reference definitions (second
   * pass), or null.
   */
  constructor(
    private readonly text: string,
    private readonly labels: Set<string> | null,
  ) {}

  // scratch arrays of `scan`
  private masks: number[] = [];
  private oPos: number[] = [];
  private oFlags: number[] = [];
  private oEpoch: number[] = [];

  // results of `locate`
  locOffset = 0;
  locLine = 0;
  locColumn = 0;

  /** Map an index in a segment's text to source offset, line and column (sets the loc* fields). */
  locate(seg: Segment, idx: number): void {
    let k = seg.segStarts.length - 1;
    while (k > 0 && seg.segStarts[k]! > idx) k--;
    const offset = seg.srcStarts[k]! + (idx - seg.segStarts[k]!);
    this.locOffset = offset;
    this.locLine = seg.lineNos[k]!;
    this.locColumn = offset - seg.lineStartOffs[k]! + 1;
  }

  private srcOffset(seg: Segment, idx: number): number {
    let k = seg.segStarts.length - 1;
    while (k > 0 && seg.segStarts[k]! > idx) k--;
    return seg.srcStarts[k]! + (idx - seg.segStarts[k]!);
  }

  /**
   * Find Markdown links, mask code spans / HTML / autolinks / links, then
   * find wikilinks and tags in what stays visible. Returns the masked text.
   */
  scan(seg: Segment): string | null {
    const p = seg.p;
    if (!INLINE_SPECIAL.test(p)) return p;
    const n = p.length;
    const masks = this.masks; // pairs [from, to)
    masks.length = 0;
    // bracket openers as a stack of (position, flags, epoch); flags: 1 image, 2 bracket after
    const oPos = this.oPos;
    const oFlags = this.oFlags;
    const oEpoch = this.oEpoch;
    let on = 0;
    // A link deactivates every `[` opener before it: bump the epoch instead of visiting them.
    let epoch = 0;
    // Backtick run lengths known to have no closer after the current position.
    let noCloser: Set<number> | null = null;
    let found: Array<{ start: number; end: number; labelStart: number; labelEnd: number; url: string; image: boolean }> | null = null;
    let i = 0;
    while (i < n) {
      let c = p.charCodeAt(i);
      while (c >= 128 || INLINE_NEXT[c] === 0) {
        if (++i === n) break;
        c = p.charCodeAt(i);
      }
      if (i === n) break;
      if (c === 92) {
        i += i + 1 < n && isPunct(p.charCodeAt(i + 1)) ? 2 : 1;
      } else if (c === 96) {
        let j = i;
        while (j < n && p.charCodeAt(j) === 96) j++;
        const len = j - i;
        let k = j;
        let close = -1;
        for (; noCloser === null || !noCloser.has(len); ) {
          const q = p.indexOf('`', k);
          if (q < 0) break;
          let r = q;
          while (r < n && p.charCodeAt(r) === 96) r++;
          if (r - q === len) {
            close = r;
            break;
          }
          k = r;
        }
        if (close >= 0) {
          masks.push(i, close);
          i = close;
        } else {
          (noCloser ??= new Set()).add(len);
          i = j;
        }
      } else if (c === 60) {
        let e = -1;
        RE_AUTOLINK_URI.lastIndex = i;
        if (RE_AUTOLINK_URI.test(p)) e = RE_AUTOLINK_URI.lastIndex;
        else {
          RE_AUTOLINK_EMAIL.lastIndex = i;
          if (RE_AUTOLINK_EMAIL.test(p)) e = RE_AUTOLINK_EMAIL.lastIndex;
          else {
            RE_INLINE_HTML.lastIndex = i;
            if (RE_INLINE_HTML.test(p)) e = RE_INLINE_HTML.lastIndex;
          }
        }
        if (e > 0) {
          masks.push(i, e);
          i = e;
        } else i++;
      } else if (c === 33 && i + 1 < n && p.charCodeAt(i + 1) === 91) {
        if (on > 0) oFlags[on - 1] = oFlags[on - 1]! | 2;
        oPos[on] = i;
        oFlags[on] = 1;
        oEpoch[on++] = epoch;
        i += 2;
      } else if (c === 91) {
        if (on > 0) oFlags[on - 1] = oFlags[on - 1]! | 2;
        oPos[on] = i;
        oFlags[on] = 0;
        oEpoch[on++] = epoch;
        i++;
      } else if (c === 93) {
        if (on === 0) {
          i++;
          continue;
        }
        on--;
        const opPos = oPos[on]!;
        const opImage = (oFlags[on]! & 1) === 1;
        if (!opImage && oEpoch[on] !== epoch) {
          i++;
          continue;
        }
        const labelStart = opPos + (opImage ? 2 : 1);
        const tail = i + 1 < n && p.charCodeAt(i + 1) === 40 ? parseLinkTail(p, i + 2) : null;
        if (!tail) {
          // a reference link to a definition of this note: plain text for
          // the facts, but links cannot contain links
          const labels = this.labels;
          if (labels !== null) {
            const n2 = p.charCodeAt(i + 1) === 91 ? linkLabelLength(p, i + 1) : 0;
            let ref: string | null = null;
            if (n2 > 2) ref = p.slice(i + 2, i + n2);
            else if ((oFlags[on]! & 2) === 0) ref = p.slice(labelStart, i);
            if (ref !== null && labels.has(normalizeLabel(ref))) {
              if (!opImage) epoch++;
              i = n2 > 0 ? i + 1 + n2 : i + 1;
              continue;
            }
          }
          i++;
          continue;
        }
        if (found === null) found = [];
        if (opImage) {
          // links inside an image description are not links
          for (let f = found.length - 1; f >= 0; f--) if (found[f]!.start > opPos) found.splice(f, 1);
        } else epoch++;
        found.push({ start: opPos, end: tail.end, labelStart, labelEnd: i, url: tail.url, image: opImage });
        masks.push(opPos, tail.end);
        i = tail.end;
      } else i++;
    }
    if (found !== null) for (const f of found) {
      const parts = parseMarkdownDestination(f.url);
      if (parts === null) continue;
      const e = this.srcOffset(seg, f.end - 1) + 1;
      const ls = this.srcOffset(seg, f.labelStart);
      const lend = f.labelEnd > f.labelStart ? this.srcOffset(seg, f.labelEnd - 1) + 1 : ls;
      this.locate(seg, f.start);
      const s = { line: this.locLine, column: this.locColumn, offset: this.locOffset };
      this.links.push({
        kind: 'markdown',
        embed: f.image,
        target: parts.target,
        heading: parts.heading,
        blockId: parts.blockId,
        alias: this.text.slice(ls, lend),
        line: s.line,
        column: s.column,
        start: s.offset,
        end: e,
      });
    }
    let m = p;
    if (masks.length > 0) m = applyMasks(p, masks);
    m = maskMath(m);
    this.scanVisible(seg, m);
    return m;
  }

  /** Wikilinks, then tags outside them, in masked visible text. */
  private scanVisible(seg: Segment, m: string): void {
    const n = m.length;
    let spans: number[] | null = null;
    let i = m.indexOf('[[');
    while (i >= 0) {
      let j = i + 2;
      while (j < n) {
        const c = m.charCodeAt(j);
        if (c === 91 || c === 93 || c === 10 || c === 13 || c === 0) break;
        j++;
      }
      if (j > i + 2 && m.charCodeAt(j) === 93 && m.charCodeAt(j + 1) === 93 && backslashesBefore(m, i) % 2 === 0) {
        const parts = parseWikilinkInner(m.slice(i + 2, j));
        if (parts) {
          const embed = i > 0 && m.charCodeAt(i - 1) === 33 && backslashesBefore(m, i - 1) % 2 === 0;
          const start = embed ? i - 1 : i;
          this.locate(seg, start);
          const s = { line: this.locLine, column: this.locColumn, offset: this.locOffset };
          this.links.push({
            kind: 'wikilink',
            embed,
            target: parts.target,
            heading: parts.heading,
            blockId: parts.blockId,
            alias: parts.alias,
            line: s.line,
            column: s.column,
            start: s.offset,
            end: s.offset + (j + 2 - start),
          });
          (spans ??= []).push(start, j + 2);
          i = m.indexOf('[[', j + 2);
          continue;
        }
      }
      i = m.indexOf('[[', i + 1);
    }
    let k = m.indexOf('#');
    const sps = spans as number[] | null;
    let sp = 0;
    while (k >= 0) {
      if (sps !== null) {
        // a '#' inside a wikilink is not a tag
        while (sp < sps.length && sps[sp + 1]! <= k) sp += 2;
        if (sp < sps.length && sps[sp]! <= k) {
          k = m.indexOf('#', sps[sp + 1]!);
          continue;
        }
      }
      // must follow whitespace or start the content (a wikilink's `]]` is not whitespace)
      if (k > 0 && !isSpaceCode(m.charCodeAt(k - 1))) {
        k = m.indexOf('#', k + 1);
        continue;
      }
      let j = k + 1;
      while (j < n) {
        const c = m.charCodeAt(j);
        if (c < 128) {
          if (TAG_ASCII[c] === 1) {
            j++;
            continue;
          }
          break;
        }
        const cp = m.codePointAt(j)!;
        if (isTagCodePoint(cp)) j += cp > 0xffff ? 2 : 1;
        else break;
      }
      if (j > k + 1) {
        let digitsOnly = true;
        for (let q = k + 1; q < j; q++) {
          const c = m.charCodeAt(q);
          if (c < 48 || c > 57) {
            digitsOnly = false;
            break;
          }
        }
        if (!digitsOnly) {
          this.locate(seg, k);
          this.tagOccurrences.push({ tag: m.slice(k + 1, j), line: this.locLine, column: this.locColumn, offset: this.locOffset });
        }
        k = m.indexOf('#', j);
      } else k = m.indexOf('#', k + 1);
    }
  }
}
