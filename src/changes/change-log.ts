/**
 * The change log (the changes API's record of writes; the daily journal is
 * src/journal/): every change to a user's content — API writes, the
 * command line, a desktop editor on disk — appends one record with a
 * monotonically increasing `seq`. Records live in a bounded in-memory ring
 * per user. The journal is deliberately not persisted: external edits made
 * while the server is down never reach it, so after a restart a fresh epoch
 * makes every old cursor answer 410 and clients reload current data, which
 * is the only way they see those offline edits (docs/changes.md).
 *
 * `changes_delta` cursors encode epoch + position + fixed head and are
 * signed with an HMAC key made per process, so a forged or edited cursor is
 * refused like an expired one.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { AppError } from '../core/errors.js';
import type { Vault, VaultChange } from '../vault/vault.js';

export interface ChangeRecord {
  seq: number;
  /** Unix ms. */
  time: number;
  /** File changes, or `inbox` when a reminder fired into the user's inbox (then `path` is empty). */
  kind: 'upsert' | 'delete' | 'move' | 'inbox';
  path: string;
  /** For a move: the path it came from. */
  from?: string;
  /** The note's stable id when the path is a Markdown note. */
  note_id?: string;
  /** For `inbox` records: the inbox item that appeared or came back. */
  inbox_id?: string;
  /** `api` for the server's own writes (HTTP, command line, MCP), `external` for edits on disk, `reminder` for inbox records. */
  source: 'api' | 'external' | 'reminder';
}

export const DELTA_MAX_RECORDS = 100;
export const DELTA_MAX_BYTES = 64 * 1024;
/** Records each user's ring keeps. */
export const DEFAULT_RING = 10_000;

const isNote = (p: string) => p.toLowerCase().endsWith('.md');

export class ChangeLog {
  /** Random per journal: a cursor or event id from another epoch cannot be served. */
  readonly epoch = randomBytes(6).toString('base64url');
  private ring: ChangeRecord[] = [];
  private head_ = 0;
  private readonly listeners = new Set<(r: ChangeRecord) => void>();
  /** Last known note id per path, so a delete can still name the note it removed. */
  private readonly ids = new Map<string, string>();
  private unsubscribe: (() => void) | null = null;

  constructor(
    private readonly maxRecords = DEFAULT_RING,
    private readonly now: () => number = Date.now,
  ) {}

  /** Follows a vault's changes (and learns its notes' ids once it is indexed). */
  follow(vault: Vault): void {
    this.unsubscribe?.();
    this.unsubscribe = vault.onChange((c) => this.record(vault, c));
    vault.ready.then(
      () => {
        for (const n of vault.index.notes()) if (!this.ids.has(n.path)) this.ids.set(n.path, n.id);
      },
      () => undefined,
    );
  }

  stop(): void {
    this.unsubscribe?.();
    this.unsubscribe = null;
  }

  private record(vault: Vault, c: VaultChange): void {
    let noteId: string | undefined;
    if (isNote(c.path)) {
      if (c.kind === 'delete') {
        noteId = this.ids.get(c.path);
        this.ids.delete(c.path);
      } else {
        try {
          noteId = vault.index.noteByPath(c.path)?.id;
        } catch {
          noteId = undefined;
        }
        if (noteId) this.ids.set(c.path, noteId);
      }
    }
    if (c.kind === 'move') this.ids.delete(c.from);
    this.append({
      kind: c.kind,
      path: c.path,
      ...(c.kind === 'move' ? { from: c.from } : {}),
      ...(noteId ? { note_id: noteId } : {}),
      source: c.source,
    });
  }

  append(r: Omit<ChangeRecord, 'seq' | 'time'>): ChangeRecord {
    const rec: ChangeRecord = { seq: ++this.head_, time: this.now(), ...r };
    this.ring.push(rec);
    if (this.ring.length > this.maxRecords * 1.25) this.ring = this.ring.slice(this.ring.length - this.maxRecords);
    for (const cb of this.listeners) {
      try {
        cb(rec);
      } catch {
        // a listener (a stream) failing must not stop the journal
      }
    }
    return rec;
  }

  get head(): number {
    return this.head_;
  }

  /** The smallest seq still held (head + 1 when empty). */
  get oldest(): number {
    return this.ring[0]?.seq ?? this.head_ + 1;
  }

  /** Records with seq in (after, upTo], oldest first; null when some of them were already dropped from the ring. */
  since(after: number, upTo = this.head_): ChangeRecord[] | null {
    if (after >= upTo) return [];
    if (after + 1 < this.oldest) return null;
    const start = after + 1 - this.oldest;
    return this.ring.slice(start, start + (upTo - after));
  }

  /** The record with this seq, if still held. */
  at(seq: number): ChangeRecord | undefined {
    return this.ring[seq - this.oldest];
  }

