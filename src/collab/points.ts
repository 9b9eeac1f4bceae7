/**
 * The history actions on the caller's own Notes (`item_id` is the Note's id): pages of points,
 * the text at a point, restoring a point (a new point with that text) and per-author undo.
 */
import type { ActionContext } from '../actions/context.js';
import { reply } from '../actions/reply.js';
import { AppError, errors } from '../core/errors.js';
import { checkWritable, openScope } from '../notes/access.js';
import { findNote } from '../notes/notes.js';
import { etagOf } from '../vault/etag.js';
import { authorKey, authorOfKey, parseAuthor } from './authors.js';
import type { Point } from './history.js';
import { callerOf } from './owner.js';
import { hubOf, setText, type DocRef } from './hub.js';
import { authorOfCaller } from './sessions.js';

/** Larger pages are refused: the caller is told to ask for fewer. */
export const MAX_POINTS_PAGE = 1000;
const DEFAULT_POINTS_PAGE = 100;

async function ownItem(ctx: ActionContext, itemId: string, write = false): Promise<DocRef> {
  const scope = await openScope(ctx);
  const note = findNote(scope, itemId);
  if (write) checkWritable(scope, note.path);
  return { ownerId: callerOf(ctx).userId, noteId: note.id };
}

const pointView = (p: Point) => ({ point: p.n, time: p.t, author: authorOfKey(p.a) });

/** One page of points, oldest first: after `after`, before `before`; with only `before`, the newest before it. */
export function pagePoints(points: readonly Point[], q: { after?: number; before?: number; limit?: number }) {
  const limit = q.limit ?? DEFAULT_POINTS_PAGE;
  if (limit > MAX_POINTS_PAGE) {
    throw new AppError('bad_request', `limit ${limit} overflows the page of at most ${MAX_POINTS_PAGE} points; request a smaller limit`, {
      details: { field: 'query.limit', limit: String(MAX_POINTS_PAGE), reason: 'overflow' },
    });
  }
  const inRange = points.filter((p) => (q.after === undefined || p.n > q.after) && (q.before === undefined || p.n < q.before));
  const page = q.before !== undefined && q.after === undefined ? inRange.slice(Math.max(0, inRange.length - limit)) : inRange.slice(0, limit);
  return { points: page.map(pointView), has_more: page.length < inRange.length };
}

export async function historyPoints(ctx: ActionContext, itemId: string, q: { after?: number; before?: number; limit?: number }) {
  const ref = await ownItem(ctx, itemId);
  const log = await hubOf(ctx.services).history(ref);
  return { item_id: ref.noteId, ...pagePoints(log.points, q) };
}

function pointNumber(log: { points: readonly Point[] }, raw: string): number {
  const n = /^\d{1,15}$/.test(raw) ? Number(raw) : NaN;
  if (!log.points.some((p) => p.n === n)) throw errors.notFound(`No history point ${raw}`, { field: 'path.point' });
  return n;
}

export async function previewPoint(ctx: ActionContext, itemId: string, point: string) {
  const ref = await ownItem(ctx, itemId);
  const log = await hubOf(ctx.services).history(ref);
  const bytes = Buffer.from(log.textAt(pointNumber(log, point)), 'utf8');
  return reply(bytes, { etag: etagOf(bytes), contentType: 'text/markdown; charset=utf-8' });
}

export async function restorePoint(ctx: ActionContext, itemId: string, point: string) {
  const ref = await ownItem(ctx, itemId, true);
  const hub = hubOf(ctx.services);
  const log = await hub.history(ref);
  const n = pointNumber(log, point);
  const text = log.textAt(n);
  const done = await hub.change(ref, authorOfCaller(ctx.services, callerOf(ctx)), (t) => setText(t, text));
  return { item_id: ref.noteId, restored: n, point: done.point, etag: done.etag };
}

export async function undoAuthor(ctx: ActionContext, itemId: string, body: { author: Record<string, unknown>; from: number; to: number }, apply: boolean) {
  if (body.from > body.to) throw new AppError('bad_request', '`from` must not be after `to`', { details: { field: 'body.from' } });
  const author = parseAuthor(body.author, 'body.author');
  const ref = await ownItem(ctx, itemId, apply);
  const hub = hubOf(ctx.services);
  // undo.js and yjs load here, at the first undo, not with the registry (docs/performance.md, "Start-up").
  const [{ planUndo }, { applyUpdate }] = await Promise.all([import('./undo.js'), import('yjs')]);
  const plan = planUndo((await hub.history(ref)).points, authorKey(author), body.from, body.to);
  const summary = { item_id: ref.noteId, author, from: body.from, to: body.to, points: plan.points, changes: plan.changes, conflicts: plan.conflicts };
  if (!apply) return summary;
  if (!plan.update) return { ...summary, changed: false, point: null };
  const update = plan.update;
  const done = await hub.change(ref, authorOfCaller(ctx.services, callerOf(ctx)), (t) => applyUpdate(t.doc!, update));
  return { ...summary, changed: true, point: done.point, etag: done.etag };
}
