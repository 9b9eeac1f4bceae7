/**
 * Fires block reminders at their instant. One `setTimeout` for the next due
 * reminder (or snoozed inbox item), re-armed whenever reminders change, with a
 * 30 s safety net. Firing marks the reminder fired and creates the inbox items
 * in one sidecar transaction, so a crash can never fire one twice; on start,
 * reminders that fell due while the server was down fire once.
 */
import { newId } from '../core/ids.js';
import { PushDelivery } from '../notifications/delivery.js';
import type { SidecarStore } from '../store/sidecar.js';
import type { InboxItemRecord, ReminderRecord, UserRecord } from '../store/schema.js';
import { fireDue, nextFiringAt } from '../store/notifications.js';

export const SAFETY_NET_MS = 30_000;

/**
 * Who a reminder reaches at fire time. Homes are per user, so the only user who
 * can see a Note is its owner, who is also the setter: `everyone` and `only_me`
 * both reach the owner, and nobody while the owner is disabled or removed.
 */
export function recipientsOf(userId: string, users: readonly UserRecord[]): string[] {
  const u = users.find((x) => x.id === userId);
  return u && !u.disabled ? [u.id] : [];
}

export interface FiredItem {
  item: InboxItemRecord;
  /** True when a snoozed item fired again. */
  again: boolean;
}

export class ReminderScheduler {
  private timer: NodeJS.Timeout | null = null;
  private chain: Promise<unknown> = Promise.resolve();
  private stopped = true;
  private readonly listeners = new Set<(fired: FiredItem[]) => void>();
  /** Web push delivery of what fires (held during quiet hours). */
  readonly push: PushDelivery;

  constructor(
    private readonly store: SidecarStore,
    readonly now: () => number = Date.now,
    private readonly log: (line: string) => void = () => undefined,
  ) {
    this.push = new PushDelivery(store, now, log);
    this.onFired((fired) => void this.push.deliver(fired.map((f) => f.item)));
  }

  /** Called after each firing with the inbox items created or re-surfaced (push delivery listens here). */
  onFired(cb: (fired: FiredItem[]) => void): () => void {
    this.listeners.add(cb);
    return () => this.listeners.delete(cb);
  }

  /** Fires what is overdue (e.g. came due while the server was down), then arms the timer. */
  async start(): Promise<void> {
    this.stopped = false;
    this.push.start();
    await this.tick();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.chain.catch(() => undefined);
    await this.push.stop();
  }

  /** Re-arms the timer after reminders or snoozes changed. */
  rearm(): void {
    if (this.stopped) return;
    void this.tick();
  }

  /** Fires everything due now (serialised), then arms the timer for the next one. */
  tick(): Promise<void> {
    const run = async () => {
      if (this.stopped) return;
      try {
        const fired = await this.fireDue();
        if (fired.length > 0) for (const cb of this.listeners) cb(fired);
      } catch (e) {
        this.log(`reminders: firing failed: ${(e as Error).message}`);
      }
      this.arm();
    };
    const next = this.chain.then(run, run);
    this.chain = next.catch(() => undefined);
    return next;
  }

  private arm(): void {
    if (this.stopped) return;
    if (this.timer) clearTimeout(this.timer);
    const next = nextFiringAt(this.store);
    const delay = next === null ? SAFETY_NET_MS : Math.min(SAFETY_NET_MS, Math.max(0, next - this.now()));
    this.timer = setTimeout(() => void this.tick(), delay);
    this.timer.unref?.();
  }

  private async fireDue(): Promise<FiredItem[]> {
    const due = nextFiringAt(this.store);
    if (due === null || due > this.now()) return [];
    const now = this.now();
    return fireDue(this.store, now, { recipients: recipientsOf, itemFor: (r, userId) => itemFor(r, userId, now) });
  }
}

function itemFor(r: ReminderRecord, userId: string, now: number): InboxItemRecord {
  return {
    id: newId(),
    user_id: userId,
    created_ms: now,
    read: false,
    kind: 'block_reminder',
    note_id: r.note_id,
    block_id: r.block_id,
    title: r.title,
    excerpt: r.excerpt,
    reminder_id: r.id,
    state: 'pending',
    snoozed_until_ms: null,
  };
}
