/**
 * Block syntax: a hand-written line scanner that follows the CommonMark
 * block algorithm (containers, then leaves) closely enough to know what is
 * code, HTML, a heading, a paragraph, a list item (and task), a table cell
 * or frontmatter. Phrasing content (paragraphs, headings, cells) goes to the
 * inline scanner (inline-syntax.ts); link reference definitions opening a
 * paragraph are recognized by link-syntax.ts. Entry point: `scanBlocks`.
 */
import type { Heading, BlockAnchor, Task, TextRange } from './facts.js';
import { countWords, findDue, TRAILING_ID_RE, type RawFacts } from './common.js';
import { CLOSETAG, OPENTAG, PhrasingScanner, type Segment } from './inline-syntax.js';
import { definitionLines } from './link-syntax.js';

// Block kinds.
const DOC = 0;
const QUOTE = 1;
const ITEM = 2;
const FOOT = 3;
const PARA = 4;
const FENCE = 5;
const INDENTED = 6;
const HTML = 7;
const TABLE = 8;

class Blk {
  k: number;
  // ITEM
  markerOffset = 0;
  padding = 0;
  line = 0;
  hasChild = false;
  /** ITEM: the `serial` of its first child when that is a paragraph, else -1. */
  firstChildPara = -1;
  task: Task | null = null;
  taskCheckbox = '';
  taskConfirmed = false;
  depth = 0;
  parentTaskLine: number | null = null;
  // FENCE
  fenceChar = 0;
  fenceLen = 0;
  fenceOffset = 0;
  // HTML
  htmlType = 0;
  // INDENTED: started on a line that closed unmatched containers (micromark
  // then does not treat the next line as interrupting it)
  lazyStartLine = -1;
  // PARA: per line, content start/end offsets, line number, source line start
  /** PARA lines, 5 numbers each: content start, content end, line number, line start offset, indent. */
  pl!: number[];
  ownerItem: Blk | null = null;
  /** PARA: which paragraph of the note this is (the object is reused, see `BlockScanner.para`). */
  serial = 0;
  constructor(k: number) {
    this.k = k;
  }
}

const RE_ATX = /^#{1,6}(?:[ \t]|$)/;
const RE_FENCE = /^(?:`{3,}(?![^\n\r]*`)|~{3,})/;
const RE_CLOSING_FENCE = /^(?:`{3,}|~{3,})(?=[ \t]*$)/;
const RE_CHECKBOX = /^\[( |[^\s[\]\\`])\]/u;
const RE_FOOTNOTE = /^\[\^(?:[^\s[\]\\]|\\[[\]\\]?)+\]:/;

const HTML_OPEN = [
  /./,
  /^<(?:script|pre|textarea|style)(?:\s|>|$)/i,
  /^<!--/,
  /^<[?]/,
  /^<![A-Za-z]/,
  /^<!\[CDATA\[/,
  /^<[/]?(?:address|article|aside|base|basefont|blockquote|body|caption|center|col|colgroup|dd|details|dialog|dir|div|dl|dt|fieldset|figcaption|figure|footer|form|frame|frameset|h[123456]|head|header|hr|html|iframe|legend|li|link|main|menu|menuitem|nav|noframes|ol|optgroup|option|p|param|search|section|summary|table|tbody|td|tfoot|th|thead|title|tr|track|ul)(?:\s|[/]?[>]|$)/i,
  new RegExp('^(?:' + OPENTAG + '|' + CLOSETAG + ')[ \\t]*$', 'i'),
];
const HTML_CLOSE = [/./, /<\/(?:script|pre|textarea|style)>/i, /-->/, /\?>/, />/, /\]\]>/];

const MAYBE_SPECIAL = new Uint8Array(128);
for (const ch of '#`~*+_=<>0123456789-[|:') MAYBE_SPECIAL[ch.charCodeAt(0)] = 1;

/**
 * Scan a note's blocks, and through the phrasing scanner their links and
 * tags. `labels`: the normalized labels of the note's link reference
 * definitions when a first pass found them (null on the first pass);
 * `definedLabels`: the ones this pass found.
 */
export function scanBlocks(text: string, labels: Set<string> | null): { facts: RawFacts; definedLabels: Set<string> } {
  const x = new BlockScanner(text, labels);
  x.run();
  return { facts: x.raw(), definedLabels: x.definedLabels };
}

class BlockScanner {
  readonly text: string;
  readonly n: number;
  stack: Blk[] = [new Blk(DOC)];