  onAppend(cb: (r: ChangeRecord) => void): () => void {
    this.listeners.add(cb);
    return () => this.listeners.delete(cb);
  }
}

/** One journal per user (by username: a vault is one user's Home). */
export class ChangeLogs {
  private readonly byUser = new Map<string, ChangeLog>();
  private readonly key = randomBytes(32);
  /** Open `changes_events` streams by `username|ip`: one each. */
  private readonly permits = new Set<string>();

  constructor(private readonly maxRecords = DEFAULT_RING) {}

  /**
   * Starts a journal for a vault that just opened. A vault that reopens (a
   * renamed user) gets a fresh journal: changes made while it was closed
   * were not seen, so old cursors must answer 410.
   */
  attach(username: string, vault: Vault): ChangeLog {
    this.byUser.get(username)?.stop();
    const j = new ChangeLog(this.maxRecords);
    j.follow(vault);
    this.byUser.set(username, j);
    return j;
  }

  get(username: string): ChangeLog | undefined {
    return this.byUser.get(username);
  }

  /** Holds the one `changes_events` permit of a User and IP; 429 while another stream holds it. */
  acquirePermit(username: string, ip: string): () => void {
    const key = `${username}|${ip}`;
    if (this.permits.has(key)) {
      throw new AppError('too_many_requests', 'A change stream for this user is already open from this address; close it first (one stream per User and IP)', {
        details: { reason: 'stream_already_open' },
        headers: { 'retry-after': '5' },
      });
    }
    this.permits.add(key);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.permits.delete(key);
    };
  }

  // ---- cursors -------------------------------------------------------------

  sign(username: string, c: DeltaCursor): string {
    const body = Buffer.from(JSON.stringify([c.epoch, c.pos, c.head]), 'utf8').toString('base64url');
    return `${body}.${this.mac(username, body)}`;
  }

  /** The cursor's fields, or a 410 when it was not issued by this journal for this user. */
  verify(username: string, cursor: string): DeltaCursor {
    const [body, mac] = cursor.split('.');
    if (body && mac) {
      const want = Buffer.from(this.mac(username, body));
      const got = Buffer.from(mac);
      if (want.length === got.length && timingSafeEqual(want, got)) {
        try {
          const [epoch, pos, head] = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as [string, number, number];
          if (typeof epoch === 'string' && Number.isInteger(pos) && Number.isInteger(head) && pos <= head) return { epoch, pos, head };
        } catch {
          // falls through to expired
        }
      }
    }
    throw cursorExpired('this cursor was not issued by this server (or was changed)');
  }

  private mac(username: string, body: string): string {
    return createHmac('sha256', this.key).update(`${username}\0${body}`).digest('base64url').slice(0, 32);
  }
}

export interface DeltaCursor {
  epoch: string;
  /** Last seq delivered. */
  pos: number;
  /** The head fixed for the drain in progress (== pos when the drain is complete). */
  head: number;
}

export function cursorExpired(why: string): AppError {
  return new AppError('not_found', `This change cursor can no longer be served (${why}); clear retained data, reload current data and start again without a cursor`, {
    status: 410,
    details: { reason: 'cursor_expired' },
  });
}

export interface DeltaPage {
  cursor: string;
  records: ChangeRecord[];
  has_more: boolean;
  /** Current head of the journal (informative). */
  head: number;
}

/**
 * One page of the journal. Without a cursor: a baseline at the current head.
 * With one: records after its position up to the drain's fixed head, at
 * most 100 records and 64 KiB (of JSON records) per page.
 */
export function delta(journals: ChangeLogs, username: string, journal: ChangeLog, cursor: string | undefined): DeltaPage {
  if (cursor === undefined || cursor === '') {
    const head = journal.head;
    return { cursor: journals.sign(username, { epoch: journal.epoch, pos: head, head }), records: [], has_more: false, head };
  }
  const c = journals.verify(username, cursor);
  if (c.epoch !== journal.epoch) throw cursorExpired('the journal was restarted since');
  if (c.head > journal.head) throw cursorExpired('it is ahead of this journal');
  // A finished drain starts the next one at the head as it is now.
  const head = c.pos === c.head ? journal.head : c.head;
  const pending = journal.since(c.pos, head);
  if (pending === null) throw cursorExpired('the records after it were already dropped from the journal');
  const records: ChangeRecord[] = [];
  let bytes = 2;
  for (const r of pending) {
    if (records.length >= DELTA_MAX_RECORDS) break;
    const size = Buffer.byteLength(JSON.stringify(r)) + 1;
    if (records.length > 0 && bytes + size > DELTA_MAX_BYTES) break;
    records.push(r);
    bytes += size;
  }
  const pos = records.length > 0 ? records[records.length - 1]!.seq : c.pos;
  return {
    cursor: journals.sign(username, { epoch: journal.epoch, pos, head }),
    records,
    has_more: pos < head,
    head: journal.head,
  };
}
