/**
 * What the CalDAV surface keeps per user beside the Home (never in it):
 * `<data>/state/caldav/<user id>.json` holds
 *
 * - the resource names clients chose that differ from the UID-derived file
 *   name (`aliases`, UID → name), so such a PUT round-trips;
 * - the change log behind sync tokens and ctags: per calendar, each member's
 *   name with its ETag and the sequence number of its last change, and the
 *   names removed since (tombstones, at most MAX_GONE per calendar).
 *
 * The log follows the calendar index: when the index's generation moved, the
 * members are compared with the log and each difference gets the next number.
 * A token is the log's id and a number; it is written to disk before a client
 * sees it, so a token never names a number the file does not know
 * (docs/caldav.md, "Sync tokens").
 */
import fs from 'node:fs';
import nodePath from 'node:path';
import { randomUUID } from 'node:crypto';
import { writeFileAtomic } from '../vault/atomic.js';
import type { CalendarIndex, EventEntry, ReadableEvent } from '../calendar/calendar-index.js';

export const TOKEN_PREFIX = 'https://quire.invalid/ns/sync/';
/** Tombstones kept per calendar; a token older than the oldest dropped one must sync again from scratch. */
export const MAX_GONE = 10_000;

interface CalendarLog {
  /** Tokens below this number cannot be answered (the calendar is newer, or tombstones were dropped). */
  floor: number;
  /** The number of the calendar's last change, members or metadata (its ctag). */
  last: number;
  metaEtag: string | null;
  items: Record<string, [etag: string, seq: number]>;
  gone: Record<string, number>;
}

interface Persisted {
  id: string;
  seq: number;
  calendars: Record<string, CalendarLog>;
  aliases: Record<string, string>;
}

/** One calendar's members as the DAV tree shows them: resource name ↔ event. */
export interface CalendarView {
  byName: Map<string, ReadableEvent>;
  nameOf: Map<string, string>;
}

export type Changes = { changed: Array<{ name: string; seq: number }>; removed: Array<{ name: string; seq: number }> };

export class UserDavState {
  private data: Persisted;
  private savedSeq: number;
  private aliasVersion = 0;
  private seenIndex: CalendarIndex | null = null;
  private seenGeneration = -1;
  private seenAliasVersion = -1;
  private views = new Map<string, CalendarView>();
  private reconciledAt: { index: CalendarIndex | null; generation: number; aliasVersion: number } = { index: null, generation: -1, aliasVersion: -1 };
  private saving: Promise<void> = Promise.resolve();

  constructor(private readonly file: string) {
    this.data = readState(file);
    this.savedSeq = this.data.seq;
  }

  // ------------------------------------------------------------ names

  aliasOf(uid: string): string | undefined {
    return this.data.aliases[uid];
  }

  async setAlias(uid: string, name: string | null): Promise<void> {
    if ((this.data.aliases[uid] ?? null) === name) return;
    if (name === null) delete this.data.aliases[uid];
    else this.data.aliases[uid] = name;
    this.aliasVersion++;
    await this.save();
  }

  /**
   * The members of a calendar by resource name: each readable event file that
   * holds its UID for the API (the first path, see CalendarIndex.eventByUid),
   * named by its alias unless that alias is taken by a file name in the same
   * folder or an earlier alias, else by its file name.
   */
  view(index: CalendarIndex, calendarId: string): CalendarView {
    if (this.seenIndex !== index || this.seenGeneration !== index.generation || this.seenAliasVersion !== this.aliasVersion) {
      this.views = new Map();
      this.seenIndex = index;
      this.seenGeneration = index.generation;
      this.seenAliasVersion = this.aliasVersion;
    }
    let v = this.views.get(calendarId);
    if (v) return v;
    v = { byName: new Map(), nameOf: new Map() };
    const cal = index.calendarById(calendarId);
    const members: ReadableEvent[] = [];
    for (const p of [...(cal?.events ?? [])].sort()) {
      const e = index.eventByPath(p);
      if (e?.ics && index.eventByUid(e.ics.facts.uid) === e) members.push(e as ReadableEvent);
    }
    const fileNames = new Set(members.map(fileName));
    for (const e of members) {
      const alias = this.data.aliases[e.ics.facts.uid];
      if (alias !== undefined && !fileNames.has(alias) && !v.byName.has(alias)) {
        v.byName.set(alias, e);
        v.nameOf.set(e.path, alias);
      }
    }
    for (const e of members) {
      if (v.nameOf.has(e.path)) continue;
      v.byName.set(fileName(e), e);
      v.nameOf.set(e.path, fileName(e));
    }
    this.views.set(calendarId, v);
    return v;
  }

  // ------------------------------------------------------------ change log

