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

/** A piece of phrasing content: one string plus how to map its indices back to the source. */
export interface Segment {
  /** Content; lines joined by '\n'. */
  p: string;
  /** Number of lines (the arrays below are reused and may be longer). */
  n: number;
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
  /**
   * The masked view of the last scanned segment: its text, and the hidden
   * ranges (code spans, autolinks, raw HTML, Markdown links, math) as sorted,
   * disjoint `[start, end)` pairs in `hidden[0 .. hiddenN)`. A hidden code
   * unit reads as NUL, which no rule below accepts; the view is never built
   * as a string (that cost a copy of each paragraph and most of its garbage).
   */
  private p = '';
  private hidden: number[] = [];
  private hiddenN = 0;
  private math: number[] = [];
  private oPos: number[] = [];
  private oFlags: number[] = [];
  private oEpoch: number[] = [];

  // results of `locate`
  locOffset = 0;
  locLine = 0;
  locColumn = 0;

  /** Map an index in a segment's text to source offset, line and column (sets the loc* fields). */
  locate(seg: Segment, idx: number): void {
    let k = seg.n - 1;
    while (k > 0 && seg.segStarts[k]! > idx) k--;
    const offset = seg.srcStarts[k]! + (idx - seg.segStarts[k]!);
    this.locOffset = offset;
    this.locLine = seg.lineNos[k]!;
    this.locColumn = offset - seg.lineStartOffs[k]! + 1;
  }

  private srcOffset(seg: Segment, idx: number): number {
    let k = seg.n - 1;
    while (k > 0 && seg.segStarts[k]! > idx) k--;
    return seg.srcStarts[k]! + (idx - seg.segStarts[k]!);
  }

  /**
   * Find Markdown links, mask code spans / HTML / autolinks / links, then
   * find wikilinks and tags in what stays visible. The masked view stays
   * readable through `trailingBlockId` and `slice` until the next scan.
   */
  scan(seg: Segment): void {
    const p = seg.p;
    this.p = p;
    this.hiddenN = 0;
    if (!INLINE_SPECIAL.test(p)) return;
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
      } else if (c === 91 || (c === 33 && i + 1 < n && p.charCodeAt(i + 1) === 91)) {
        // An opener, `[` or an image's `![`: one set of stores for both, so that
        // a note's first opener being an image (rare) does not meet stores that
        // never grew the arrays and deoptimize this function.
        const image = c === 33 ? 1 : 0;
        if (on > 0) oFlags[on - 1] = oFlags[on - 1]! | 2;
        oPos[on] = i;
        oFlags[on] = image;
        oEpoch[on++] = epoch;
        i += 1 + image;
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
    const base = this.links.length;
    if (found !== null) for (const f of found) {
      const parts = parseMarkdownDestination(f.url);
      if (parts === null) continue;
      const e = this.srcOffset(seg, f.end - 1) + 1;
      const ls = this.srcOffset(seg, f.labelStart);
      const lend = f.labelEnd > f.labelStart ? this.srcOffset(seg, f.labelEnd - 1) + 1 : ls;
      this.locate(seg, f.start);
      this.links.push({
        kind: 'markdown',
        embed: f.image,
        target: parts.target,
        heading: parts.heading,
        blockId: parts.blockId,
        alias: this.text.slice(ls, lend),
        line: this.locLine,
        column: this.locColumn,
        start: this.locOffset,
        end: e,
      });
    }
    this.hideRanges(masks);
    this.hideMath();
    const wikiFrom = this.links.length;
    this.scanVisible(seg);
    // The segment's Markdown links came before its wikilinks: put them in
    // source order here, so that the note's facts need no sorted copy.
    if (wikiFrom > base && this.links.length > wikiFrom) {
      const links = this.links;
      for (let q = base + 1; q < links.length; q++) {
        const l = links[q]!;
        let r = q;
        while (r > base && links[r - 1]!.start > l.start) {
          links[r] = links[r - 1]!;
          r--;
        }
        links[r] = l;
      }
    }
  }