  // current line
  ls = 0;
  le = 0;
  lineNo = 0;
  offset = 0;
  column = 0;
  partial = false;
  nextNonspace = 0;
  nextNonspaceColumn = 0;
  indent = 0;
  blank = false;
  indented = false;
  allClosed = true;
  lastMatched = 0; // number of matched blocks in stack
  /**
   * micromark's `interrupt`: all containers matched and the open leaf is a
   * paragraph or indented code. Empty list items and ordered items not
   * starting at 1 cannot start then, even nested on the same line.
   */
  interrupt = false;
  /** Indentation of the line after the matched containers (before new ones). */
  lineIndent = 0;
  /** An empty list item was closed by a blank line and no text line came since. */
  emptyItemClosed = false;
  // words of this line
  wordExcl: number[] = [];
  wordExclN = 0;
  codeFrom = -1; // offset where code starts on this line (words before it still count)

  // output
  bom = 0;
  frontmatterRange: TextRange | null = null;
  frontmatterRaw: string | null = null;
  headings: Heading[] = [];
  blocks: BlockAnchor[] = [];
  tasks: Task[] = [];
  wordCount = 0;

  /** Links and tags of the phrasing content. */
  readonly inline: PhrasingScanner;
  /** Labels of the definitions found in this pass. */
  definedLabels = new Set<string>();
  /** The paragraph block, reused (see `addBlock`). */
  readonly para = new Blk(PARA);
  /** The segment handed to the phrasing scanner, reused: it is read only until the next one is made. */
  readonly seg: Segment = { p: '', n: 0, segStarts: [], srcStarts: [], lineNos: [], lineStartOffs: [] };

  constructor(text: string, labels: Set<string> | null) {
    this.text = text;
    this.n = text.length;
    this.inline = new PhrasingScanner(text, labels);
  }

  run(): void {
    const text = this.text;
    const n = this.n;
    this.bom = text.charCodeAt(0) === 0xfeff ? 1 : 0;
    let ls = this.bom;
    let lineNo = 1;
    this.hasCR = text.indexOf('\r') >= 0;
    // Frontmatter: `---` (+ spaces/tabs) on the first line, closed by the same.
    if (text.startsWith('---', ls)) {
      this.nextLine(ls);
      const e0 = this.eol;
      const nx0 = this.nextStart;
      if (nx0 > e0 && /^---[ \t]*$/.test(text.slice(ls, e0))) {
        let l = nx0;
        let ln = 2;
        while (l < n) {
          this.nextLine(l);
          const e = this.eol;
          const nx = this.nextStart;
          if (/^---[ \t]*$/.test(text.slice(l, e))) {
            this.frontmatterRange = { start: ls, end: nx };
            let raw = text.slice(nx0, l);
            raw = raw.replace(/(\r\n|\r|\n)$/, '');
            this.frontmatterRaw = raw;
            ls = nx;
            lineNo = ln + 1;
            break;
          }
          l = nx;
          ln++;
        }
      }
    }
    while (ls < n) {
      this.nextLine(ls);
      const nx = this.nextStart;
      this.processLine(ls, this.eol, lineNo);
      if (!this.blank) this.emptyItemClosed = false;
      ls = nx;
      lineNo++;
    }
    while (this.stack.length > 1) this.finalize(this.stack.pop()!);
  }

  hasCR = false;
  eol = 0;
  nextStart = 0;

  /** Find the end of the line starting at `from` (sets `eol` and `nextStart`). */
  nextLine(from: number): void {
    const text = this.text;
    const n = this.n;
    if (!this.hasCR) {
      const k = text.indexOf('\n', from);
      this.eol = k < 0 ? n : k;
      this.nextStart = k < 0 ? n : k + 1;
      return;
    }
    for (let i = from; i < n; i++) {
      const c = text.charCodeAt(i);
      if (c === 10 || c === 13) {
        this.eol = i;
        this.nextStart = c === 13 && text.charCodeAt(i + 1) === 10 ? i + 2 : i + 1;
        return;
      }
    }
    this.eol = n;
    this.nextStart = n;
  }

  // ------------------------------------------------------------ line cursor

  findNextNonspace(): void {
    const text = this.text;
    let i = this.offset;
    let cols = this.column;
    const le = this.le;
    while (i < le) {
      const c = text.charCodeAt(i);
      if (c === 32) {
        i++;
        cols++;
      } else if (c === 9) {
        i++;
        cols += 4 - (cols % 4);
      } else break;
    }
    this.blank = i >= le;
    this.nextNonspace = i;
    this.nextNonspaceColumn = cols;
    this.indent = cols - this.column;
    this.indented = this.indent >= 4;
  }

