/**
 * Session tickets: what `collab_*_session` hands a HocuspocusProvider as its token. A ticket
 * names one document, the author its edits are recorded under, the viewer whose access is
 * checked again at every connect, and whether the connection may write. It is signed with a key
 * kept under `<data>/state/collab/` (never in a Home), so providers reconnecting after a server
 * restart are still let in while the ticket is fresh. Connections last beyond a ticket's
 * expiry: it bounds when a connection may start, not how long it stays.
 */
import crypto from 'node:crypto';
import path from 'node:path';
import { stateKey } from '../core/state-key.js';

/** How long a ticket may open (and reopen) connections. */
export const TICKET_TTL_MS = 10 * 60 * 1000;

export interface Ticket {
  /** Document name. */
  d: string;
  /** Viewer: a user id, or `guest:<link id>` for a public-link guest. */
  v: string;
  /** Author key (authors.ts). */
  a: string;
  /** Read-only connection. */
  ro: boolean;
  /** Expiry, Unix ms. */
  exp: number;
}

export class TicketKey {
  private constructor(private readonly key: Buffer) {}

  static open(stateDir: string): TicketKey {
    return new TicketKey(stateKey(path.join(stateDir, 'collab', 'ticket.key')));
  }

  issue(t: Omit<Ticket, 'exp'>, now: number, ttlMs = TICKET_TTL_MS): string {
    const body = Buffer.from(JSON.stringify({ ...t, exp: now + ttlMs })).toString('base64url');
    return `qcollab_${body}.${this.sign(body)}`;
  }

  /** The ticket's contents, or null when it is forged, malformed or expired. */
  verify(token: string, now: number): Ticket | null {
    const m = /^qcollab_([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]+)$/.exec(token);
    if (!m) return null;
    const expected = Buffer.from(this.sign(m[1]!));
    const given = Buffer.from(m[2]!);
    if (expected.length !== given.length || !crypto.timingSafeEqual(expected, given)) return null;
    try {
      const t = JSON.parse(Buffer.from(m[1]!, 'base64url').toString('utf8')) as Ticket;
      return typeof t.exp === 'number' && t.exp > now ? t : null;
    } catch {
      return null;
    }
  }

  private sign(body: string): string {
    return crypto.createHmac('sha256', this.key).update(body).digest('base64url');
  }
}
