/**
 * Public link records in the sidecar store: the one module that reads or writes them.
 * A store file written before public links existed has no `public_links` array; it reads as empty.
 */
import type { PublicLinkRecord, SidecarData, UserRecord } from '../store/schema.js';
import type { SidecarStore } from '../store/sidecar.js';

export type { PublicLinkRecord };

const linksOf = (data: Readonly<SidecarData>): readonly PublicLinkRecord[] => data.public_links ?? [];

function tableOf(data: SidecarData): PublicLinkRecord[] {
  if (!Array.isArray(data.public_links)) data.public_links = [];
  return data.public_links;
}

/** Adds a link unless its slug is taken (by any link, revoked ones included: an old URL never changes meaning). */
export function insertLink(store: SidecarStore, rec: PublicLinkRecord): Promise<boolean> {
  return store.transact((data) => {
    const table = tableOf(data);
    if (table.some((l) => l.slug === rec.slug)) return false;
    table.push(rec);
    return true;
  });
}

export function findLinkBySlug(store: SidecarStore, slug: string): PublicLinkRecord | undefined {
  return linksOf(store.snapshot()).find((l) => l.slug === slug);
}

export function findOwnLink(store: SidecarStore, userId: string, id: string): PublicLinkRecord | undefined {
  return linksOf(store.snapshot()).find((l) => l.id === id && l.user_id === userId);
}

/** The user's links, newest first. */
export function listOwnLinks(store: SidecarStore, userId: string): PublicLinkRecord[] {
  return linksOf(store.snapshot())
    .filter((l) => l.user_id === userId)
    .sort((a, b) => b.created_at - a.created_at || (a.id < b.id ? -1 : 1));
}

/**
 * Applies `change` to the user's link `id` inside one transaction; `change` may throw to leave
 * the record as it was. Returns the new record, or undefined when there is no such link.
 */
export function changeOwnLink(
  store: SidecarStore,
  userId: string,
  id: string,
  change: (current: PublicLinkRecord, all: readonly PublicLinkRecord[]) => PublicLinkRecord,
): Promise<PublicLinkRecord | undefined> {
  return store.transact((data) => {
    const table = tableOf(data);
    const i = table.findIndex((l) => l.id === id && l.user_id === userId);
    if (i < 0) return undefined;
    const next = change(table[i]!, table);
    table[i] = next;
    return next;
  });
}

/** Whether a user still exists and may share: a disabled or removed owner's links answer 404. */
export function ownerActive(store: SidecarStore, userId: string): { id: string; username: string; role: UserRecord['role'] } | null {
  const u = store.snapshot().users.find((x) => x.id === userId);
  return u && !u.disabled ? { id: u.id, username: u.username, role: u.role } : null;
}