  advanceNextNonspace(): void {
    this.offset = this.nextNonspace;
    this.column = this.nextNonspaceColumn;
    this.partial = false;
  }

  advanceOffset(count: number, columns: boolean): void {
    const text = this.text;
    while (count > 0 && this.offset < this.le) {
      const c = text.charCodeAt(this.offset);
      if (c === 9) {
        const charsToTab = 4 - (this.column % 4);
        if (columns) {
          this.partial = charsToTab > count;
          const adv = charsToTab > count ? count : charsToTab;
          this.column += adv;
          this.offset += this.partial ? 0 : 1;
          count -= adv;
        } else {
          this.partial = false;
          this.column += charsToTab;
          this.offset += 1;
          count -= 1;
        }
      } else {
        this.partial = false;
        this.offset += 1;
        this.column += 1;
        count -= 1;
      }
    }
  }

  // -------------------------------------------------------------- the line

  processLine(ls: number, le: number, lineNo: number): void {
    this.ls = ls;
    this.le = le;
    this.lineNo = lineNo;
    this.offset = ls;
    this.column = 0;
    this.partial = false;
    this.blank = false;
    this.wordExclN = 0;
    this.codeFrom = -1;
    const stack = this.stack;
    const text = this.text;

    let matched = 1;
    let consumed = false;
    for (let i = 1; i < stack.length; i++) {
      const b = stack[i]!;
      this.findNextNonspace();
      const r = this.cont(b);
      if (r === 0) {
        matched = i + 1;
        continue;
      }
      if (r === 2) {
        // closing fence: the whole line is code
        matched = i + 1;
        consumed = true;
        this.codeFrom = ls;
      }
      break;
    }
    if (consumed) {
      this.finalize(stack.pop()!);
      this.countLineWords();
      return;
    }
    this.lastMatched = matched;
    this.allClosed = matched === stack.length;
    const oldTip = stack[stack.length - 1]!;
    this.interrupt =
      (oldTip.k === PARA && matched === stack.length) ||
      (oldTip.k === INDENTED && matched >= stack.length - 1 && oldTip.lazyStartLine < 0);
    let container = stack[matched - 1]!;
    let matchedLeaf = container.k === FENCE || container.k === INDENTED || container.k === HTML;

    let first = true;
    while (!matchedLeaf) {
      this.findNextNonspace();
      if (first) {
        this.lineIndent = this.indent;
        first = false;
      }
      if (!this.indented) {
        const c = text.charCodeAt(this.nextNonspace);
        if (!(c < 128 && MAYBE_SPECIAL[c] === 1)) {
          this.advanceNextNonspace();
          break;
        }
      }
      const r = this.tryStarts(container);
      if (r === 0) {
        this.advanceNextNonspace();
        break;
      }
      if (r === 3) {
        this.countLineWords();
        return;
      }
      container = stack[stack.length - 1]!;
      if (r === 2) break;
    }

    // A lazy paragraph continuation: the open paragraph of a container this
    // line did not match takes the line. Such lines are rare, so the parts of
    // this test are computed on every line: an operation that first runs after
    // this function was optimized (no type feedback) deoptimizes it, and each
    // scan thread compiled it again (docs/performance.md, "Rare branches").
    const topIsOld = stack[stack.length - 1] === oldTip;
    const tagStart = !this.blank && text.charCodeAt(this.nextNonspace) === 60;
    const lazy = !this.allClosed && !this.blank && oldTip.k === PARA && topIsOld;
    if (lazy && tagStart && this.lineIndent < 4 && HTML_OPEN[7]!.test(text.slice(this.nextNonspace, le))) {
      // micromark: a complete tag alone on a lazy line ends the paragraph
      // and starts an HTML block inside the still-open containers.
      this.finalize(stack.pop()!);
      const b = new Blk(HTML);
      b.htmlType = 7;
      stack.push(b);
    } else {
      // On a lazy line the containers stay open and the tip is that paragraph.
      if (!lazy) this.closeUnmatched();
      const tip = stack[stack.length - 1]!;
      const k = tip.k;
      if (k === PARA) {
        this.addParaLine(tip);
      } else if (k === FENCE || k === INDENTED) {
        if (this.codeFrom < 0) this.codeFrom = ls;
        if (k === INDENTED && !this.blank && tip.lazyStartLine !== lineNo) tip.lazyStartLine = -1;
      } else if (k === HTML) {
        if (tip.htmlType >= 1 && tip.htmlType <= 5 && HTML_CLOSE[tip.htmlType]!.test(text.slice(this.offset, le))) {
          stack.pop();
        }
      } else if (k === TABLE) {
        this.tableRow(this.nextNonspace, le);
      } else if (!this.blank) {
        this.advanceNextNonspace();
        this.startParagraph();
      }
    }
    this.countLineWords();
  }

