/**
 * The in-memory calendar index of one Home: every event file under
 * `Calendars/` parsed once per version (its ETag, the SHA-256 the vault uses),
 * by UID and by calendar, with each series' expansion kept beside it. It is
 * built from the files on first use and follows the vault's change events
 * (the server's writes and the watcher's outside edits), so it never keeps a
 * second watcher. Nothing of it is written anywhere (docs/calendar.md, "Index").
 */
import fs from 'node:fs';
import nodePath from 'node:path';
import { etagOf } from '../vault/etag.js';
import { isIgnoredPath, isTempName } from '../vault/ignore.js';
import type { Vault } from '../vault/vault.js';
import { parseEvent, type ParsedIcs } from './ics.js';
import { Expansion, singleOccurrence, type Occurrence } from './recurrence.js';
import { CALENDARS_DIR, eventPathParts, isMetaPath, parseMeta, type CalendarMeta } from './storage.js';

export interface EventEntry {
  path: string;
  calendarId: string;
  etag: string;
  text: string;
  /** null when the file cannot be read as an event; `error` says why. */
  ics: ParsedIcs | null;
  error: string | null;
  /** Lazily made on the first window asked of it. */
  expansion: Expansion | null;
}

export type ReadableEvent = EventEntry & { ics: ParsedIcs };

/**
 * Every shown event (one per UID) arranged for window queries: single
 * events sorted by start (instants and floating wall times apart), with the
 * longest duration of each list so a binary search finds every one that
 * may overlap; series answered by their expansion.
 */
export interface Timeline {
  zoned: SortedSingles;
  floating: SortedSingles;
  series: ReadableEvent[];
  /** Each shown event's rank in UID order (code points), so sorting compares numbers where it would compare UIDs. */
  rank: Map<ReadableEvent, number>;
}

export interface SortedSingles {
  starts: number[];
  items: Array<{ e: ReadableEvent; o: Occurrence }>;
  maxDuration: number;
}

function sortedSingles(list: Array<{ e: ReadableEvent; o: Occurrence }>): SortedSingles {
  list.sort((a, b) => a.o.start - b.o.start);
  let maxDuration = 0;
  for (const x of list) maxDuration = Math.max(maxDuration, x.o.end - x.o.start);
  return { starts: list.map((x) => x.o.start), items: list, maxDuration };
}

export interface CalendarEntry {
  id: string;
  meta: CalendarMeta;
  /** ETag of `calendar.json`; null when the folder has none. */
  metaEtag: string | null;
  /** Paths of the `.ics` files in the folder. */
  events: Set<string>;
  /** Those of them that cannot be read as events, with the reason (their parse error). */
  unreadable: Map<string, string>;
}

const SLICE = 200;

export class CalendarIndex {
  private readonly entries = new Map<string, EventEntry>();
  private readonly byUid = new Map<string, string[]>();
  private readonly calendarsById = new Map<string, CalendarEntry>();
  private readonly pending = new Set<string>();
  private built: Promise<void> | null = null;
  private readonly root: string;
  /** Counts changes, so views derived from the index know when to rebuild. */
  generation = 0;
  private timelineCache: { generation: number; timeline: Timeline } | null = null;

  constructor(private readonly vault: Vault) {
    this.root = vault.root;
    // Subscribed before the first walk, so nothing that changes during it is missed.
    vault.onChange((c) => {
      if (c.path.startsWith(CALENDARS_DIR + '/') || c.path === CALENDARS_DIR) this.pending.add(c.path);
      if (c.kind === 'move' && (c.from.startsWith(CALENDARS_DIR + '/') || c.from === CALENDARS_DIR)) this.pending.add(c.from);
    });
  }

  /** The index, built on first use and brought up to date with every change heard since. */
  async current(): Promise<this> {
    this.built ??= this.build();
    await this.built;
    this.applyPending();
    return this;
  }

