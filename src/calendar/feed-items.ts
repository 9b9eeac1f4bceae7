/**
 * What a feed publishes from the Home besides calendar events: the journal's timed log
 * entries, notes with a frontmatter `date` and open tasks with a due date, each limited to
 * the feed's collection (the whole Home for `journal` and `calendar`, one tag for `area`).
 * Rules in docs/calendar.md, "Feeds".
 */
import type { HomeIndex } from '../index/home-index.js';
import type { NoteEntry } from '../index/types.js';
import { visible, type Scope } from '../notes/access.js';
import { dailyNotesSettings, dateOfDailyNotePath } from '../vault/obsidian-settings.js';
import { parseDay } from '../journal/log-format.js';
import { isValidDate } from '../journal/dates.js';
import type { FeedItem } from './feed-ical.js';

export interface ItemSelection {
  /** Only items carrying this tag (or a tag nested below it); null for all. */
  tag: string | null;
  logs: boolean;
  notes: boolean;
  tasks: boolean;
}

/** `#Project/x` → `project/x`: tags compare case-insensitively and without `#`. */
export const normalTag = (tag: string): string => tag.trim().replace(/^#/, '').replace(/\/+$/, '').toLowerCase();

function hasTag(tags: readonly string[], want: string): boolean {
  for (const t of tags) {
    const k = normalTag(t);
    if (k === want || k.startsWith(want + '/')) return true;
  }
  return false;
}

/** A frontmatter `date` as `YYYY-MM-DD` (a YAML date, or text starting with one), else null. */
export function noteDate(fm: Record<string, unknown> | null): string | null {
  const v = fm?.['date'];
  if (v instanceof Date && Number.isFinite(v.getTime())) return v.toISOString().slice(0, 10);
  if (typeof v === 'string') {
    const d = v.trim().slice(0, 10);
    if (isValidDate(d)) return d;
  }
  return null;
}

const TASK_DUE_MARKS = /\s*(?:📅\s*\d{4}-\d{2}-\d{2}|\[due::\s*[^\]]*\]|due:\d{4}-\d{2}-\d{2})/gu;

/** Each Daily note's timed entries as items, per index (Home) and kept while the note's ETag is unchanged. */
const dayItems = new WeakMap<HomeIndex, Map<string, { etag: string; items: FeedItem[] }>>();

function itemsOfDay(text: string, date: string, path: string): FeedItem[] {
  const day = parseDay(text, date, path);
  const out: FeedItem[] = [];
  for (const e of day.entries) {
    const p = e.parts;
    if (p.start === null) continue;
    const zone = p.tz ?? day.dayZone;
    out.push({
      uid: `${e.blockId}@log.quire`,
      kind: 'log',
      summary: p.title ?? (p.text || 'Log entry'),
      description: p.title && p.text ? p.text : null,
      categories: e.tags,
      date: null,
      start: { date, time: p.start, zone },
      end: p.end === null ? null : { date, time: p.end, zone },
      busy: true,
    });
  }
  return out;
}

/** Timed log entries of every Daily note (with `tag`, those carrying it); a rebuild reads only the notes changed since. */
async function logItems(scope: Scope, notes: readonly NoteEntry[], tag: string | null): Promise<FeedItem[]> {
  const daily = await dailyNotesSettings(scope.vault.home.root);
  const kept = dayItems.get(scope.index) ?? new Map<string, { etag: string; items: FeedItem[] }>();
  const next = new Map<string, { etag: string; items: FeedItem[] }>();
  const out: FeedItem[] = [];
  for (const n of notes) {
    const date = dateOfDailyNotePath(daily, n.path);
    if (date === null) continue;
    let got = kept.get(n.path);
    if (!got || got.etag !== n.etag) {
      let text: string;
      try {
        text = (await scope.vault.home.read(n.path)).bytes.toString('utf8');
      } catch {
        continue; // removed since the index saw it
      }
      got = { etag: n.etag, items: itemsOfDay(text, date, n.path) };
    }
    next.set(n.path, got);
    for (const item of got.items) if (tag === null || hasTag(item.categories, tag)) out.push(item);
  }
  // Notes gone since the last pass drop out of the kept map.
  dayItems.set(scope.index, next);
  return out;
}

function noteItems(notes: readonly NoteEntry[], isDaily: (path: string) => boolean): FeedItem[] {
  const out: FeedItem[] = [];
  for (const n of notes) {
    const date = noteDate(n.frontmatter);
    if (date === null || isDaily(n.path)) continue;
    out.push({
      uid: `${n.id}@note.quire`,
      kind: 'note',
      summary: n.title,
      description: null,
      categories: [...n.tags],
      date,
      start: null,
      end: null,
      busy: false,
    });
  }
  return out;
}

function taskItems(scope: Scope, tag: string | null, inTagged: ReadonlySet<string>): FeedItem[] {
  const out: FeedItem[] = [];
  for (const t of scope.index.tasks()) {
    if (t.due === null || t.checked || t.cancelled || !isValidDate(t.due) || !visible(scope, t.path)) continue;
    if (tag !== null && !inTagged.has(t.path) && !hasTag([...t.text.matchAll(/(?:^|\s)#([^\s#]+)/gu)].map((m) => m[1]!), tag)) continue;
    out.push({
      uid: `${t.noteId}-${t.blockId ?? `line${t.line + 1}`}@task.quire`,
      kind: 'task',
      summary: t.text.replace(TASK_DUE_MARKS, '').trim() || 'Task',
      description: null,
      categories: [],
      date: t.due,
      start: null,
      end: null,
      busy: false,
    });
  }
  return out;
}

/** The Home's items for a feed, in a stable order (by kind, then as the index lists them). */
export async function feedItems(scope: Scope, sel: ItemSelection): Promise<FeedItem[]> {
  if (!sel.logs && !sel.notes && !sel.tasks) return [];
  const all = [...scope.index.notes()].filter((n) => visible(scope, n.path));
  const tagged = sel.tag === null ? all : all.filter((n) => hasTag(n.tags, sel.tag!));
  const daily = await dailyNotesSettings(scope.vault.home.root);
  const out: FeedItem[] = [];
  // Entries carry their own tags: a tag area looks at every Daily note, not only tagged ones.
  if (sel.logs) out.push(...(await logItems(scope, all, sel.tag)));
  if (sel.notes) out.push(...noteItems(tagged, (p) => dateOfDailyNotePath(daily, p) !== null));
  if (sel.tasks) out.push(...taskItems(scope, sel.tag, new Set(tagged.map((n) => n.path))));
  return out;
}