  /**
   * Brings the log up to the index and writes it when a token or ctag it will
   * hand out is not on disk yet. Returns the change number the caller answers
   * at: changes other requests log meanwhile come after it.
   */
  async current(index: CalendarIndex): Promise<number> {
    const r = this.reconciledAt;
    // The index's generation moves on every event file and calendar.json change (calendar-index.ts).
    if (r.index !== index || r.generation !== index.generation || r.aliasVersion !== this.aliasVersion) {
      this.reconcile(index);
      this.reconciledAt = { index, generation: index.generation, aliasVersion: this.aliasVersion };
    }
    const seq = this.data.seq;
    if (seq > this.savedSeq) await this.save();
    return seq;
  }

  private reconcile(index: CalendarIndex): void {
    const d = this.data;
    const live = new Set<string>();
    for (const cal of index.calendars()) {
      live.add(cal.id);
      let log = d.calendars[cal.id];
      // A calendar new to the log answers no earlier token, even one its namesake (removed since) gave.
      if (!log) log = d.calendars[cal.id] = { floor: ++d.seq, last: d.seq, metaEtag: cal.metaEtag, items: {}, gone: {} };
      if (log.metaEtag !== cal.metaEtag) {
        log.metaEtag = cal.metaEtag;
        log.last = ++d.seq;
      }
      const view = this.view(index, cal.id);
      for (const [name, e] of view.byName) {
        const had = log.items[name];
        if (had && had[0] === e.etag) continue;
        const seq = ++d.seq;
        log.items[name] = [e.etag, seq];
        delete log.gone[name];
        log.last = seq;
      }
      for (const name of Object.keys(log.items)) {
        if (view.byName.has(name)) continue;
        delete log.items[name];
        log.gone[name] = log.last = ++d.seq;
      }
      const gone = Object.entries(log.gone);
      if (gone.length > MAX_GONE) {
        gone.sort((a, b) => a[1] - b[1]);
        for (const [name, seq] of gone.slice(0, gone.length - MAX_GONE)) {
          delete log.gone[name];
          log.floor = Math.max(log.floor, seq);
        }
      }
    }
    for (const id of Object.keys(d.calendars)) if (!live.has(id)) delete d.calendars[id];
    // Names of events that are gone for good; no view shows them, so the views stay valid.
    for (const uid of Object.keys(d.aliases)) if (!index.eventByUid(uid)) delete d.aliases[uid];
  }

  ctag(calendarId: string): string {
    return `${this.data.id}-${this.data.calendars[calendarId]?.last ?? 0}`;
  }

  /**
   * What changed in a calendar since `token` (null: since the beginning, every
   * member as changed), in the order of the changes; 'invalid' for a token this
   * log cannot answer (another log, a number it never gave, or older than the
   * calendar's floor).
   */
  changesSince(calendarId: string, token: string | null, upTo: number): Changes | 'invalid' {
    const log = this.data.calendars[calendarId];
    const changed: Changes['changed'] = [];
    const removed: Changes['removed'] = [];
    let since = 0;
    if (token !== null) {
      const m = token.startsWith(TOKEN_PREFIX) ? /^([^/]+)\/(\d{1,15})$/.exec(token.slice(TOKEN_PREFIX.length)) : null;
      if (!m || m[1] !== this.data.id) return 'invalid';
      since = Number(m[2]);
      if (since > upTo || (log && since < log.floor)) return 'invalid';
    }
    if (!log) return { changed, removed };
    for (const [name, [, seq]] of Object.entries(log.items)) if (seq > since && seq <= upTo) changed.push({ name, seq });
    if (token !== null) for (const [name, seq] of Object.entries(log.gone)) if (seq > since && seq <= upTo) removed.push({ name, seq });
    changed.sort((a, b) => a.seq - b.seq);
    removed.sort((a, b) => a.seq - b.seq);
    return { changed, removed };
  }

  /** The token for the state after change number `seq`. */
  tokenAt(seq: number): string {
    return `${TOKEN_PREFIX}${this.data.id}/${seq}`;
  }

  private save(): Promise<void> {
    const run = async () => {
      const seq = this.data.seq;
      await fs.promises.mkdir(nodePath.dirname(this.file), { recursive: true });
      await writeFileAtomic(this.file, JSON.stringify(this.data));
      this.savedSeq = Math.max(this.savedSeq, seq);
    };
    this.saving = this.saving.then(run, run);
    return this.saving;
  }
}

const fileName = (e: EventEntry) => e.path.slice(e.path.lastIndexOf('/') + 1);

function readState(file: string): Persisted {
  try {
    const v = JSON.parse(fs.readFileSync(file, 'utf8')) as Persisted;
    if (typeof v.id === 'string' && Number.isSafeInteger(v.seq) && v.calendars && typeof v.calendars === 'object' && v.aliases && typeof v.aliases === 'object') return v;
  } catch {
    /* absent or unreadable: a new log (every client syncs once from scratch) */
  }
  return { id: randomUUID(), seq: 0, calendars: {}, aliases: {} };
}

const states = new Map<string, UserDavState>();

/** The state of one user, loaded once per process. */
export function davStateOf(stateDir: string, userId: string): UserDavState {
  const file = nodePath.join(stateDir, 'caldav', `${userId}.json`);
  let s = states.get(file);
  if (!s) states.set(file, (s = new UserDavState(file)));
  return s;
}