  private async build(): Promise<void> {
    const files = this.walk(CALENDARS_DIR);
    for (let i = 0; i < files.length; i++) {
      this.load(files[i]!);
      // Large Homes parse thousands of files: let other requests run between slices.
      if (i % SLICE === SLICE - 1) await new Promise((r) => setImmediate(r));
    }
  }

  /** Calendar files under `rel` on disk (the folder itself, or its calendar folders). */
  private walk(rel: string): string[] {
    const out: string[] = [];
    const abs = nodePath.join(this.root, rel);
    let ents: fs.Dirent[];
    try {
      ents = fs.readdirSync(abs, { withFileTypes: true });
    } catch {
      return out;
    }
    for (const e of ents) {
      const child = `${rel}/${e.name}`;
      if (isTempName(e.name) || isIgnoredPath(child)) continue;
      if (e.isDirectory() && rel === CALENDARS_DIR) out.push(...this.walk(child));
      else if (e.isFile() && (eventPathParts(child) || isMetaPath(child))) out.push(child);
    }
    return out;
  }

  private readBytes(rel: string): Buffer | null {
    try {
      const abs = nodePath.join(this.root, rel);
      if (!fs.lstatSync(abs).isFile()) return null;
      return fs.readFileSync(abs);
    } catch {
      return null;
    }
  }

  /** Reads one path into the index (or out of it, when it is gone). */
  private load(rel: string): void {
    const metaOf = isMetaPath(rel);
    if (metaOf !== null) {
      const bytes = this.readBytes(rel);
      const cal = this.calendar(metaOf);
      const metaEtag = bytes ? etagOf(bytes) : null;
      // Name, colour and visibility are part of what views and feeds answer: a change is a new generation.
      if (metaEtag !== cal.metaEtag) this.generation++;
      cal.meta = parseMeta(metaOf, bytes);
      cal.metaEtag = metaEtag;
      this.dropIfEmpty(metaOf);
      return;
    }
    const parts = eventPathParts(rel);
    if (!parts) return;
    const bytes = this.readBytes(rel);
    const before = this.entries.get(rel);
    if (!bytes) {
      if (before) this.remove(before);
      return;
    }
    const etag = etagOf(bytes);
    if (before && before.etag === etag) return;
    if (before) this.remove(before);
    const text = bytes.toString('utf8');
    let ics: ParsedIcs | null = null;
    let error: string | null = null;
    try {
      ics = parseEvent(text, { field: rel, strict: false });
    } catch (e) {
      error = (e as Error).message;
    }
    const entry: EventEntry = { path: rel, calendarId: parts.calendarId, etag, text, ics, error, expansion: null };
    this.entries.set(rel, entry);
    this.calendar(parts.calendarId).events.add(rel);
    if (error !== null) this.calendar(parts.calendarId).unreadable.set(rel, error);
    if (ics) {
      const list = this.byUid.get(ics.facts.uid) ?? [];
      list.push(rel);
      list.sort();
      this.byUid.set(ics.facts.uid, list);
    }
    this.generation++;
  }

  private remove(entry: EventEntry): void {
    this.entries.delete(entry.path);
    this.calendarsById.get(entry.calendarId)?.events.delete(entry.path);
    this.calendarsById.get(entry.calendarId)?.unreadable.delete(entry.path);
    if (entry.ics) {
      const list = (this.byUid.get(entry.ics.facts.uid) ?? []).filter((p) => p !== entry.path);
      if (list.length) this.byUid.set(entry.ics.facts.uid, list);
      else this.byUid.delete(entry.ics.facts.uid);
    }
    this.dropIfEmpty(entry.calendarId);
    this.generation++;
  }

  private calendar(id: string): CalendarEntry {
    let c = this.calendarsById.get(id);
    if (!c) {
      c = { id, meta: parseMeta(id, null), metaEtag: null, events: new Set(), unreadable: new Map() };
      this.calendarsById.set(id, c);
      this.generation++;
    }
    return c;
  }

