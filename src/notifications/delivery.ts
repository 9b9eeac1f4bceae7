/**
 * Web push delivery with VAPID: keys made once per Instance and kept in the
 * sidecar store, delivery of fired reminders (held during the user's quiet
 * hours and sent when they end). A push service answering 404 or 410 removes
 * the subscription. Kept apart from the push actions (push.ts) because the
 * reminder scheduler, which the services hold, drives it.
 */
import type https from 'node:https';
import { newId } from '../core/ids.js';
import { resolveHost } from '../core/outbound.js';
import type { SidecarStore } from '../store/sidecar.js';
import type { InboxItemRecord, PushSubscriptionRecord } from '../store/schema.js';
import {
  deletePushSubscriptions,
  holdPushes,
  nextHeldPushAt,
  pushSubscriptionsOf,
  quietHoursOf,
  releaseHeldPushes,
  vapidKeys,
} from '../store/notifications.js';
import { inQuietHours, quietEndsAt } from './quiet-time.js';

/** web-push is loaded at the first push or key request, not at every server's start (docs/performance.md, "Start-up"). */
const webPush = () => import('web-push').then((m) => m.default);

const SAFETY_NET_MS = 30_000;

/** Push services browsers use; others only through `QUIRE_PUSH_ALLOWED_HOSTS`. */
export const PUSH_HOSTS = ['fcm.googleapis.com', 'updates.push.services.mozilla.com', 'web.push.apple.com'];
export const PUSH_HOST_SUFFIXES = ['.notify.windows.com', '.push.apple.com'];

/** Extra allowed host names (exact, comma-separated) from the operator's `QUIRE_PUSH_ALLOWED_HOSTS`. */
function extraHosts(): string[] {
  return (process.env.QUIRE_PUSH_ALLOWED_HOSTS ?? '')
    .split(',')
    .map((h) => h.trim().toLowerCase())
    .filter(Boolean);
}

export function pushEndpointAllowed(endpoint: string): boolean {
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    return false;
  }
  if (url.protocol !== 'https:' || url.username || url.password) return false;
  const host = url.hostname.toLowerCase().replace(/^\[|\]$/g, '');
  return (
    PUSH_HOSTS.includes(host) || PUSH_HOST_SUFFIXES.some((s) => host.endsWith(s)) || extraHosts().includes(host)
  );
}

export class PushDelivery {
  /** The HTTPS agent for push requests (tests trust a local certificate through it). */
  agent: https.Agent | undefined;
  /** Config.allowPrivateFetch (QUIRE_FETCH_ALLOW_PRIVATE=1), set by the server's start-up: push endpoints pass the shared outbound address check. */
  allowPrivate = false;
  private timer: NodeJS.Timeout | null = null;
  private stopped = true;
  private chain: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly store: SidecarStore,
    private readonly now: () => number,
    private readonly log: (line: string) => void = () => undefined,
  ) {}

  /** The Instance's VAPID keys, made on first use. */
  async keys(): Promise<{ public_key: string; private_key: string }> {
    const webpush = await webPush();
    return vapidKeys(this.store, () => {
      const k = webpush.generateVAPIDKeys();
      return { public_key: k.publicKey, private_key: k.privateKey, created_ms: this.now() };
    });
  }

  start(): void {
    this.stopped = false;
    this.rearm();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.chain.catch(() => undefined);
  }

  private serial(fn: () => Promise<void>): Promise<void> {
    const run = () => fn().catch((e) => this.log(`push: ${(e as Error).message}`));
    const next = this.chain.then(run, run);
    this.chain = next.catch(() => undefined);
    return next;
  }

  /** Sends a push for each item now, or holds it until its user's quiet hours end. */
  deliver(items: InboxItemRecord[]): Promise<void> {
    return this.serial(async () => {
      const now = new Date(this.now());
      const send: InboxItemRecord[] = [];
      const hold: { item: InboxItemRecord; due: number }[] = [];
      for (const item of items) {
        if (pushSubscriptionsOf(this.store, item.user_id).length === 0) continue;
        const q = quietHoursOf(this.store, item.user_id);
        if (q && inQuietHours(now, q.quiet_start, q.quiet_end)) hold.push({ item, due: quietEndsAt(now, q.quiet_end) });
        else send.push(item);
      }
      if (hold.length > 0) {
        await holdPushes(this.store, hold.map((h) => ({ id: newId(), user_id: h.item.user_id, item_id: h.item.id, due_ms: h.due })));
      }
      for (const item of send) await this.sendItem(item);
      this.arm();
    });
  }

  /** Re-arms the timer for held pushes (after quiet hours or the held list changed). */
  rearm(): void {
    if (this.stopped) return;
    void this.serial(async () => {
      await this.releaseDue();
      this.arm();
    });
  }

  private arm(): void {
    if (this.stopped) return;
    if (this.timer) clearTimeout(this.timer);
    const next = nextHeldPushAt(this.store);
    const delay = next === null ? SAFETY_NET_MS : Math.min(SAFETY_NET_MS, Math.max(0, next - this.now()));
    this.timer = setTimeout(() => this.rearm(), delay);
    this.timer.unref?.();
  }

  /** Sends the held pushes whose quiet hours ended (each once: removed from the store before sending). */
  private async releaseDue(): Promise<void> {
    const now = this.now();
    const next = nextHeldPushAt(this.store);
    if (next === null || next > now) return;
    const items = await releaseHeldPushes(this.store, now);
    for (const item of items) await this.sendItem(item);
  }

  private async sendItem(item: InboxItemRecord): Promise<void> {
    const subs = pushSubscriptionsOf(this.store, item.user_id);
    if (subs.length === 0) return;
    const keys = await this.keys();
    const payload = JSON.stringify({
      kind: item.kind,
      id: item.id,
      title: item.title,
      body: item.excerpt,
      note_id: item.note_id,
      block_id: item.block_id,
    });
    for (const sub of subs) await this.sendOne(sub, payload, keys);
  }

  private async sendOne(sub: PushSubscriptionRecord, payload: string, keys: { public_key: string; private_key: string }) {
    try {
      // An allowed push host that resolves to a private address (DNS rebinding, a hostile resolver) is refused like any outbound fetch.
      await resolveHost(new URL(sub.endpoint), this.allowPrivate);
      await (await webPush()).sendNotification({ endpoint: sub.endpoint, keys: { p256dh: sub.p256dh, auth: sub.auth } }, payload, {
        vapidDetails: {
          subject: process.env.QUIRE_VAPID_SUBJECT ?? 'mailto:quire@localhost',
          publicKey: keys.public_key,
          privateKey: keys.private_key,
        },
        TTL: 24 * 3600,
        timeout: 10_000,
        ...(this.agent ? { agent: this.agent } : {}),
      });
    } catch (e) {
      const status = (e as { statusCode?: number }).statusCode;
      if (status === 404 || status === 410) {
        await deletePushSubscriptions(this.store, sub.user_id, sub.installation_id, sub.endpoint);
        this.log(`push: subscription of installation ${sub.installation_id} is gone (${status}); removed`);
      } else {
        this.log(`push: sending to installation ${sub.installation_id} failed: ${status ?? (e as Error).message}`);
      }
    }
  }
}
