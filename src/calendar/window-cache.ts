/**
 * Answers of the window views kept per Home while nothing they read has
 * changed: calendar clients ask for the same month or week again and again
 * (every navigation back, every refresh, every open tab). An answer is keyed
 * by its query and the caller's Home prefix, and is valid for one state of
 * what it was built from: the calendar index's generation (event files,
 * calendar.json), the vault's generation (Daily notes, tasks, `.quire/`
 * preferences) and the Daily-notes settings. Any change empties the cache;
 * it holds at most CACHE_BYTES of JSON (docs/calendar.md, "Window cache").
 */
import { lazyReply, type Reply } from '../actions/reply.js';
import type { Scope } from '../notes/access.js';
import type { Vault } from '../vault/vault.js';
import { calendarIndexOf } from './calendar-index.js';
import { dailySettingsKey } from './day-items.js';
import type { Answer } from './views.js';

export const CACHE_BYTES = 16 * 1024 * 1024;

interface Entry {
  data: () => unknown;
  json: Buffer;
}

const caches = new WeakMap<Vault, { stamp: string; entries: Map<string, Entry>; bytes: number }>();

/** The answer of `compute` for `key`, from the cache when its inputs are unchanged; as a reply carrying its JSON bytes. */
export async function cachedAnswer(scope: Scope, key: string, compute: () => Promise<Answer>): Promise<Reply> {
  const index = await calendarIndexOf(scope.vault);
  const stamp = `${index.generation}:${scope.vault.generation}:${await dailySettingsKey(scope)}`;
  let c = caches.get(scope.vault);
  if (!c || c.stamp !== stamp) caches.set(scope.vault, (c = { stamp, entries: new Map(), bytes: 0 }));
  const full = `${scope.prefix ?? ''}\u0000${key}`;
  let e = c.entries.get(full);
  if (e) {
    // Most recently used last, so the oldest go first when the cache is full.
    c.entries.delete(full);
    c.entries.set(full, e);
  } else {
    const answer = await compute();
    e = { data: answer.data, json: Buffer.from(answer.json(), 'utf8') };
    // compute() may have read newer files than the stamp says: keep the answer only if nothing changed meanwhile.
    const now = caches.get(scope.vault);
    if (now === c && `${index.generation}:${scope.vault.generation}:${await dailySettingsKey(scope)}` === stamp) {
      c.entries.set(full, e);
      c.bytes += e.json.length;
      for (const [k, old] of c.entries) {
        if (c.bytes <= CACHE_BYTES) break;
        c.entries.delete(k);
        c.bytes -= old.json.length;
      }
    }
  }
  const { data, json } = e;
  return lazyReply(data, { json: () => json });
}
