/**
 * Whether a public link still lets a guest edit a document: checked at every connect, so a link
 * revoked, expired, stripped of `edit` or pointed elsewhere stops letting its guests in.
 */
import type { SidecarStore } from '../store/sidecar.js';
import { liveLink } from '../public/access.js';
import type { PublicLinkRecord } from '../public/link-store.js';
import type { DocRef } from './doc-ref.js';

/** The viewer of a guest ticket: the link's slug and the guest's id. */
export const guestViewer = (slug: string, guest: string) => `guest:${slug}/${guest}`;

/** The link behind a slug if it is live and lets guests edit a note; null otherwise. */
export function editableLink(store: SidecarStore, slug: string, now: number): (PublicLinkRecord & { target: { kind: 'note' | 'canvas'; note_id: string } }) | null {
  const live = liveLink(store, slug, now);
  if ('dead' in live || !live.link.permissions.edit) return null;
  const { link } = live;
  const t = link.target;
  return t.kind === 'note' || t.kind === 'canvas' ? (link as PublicLinkRecord & { target: typeof t }) : null;
}

export function guestMayEdit(store: SidecarStore, viewer: string, ref: DocRef, now: number): boolean {
  const m = /^guest:([^/]+)\//.exec(viewer);
  const link = m ? editableLink(store, m[1]!, now) : null;
  return link !== null && link.user_id === ref.ownerId && link.target.note_id === ref.noteId;
}
