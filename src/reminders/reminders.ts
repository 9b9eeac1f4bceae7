/**
 * Block reminders: a reminder sits on a stable block anchor (`^id`) of a Note
 * and fires once at one absolute instant (src/reminders/scheduler.ts). They are
 * scheduled state, so they live in the sidecar store, not in the Note.
 */
import { callerOf, type ActionContext } from '../actions/context.js';
import { AppError, errors } from '../core/errors.js';
import { newId } from '../core/ids.js';
import { extractFacts } from '../markdown/extract.js';
import { openScope, visible, checkWritable, type Scope } from '../notes/access.js';
import { findNote } from '../notes/notes.js';
import type { ReminderRecord } from '../store/schema.js';
import { insertReminder, remindersOfNote, updateReminder } from '../store/notifications.js';
import { listUsers } from '../store/users.js';
import { recipientsOf } from './scheduler.js';

/** A reminder may be at most this far in the past when set (clock skew) ... */
export const PAST_SLACK_MS = 60_000;
/** ... and at most about ten years ahead. */
export const MAX_AHEAD_MS = 10 * 366 * 24 * 3600 * 1000;

const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

/** Parses a bounded RFC 3339 instant with an explicit offset, or answers 400. */
export function parseInstant(instant: string, now: number, field = 'body.instant'): number {
  const ms = RFC3339.test(instant) ? Date.parse(instant) : NaN;
  if (!Number.isFinite(ms)) {
    throw errors.badRequest('instant must be an RFC 3339 date-time with an offset, e.g. 2030-01-02T09:00:00Z', { field });
  }
  if (ms < now - PAST_SLACK_MS) throw errors.badRequest('instant is in the past', { field, reason: 'instant_in_past' });
  if (ms > now + MAX_AHEAD_MS) {
    throw errors.badRequest('instant is more than ten years ahead', { field, reason: 'instant_too_far' });
  }
  return ms;
}

