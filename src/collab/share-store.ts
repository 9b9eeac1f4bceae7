/**
 * The share records of the sidecar store (`shares`): every read and write of them goes through
 * these named operations. A file written before sharing existed has no `shares` array: it reads
 * as empty and is created on the first share.
 */
import type { SidecarStore } from '../store/sidecar.js';
import type { ShareRecord, SidecarData } from '../store/schema.js';

export type ShareAccess = ShareRecord['access'];

function sharesOf(data: Readonly<SidecarData>): readonly ShareRecord[] {
  return data.shares ?? [];
}

/** Creates the share, or changes its access when the note is already shared with that user. */
export function putShare(store: SidecarStore, rec: Omit<ShareRecord, 'created_at'>, now: number): Promise<{ share: ShareRecord; created: boolean }> {
  return store.transact((data) => {
    const all = (data.shares ??= []);
    const found = all.find((s) => s.owner_id === rec.owner_id && s.note_id === rec.note_id && s.user_id === rec.user_id);
    if (found) {
      found.access = rec.access;
      return { share: { ...found }, created: false };
    }
    const share: ShareRecord = { ...rec, created_at: now };
    all.push(share);
    return { share: { ...share }, created: true };
  });
}

/** Removes the share; false when there was none. */
export function removeShare(store: SidecarStore, ownerId: string, noteId: string, userId: string): Promise<boolean> {
  return store.transact((data) => {
    const all = data.shares ?? [];
    const i = all.findIndex((s) => s.owner_id === ownerId && s.note_id === noteId && s.user_id === userId);
    if (i < 0) return false;
    all.splice(i, 1);
    return true;
  });
}

export function sharesOfNote(store: SidecarStore, ownerId: string, noteId: string): ShareRecord[] {
  return sharesOf(store.snapshot()).filter((s) => s.owner_id === ownerId && s.note_id === noteId);
}

export function sharesWithUser(store: SidecarStore, userId: string): ShareRecord[] {
  return sharesOf(store.snapshot()).filter((s) => s.user_id === userId);
}

export function findShare(store: SidecarStore, ownerId: string, noteId: string, userId: string): ShareRecord | null {
  return sharesOf(store.snapshot()).find((s) => s.owner_id === ownerId && s.note_id === noteId && s.user_id === userId) ?? null;
}
