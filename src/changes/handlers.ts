/**
 * Handlers of the changes area (`changes_delta`, `changes_events`) and the
 * notes event stream (`notes_events`), which replays from the same journal.
 * docs/changes.md describes cursors, events and limits.
 */
import { callerOf, type ActionContext } from '../actions/context.js';
import { authenticate, bearerToken } from '../accounts/credentials.js';
import { missingScopes } from '../accounts/grants.js';
import type { Caller } from '../accounts/caller.js';
import { AppError } from '../core/errors.js';
import { openScope, visible } from '../notes/access.js';
import { sse, type SseSink, type SseStream } from '../surfaces/http/sse.js';
import { delta, type ChangeLog, type ChangeLogs, type ChangeRecord } from './change-log.js';

/** How often a change stream re-checks the journal head and the caller's access (ms). */
export const SAFETY_CHECK_MS = 1_000;
/** Replay window of `notes_events`: at most this many records, none older than this. */
export const REPLAY_MAX_EVENTS = 1_000;
export const REPLAY_MAX_AGE_MS = 10 * 60_000;

function journalsOf(ctx: ActionContext): ChangeLogs {
  const j = ctx.services.changes;
  if (!j) throw new AppError('service_unavailable', 'The change journal is not running on this server');
  return j;
}

/** Both changes actions need unrestricted data scope: a Home-prefix credential cannot read the journal. */
function checkUnrestricted(caller: Caller): void {
  if (caller.homePrefix !== null) {
    throw new AppError('forbidden', 'This credential is limited to part of the Home; the change journal needs unrestricted data scope', {
      details: { reason: 'home_prefix_restricted' },
    });
  }
}

async function journalFor(ctx: ActionContext): Promise<{ caller: Caller; journals: ChangeLogs; journal: ChangeLog }> {
  const caller = callerOf(ctx);
  checkUnrestricted(caller);
  const journals = journalsOf(ctx);
  // Opening the vault starts its journal (the vaults tell the journals when a Home opens).
  await ctx.services.vaults.forCaller(caller);
  const journal = journals.get(caller.username);
  if (!journal) throw new AppError('service_unavailable', 'The change journal of this Home is starting; retry shortly', { headers: { 'retry-after': '1' } });
  return { caller, journals, journal };
}

export async function changesDelta(ctx: ActionContext, cursor: string | undefined) {
  const { caller, journals, journal } = await journalFor(ctx);
  return delta(journals, caller.username, journal, cursor);
}

/** Rechecks every second that the token still authenticates this user with the scopes the stream needs. */
function stillAllowed(ctx: ActionContext, token: string | null, caller: Caller, scopes: Array<'account' | 'data'>, unrestricted: boolean): boolean {
  if (caller.credential.kind === 'local') return true;
  if (!token) return false;
  try {
    const now = authenticate(ctx.services.store, token, Date.now());
    if (now.userId !== caller.userId) return false;
    if (missingScopes(now.grants, scopes, 'read').length > 0) return false;
    if (unrestricted && now.homePrefix !== null) return false;
    return true;
  } catch {
    return false;
  }
}

function tokenOf(headers: Record<string, unknown>): string | null {
  try {
    return bearerToken(headers['authorization'] as string | undefined);
  } catch {
    return null;
  }
}

/**
 * `changes_events`: hints that the caller's journal moved (`event: change`,
 * data `{ epoch, seq }`). No replay; coalesced; one stream per User and IP.
 */
export async function changesEvents(ctx: ActionContext, headers: Record<string, unknown>): Promise<SseStream> {
  const { caller, journals, journal } = await journalFor(ctx);
  const token = tokenOf(headers);
  return sse({
    snapshot: () => ({ epoch: journal.epoch, seq: journal.head, stream: 'open this route with Accept: text/event-stream for live hints' }),
    open: (sink, conn) => {
      const release = journals.acquirePermit(caller.username, conn.ip);
      sink.onClose(release);
      let sent = journal.head;
      let scheduled = false;
      const hint = () => {
        scheduled = false;
        if (journal.head <= sent) return;
        sent = journal.head;
        sink.send({ event: 'change', data: { epoch: journal.epoch, seq: sent } });
      };
      // Hints are coalesced: a burst of writes becomes one event with the newest seq.
      const off = journal.onAppend(() => {
        if (scheduled) return;
        scheduled = true;
        setImmediate(hint);
      });
      sink.send({ event: 'ready', data: { epoch: journal.epoch, seq: sent } });
      const timer = setInterval(() => {
        if (!stillAllowed(ctx, token, caller, ['account', 'data'], true)) {
          sink.send({ event: 'revoked', data: { reason: 'access_changed' } });
          return sink.close();
        }
        if (journals.get(caller.username) !== journal) {
          sink.send({ event: 'reset', data: { reason: 'journal_restarted' } });
          return sink.close();
        }
        // Safety check: a change recorded without its hint (a crash between commit and notification).
        hint();
      }, SAFETY_CHECK_MS);
      timer.unref();
      sink.onClose(() => {
        off();
        clearInterval(timer);
      });
    },
  });
}