  countLineWords(): void {
    let from = this.ls;
    let to = this.le;
    if (this.codeFrom >= 0) to = this.codeFrom;
    const ex = this.wordExcl;
    for (let i = 0; i < this.wordExclN; i += 2) {
      if (ex[i]! > from) this.wordCount += countWords(this.text, from, Math.min(ex[i]!, to));
      from = Math.max(ex[i + 1]!, from);
    }
    if (from < to) this.wordCount += countWords(this.text, from, to);
  }

  /** Continuation of an open block: 0 matched, 1 not matched, 2 line consumed (closing fence). */
  cont(b: Blk): number {
    const text = this.text;
    switch (b.k) {
      case QUOTE:
        if (!this.blank && !this.indented && text.charCodeAt(this.nextNonspace) === 62) {
          this.advanceNextNonspace();
          this.advanceOffset(1, false);
          const c = text.charCodeAt(this.offset);
          if (this.offset < this.le && (c === 32 || c === 9)) this.advanceOffset(1, true);
          return 0;
        }
        return 1;
      case ITEM:
        if (this.blank) {
          if (!b.hasChild) {
            // micromark closes it only at the next non-blank line
            this.emptyItemClosed = true;
            return 1;
          }
          this.advanceNextNonspace();
          return 0;
        }
        if (this.indent >= b.markerOffset + b.padding) {
          this.advanceOffset(b.markerOffset + b.padding, true);
          return 0;
        }
        return 1;
      case FOOT:
        if (this.blank) {
          this.advanceNextNonspace();
          return 0;
        }
        if (this.indent >= 4) {
          this.advanceOffset(4, true);
          return 0;
        }
        return 1;
      case FENCE: {
        if (!this.blank && this.indent <= 3 && text.charCodeAt(this.nextNonspace) === b.fenceChar) {
          const m = RE_CLOSING_FENCE.exec(text.slice(this.nextNonspace, this.le));
          if (m && m[0].length >= b.fenceLen && m[0].charCodeAt(0) === b.fenceChar) return 2;
        }
        let i = b.fenceOffset;
        while (i > 0 && this.offset < this.le) {
          const c = text.charCodeAt(this.offset);
          if (c !== 32 && c !== 9) break;
          this.advanceOffset(1, true);
          i--;
        }
        return 0;
      }
      case INDENTED:
        if (this.indent >= 4) {
          this.advanceOffset(4, true);
          return 0;
        }
        if (this.blank) {
          this.advanceNextNonspace();
          return 0;
        }
        return 1;
      case HTML:
        return this.blank && (b.htmlType === 6 || b.htmlType === 7) ? 1 : 0;
      case PARA:
      case TABLE:
        return this.blank ? 1 : 0;
    }
    return 0;
  }

  closeUnmatched(): void {
    if (!this.allClosed) {
      while (this.stack.length > this.lastMatched) this.finalize(this.stack.pop()!);
      this.allClosed = true;
    }
  }

  /** Add a block under the current container, finalizing leaves that cannot hold it. */
  addBlock(k: number): Blk {
    this.closeUnmatched();
    const stack = this.stack;
    for (;;) {
      const tk = stack[stack.length - 1]!.k;
      if (tk === DOC || tk === QUOTE || tk === ITEM || tk === FOOT) break;
      this.finalize(stack.pop()!);
    }
    const parent = stack[stack.length - 1]!;
    let b: Blk;
    if (k === PARA) {
      // At most one paragraph is open (a paragraph is always the innermost
      // block), so one object serves them all; items tell them apart by serial.
      b = this.para;
      b.pl = [];
      b.ownerItem = null;
      b.serial++;
    } else b = new Blk(k);
    if (parent.k === ITEM && !parent.hasChild) {
      parent.hasChild = true;
      if (k === PARA) {
        parent.firstChildPara = b.serial;
        b.ownerItem = parent;
      }
    } else if (parent.k !== DOC) parent.hasChild = true;
    stack.push(b);
    return b;
  }

  /** Record a leaf that is complete at once (heading, thematic break, definition). */
  addClosedLeaf(): void {
    this.addBlock(DOC);
    this.stack.pop();
  }

