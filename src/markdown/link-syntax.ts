/**
 * Link syntax of CommonMark the fact extractor needs, as pure functions over
 * a string: the tail of an inline link (`](dest "title")`), reference link
 * labels and their normalization, and link reference definitions at the
 * start of a paragraph. Wikilinks are Obsidian syntax: common.ts parses their
 * inside, inline-syntax.ts finds them.
 */

const ASCII_PUNCT = new Uint8Array(128);
for (const ch of '!"#$%&\'()*+,-./:;<=>?@[\\]^_`{|}~') ASCII_PUNCT[ch.charCodeAt(0)] = 1;

const NAMED_REFS: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: '\u00a0' };

/** An ASCII punctuation character: the ones a backslash escapes. */
export function isPunct(c: number): boolean {
  return c < 128 && ASCII_PUNCT[c] === 1;
}

/** Decode a link destination like mdast's `url`: backslash escapes and character references. */
function decodeDestination(s: string): string {
  if (!s.includes('\\') && !s.includes('&')) return s;
  let out = '';
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 92 && i + 1 < s.length && isPunct(s.charCodeAt(i + 1))) {
      out += s[i + 1];
      i++;
    } else if (c === 38) {
      const m = /^&(?:#[xX]([0-9a-fA-F]{1,6})|#([0-9]{1,7})|([A-Za-z][A-Za-z0-9]{0,31}));/.exec(s.slice(i));
      let rep: string | null = null;
      if (m) {
        if (m[1] !== undefined || m[2] !== undefined) {
          let cp = m[1] !== undefined ? parseInt(m[1], 16) : parseInt(m[2]!, 10);
          if (cp === 0 || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) cp = 0xfffd;
          rep = String.fromCodePoint(cp);
        } else rep = NAMED_REFS[m[3]!] ?? null;
      }
      if (m && rep !== null) {
        out += rep;
        i += m[0].length - 1;
      } else out += '&';
    } else out += s[i];
  }
  return out;
}

function skipLinkWs(p: string, k: number): number {
  const n = p.length;
  while (k < n) {
    const c = p.charCodeAt(k);
    if (c === 32 || c === 9 || c === 10 || c === 13) k++;
    else break;
  }
  return k;
}

/**
 * End of the link destination at `i` (`<...>`, or bare with balanced parentheses), or -1.
 * Parentheses nest at most `maxDepth` deep: micromark allows 32 in an inline link and any
 * depth in a definition.
 */
function destinationEnd(s: string, i: number, maxDepth: number): number {
  const n = s.length;
  if (s.charCodeAt(i) === 60) {
    for (let k = i + 1; k < n; k++) {
      const c = s.charCodeAt(k);
      if (c === 92 && k + 1 < n && isPunct(s.charCodeAt(k + 1))) k++;
      else if (c === 10 || c === 13 || c === 60) return -1;
      else if (c === 62) return k + 1;
    }
    return -1;
  }
  let k = i;
  let depth = 0;
  while (k < n) {
    const c = s.charCodeAt(k);
    if (c === 92 && k + 1 < n && isPunct(s.charCodeAt(k + 1))) {
      k += 2;
      continue;
    }
    if (c <= 32 || c === 127) break;
    if (c === 40) {
      if (++depth > maxDepth) return -1;
    } else if (c === 41) {
      if (depth === 0) break;
      depth--;
    }
    k++;
  }
  return k === i || depth !== 0 ? -1 : k;
}

/** Parse `(dest "title")` after `](`; `i` is just past `(`. */
export function parseLinkTail(p: string, i: number): { end: number; url: string } | null {
  const n = p.length;
  let j = skipLinkWs(p, i);
  if (j >= n) return null;
  if (p.charCodeAt(j) === 41) return { end: j + 1, url: '' };
  const end = destinationEnd(p, j, 32);
  if (end < 0) return null;
  const url = p.charCodeAt(j) === 60 ? p.slice(j + 1, end - 1) : p.slice(j, end);
  j = end;
  const beforeTitle = j;
  j = skipLinkWs(p, j);
  if (j > beforeTitle && j < n) {
    const q = p.charCodeAt(j);
    if (q === 34 || q === 39 || q === 40) {
      const close = q === 40 ? 41 : q;
      let k = j + 1;
      for (;;) {
        if (k >= n) return null;
        const c = p.charCodeAt(k);
        if (c === 92 && k + 1 < n && isPunct(p.charCodeAt(k + 1))) {
          k += 2;
          continue;
        }
        if (c === close) break;
        if (q === 40 && c === 40) return null;
        k++;
      }
      j = skipLinkWs(p, k + 1);
    }
  }
  if (j < n && p.charCodeAt(j) === 41) return { end: j + 1, url: decodeDestination(url) };
  return null;
}