const isNotePath = (p: string) => p.toLowerCase().endsWith('.md');

function noteEvent(journal: ChangeLog, r: ChangeRecord) {
  return { id: `${journal.epoch}.${r.seq}`, event: 'note', data: r };
}

/** What to replay after `Last-Event-ID`: records, or a reason to reset. */
function replayAfter(journal: ChangeLog, lastEventId: string | undefined, now: number): { records: ChangeRecord[] } | { reset: string } {
  if (lastEventId === undefined || lastEventId === '') return { records: [] };
  const m = /^([A-Za-z0-9_-]+)\.(\d+)$/.exec(lastEventId.trim());
  if (!m || m[1] !== journal.epoch) return { reset: 'unknown_event_id' };
  const seq = Number(m[2]);
  if (seq > journal.head) return { reset: 'unknown_event_id' };
  const records = journal.since(seq);
  if (records === null || records.length > REPLAY_MAX_EVENTS) return { reset: 'replay_window_exceeded' };
  if (records.length > 0 && now - records[0]!.time > REPLAY_MAX_AGE_MS) return { reset: 'replay_window_exceeded' };
  return { records };
}

/**
 * `notes_events`: one `note` event per change to a Markdown note the caller
 * can see, with id `<epoch>.<seq>`. Replays after `Last-Event-ID` within the
 * window (1,000 events, 10 minutes); outside it sends `reset` (re-read notes).
 */
export async function notesEvents(ctx: ActionContext, headers: Record<string, unknown>): Promise<SseStream> {
  const lastEventId = headers['last-event-id'] as string | undefined;
  const caller = callerOf(ctx);
  const scope = await openScope(ctx);
  const journals = journalsOf(ctx);
  const journal = journals.get(caller.username);
  if (!journal) throw new AppError('service_unavailable', 'The change journal of this Home is starting; retry shortly', { headers: { 'retry-after': '1' } });
  const wanted = (r: ChangeRecord) =>
    (isNotePath(r.path) && visible(scope, r.path)) || (r.from !== undefined && isNotePath(r.from) && visible(scope, r.from));
  const token = tokenOf(headers);
  return sse({
    snapshot: () => {
      const r = replayAfter(journal, lastEventId, Date.now());
      if ('reset' in r) return { reset: true, reason: r.reset, last_event_id: `${journal.epoch}.${journal.head}`, events: [] };
      return { reset: false, last_event_id: `${journal.epoch}.${journal.head}`, events: r.records.filter(wanted).map((x) => noteEvent(journal, x)) };
    },
    open: (sink: SseSink) => {
      let sent = journal.head;
      const r = replayAfter(journal, lastEventId, Date.now());
      if ('reset' in r) {
        sink.send({ id: `${journal.epoch}.${journal.head}`, event: 'reset', data: { reason: r.reset, hint: 'read current notes again' } });
      } else {
        for (const rec of r.records) if (wanted(rec)) sink.send(noteEvent(journal, rec));
      }
      // Subscribed in the same tick as the replay: nothing falls between them, nothing is sent twice.
      const off = journal.onAppend((rec) => {
        if (rec.seq <= sent) return;
        sent = rec.seq;
        if (wanted(rec)) sink.send(noteEvent(journal, rec));
      });
      const timer = setInterval(() => {
        if (!stillAllowed(ctx, token, caller, ['data'], false)) {
          sink.send({ event: 'revoked', data: { reason: 'access_changed' } });
          return sink.close();
        }
        if (journals.get(caller.username) !== journal) {
          sink.send({ event: 'reset', data: { reason: 'journal_restarted', hint: 'read current notes again' } });
          sink.close();
        }
      }, SAFETY_CHECK_MS);
      timer.unref();
      sink.onClose(() => {
        off();
        clearInterval(timer);
      });
    },
  });
}