  tryStarts(container: Blk): number {
    const text = this.text;
    const nn = this.nextNonspace;
    const c = text.charCodeAt(nn);
    const indented = this.indented;
    const le = this.le;
    const inPara = container.k === PARA;

    if (!indented) {
      // block quote
      if (c === 62) {
        this.advanceNextNonspace();
        this.advanceOffset(1, false);
        const d = text.charCodeAt(this.offset);
        if (this.offset < le && (d === 32 || d === 9)) this.advanceOffset(1, true);
        this.addBlock(QUOTE);
        return 1;
      }
      const needRest = c === 35 || c === 96 || c === 126 || c === 60;
      const rest = needRest ? text.slice(nn, le) : '';
      // ATX heading
      if (c === 35 && RE_ATX.test(rest)) {
        this.advanceNextNonspace();
        const m = RE_ATX.exec(rest)!;
        const level = /^#+/.exec(m[0])![0].length;
        this.addClosedLeaf();
        let cs = nn + level;
        let ce = le;
        const content = text.slice(cs, ce);
        let stripped = content.replace(/^[ \t]*#+[ \t]*$/, '').replace(/[ \t]+#+[ \t]*$/, '');
        if (/^[ \t]*#+[ \t]*$/.test(content)) stripped = '';
        ce = cs + stripped.length;
        while (cs < ce && (text.charCodeAt(cs) === 32 || text.charCodeAt(cs) === 9)) cs++;
        while (ce > cs && (text.charCodeAt(ce - 1) === 32 || text.charCodeAt(ce - 1) === 9)) ce--;
        const seg = this.singleSegment(cs, ce);
        this.headings.push({ level, text: seg.p, line: this.lineNo });
        this.inline.scan(seg);
        return 3;
      }
      // fenced code
      if ((c === 96 || c === 126) && RE_FENCE.test(rest)) {
        const len = /^(`+|~+)/.exec(rest)![0].length;
        const b = this.addBlock(FENCE);
        b.fenceChar = c;
        b.fenceLen = len;
        b.fenceOffset = this.indent;
        this.codeFrom = nn;
        this.advanceNextNonspace();
        this.advanceOffset(len, false);
        return 2;
      }
      // HTML block
      if (c === 60) {
        for (let t = 1; t <= 7; t++) {
          if (
            HTML_OPEN[t]!.test(rest) &&
            (t < 7 || (!inPara && !(!this.allClosed && !this.blank && this.stack[this.stack.length - 1]!.k === PARA)))
          ) {
            const b = this.addBlock(HTML);
            b.htmlType = t;
            return 2;
          }
        }
      }
      // setext heading underline
      if (inPara && (c === 61 || c === 45) && isSetextUnderline(text, nn, le) && this.stripDefinitions(container)) {
        this.closeUnmatched();
        const para = this.stack.pop()!;
        this.setextHeading(para, c === 61 ? 1 : 2);
        return 3;
      }
      // thematic break
      if ((c === 42 || c === 95 || c === 45) && isThematicBreak(text, nn, le)) {
        this.addClosedLeaf();
        return 3;
      }
    }
    // list item
    if (!indented) {
      const r = this.listItemStart(container);
      if (r) return 1;
    }
    // footnote definition
    if (!indented && c === 91 && text.charCodeAt(nn + 1) === 94) {
      const m = RE_FOOTNOTE.exec(text.slice(nn, this.le));
      if (m) {
        this.advanceNextNonspace();
        this.advanceOffset(m[0].length, false);
        this.addBlock(FOOT);
        this.findNextNonspace();
        this.advanceNextNonspace();
        return 1;
      }
    }
    // table delimiter row under a paragraph (GFM); new containers (`- | -`) win
    if (inPara && !indented && (c === 124 || c === 58 || c === 45)) {
      const para = container;
      const size = delimiterCells(text, nn, le);
      if (size > 0) {
        const pl = para.pl;
        const last = pl.length - 5;
        const hs = pl[last]!;
        const he = pl[last + 1]!;
        if (pl[last + 4]! < 4 && headerCells(text, hs, he) === size) {
          this.closeUnmatched();
          this.stack.pop();
          // the paragraph without its last line stays a paragraph
          const header = { s: hs, e: he, line: pl[last + 2]!, lstart: pl[last + 3]! };
          pl.length = last;
          if (pl.length > 0) {
            this.stack.push(para);
            this.finalize(this.stack.pop()!);
          } else if (para.ownerItem) {
            para.ownerItem.firstChildPara = -1;
          }
          this.stack.push(new Blk(TABLE));
          this.tableRowAt(header.s, header.e, header.line, header.lstart);
          return 3;
        }
      }
    }
    // indented code
    if (indented && this.stack[this.stack.length - 1]!.k !== PARA && !this.blank) {
      this.advanceOffset(4, true);
      const closesSome = (!this.allClosed && this.stack.length > this.lastMatched) || this.emptyItemClosed;
      const b = this.addBlock(INDENTED);
      if (closesSome) b.lazyStartLine = this.lineNo;
      this.codeFrom = this.offset;
      return 2;
    }
    return 0;
  }

  listItemStart(container: Blk): boolean {
    const text = this.text;
    const nn = this.nextNonspace;
    const le = this.le;
    let markerLen: number;
    const inPara = this.interrupt;
    void container;
    const c0 = text.charCodeAt(nn);
    if (c0 === 45 || c0 === 42 || c0 === 43) markerLen = 1;
    else {
      let k = nn;
      while (k < le && k - nn < 9 && text.charCodeAt(k) >= 48 && text.charCodeAt(k) <= 57) k++;
      const d = text.charCodeAt(k);
      if (k === nn || k >= le || (d !== 46 && d !== 41)) return false;
      if (inPara && !(k === nn + 1 && c0 === 49)) return false;
      markerLen = k + 1 - nn;
    }
    const after = nn + markerLen;
    if (after < le) {
      const d = text.charCodeAt(after);
      if (d !== 32 && d !== 9) return false;
    }
    if (inPara && !/[^ \t]/.test(text.slice(after, le))) return false;
    const markerOffset = this.indent;
    this.advanceNextNonspace();
    this.advanceOffset(markerLen, true);
    const spacesStartCol = this.column;
    const spacesStartOffset = this.offset;
    let nextc: number;
    do {
      this.advanceOffset(1, true);
      nextc = this.offset < le ? text.charCodeAt(this.offset) : -1;
    } while (this.column - spacesStartCol < 5 && (nextc === 32 || nextc === 9));
    const blankItem = this.offset >= le;
    const spacesAfter = this.column - spacesStartCol;
    let padding: number;
    if (spacesAfter >= 5 || spacesAfter < 1 || blankItem) {
      padding = markerLen + 1;
      this.column = spacesStartCol;
      this.offset = spacesStartOffset;
      this.partial = false;
      const d = this.offset < le ? text.charCodeAt(this.offset) : -1;
      if (d === 32 || d === 9) this.advanceOffset(1, true);
    } else {
      padding = markerLen + spacesAfter;
    }
    const b = this.addBlock(ITEM);
    let depth = 0;
    let parentTaskLine: number | null = null;
    for (let i = this.stack.length - 2; i >= 0; i--) {
      const s = this.stack[i]!;
      if (s.k === ITEM) {
        depth++;
        if (parentTaskLine === null && s.taskConfirmed) parentTaskLine = s.task!.line;
      }
    }
    b.markerOffset = markerOffset;
    b.padding = padding;
    b.line = this.lineNo;
    b.depth = depth;
    b.parentTaskLine = parentTaskLine;
    // word count: the marker is not a word
    this.wordExcl[this.wordExclN++] = nn;
    this.wordExcl[this.wordExclN++] = nn + markerLen;
    // a checkbox right after the marker?
    if (!blankItem) {
      const cs = this.nextContentStart();
      const cb = text.charCodeAt(cs) === 91 ? RE_CHECKBOX.exec(text.slice(cs, Math.min(le, cs + 6))) : null;
      const after = cb ? cs + cb[0].length : 0;
      // One read of the character after the checkbox (a second read for a tab, met rarely, deoptimized).
      // The tab is tested first, so that every checkbox runs both tests (see `lazy` in processLine).
      const d = cb && after < le ? text.charCodeAt(after) : 32;
      if (cb && (d === 9 || d === 32)) {
        const status = cb[1]!;
        b.taskCheckbox = cb[0];
        b.task = {
          line: this.lineNo,
          status,
          checked: status === 'x' || status === 'X',
          cancelled: status === '-',
          text: text.slice(cs + cb[0].length, le).trim(),
          blockId: null,
          due: null,
          depth,
          parentTaskLine,
        };
      }
    }
    return true;
  }

  /** Where the item content starts on this line (after any spaces). */
  nextContentStart(): number {
    let i = this.offset;
    while (i < this.le) {
      const c = this.text.charCodeAt(i);
      if (c !== 32 && c !== 9) break;
      i++;
    }
    return i;
  }

  startParagraph(): void {
    const s = this.offset;
    const indent = this.lineIndent;
    const b = this.addBlock(PARA);
    this.pushParaLine(b, s, indent);
  }

  addParaLine(b: Blk): void {
    this.findNextNonspace();
    this.pushParaLine(b, this.nextNonspace, this.lineIndent);
  }

  pushParaLine(b: Blk, s: number, indent: number): void {
    const text = this.text;
    let e = this.le;
    while (e > s && (text.charCodeAt(e - 1) === 32 || text.charCodeAt(e - 1) === 9)) e--;
    b.pl.push(s, e, this.lineNo, this.ls, indent);
  }

  // ---------------------------------------------------------------- leaves

  /**
   * Drop the link reference definitions (one line each) that start a
   * paragraph; returns false when nothing is left.
   */
  stripDefinitions(b: Blk): boolean {
    const text = this.text;
    let k = 0;
    const pl = b.pl;
    if (text.charCodeAt(pl[0]!) === 91) {
      let content = '';
      for (let i = 0; i < pl.length; i += 5) content += (i ? '\n' : '') + text.slice(pl[i]!, pl[i + 1]!);
      k = definitionLines(content, this.definedLabels);
    }
    if (k > 0) {
      pl.splice(0, 5 * k);
    }
    if (pl.length === 0) {
      if (b.ownerItem) b.ownerItem.firstChildPara = -1;
      return false;
    }
    return true;
  }

  finalize(b: Blk): void {
    if (b.k === PARA) {
      if (this.stripDefinitions(b)) this.finalizeParagraph(b);
    }
    else if (b.k === ITEM) {
      if (b.task && b.firstChildPara < 0) b.task = null;
    }
  }

  paraSegment(b: Blk): Segment {
    const text = this.text;
    const pl = b.pl;
    const nl = pl.length / 5;
    if (nl === 1) return this.singleSegment(pl[0]!, pl[1]!, pl[2]!, pl[3]!);
    const seg = this.seg;
    const { segStarts, srcStarts, lineNos, lineStartOffs } = seg;
    let p = '';
    for (let i = 0; i < nl; i++) {
      if (i > 0) p += '\n';
      segStarts[i] = p.length;
      p += text.slice(pl[5 * i]!, pl[5 * i + 1]!);
      srcStarts[i] = pl[5 * i]!;
      lineNos[i] = pl[5 * i + 2]!;
      lineStartOffs[i] = pl[5 * i + 3]!;
    }
    seg.n = nl;
    seg.p = p;
    return seg;
  }

  singleSegment(s: number, e: number, lineNo = this.lineNo, lineStart = this.ls): Segment {
    const seg = this.seg;
    seg.p = this.text.slice(s, e);
    seg.segStarts[0] = 0;
    seg.srcStarts[0] = s;
    seg.lineNos[0] = lineNo;
    seg.lineStartOffs[0] = lineStart;
    seg.n = 1;
    return seg;
  }

  finalizeParagraph(b: Blk): void {
    const seg = this.paraSegment(b);
    const inline = this.inline;
    inline.scan(seg);
    const item = b.ownerItem;
    let anchor: BlockAnchor | null = null;
    const idx = inline.trailingBlockId();
    if (idx >= 0) {
      inline.locate(seg, idx);
      anchor = { id: inline.slice(idx + 1, inline.idEnd), line: inline.locLine, column: inline.locColumn };
      this.blocks.push(anchor);
    }
    if (item && item.firstChildPara === b.serial && item.task) {
      const task = item.task;
      if (anchor && anchor.line === task.line) {
        const m = TRAILING_ID_RE.exec(task.text);
        if (m && m[1] === anchor.id) {
          task.blockId = anchor.id;
          task.text = task.text.slice(0, m.index).trim();
        }
      }
      task.due = findDue(task.text);
      this.tasks.push(task);
      item.taskConfirmed = true;
      this.wordCount -= countWords(item.taskCheckbox);
    }
  }

  setextHeading(para: Blk, level: number): void {
    const text = this.text;
    const parts: string[] = [];
    const pl = para.pl;
    for (let i = 0; i < pl.length; i += 5) parts.push(text.slice(pl[i]!, pl[i + 1]!).trim());
    this.headings.push({ level, text: parts.join(' '), line: pl[2]! });
    this.inline.scan(this.paraSegment(para));
    if (para.ownerItem) para.ownerItem.firstChildPara = -1;
  }

  tableRow(s: number, e: number): void {
    this.tableRowAt(s, e, this.lineNo, this.ls);
  }

  /** Scan each cell of a table row as phrasing content. */
  tableRowAt(s: number, e: number, lineNo: number, lineStart: number): void {
    const text = this.text;
    while (e > s && (text.charCodeAt(e - 1) === 32 || text.charCodeAt(e - 1) === 9)) e--;
    let i = s;
    if (text.charCodeAt(i) === 124) i++;
    let cellStart = i;
    for (; i <= e; i++) {
      const c = i < e ? text.charCodeAt(i) : 124;
      if (c === 92 && i + 1 < e) {
        const d = text.charCodeAt(i + 1);
        if (d === 92 || d === 124) {
          i++;
          continue;
        }
      }
      if (c === 124) {
        let cs = cellStart;
        let ce = i;
        while (cs < ce && (text.charCodeAt(cs) === 32 || text.charCodeAt(cs) === 9)) cs++;
        while (ce > cs && (text.charCodeAt(ce - 1) === 32 || text.charCodeAt(ce - 1) === 9)) ce--;
        if (ce > cs) this.inline.scan(this.singleSegment(cs, ce, lineNo, lineStart));
        cellStart = i + 1;
      }
    }
  }
  raw(): RawFacts {
    return {
      frontmatterRange: this.frontmatterRange,
      frontmatterRaw: this.frontmatterRaw,
      tagOccurrences: this.inline.tagOccurrences,
      headings: this.headings,
      blocks: this.blocks,
      links: this.inline.links,
      tasks: this.tasks,
      wordCount: this.wordCount,
    };
  }
}

/** ` {0,3}(=+|-+)[ \t]*` from `i` (indentation already skipped). */
function isSetextUnderline(text: string, i: number, le: number): boolean {
  const ch = text.charCodeAt(i);
  while (i < le && text.charCodeAt(i) === ch) i++;
  while (i < le && (text.charCodeAt(i) === 32 || text.charCodeAt(i) === 9)) i++;
  return i >= le;
}

/** Three or more of the same `*`, `-` or `_`, with only spaces/tabs between. */
function isThematicBreak(text: string, i: number, le: number): boolean {
  const ch = text.charCodeAt(i);
  let count = 0;
  for (; i < le; i++) {
    const c = text.charCodeAt(i);
    if (c === ch) count++;
    else if (c !== 32 && c !== 9) return false;
  }
  return count >= 3;
}

/** GFM table: number of cells in a delimiter row, or 0 when it is not one. */
function delimiterCells(text: string, s: number, e: number): number {
  let i = s;
  let cells = 0;
  let seen = false;
  const skipWs = () => {
    while (i < e && (text.charCodeAt(i) === 32 || text.charCodeAt(i) === 9)) i++;
  };
  if (text.charCodeAt(i) === 124) {
    seen = true;
    i++;
  }
  for (;;) {
    skipWs();
    if (i >= e) break;
    let c = text.charCodeAt(i);
    if (c === 58) {
      seen = true;
      i++;
      c = text.charCodeAt(i);
      if (c !== 45) return 0;
    }
    if (c !== 45) return 0;
    while (i < e && text.charCodeAt(i) === 45) i++;
    if (i < e && text.charCodeAt(i) === 58) {
      seen = true;
      i++;
    }
    cells++;
    skipWs();
    if (i >= e) break;
    if (text.charCodeAt(i) !== 124) return 0;
    seen = true;
    i++;
  }
  return seen ? cells : 0;
}

/** GFM table: the number of cells micromark counts in a header row (0 when it cannot be one). */
function headerCells(text: string, s: number, e: number): number {
  let i = s;
  let size = 0;
  let sizeB = 0;
  let seen = false;
  if (i < e && text.charCodeAt(i) !== 124) {
    seen = true;
    sizeB++;
  }
  while (i < e) {
    const c = text.charCodeAt(i);
    if (c === 32 || c === 9) {
      i++;
      continue;
    }
    sizeB++;
    if (seen) {
      seen = false;
      size++;
    }
    if (c === 124) {
      seen = true;
      i++;
      continue;
    }
    // data
    while (i < e) {
      const d = text.charCodeAt(i);
      if (d === 124 || d === 32 || d === 9) break;
      if (d === 92 && i + 1 < e) {
        const f = text.charCodeAt(i + 1);
        if (f === 92 || f === 124) {
          i += 2;
          continue;
        }
      }
      i++;
    }
  }
  return sizeB > 1 ? size : 0;
}
