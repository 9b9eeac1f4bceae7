/**
 * Where a document's history is kept (src/collab/history.ts), apart from
 * the history itself: the hub names the files of every document it opens,
 * while history.ts and yjs load at the first collaboration use
 * (docs/performance.md, "Start-up").
 */
import crypto from 'node:crypto';
import path from 'node:path';

/** A file name for a note id: the id itself when it is plain, else its hash. */
export function fileStem(noteId: string): string {
  return /^[A-Za-z0-9_-]{1,100}$/.test(noteId) ? noteId : `h-${crypto.createHash('sha256').update(noteId).digest('hex')}`;
}

export function historyDir(stateDir: string, ownerId: string): string {
  return path.join(stateDir, 'history', fileStem(ownerId));
}
