/**
 * Renaming a tag inside one note's text, touching only the tag's own
 * characters. Inline `#tags` are found through the facts' `tagOccurrences`
 * (exact source offsets, so nothing inside code spans, code blocks, links or
 * URLs is touched); frontmatter `tags` / `tag` values are edited inside their
 * YAML scalars, keeping quoting, list style and comments. Nested tags follow
 * their parent (`#a/b` becomes `#x/b` when `a` becomes `x`); matching is
 * case-insensitive; the new spelling is written as given.
 */
import type { Scalar } from 'yaml';
import { yaml as yamlPackage } from '../core/yaml.js';
import { AppError } from '../core/errors.js';
import { dedupeTags, isValidTag } from '../markdown/common.js';
import { extractFacts } from '../markdown/extract.js';
import type { NoteFacts } from '../markdown/facts.js';
import { parseYamlDocument } from '../markdown/yaml-limits.js';
import { editFrontmatter } from '../notes/frontmatter.js';

export interface LineChange {
  /** 1-based line in the file before the change. */
  line: number;
  before: string;
  after: string;
}

export interface TextRename {
  text: string;
  changes: LineChange[];
  /** Tags renamed (inline occurrences plus frontmatter values). */
  occurrences: number;
}

/** A tag as given in a request: trimmed, without a leading `#`, valid. */
export function normalizeTag(raw: string, field: string): string {
  const t = raw.trim().replace(/^#+/, '');
  if (!isValidTag(t)) {
    throw new AppError('bad_request', `"${raw}" is not a valid tag (letters, digits, _, -, / for nesting; not only digits)`, {
      details: { field },
    });
  }
  return t;
}

/** True when `tag` is `old` or nested below it, ignoring case. */
export function matchesTag(tag: string, oldLower: string): boolean {
  const head = tag.slice(0, oldLower.length).toLowerCase();
  return head === oldLower && (tag.length === oldLower.length || tag[oldLower.length] === '/');
}

const renamed = (tag: string, oldLen: number, newTag: string) => newTag + tag.slice(oldLen);

interface Edit {
  start: number;
  end: number;
  text: string;
}

function applyEdits(text: string, edits: Edit[]): string {
  let out = text;
  for (const e of [...edits].sort((a, b) => b.start - a.start)) out = out.slice(0, e.start) + e.text + out.slice(e.end);
  return out;
}

/** Where the YAML between the fences sits (as editFrontmatter finds it). */
function innerRange(text: string, range: { start: number; end: number }): { start: number; end: number } {
  const block = text.slice(range.start, range.end);
  const firstEol = block.search(/\r?\n/);
  const start = range.start + firstEol + (block[firstEol] === '\r' ? 2 : 1);
  const closing = /(^|\r?\n)(---|\.\.\.)[ \t]*(\r?\n)?$/.exec(block);
  const end = closing ? range.start + closing.index + closing[1]!.length : range.end;
  return { start, end };
}

/** The frontmatter tag list after the rename (what the facts should say afterwards). */
function expectedFrontmatterTags(facts: NoteFacts, oldLower: string, oldLen: number, newTag: string): string[] {
  return dedupeTags(facts.frontmatterTags.map((t) => (matchesTag(t, oldLower) ? renamed(t, oldLen, newTag) : t)));
}

/** Edits inside the YAML scalars of `tags` / `tag`; null when the YAML has a shape we do not edit in place. */
function surgicalFrontmatter(text: string, facts: NoteFacts, oldLower: string, oldLen: number, newTag: string): { edits: Edit[]; count: number } | null {
  const inner = innerRange(text, facts.frontmatterRange!);
  const yaml = text.slice(inner.start, inner.end);
  const doc = parseYamlDocument(yaml);
  if (doc.errors.length > 0 || !yamlPackage().isMap(doc.contents)) return null;
  const edits: Edit[] = [];
  let count = 0;
  const editScalar = (node: Scalar, split: boolean) => {
    if (typeof node.value !== 'string' || !node.range) return;
    const src = yaml.slice(node.range[0], node.range[1]);
    // Tokens of the value as written; in the source they appear literally unless escaped (then we give up below).
    const tokens = split ? node.value.split(/[\s,]+/u) : [node.value.trim()];
    let from = 0;
    for (const tok of tokens) {
      const bare = tok.replace(/^#+/u, '');
      const hashes = tok.length - bare.length;
      const at = src.indexOf(tok, from);
      if (at < 0) {
        if (matchesTag(bare, oldLower)) throw new Error('escaped');
        continue;
      }
      from = at + tok.length;
      if (!isValidTag(bare) || !matchesTag(bare, oldLower)) continue;
      const start = inner.start + node.range[0] + at + hashes;
      edits.push({ start, end: start + oldLen, text: newTag });
      count++;
    }
  };
  try {
    for (const pair of doc.contents.items) {
      if (!yamlPackage().isScalar(pair.key) || (pair.key.value !== 'tags' && pair.key.value !== 'tag')) continue;
      const v = pair.value;
      if (yamlPackage().isSeq(v)) {
        for (const item of v.items) if (yamlPackage().isScalar(item)) editScalar(item, false);
      } else if (yamlPackage().isScalar(v)) {
        editScalar(v, true);
      }
    }
  } catch {
    return null;
  }
  return { edits, count };
}

function splitLines(s: string): string[] {
  return s.split(/\r\n|\n|\r/);
}

/** Line-level before/after of two texts whose bodies have the same number of lines. */
function lineChanges(before: string, after: string, headBefore: number, headAfter: number): LineChange[] {
  const out: LineChange[] = [];
  const a = splitLines(before);
  const b = splitLines(after);
  const ha = a.slice(0, headBefore);
  const hb = b.slice(0, headAfter);
  if (ha.length === hb.length) {
    for (let i = 0; i < ha.length; i++) if (ha[i] !== hb[i]) out.push({ line: i + 1, before: ha[i]!, after: hb[i]! });
  } else {
    // The frontmatter was re-rendered with another number of lines: report the differing block as one change.
    let s = 0;
    while (s < ha.length && s < hb.length && ha[s] === hb[s]) s++;
    let ea = ha.length;
    let eb = hb.length;
    while (ea > s && eb > s && ha[ea - 1] === hb[eb - 1]) {
      ea--;
      eb--;
    }
    out.push({ line: s + 1, before: ha.slice(s, ea).join('\n'), after: hb.slice(s, eb).join('\n') });
  }
  const ba = a.slice(headBefore);
  const bb = b.slice(headAfter);
  for (let i = 0; i < ba.length; i++) if (ba[i] !== bb[i]) out.push({ line: headBefore + i + 1, before: ba[i]!, after: bb[i] ?? '' });
  return out;
}

const linesIn = (s: string) => (s === '' ? 0 : splitLines(s).length - 1);

/**
 * Renames `oldTag` (and tags nested below it) to `newTag` in a note's text.
 * Returns null when the note does not use the tag. Throws 409 when only a
 * frontmatter that is not valid YAML holds the tag.
 */
export function renameInText(text: string, path: string, oldTag: string, newTag: string): TextRename | null {
  const oldLower = oldTag.toLowerCase();
  const oldLen = oldTag.length;
  const facts = extractFacts(text, path);
  const bodyEdits: Edit[] = [];
  for (const occ of facts.tagOccurrences) {
    if (!matchesTag(occ.tag, oldLower)) continue;
    bodyEdits.push({ start: occ.offset + 1, end: occ.offset + 1 + oldLen, text: newTag });
  }
  const fmHas = facts.frontmatterTags.some((t) => matchesTag(t, oldLower));
  if (bodyEdits.length === 0 && !fmHas) return null;

  let out = applyEdits(text, bodyEdits);
  let occurrences = bodyEdits.length;
  const range = facts.frontmatterRange;
  const headLines = range ? linesIn(text.slice(0, range.end)) : 0;
  let headLinesAfter = headLines;
  if (fmHas && range) {
    const want = expectedFrontmatterTags(facts, oldLower, oldLen, newTag);
    const surgical = surgicalFrontmatter(text, facts, oldLower, oldLen, newTag);
    let done = false;
    if (surgical && surgical.count > 0) {
      // Body edits come after the frontmatter, so frontmatter offsets still hold in `out`.
      const candidate = applyEdits(out, surgical.edits);
      const check = extractFacts(candidate, path);
      const raw = rawFrontmatterTags(check);
      const noDuplicates = dedupeTags(raw).length === raw.length || dedupeTags(rawFrontmatterTags(facts)).length !== rawFrontmatterTags(facts).length;
      if (sameList(check.frontmatterTags, want) && noDuplicates) {
        out = candidate;
        occurrences += surgical.count;
        done = true;
      }
    }
    if (!done) {
      // Fallback: rewrite the `tags` key as a list (and drop `tag`), keeping every other key's bytes.
      const outFacts = extractFacts(out, path);
      const headEnd = outFacts.frontmatterRange!.end;
      const changes: Record<string, unknown> = { tags: want };
      if (outFacts.frontmatter && 'tag' in outFacts.frontmatter) changes['tag'] = null;
      const head = editFrontmatter(out.slice(0, headEnd), outFacts.frontmatterRange, changes, { frontmatterError: outFacts.frontmatterError });
      out = head + out.slice(headEnd);
      occurrences += facts.frontmatterTags.filter((t) => matchesTag(t, oldLower)).length;
      headLinesAfter = linesIn(head);
    }
  }
  if (out === text) return null;
  return { text: out, changes: lineChanges(text, out, headLines, headLinesAfter), occurrences };
}

/** Frontmatter tags before deduplication (to notice a rename that would list a tag twice). */
function rawFrontmatterTags(f: NoteFacts): string[] {
  const out: string[] = [];
  for (const key of ['tags', 'tag']) {
    const v = f.frontmatter?.[key];
    const items = Array.isArray(v) ? v.map(String) : typeof v === 'string' ? v.split(/[\s,]+/u) : [];
    for (const i of items) {
      const t = i.trim().replace(/^#+/u, '');
      if (isValidTag(t)) out.push(t);
    }
  }
  return out;
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}