  /** A calendar is a folder with a `calendar.json` or an event; one with neither is no calendar. */
  private dropIfEmpty(id: string): void {
    const c = this.calendarsById.get(id);
    if (c && c.metaEtag === null && c.events.size === 0) {
      this.calendarsById.delete(id);
      this.generation++;
    }
  }

  private applyPending(): void {
    if (this.pending.size === 0) return;
    const paths = [...this.pending];
    this.pending.clear();
    for (const p of paths) {
      if (eventPathParts(p) || isMetaPath(p)) {
        this.load(p);
        continue;
      }
      // A folder (a calendar moved, removed or dropped in as a whole): look again at everything under it.
      const prefix = p + '/';
      for (const e of [...this.entries.values()]) if (e.path.startsWith(prefix)) this.load(e.path);
      for (const c of [...this.calendarsById.values()]) if (`${CALENDARS_DIR}/${c.id}/`.startsWith(prefix) || `${CALENDARS_DIR}/${c.id}` === p) this.load(`${CALENDARS_DIR}/${c.id}/calendar.json`);
      const parts = p.split('/');
      if (parts.length <= 2) for (const f of this.walk(parts.length === 1 ? CALENDARS_DIR : p)) this.load(f);
    }
  }

  /** Sorted by id. */
  calendars(): CalendarEntry[] {
    return [...this.calendarsById.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }

  calendarById(id: string): CalendarEntry | undefined {
    return this.calendarsById.get(id);
  }

  /** The event with this UID (when two files claim one UID, the first path wins: docs/calendar.md). */
  eventByUid(uid: string): EventEntry | undefined {
    const p = this.byUid.get(uid)?.[0];
    return p === undefined ? undefined : this.entries.get(p);
  }

  eventByPath(path: string): EventEntry | undefined {
    return this.entries.get(path);
  }

  /** Every readable event, each UID once. */
  *events(): Generator<EventEntry & { ics: ParsedIcs }> {
    for (const paths of this.byUid.values()) {
      const e = this.entries.get(paths[0]!);
      if (e?.ics) yield e as EventEntry & { ics: ParsedIcs };
    }
  }

  /** Files under `Calendars/` that are not readable events, with the reason. */
  unreadable(): EventEntry[] {
    return [...this.entries.values()].filter((e) => e.ics === null);
  }

  /** The events arranged for window queries (rebuilt after a change, on first use). */
  timeline(): Timeline {
    if (this.timelineCache?.generation === this.generation) return this.timelineCache.timeline;
    const zoned: Array<{ e: ReadableEvent; o: Occurrence }> = [];
    const floating: Array<{ e: ReadableEvent; o: Occurrence }> = [];
    const series: ReadableEvent[] = [];
    for (const e of this.events()) {
      const o = singleOccurrence(e.ics);
      if (o === null) series.push(e);
      else (o.floating ? floating : zoned).push({ e, o });
    }
    const all = [...zoned.map((x) => x.e), ...floating.map((x) => x.e), ...series].sort((a, b) => (a.ics.facts.uid < b.ics.facts.uid ? -1 : a.ics.facts.uid > b.ics.facts.uid ? 1 : 0));
    const rank = new Map(all.map((e, i) => [e, i] as const));
    const timeline = { zoned: sortedSingles(zoned), floating: sortedSingles(floating), series, rank };
    this.timelineCache = { generation: this.generation, timeline };
    return timeline;
  }

  expansionOf(e: EventEntry & { ics: ParsedIcs }): Expansion {
    e.expansion ??= new Expansion(e.ics);
    return e.expansion;
  }
}

const indexes = new WeakMap<Vault, CalendarIndex>();

/** The calendar index of a vault (one per open vault). */
export function calendarIndexOf(vault: Vault): Promise<CalendarIndex> {
  let idx = indexes.get(vault);
  if (!idx) {
    idx = new CalendarIndex(vault);
    indexes.set(vault, idx);
  }
  return idx.current();
}
