/**
 * Answers of the window views kept per Home while nothing they read has
 * changed: calendar clients ask for the same month or week again and again
 * (every navigation back, every refresh, every open tab). An answer is keyed
 * by its query and the caller's Home prefix, and is valid for one state of
 * what it was built from: the calendar index's generation (event files,
 * calendar.json), the vault's generation (Daily notes, tasks, `.quire/`
 * preferences) and the Daily-notes settings. Any change empties the cache;
 * it holds at most CACHE_BYTES of JSON (docs/calendar.md, "Window cache").
 * Besides whole answers it keeps parts answers are assembled from (a day's
 * items of `calendar_range` in one zone), under the same rules and budget.
 */
import { lazyReply, type Reply } from '../actions/reply.js';
import type { Scope } from '../notes/access.js';
import type { Vault } from '../vault/vault.js';
import { calendarIndexOf } from './calendar-index.js';
import { dailySettingsKey } from './day-items.js';

/**
 * A view's answer: its data, and the same as JSON text made from cached parts
 * (a window repeats a few hundred events' static fields thousands of times).
 * `json()` must equal `JSON.stringify(data())`.
 */
export interface Answer {
  data: () => unknown;
  json: () => string | Buffer;
  /** false: assembled from cached parts (cheap again), so the window cache does not keep the whole answer too. */
  whole?: false;
}

export const CACHE_BYTES = 16 * 1024 * 1024;

/** A piece of an answer: JSON text, how many list items it holds, and whether it may be used (see views.ts, calendar_range). */
export interface Part {
  json: Buffer;
  count: number;
  usable: boolean;
}

interface Entry {
  json: Buffer;
  data?: () => unknown;
  part?: Part;
}

interface Cache {
  stamp: string;
  entries: Map<string, Entry>;
  bytes: number;
}

const caches = new WeakMap<Vault, Cache>();

async function stampOf(scope: Scope): Promise<string> {
  const index = await calendarIndexOf(scope.vault);
  return `${index.generation}:${scope.vault.generation}:${await dailySettingsKey(scope)}`;
}

async function open(scope: Scope): Promise<{ c: Cache; stamp: string }> {
  const stamp = await stampOf(scope);
  let c = caches.get(scope.vault);
  if (!c || c.stamp !== stamp) caches.set(scope.vault, (c = { stamp, entries: new Map(), bytes: 0 }));
  return { c, stamp };
}

function lookup(c: Cache, key: string): Entry | undefined {
  const e = c.entries.get(key);
  if (e) {
    // Most recently used last, so the oldest go first when the cache is full.
    c.entries.delete(key);
    c.entries.set(key, e);
  }
  return e;
}

/** Keeps `list` in `c` if it is still the vault's cache and its inputs are unchanged: a build may have read newer files than the stamp says. */
async function keep(scope: Scope, c: Cache, stamp: string, list: Array<[string, Entry]>): Promise<void> {
  if (caches.get(scope.vault) !== c || (await stampOf(scope)) !== stamp) return;
  for (const [key, e] of list) {
    const old = c.entries.get(key);
    if (old) c.bytes -= old.json.length;
    c.entries.set(key, e);
    c.bytes += e.json.length;
  }
  for (const [k, old] of c.entries) {
    if (c.bytes <= CACHE_BYTES) break;
    c.entries.delete(k);
    c.bytes -= old.json.length;
  }
}

const fullKey = (scope: Scope, key: string) => `${scope.prefix ?? ''}\u0000${key}`;

/** The answer of `compute` for `key`, from the cache when its inputs are unchanged; as a reply carrying its JSON bytes. */
export async function cachedAnswer(scope: Scope, key: string, compute: () => Promise<Answer>): Promise<Reply> {
  const { c, stamp } = await open(scope);
  const full = fullKey(scope, key);
  let e = lookup(c, full);
  if (!e) {
    const answer = await compute();
    const json = answer.json();
    e = { data: answer.data, json: typeof json === 'string' ? Buffer.from(json, 'utf8') : json };
    if (answer.whole !== false) await keep(scope, c, stamp, [[full, e]]);
  }
  const { data, json } = e;
  return lazyReply(data!, { json: () => json });
}

/** The parts kept for the Home's current state; `put` keeps new ones unless something changed since `openParts`. */
export async function openParts(scope: Scope): Promise<{ get(key: string): Part | undefined; put(parts: Array<[string, Part]>): Promise<void> }> {
  const { c, stamp } = await open(scope);
  return {
    get: (key) => lookup(c, fullKey(scope, key))?.part,
    put: (parts) => keep(scope, c, stamp, parts.map(([key, part]) => [fullKey(scope, key), { json: part.json, part }])),
  };
}
