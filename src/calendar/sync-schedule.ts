/**
 * Refreshes on a schedule: every `QUIRE_CALENDAR_SYNC_MINUTES` (default 15; 0 turns it off)
 * each enabled CalDAV account and each subscription of every user is refreshed, one after
 * another (the machine's cores serve requests meanwhile). A failure is recorded on the account
 * or subscription (`last_error`) and the next one still runs. Wired by the server's start-up.
 */
import { ownerScope } from '../collab/owner.js';
import type { Services } from '../core/services.js';
import { allSubscriptions, enabledAccounts } from './account-store.js';
import { calendarCode } from './lazy-load.js';

// Sync (tsdav, ical.js) is loaded by the first refresh due, not by every start.
const account = async () => (await calendarCode()).account;
const subscription = async () => (await calendarCode()).subscription;

export function scheduleMinutes(env: NodeJS.ProcessEnv = process.env): number {
  const n = Number(env.QUIRE_CALENDAR_SYNC_MINUTES ?? 15);
  return Number.isFinite(n) && n >= 0 ? n : 15;
}

export class CalendarSyncSchedule {
  private timer: NodeJS.Timeout | null = null;
  private round: Promise<void> = Promise.resolve();

  constructor(
    private readonly services: Services,
    private readonly log: (line: string) => void,
    private readonly everyMs = scheduleMinutes() * 60_000,
  ) {}

  start(): void {
    if (this.everyMs <= 0 || this.timer) return;
    this.timer = setInterval(() => {
      this.round = this.round.then(() => this.runOnce());
    }, this.everyMs);
    this.timer.unref();
  }

  /** One round over every account and subscription (also what the tests call). */
  async runOnce(): Promise<void> {
    const { store, config } = this.services;
    for (const a of enabledAccounts(store)) {
      try {
        await (await account()).runAccountSync(config, store, await ownerScope(this.services, a.user_id), a);
      } catch (e) {
        this.log(`calendar sync of account ${a.id} failed: ${(e as Error).message}`);
      }
    }
    for (const s of allSubscriptions(store)) {
      try {
        await (await subscription()).refreshSubscription({ store, config, userId: s.user_id }, await ownerScope(this.services, s.user_id), s.id);
      } catch (e) {
        this.log(`calendar subscription ${s.id} refresh failed: ${(e as Error).message}`);
      }
    }
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.round.catch(() => undefined);
  }
}
