/**
 * What the calendar shows beside events: the journal's timed log entries and
 * tasks with a due date, found by day. Log entries come from the Daily notes
 * of the window's days (each note parsed once per ETag); tasks from the
 * vault's index, gathered once per index generation.
 */
import { dailyNotePath, type DailyNotesSettings } from '../vault/obsidian-settings.js';
import { dailySettingsOf } from '../journal/journal.js';
import { parseDay, type ParsedEntry } from '../journal/log-format.js';
import { tasksOfNote, type TaskRecord } from '../tasks/tasks.js';
import { visible, type Scope } from '../notes/access.js';
import type { Vault } from '../vault/vault.js';

export interface LogItem {
  date: string;
  path: string;
  entry: ParsedEntry;
  /** The entry's zone, else its Daily note's; null: floating (placed in the viewer's zone). */
  zone: string | null;
}

const dayCache = new WeakMap<Vault, Map<string, { etag: string; items: LogItem[] }>>();

/**
 * How long the vault's Daily-notes settings are reused. They live in
 * `.obsidian/`, which the watcher ignores, and reading them costs a stat and
 * a realpath; a calendar view asks for them on every request.
 */
const SETTINGS_TTL_MS = 2000;
const settingsCache = new WeakMap<Vault, { at: number; key: string; paths: Map<string, string>; settings: DailyNotesSettings }>();

/** Daily-note path of a date under the vault's current settings (Moment formatting, memoised per settings). */
async function dailyPathFn(scope: Scope): Promise<(date: string) => string> {
  let hit = settingsCache.get(scope.vault);
  if (!hit || Date.now() - hit.at >= SETTINGS_TTL_MS) {
    const settings = await dailySettingsOf(scope);
    const key = `${settings.folder}\0${settings.format}`;
    hit = { at: Date.now(), key, paths: hit?.key === key ? hit.paths : new Map(), settings };
    settingsCache.set(scope.vault, hit);
  }
  const { paths, settings } = hit;
  return (date) => {
    let p = paths.get(date);
    if (p === undefined) {
      if (paths.size > 20_000) paths.clear();
      paths.set(date, (p = dailyNotePath(settings, date)));
    }
    return p;
  };
}

/** Identifies the vault's current Daily-notes settings (folder and format), for caches of answers built from them. */
export async function dailySettingsKey(scope: Scope): Promise<string> {
  await dailyPathFn(scope);
  return settingsCache.get(scope.vault)!.key;
}

/** The timed log entries of the Daily notes of `dates` (entries without a time are not placed on the grid). */
export async function logItems(scope: Scope, dates: string[]): Promise<LogItem[]> {
  const pathOf = await dailyPathFn(scope);
  let cache = dayCache.get(scope.vault);
  if (!cache) dayCache.set(scope.vault, (cache = new Map()));
  const out: LogItem[] = [];
  for (const date of dates) {
    const path = pathOf(date);
    const stat = scope.index.statOf(path);
    if (!stat || !scope.index.noteByPath(path) || !visible(scope, path)) continue;
    let hit = cache.get(path);
    if (!hit || hit.etag !== stat.etag) {
      let text: string;
      let etag: string;
      try {
        const r = await scope.vault.home.read(path);
        text = r.bytes.toString('utf8');
        etag = r.etag;
      } catch {
        continue; // removed since the index saw it
      }
      const day = parseDay(text, date, path);
      hit = { etag, items: day.entries.filter((e) => e.parts.start !== null).map((entry) => ({ date, path, entry, zone: entry.parts.tz ?? day.dayZone })) };
      cache.set(path, hit);
    }
    out.push(...hit.items);
  }
  return out;
}

const taskCache = new WeakMap<Vault, { generation: number; byDue: Array<{ due: string; task: TaskRecord }> }>();

/** Tasks whose due date lies in [fromDate, toDate] (inclusive `YYYY-MM-DD`), by due date. */
export function dueTasks(scope: Scope, fromDate: string, toDate: string): TaskRecord[] {
  let c = taskCache.get(scope.vault);
  if (!c || c.generation !== scope.vault.generation) {
    const byDue: Array<{ due: string; task: TaskRecord }> = [];
    for (const n of scope.index.notes()) {
      for (const t of tasksOfNote(n)) if (t.due) byDue.push({ due: t.due, task: t });
    }
    byDue.sort((a, b) => (a.due < b.due ? -1 : a.due > b.due ? 1 : 0));
    c = { generation: scope.vault.generation, byDue };
    taskCache.set(scope.vault, c);
  }
  const list = c.byDue;
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const m = (lo + hi) >> 1;
    if (list[m]!.due < fromDate) lo = m + 1;
    else hi = m;
  }
  const out: TaskRecord[] = [];
  for (let i = lo; i < list.length && list[i]!.due <= toDate; i++) if (visible(scope, list[i]!.task.path)) out.push(list[i]!.task);
  return out;
}
