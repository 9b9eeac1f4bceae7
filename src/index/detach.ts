/**
 * Keep facts from pinning note texts in memory.
 *
 * V8 makes `text.slice(a, b)` of 13 or more characters a *sliced string*: a
 * view that keeps the whole parent string alive. Facts extracted from a note
 * are full of such slices (link targets, headings, task texts, frontmatter
 * values), so keeping the facts would keep every note's full text: on a 10k
 * note vault that is tens of MB the index would hold for nothing. Before the
 * index keeps a NoteFacts it replaces every long string in it with an equal,
 * flat copy (`(' ' + s).slice(1)` flattens a fresh cons string of the
 * slice, so only the copy is retained). Values never change; only string
 * identity does.
 */
import type { NoteFacts } from '../markdown/facts.js';

/** Slices shorter than this are copied by V8 anyway. */
const SLICE_MIN = 13;

function flat(s: string): string {
  return s.length < SLICE_MIN ? s : (' ' + s).slice(1);
}

function flatArray(a: string[]): void {
  for (let i = 0; i < a.length; i++) {
    const s = a[i]!;
    if (s.length >= SLICE_MIN) a[i] = flat(s);
  }
}

/** Replace long strings anywhere in a parsed-YAML value (objects, arrays; shared or cyclic anchors visited once). */
function flatValue(v: unknown, seen: Set<object>): unknown {
  if (typeof v === 'string') return flat(v);
  if (typeof v !== 'object' || v === null || seen.has(v)) return v;
  seen.add(v);
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) v[i] = flatValue(v[i], seen);
  } else if (Object.getPrototypeOf(v) === Object.prototype || Object.getPrototypeOf(v) === null) {
    const o = v as Record<string, unknown>;
    for (const k of Object.keys(o)) {
      const x = o[k];
      if (typeof x === 'string') {
        if (x.length >= SLICE_MIN) o[k] = flat(x);
      } else if (typeof x === 'object' && x !== null) o[k] = flatValue(x, seen);
    }
  }
  return v;
}

/**
 * Strings that repeat across notes (link targets and subpaths, tags) are
 * also shared through this table: one copy of `Home`
 * for ten thousand `[[Home]]` links. It is dropped and restarted when it
 * grows past `INTERN_MAX` entries, so strings of deleted notes do not
 * accumulate forever (strings already shared stay shared).
 */
const INTERN_MAX = 200_000;
let internTable = new Map<string, string>();

function intern(s: string): string {
  const x = internTable.get(s);
  if (x !== undefined) return x;
  const copy = flat(s);
  if (internTable.size >= INTERN_MAX) internTable = new Map();
  internTable.set(copy, copy);
  return copy;
}

/** `s` as found in `pool` (already interned), else interned. */
function sameAs(s: string, pool: readonly string[]): string {
  for (const p of pool) if (p === s) return p;
  return intern(s);
}

function internArray(a: string[]): void {
  for (let i = 0; i < a.length; i++) a[i] = intern(a[i]!);
}

/** Make `facts` hold no slices of the note text, sharing repeated strings (in place; values unchanged). */
export function detachStrings(facts: NoteFacts): void {
  const f = facts as { -readonly [K in keyof NoteFacts]: NoteFacts[K] };
  if (f.title.length >= SLICE_MIN) f.title = flat(f.title);
  if (f.id !== null && f.id.length >= SLICE_MIN) f.id = flat(f.id);
  if (f.frontmatterError !== null) f.frontmatterError = flat(f.frontmatterError);
  flatArray(f.aliases);
  internArray(f.tags);
  // Frontmatter tags and inline tag occurrences mostly repeat `tags` (same
  // spelling): reuse those strings without hashing, intern the rest.
  for (let i = 0; i < f.frontmatterTags.length; i++) f.frontmatterTags[i] = sameAs(f.frontmatterTags[i]!, f.tags);
  if (f.frontmatter !== null) flatValue(f.frontmatter, new Set());
  for (const t of f.tagOccurrences) t.tag = sameAs(t.tag, f.tags);
  for (const h of f.headings) if (h.text.length >= SLICE_MIN) h.text = flat(h.text);
  for (const b of f.blocks) if (b.id.length >= SLICE_MIN) b.id = flat(b.id);
  for (const l of f.links) {
    l.target = intern(l.target);
    if (l.heading !== null) l.heading = intern(l.heading);
    if (l.blockId !== null && l.blockId.length >= SLICE_MIN) l.blockId = flat(l.blockId);
    if (l.alias !== null && l.alias.length >= SLICE_MIN) l.alias = flat(l.alias);
  }
  for (const t of f.tasks) {
    if (t.text.length >= SLICE_MIN) t.text = flat(t.text);
    if (t.blockId !== null && t.blockId.length >= SLICE_MIN) t.blockId = flat(t.blockId);
    if (t.due !== null && t.due.length >= SLICE_MIN) t.due = flat(t.due);
  }
}
