/**
 * Per-author undo over a range of history points, keeping everyone else's changes.
 *
 * The history is replayed into a fresh document (no garbage collection, so deleted text can be
 * brought back), the chosen author's points in the range applied with one origin that a Yjs
 * UndoManager tracks (`trackedOrigins`), every other point with another. Undoing everything
 * the manager captured reverses exactly that author's insertions and deletions; text others
 * typed, before or after, stays where they put it, because Yjs positions are items, not offsets.
 * The result is a Yjs update against the replayed state, which the live document applies as one
 * new point. (A text-diff rebase was the alternative; it cannot tell one author's characters
 * from another's once they are next to each other, which the CRDT items can.)
 *
 * A preflight lists the author's points, the text edits the undo makes and the conflicts: text
 * of theirs that others already deleted (nothing left to undo there), and text others typed
 * inside theirs (it stays while its surroundings go).
 */
import * as Y from 'yjs';
import type { Point } from './history.js';
import { authorOfKey, type Author } from './authors.js';
import { diffText } from './text-diff.js';

export interface UndoConflict {
  kind: 'deleted_by_other' | 'typed_inside';
  /** The other author's point. */
  point: number;
  author: Author;
  text: string;
}

export interface UndoPlan {
  points: number[];
  changes: Array<{ position: number; deleted: string; inserted: string }>;
  conflicts: UndoConflict[];
  /** Applied to the live document, it makes the undo; null when there is nothing to undo. */
  update: Uint8Array | null;
  textAfter: string;
}

interface Range {
  client: number;
  clock: number;
  len: number;
  point: number;
}

function pointOf(ranges: Map<number, Range[]>, id: Y.ID): number | null {
  for (const r of ranges.get(id.client) ?? []) if (id.clock >= r.clock && id.clock < r.clock + r.len) return r.point;
  return null;
}

export function planUndo(history: readonly Point[], author: string, from: number, to: number): UndoPlan {
  const doc = new Y.Doc({ gc: false });
  const text = doc.getText('content');
  const tracked = { undo: author };
  const untracked = { other: true };
  const um = new Y.UndoManager(text, { trackedOrigins: new Set([tracked]), captureTimeout: 0 });
  const inserted = new Map<number, Range[]>();
  const deletedBy = new Map<Y.Item, number>();
  const authorOfPoint = new Map<number, string>();
  let current = 0;
  doc.on('afterTransaction', (tr: Y.Transaction) => {
    tr.afterState.forEach((end, client) => {
      const start = tr.beforeState.get(client) ?? 0;
      if (end > start) {
        const list = inserted.get(client) ?? [];
        list.push({ client, clock: start, len: end - start, point: current });
        inserted.set(client, list);
      }
    });
    Y.iterateDeletedStructs(tr, tr.deleteSet, (s) => {
      if (s instanceof Y.Item && !deletedBy.has(s)) deletedBy.set(s, current);
    });
  });
  const mine: number[] = [];
  for (const p of history) {
    current = p.n;
    authorOfPoint.set(p.n, p.a);
    const ours = p.a === author && p.n >= from && p.n <= to;
    if (ours) mine.push(p.n);
    Y.applyUpdate(doc, Buffer.from(p.u, 'base64'), ours ? tracked : untracked);
  }
  const before = text.toString();
  const isMine = (n: number | null) => n !== null && mine.includes(n);
  const conflicts: UndoConflict[] = [];
  for (let item = (text as unknown as { _start: Y.Item | null })._start; item; item = item.right) {
    if (!(item.content instanceof Y.ContentString)) continue;
    const by = pointOf(inserted, item.id);
    if (isMine(by) && item.deleted) {
      const d = deletedBy.get(item);
      if (d !== undefined && authorOfPoint.get(d) !== author) {
        conflicts.push({ kind: 'deleted_by_other', point: d, author: authorOfKey(authorOfPoint.get(d)!), text: item.content.str });
      }
    } else if (by !== null && by >= from && authorOfPoint.get(by) !== author && !item.deleted) {
      const nextToMine = (id: Y.ID | null) => id !== null && isMine(pointOf(inserted, id));
      if (nextToMine(item.origin) && nextToMine(item.rightOrigin)) {
        conflicts.push({ kind: 'typed_inside', point: by, author: authorOfKey(authorOfPoint.get(by)!), text: item.content.str });
      }
    }
  }
  const sv = Y.encodeStateVector(doc);
  current = -1;
  while (um.undoStack.length > 0) um.undo();
  um.destroy();
  const after = text.toString();
  const changes = diffText(before, after).map((e) => ({ position: e.pos, deleted: before.slice(e.pos, e.pos + e.del), inserted: e.ins }));
  const update = after === before ? null : Y.encodeStateAsUpdate(doc, sv);
  doc.destroy();
  return { points: mine, changes, conflicts, update, textAfter: after };
}
