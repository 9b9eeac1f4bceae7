/**
 * The full-text tokenizer: the terms of a field and its MiniSearch field
 * length, exactly as `text.split(TOKEN_SEPARATORS)` followed by lowercasing
 * and dropping empty tokens would give them, in one pass over the text.
 *
 * The split, `toLowerCase` of every token and a Set of the tokens cost ~4x
 * what this does: the text is scanned by code unit against a table of
 * classes, and most tokens are found in a cache of recent terms. The table
 * is derived from the regex itself (never from a hand-written copy of it),
 * so the regex stays the one definition of what separates words.
 */

/**
 * Words split at spaces and punctuation (MiniSearch's default) and also at
 * the ASCII symbols Markdown uses as syntax (`|` of wikilink aliases and
 * tables, `^` block ids, `~~`, `==`, backticks, `<>`, `+`, `$`), so that
 * `[[Note|label]]` yields `note` and `label` rather than `note|label`.
 * Tab and the other control characters are not separators.
 */
export const TOKEN_SEPARATORS = /[\n\r\p{Z}\p{P}|^~=+<>`$]+/u;

/** Whether a string (here: one code point) is made of separators only. */
const ALL_SEPARATORS = new RegExp(`^(?:${TOKEN_SEPARATORS.source})$`, TOKEN_SEPARATORS.flags);

/** Classes of a code point; a token's classes are OR-ed, so they are bits. 0 = not classified yet. */
const SEP = 1;
/** Part of a word and unchanged by `toLowerCase`. */
const PLAIN = 2;
/** Part of a word and changed by `toLowerCase`. */
const CASED = 4;

/**
 * `toLowerCase` maps each code point on its own (the Unicode default case
 * conversion), except Σ whose lowercase depends on its neighbours; Σ is
 * CASED on its own anyway. So a token made of PLAIN code points only is
 * its own lowercase, and `toLowerCase` (the next most expensive step) is
 * called only for tokens with a CASED code point.
 */
function classify(s: string): number {
  if (ALL_SEPARATORS.test(s)) return SEP;
  return s.toLowerCase() === s ? PLAIN : CASED;
}

/**
 * Class of every BMP code unit, filled on first sight: a vault uses a few
 * hundred distinct characters, so the regex runs a few hundred times in all.
 * ASCII is filled now so the hot path never leaves the table. High
 * surrogates stay 0 because their class depends on the next code unit.
 */
const BMP = new Uint8Array(0x10000);
for (let c = 0; c < 0x80; c++) BMP[c] = classify(String.fromCharCode(c));
/**
 * Classes of astral code points (emoji, historic scripts; astral
 * punctuation such as U+10100 exists), by code point - 0x10000. A table
 * rather than a map: 1 MB at most however many code points a text uses,
 * allocated by the first astral code point.
 */
let astral: Uint8Array | undefined;

/** Class of the code point at `i`, whose first code unit `c` is not classified in BMP. */
function classifySlow(text: string, i: number, c: number): number {
  if (c >= 0xd800 && c <= 0xdbff) {
    const d = text.charCodeAt(i + 1);
    if (d >= 0xdc00 && d <= 0xdfff) {
      const j = ((c - 0xd800) << 10) + (d - 0xdc00);
      astral ??= new Uint8Array(0x100000);
      return astral[j] || (astral[j] = classify(String.fromCodePoint(j + 0x10000)));
    }
    // A lone high surrogate is a code point of its own to the `u` regex;
    // not cached, since the same code unit is a pair elsewhere.
    return classify(String.fromCharCode(c));
  }
  // A low surrogate is classified alone: after a high one, the pair's class
  // was already taken at the high one, and PLAIN (what a lone low surrogate
  // is) adds nothing to it.
  return (BMP[c] = classify(String.fromCharCode(c)));
}

/**
 * V8 makes a slice of 13+ code units a view that keeps the whole text
 * alive; an index term must not pin its note, so such terms are copied
 * (flattening a fresh cons string, see detach.ts). Shorter slices are
 * copies already.
 */
const SLICE_MIN = 13;

/**
 * Terms of recent short tokens, by hash of the raw token: a vault's words
 * are mostly the same few thousand, so most tokens are found here and cost
 * neither a slice nor a `toLowerCase` (which is slow on the two-byte
 * strings most notes are, ~100 ns). The terms are shared by every note
 * that has them, and their hash is cached by V8 once a map has hashed
 * them, so the caller's term maps do not hash them again. Only short
 * tokens are cached, which bounds the memory held to under 2 MB.
 * Direct-mapped: a collision just replaces the entry.
 */
export const CACHE_SIZE = 1 << 14;
const cacheHash = new Int32Array(CACHE_SIZE);
const cacheRaw: string[] = new Array<string>(CACHE_SIZE).fill('');
const cacheTerm: string[] = new Array<string>(CACHE_SIZE).fill('');
/** The call (`call`) that last met each entry's token, to count distinct tokens without a set. */
const cacheCall = new Int32Array(CACHE_SIZE);
/** Where, in a counting call (`tokenizeCounted`), each entry met in it has its count. */
const cacheSlot = new Int32Array(CACHE_SIZE);
let call = 0;

/**
 * FNV-1a over the raw token. Not seeded: tokens crafted to collide can only
 * make each other miss the cache, which costs what the split costs.
 */
const FNV_BASIS = 0x811c9dc5 | 0;
const FNV_PRIME = 0x01000193;

/**
 * Appends the terms of `text` (lowercased, non-empty, in order) to `out`;
 * returns the field length.
 *
 * The field length is MiniSearch's: `new Set(text.split(TOKEN_SEPARATORS)).size`,
 * distinct tokens before lowercasing, with the empty token counted when the
 * split has one (text empty, or starting or ending with a separator), so
 * "Note note" has length 2 and "a," has length 2.
 */
export function tokenizeInto(text: string, out: string[]): number {
  return tokenize(text, out, null, null);
}

/**
 * `tokenizeInto`, counted: each term once with its number of occurrences
 * in `counts`, in order of first occurrence, except that a term may come
 * more than once (from different spellings, such as `Note` and `note`, or
 * when the cache could not keep it): the caller adds the counts up. What an
 * index needs, at a fraction of the cost of counting every token itself.
 *
 * `slots` gets, for each term, the cache entry it came from (0 to
 * CACHE_SIZE - 1), or -1 for a term the cache does not keep: a caller that
 * numbers terms can remember each entry's number, and find most terms'
 * numbers without hashing them again (see TermPostings).
 */
export function tokenizeCounted(text: string, terms: string[], counts: number[], slots: number[], from = 0): number {
  return tokenize(text, terms, counts, slots, from);
}

/**
 * `text` from `from` on: what `text.slice(from)` would give, without the
 * slice (V8 makes it a view of `text`, and reading a view character by
 * character cost ~12 % of tokenizing a note's body).
 */
function tokenize(text: string, out: string[], counts: number[] | null, slots: number[] | null, from = 0): number {
  if (++call === 0x7fffffff) {
    call = 1;
    cacheCall.fill(0);
  }
  // Each distinct raw token is counted once, where it first occurs: a short
  // one is known as met by the stamp of its cache entry (its only possible
  // entry, the hash being fixed), and an entry stamped in this call that is
  // replaced leaves its token in `met`; a long one is kept in `met`.
  let distinct = 0;
  let met: Set<string> | undefined;
  const n = text.length;
  let first = -1; // start of the first token, `from` unless the text starts with separators
  let end = from; // end of the last token, n unless the text ends with separators
  let i = from;
  for (;;) {
    let c = 0;
    let k = SEP;
    while (i < n) {
      c = text.charCodeAt(i);
      k = BMP[c]!;
      if (k === 0) k = classifySlow(text, i, c);
      if (k !== SEP) break;
      i++;
      // A separator pair: its low surrogate alone would start a word.
      if (c >= 0xd800 && c <= 0xdbff) {
        const d = text.charCodeAt(i);
        if (d >= 0xdc00 && d <= 0xdfff) i++;
      }
    }
    if (i >= n) break;

    const start = i;
    if (first < 0) first = start;
    let kinds = k;
    let h = Math.imul(FNV_BASIS ^ c, FNV_PRIME);
    // A low surrogate after a high one is PLAIN, so the pair's class is the
    // one taken at its high surrogate.
    while (++i < n) {
      c = text.charCodeAt(i);
      k = BMP[c]!;
      if (k === 0) k = classifySlow(text, i, c);
      if (k === SEP) break;
      kinds |= k;
      h = Math.imul(h ^ c, FNV_PRIME);
    }
    end = i;
    const len = i - start;

    if (len < SLICE_MIN) {
      h ^= h >>> 15;
      h = Math.imul(h, 0x2c1b3c6d);
      h ^= h >>> 12;
      const e = h & (CACHE_SIZE - 1);
      const cached = cacheRaw[e]!;
      if (cacheHash[e] === h && cached.length === len) {
        let q = 0;
        while (q < len && text.charCodeAt(start + q) === cached.charCodeAt(q)) q++;
        if (q === len) {
          if (cacheCall[e] !== call) {
            cacheCall[e] = call;
            distinct++;
            if (counts !== null) {
              cacheSlot[e] = counts.length;
              counts.push(1);
              slots!.push(e);
            }
            out.push(cacheTerm[e]!);
          } else if (counts !== null) {
            counts[cacheSlot[e]!]!++;
          } else {
            out.push(cacheTerm[e]!);
          }
          continue;
        }
      }
      if (cacheCall[e] === call) (met ??= new Set()).add(cached);
      const raw = text.slice(start, i);
      const term = kinds & CASED ? raw.toLowerCase() : raw;
      if (met === undefined || !met.has(raw)) distinct++;
      cacheHash[e] = h;
      cacheRaw[e] = raw;
      cacheTerm[e] = term;
      cacheCall[e] = call;
      if (counts !== null) {
        cacheSlot[e] = counts.length;
        counts.push(1);
        slots!.push(e);
      }
      out.push(term);
    } else {
      const raw = text.slice(start, i);
      met ??= new Set();
      if (!met.has(raw)) {
        met.add(raw);
        distinct++;
      }
      const term = kinds & CASED ? raw.toLowerCase() : raw;
      // A changed lowercase is a new flat string; an unchanged one may be `raw` itself.
      out.push(term !== raw ? term : (' ' + term).slice(1));
      if (counts !== null) {
        counts.push(1);
        slots!.push(-1);
      }
    }
  }
  // split() returns an empty token for a text that is empty, or that starts or ends with separators.
  return distinct + (first !== from || end !== n ? 1 : 0);
}

/** The terms of a search query, in order (same rules as `tokenizeInto`). */
export function queryTerms(text: string): string[] {
  const out: string[] = [];
  tokenizeInto(text, out);
  return out;
}
