/**
 * What one request may put into a note: title length, tag count and length,
 * frontmatter depth and size. Each check is linear in its input and throws a
 * 400 naming the field before any parsing, serialising or disk work, so an
 * oversized request costs no more than reading it. The numbers and the why
 * are in docs/notes-api.md, "Limits".
 */
import { errors } from '../core/errors.js';

/** Longest title, in UTF-16 code units (the file name uses a shorter prefix: `fileNameFor`). */
export const TITLE_MAX = 1000;
/** Most tags one request may set. */
export const TAGS_MAX = 1000;
/** Longest tag, in UTF-16 code units, `#` included. */
export const TAG_MAX = 200;
/** Deepest nesting of a frontmatter value (a scalar at the top is depth 0). */
export const FRONTMATTER_MAX_DEPTH = 32;
/** Most values (scalars, lists, mappings, keys included) in the frontmatter one request sets. */
export const FRONTMATTER_MAX_VALUES = 10_000;

/** The title trimmed; 400 when blank or longer than TITLE_MAX. */
export function checkTitle(title: string, field: string): string {
  const t = title.trim();
  if (!t) throw errors.badRequest('title must not be blank', { field });
  if (t.length > TITLE_MAX) {
    throw errors.badRequest(`title is ${t.length} characters long; the most is ${TITLE_MAX}`, { field, reason: 'too_long', max: String(TITLE_MAX) });
  }
  return t;
}

/** 400 when a request names more than TAGS_MAX tags or one longer than TAG_MAX. */
export function checkTagList(tags: readonly string[], field: string): void {
  if (tags.length > TAGS_MAX) {
    throw errors.badRequest(`${tags.length} tags given; the most one request may set is ${TAGS_MAX}`, { field, reason: 'too_many', max: String(TAGS_MAX) });
  }
  for (let i = 0; i < tags.length; i++) {
    if (tags[i]!.length > TAG_MAX) {
      throw errors.badRequest(`tag ${i} is ${tags[i]!.length} characters long; the most is ${TAG_MAX}`, {
        field: `${field}[${i}]`,
        reason: 'too_long',
        max: String(TAG_MAX),
      });
    }
  }
}

/**
 * 400 when frontmatter values nest deeper than FRONTMATTER_MAX_DEPTH or hold
 * more than FRONTMATTER_MAX_VALUES values. Iterative, and it stops at the
 * first excess, so a value nested a million deep is refused without
 * recursion (the YAML writer recurses once per level).
 */
export function checkFrontmatterValues(values: Record<string, unknown>, field: string): void {
  const stack: Array<{ value: unknown; depth: number; path: string }> = [];
  for (const [k, v] of Object.entries(values)) stack.push({ value: v, depth: 0, path: `${field}.${k}` });
  let count = stack.length;
  while (stack.length > 0) {
    const { value, depth, path } = stack.pop()!;
    if (value === null || typeof value !== 'object') continue;
    if (depth >= FRONTMATTER_MAX_DEPTH) {
      throw errors.badRequest(`${path} nests more than ${FRONTMATTER_MAX_DEPTH} levels deep`, {
        field: path,
        reason: 'too_deep',
        max: String(FRONTMATTER_MAX_DEPTH),
      });
    }
    const list = Array.isArray(value);
    const keys = list ? null : Object.keys(value);
    count += list ? value.length : keys!.length * 2;
    if (count > FRONTMATTER_MAX_VALUES) {
      throw errors.badRequest(`${field} holds more than ${FRONTMATTER_MAX_VALUES} values`, { field, reason: 'too_large', max: String(FRONTMATTER_MAX_VALUES) });
    }
    if (list) value.forEach((v, i) => stack.push({ value: v, depth: depth + 1, path: `${path}[${i}]` }));
    else for (const k of keys!) stack.push({ value: (value as Record<string, unknown>)[k], depth: depth + 1, path: `${path}.${k}` });
  }
}