  /** Sort the (nested or disjoint) mask pairs and merge them into `hidden`. */
  private hideRanges(masks: number[]): void {
    // insertion sort by start: a handful of pairs, mostly in order already
    for (let q = 2; q < masks.length; q += 2) {
      const a = masks[q]!;
      const b = masks[q + 1]!;
      let r = q;
      while (r > 0 && masks[r - 2]! > a) {
        masks[r] = masks[r - 2]!;
        masks[r + 1] = masks[r - 1]!;
        r -= 2;
      }
      masks[r] = a;
      masks[r + 1] = b;
    }
    const h = this.hidden;
    let hn = 0;
    for (let q = 0; q < masks.length; q += 2) {
      const a = masks[q]!;
      const b = masks[q + 1]!;
      if (hn > 0 && a <= h[hn - 1]!) {
        if (b > h[hn - 1]!) h[hn - 1] = b;
      } else if (b > a) {
        h[hn++] = a;
        h[hn++] = b;
      }
    }
    this.hiddenN = hn;
  }

  /** Index in `hidden` of the first range ending after `i` (`hiddenN` when none). */
  private rangeAfter(i: number): number {
    const h = this.hidden;
    let lo = 0;
    let hi = this.hiddenN >> 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (h[2 * mid + 1]! <= i) lo = mid + 1;
      else hi = mid;
    }
    return 2 * lo;
  }

  /** The code unit at `i` in the masked view (NUL when hidden). */
  private at(i: number): number {
    const r = this.rangeAfter(i);
    if (r < this.hiddenN && this.hidden[r]! <= i) return 0;
    return this.p.charCodeAt(i);
  }

  /** Where the visible run at `i` ends: the next hidden range's start, or the text's end. */
  private visibleEnd(i: number): number {
    const r = this.rangeAfter(i);
    return r < this.hiddenN ? this.hidden[r]! : this.p.length;
  }

  /** The first visible occurrence of `s` (both code units visible) at or after `from`, or -1. */
  private indexOfVisible(s: string, from: number): number {
    const p = this.p;
    let i = p.indexOf(s, from);
    if (this.hiddenN === 0) return i;
    while (i >= 0 && this.visibleEnd(i) < i + s.length) i = p.indexOf(s, i + 1);
    return i;
  }

  private backslashesBefore(i: number): number {
    let n = 0;
    while (i - 1 - n >= 0 && this.at(i - 1 - n) === 92) n++;
    return n;
  }

  /**
   * Hide `$$ … $$` pairs (math) of the visible text. Their line breaks stay
   * visible in the rules' terms, but no rule can see them: a line break inside
   * the pair is never the character before a visible `#` or `[[`.
   */
  private hideMath(): void {
    let i = this.indexOfVisible('$$', 0);
    if (i < 0) return;
    const math = this.math;
    let mn = 0;
    let open = -1;
    for (; i >= 0 && i + 1 < this.p.length; ) {
      if (this.backslashesBefore(i) % 2 === 0) {
        if (open < 0) open = i;
        else {
          math[mn++] = open;
          math[mn++] = i + 2;
          open = -1;
        }
        i = this.indexOfVisible('$$', i + 2);
      } else i = this.indexOfVisible('$$', i + 1);
    }
    if (mn === 0) return;
    // merge the math pairs (disjoint, in order) with the hidden ranges
    const h = this.hidden;
    const all: number[] = [];
    let a = 0;
    let b = 0;
    while (a < this.hiddenN || b < mn) {
      if (b >= mn || (a < this.hiddenN && h[a]! <= math[b]!)) {
        all.push(h[a]!, h[a + 1]!);
        a += 2;
      } else {
        all.push(math[b]!, math[b + 1]!);
        b += 2;
      }
    }
    this.hideRanges(all);
  }

  /**
   * Index of the `^` of a block id ending the last scanned segment's visible
   * text (`(^|\s)\^[A-Za-z0-9-]+[ \t]*$`), or -1; the id ends at `idEnd`.
   */
  trailingBlockId(): number {
    let e = this.p.length;
    for (;;) {
      const c = e > 0 ? this.at(e - 1) : 0;
      if (c === 32 || c === 9) e--;
      else break;
    }
    this.idEnd = e;
    let i = e;
    for (;;) {
      const c = i > 0 ? this.at(i - 1) : 0;
      if ((c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 45) i--;
      else break;
    }
    if (i === e || i === 0 || this.at(i - 1) !== 94) return -1;
    const caret = i - 1;
    if (caret > 0 && !isSpaceCode(this.at(caret - 1))) return -1;
    return caret;
  }

  /** End of the id `trailingBlockId` found. */
  idEnd = 0;

  /** The last scanned segment's text from `from` to `to`. */
  slice(from: number, to: number): string {
    return this.p.slice(from, to);
  }

  /** Wikilinks, then tags outside them, in the visible text. */
  private scanVisible(seg: Segment): void {
    const p = this.p;
    const n = p.length;
    let spans: number[] | null = null;
    let i = this.indexOfVisible('[[', 0);
    while (i >= 0) {
      let j = i + 2;
      const stop = this.visibleEnd(i);
      while (j < n) {
        if (j >= stop) break;
        const c = p.charCodeAt(j);
        if (c === 91 || c === 93 || c === 10 || c === 13 || c === 0) break;
        j++;
      }
      if (j > i + 2 && j + 1 < stop && p.charCodeAt(j) === 93 && p.charCodeAt(j + 1) === 93 && this.backslashesBefore(i) % 2 === 0) {
        const parts = parseWikilinkInner(p.slice(i + 2, j));
        if (parts) {
          const embed = i > 0 && this.at(i - 1) === 33 && this.backslashesBefore(i - 1) % 2 === 0;
          const start = embed ? i - 1 : i;
          this.locate(seg, start);
          const offset = this.locOffset;
          this.links.push({
            kind: 'wikilink',
            embed,
            target: parts.target,
            heading: parts.heading,
            blockId: parts.blockId,
            alias: parts.alias,
            line: this.locLine,
            column: this.locColumn,
            start: offset,
            end: offset + (j + 2 - start),
          });
          (spans ??= []).push(start, j + 2);
          i = this.indexOfVisible('[[', j + 2);
          continue;
        }
      }
      i = this.indexOfVisible('[[', i + 1);
    }
    let k = this.indexOfVisible('#', 0);
    const sps = spans as number[] | null;
    let sp = 0;
    while (k >= 0) {
      if (sps !== null) {
        // a '#' inside a wikilink is not a tag
        while (sp < sps.length && sps[sp + 1]! <= k) sp += 2;
        if (sp < sps.length && sps[sp]! <= k) {
          k = this.indexOfVisible('#', sps[sp + 1]!);
          continue;
        }
      }
      // must follow whitespace or start the content (a wikilink's `]]` is not whitespace)
      if (k > 0 && !isSpaceCode(this.at(k - 1))) {
        k = this.indexOfVisible('#', k + 1);
        continue;
      }
      let j = k + 1;
      const stop = this.visibleEnd(k);
      while (j < stop) {
        const c = p.charCodeAt(j);
        if (c < 128) {
          if (TAG_ASCII[c] === 1) {
            j++;
            continue;
          }
          break;
        }
        const cp = p.codePointAt(j)!;
        if (isTagCodePoint(cp)) j += cp > 0xffff ? 2 : 1;
        else break;
      }
      if (j > k + 1) {
        let digitsOnly = true;
        for (let q = k + 1; q < j; q++) {
          const c = p.charCodeAt(q);
          if (c < 48 || c > 57) {
            digitsOnly = false;
            break;
          }
        }
        if (!digitsOnly) {
          this.locate(seg, k);
          this.tagOccurrences.push({ tag: p.slice(k + 1, j), line: this.locLine, column: this.locColumn, offset: this.locOffset });
        }
        k = this.indexOfVisible('#', j);
      } else k = this.indexOfVisible('#', k + 1);
    }
  }
}