/** Link label matching: collapse whitespace, trim, case-fold. */
export function normalizeLabel(s: string): string {
  return s.replace(/[\t\n\r ]+/g, ' ').replace(/^ | $/g, '').toLowerCase().toUpperCase();
}

/** Length of a link label `[...]` at `i` (brackets included), or 0. */
export function linkLabelLength(p: string, i: number): number {
  const n = p.length;
  let k = i + 1;
  while (k < n && k - i <= 1000) {
    const c = p.charCodeAt(k);
    if (c === 92 && k + 1 < n && isPunct(p.charCodeAt(k + 1))) {
      k += 2;
      continue;
    }
    if (c === 91) return 0;
    if (c === 93) return k + 1 - i;
    k++;
  }
  return 0;
}

/** Skip spaces/tabs and at most one line ending (CommonMark `spnl`). */
function spnl(s: string, i: number): number {
  while (s.charCodeAt(i) === 32 || s.charCodeAt(i) === 9) i++;
  if (s.charCodeAt(i) === 10) {
    i++;
    while (s.charCodeAt(i) === 32 || s.charCodeAt(i) === 9) i++;
  }
  return i;
}

/**
 * How many whole lines at the start of a paragraph's content (lines joined
 * by '\n') are link reference definitions, which carry no facts.
 */
export function definitionLines(s: string, labels: Set<string>): number {
  let pos = 0;
  let lines = 0;
  const n = s.length;
  for (;;) {
    if (s.charCodeAt(pos) !== 91) return lines;
    // label
    let i = pos + 1;
    let nonBlank = false;
    for (;;) {
      if (i >= n || i - pos > 1000) return lines;
      const c = s.charCodeAt(i);
      if (c === 92 && i + 1 < n && isPunct(s.charCodeAt(i + 1))) {
        nonBlank = true;
        i += 2;
        continue;
      }
      if (c === 91) return lines;
      if (c === 93) break;
      if (c !== 32 && c !== 9 && c !== 10) nonBlank = true;
      i++;
    }
    if (!nonBlank || s.charCodeAt(i + 1) !== 58) return lines;
    const label = s.slice(pos + 1, i);
    i = spnl(s, i + 2);
    const end = destinationEnd(s, i, Infinity);
    if (end < 0) return lines;
    i = end;
    const beforeTitle = i;
    let j = spnl(s, i);
    let titled = false;
    if (j > beforeTitle) {
      const q = s.charCodeAt(j);
      if (q === 34 || q === 39 || q === 40) {
        const close = q === 40 ? 41 : q;
        let k = j + 1;
        let ok = false;
        while (k < n) {
          const c = s.charCodeAt(k);
          if (c === 92 && k + 1 < n && isPunct(s.charCodeAt(k + 1))) {
            k += 2;
            continue;
          }
          if (c === close) {
            ok = true;
            break;
          }
          if (q === 40 && c === 40) break;
          if (c === 10 && s.charCodeAt(k + 1) === 10) break;
          k++;
        }
        if (ok) {
          j = k + 1;
          titled = true;
        }
      }
    }
    if (!titled) j = beforeTitle;
    let e = j;
    while (s.charCodeAt(e) === 32 || s.charCodeAt(e) === 9) e++;
    if (e < n && s.charCodeAt(e) !== 10) {
      if (!titled) return lines;
      // the title is not alone: the definition ends after the destination
      e = beforeTitle;
      while (s.charCodeAt(e) === 32 || s.charCodeAt(e) === 9) e++;
      if (e < n && s.charCodeAt(e) !== 10) return lines;
    }
    // consumed through the line ending at e
    labels.add(normalizeLabel(label));
    for (let k = pos; k < e; k++) if (s.charCodeAt(k) === 10) lines++;
    lines++;
    if (e >= n) return lines;
    pos = e + 1;
  }
}
