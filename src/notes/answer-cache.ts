/**
 * Large read answers kept, body and JSON bytes, until their Home changes.
 *
 * The backlinks of a hub note are a list of a thousand or more records
 * (1,400 on the 100k bench vault's `note-0`, a 150 KB answer): building the
 * records and their JSON took about 4 ms of the main thread per request,
 * and every other request waited behind it. Such answers change only when
 * the index does (`HomeIndex.version`), so the first request builds them
 * and later ones send the same bytes. Small answers are cheaper to build
 * than to keep and are not cached.
 */
import { reply, type Reply } from '../actions/reply.js';
import type { HomeIndex } from '../index/home-index.js';
import { jsonBytes } from './note-list.js';

/** Answers with fewer items than this are built every time. */
export const CACHED_MIN_ITEMS = 64;
/** Answers kept per Home; the oldest goes first. */
const ENTRIES_PER_HOME = 64;

interface Entry {
  version: number;
  body: unknown;
  bytes: Buffer;
}

const homes = new WeakMap<HomeIndex, Map<string, Entry>>();

/**
 * The answer under `key` (which must name everything the answer depends on
 * besides the index: the action, its input, the caller's Home prefix): the
 * kept one while the index is unchanged, else `build()`'s, kept when it has
 * `CACHED_MIN_ITEMS` items or more.
 */
export function cachedList<T>(index: HomeIndex, key: string, build: () => { items: T[]; next_cursor: string | null }): Reply {
  let answers = homes.get(index);
  const hit = answers?.get(key);
  if (hit !== undefined && hit.version === index.version) return reply(hit.body, { json: () => hit.bytes });
  const version = index.version;
  const body = build();
  if (body.items.length < CACHED_MIN_ITEMS) return reply(body);
  const bytes = jsonBytes(body);
  if (answers === undefined) homes.set(index, (answers = new Map()));
  answers.delete(key);
  answers.set(key, { version, body, bytes });
  if (answers.size > ENTRIES_PER_HOME) answers.delete(answers.keys().next().value!);
  return reply(body, { json: () => bytes });
}