const bare = (etag: string) => etag.replace(/^W\//, '').replace(/"/g, '');

/** The Note's current ETag must equal `If-Match` (412 otherwise). */
async function checkNoteEtag(scope: Scope, path: string, ifMatch: string): Promise<void> {
  const etag = await scope.vault.home.etag(path);
  if (etag === null) throw errors.notFound(`No such note: ${path}`, { path });
  if (bare(ifMatch) !== etag) throw errors.staleEtag(etag);
}

function visibleNote(scope: Scope, id: string) {
  const n = findNote(scope, id);
  if (!visible(scope, n.path)) throw errors.notFound(`No such note: ${id}`, { id });
  return n;
}

export function reminderRecord(r: ReminderRecord) {
  return {
    reminder_id: r.id,
    note_id: r.note_id,
    block_id: r.block_id,
    instant: r.instant,
    instant_ms: r.instant_ms,
    audience: r.audience,
    revision: r.revision,
    created_ms: r.created_ms,
    fired_ms: r.fired_ms,
  };
}

const nowOf = (ctx: ActionContext) => ctx.services.reminders?.now() ?? Date.now();

export async function createReminder(
  ctx: ActionContext,
  noteId: string,
  ifMatch: string,
  body: { block_id: string; instant: string; audience?: 'everyone' | 'only_me' },
) {
  const scope = await openScope(ctx);
  const caller = callerOf(ctx);
  const n = visibleNote(scope, noteId);
  checkWritable(scope, n.path);
  const instantMs = parseInstant(body.instant, nowOf(ctx));
  const { bytes, etag } = await scope.vault.home.read(n.path);
  if (bare(ifMatch) !== etag) throw errors.staleEtag(etag);
  const text = bytes.toString('utf8');
  const blockId = body.block_id.replace(/^\^/, '');
  const block = extractFacts(text, n.path).blocks.find((b) => b.id === blockId);
  if (!block) {
    throw errors.notFound(`The note has no block anchor ^${blockId}`, { field: 'body.block_id', reason: 'block_not_found' });
  }
  const line = text.split(/\r\n|\n|\r/)[block.line - 1] ?? '';
  const excerpt = line.replace(new RegExp(`\\s*\\^${blockId}\\s*$`), '').replace(/^\s*(?:[-*+]\s+(?:\[.\]\s+)?|#+\s+)?/, '').trim().slice(0, 200);
  const now = nowOf(ctx);
  const record: ReminderRecord = {
    id: newId(),
    user_id: caller.userId,
    note_id: n.id,
    block_id: blockId,
    instant: body.instant,
    instant_ms: instantMs,
    audience: body.audience ?? 'only_me',
    revision: 1,
    created_ms: now,
    fired_ms: null,
    deleted_ms: null,
    title: n.title,
    excerpt,
  };
  await insertReminder(ctx.services.store, record);
  ctx.services.reminders?.rearm();
  return reminderRecord(record);
}

export async function listReminders(ctx: ActionContext, noteId: string) {
  const scope = await openScope(ctx);
  const caller = callerOf(ctx);
  const n = visibleNote(scope, noteId);
  const items = remindersOfNote(ctx.services.store, caller.userId, n.id)
    .filter((r) => r.deleted_ms === null)
    .sort((a, b) => a.instant_ms - b.instant_ms || a.id.localeCompare(b.id))
    .map(reminderRecord);
  return { items, next_cursor: null };
}

export async function deleteReminder(ctx: ActionContext, noteId: string, reminderId: string, ifMatch: string) {
  const scope = await openScope(ctx);
  const caller = callerOf(ctx);
  const n = visibleNote(scope, noteId);
  checkWritable(scope, n.path);
  await checkNoteEtag(scope, n.path, ifMatch);
  const noSuch = () => errors.notFound(`No such reminder: ${reminderId}`, { reminder_id: reminderId });
  const r = await updateReminder(ctx.services.store, { id: reminderId, userId: caller.userId, noteId: n.id }, (r) => {
    if (r.deleted_ms !== null) throw noSuch();
    r.deleted_ms = nowOf(ctx);
    r.revision += 1;
  });
  if (!r) throw noSuch();
  ctx.services.reminders?.rearm();
  return { reminder_id: r.id, revision: r.revision };
}

export async function restoreReminder(
  ctx: ActionContext,
  noteId: string,
  reminderId: string,
  ifMatch: string,
  expectedRevision: number,
) {
  const scope = await openScope(ctx);
  const caller = callerOf(ctx);
  const n = visibleNote(scope, noteId);
  checkWritable(scope, n.path);
  await checkNoteEtag(scope, n.path, ifMatch);
  const r = await updateReminder(ctx.services.store, { id: reminderId, userId: caller.userId, noteId: n.id }, (r) => {
    if (r.deleted_ms === null) {
      throw errors.conflict('The reminder is not removed', { reason: 'not_removed', revision: String(r.revision) });
    }
    if (r.revision !== expectedRevision) {
      throw errors.conflict('The reminder changed since it was removed', {
        reason: 'revision_mismatch',
        revision: String(r.revision),
      });
    }
    r.deleted_ms = null;
    r.revision += 1;
  });
  if (!r) throw errors.notFound(`No such reminder: ${reminderId}`, { reminder_id: reminderId });
  ctx.services.reminders?.rearm();
  return reminderRecord(r);
}

/** Who a reminder would reach and when, without creating anything. */
export async function previewReminder(
  ctx: ActionContext,
  body: { note_id: string; instant: string; audience: 'everyone' | 'only_me' },
) {
  const scope = await openScope(ctx);
  const caller = callerOf(ctx);
  let n;
  try {
    n = visibleNote(scope, body.note_id);
  } catch (e) {
    if (e instanceof AppError) throw errors.notFound(`No such note: ${body.note_id}`, { field: 'body.note_id' });
    throw e;
  }
  const instantMs = parseInstant(body.instant, nowOf(ctx));
  const users = listUsers(ctx.services.store);
  const recipients = recipientsOf(caller.userId, users).map((id) => {
    const u = users.find((x) => x.id === id)!;
    return { user_id: u.id, username: u.username, display_name: u.display_name };
  });
  return { note_id: n.id, audience: body.audience, instant: body.instant, instant_ms: instantMs, recipients };
}
