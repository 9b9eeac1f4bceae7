/**
 * Web push with VAPID: keys made once per Instance and kept in the sidecar
 * store, one subscription per Installation, delivery of fired reminders (held
 * during the user's quiet hours and sent when they end). A push service
 * answering 404 or 410 removes the subscription.
 */
import type https from 'node:https';
import webpush from 'web-push';
import type { ActionContext } from '../actions/context.js';
import { callerOf } from '../accounts/handlers.js';
import { AppError, errors } from '../core/errors.js';
import { newId } from '../core/ids.js';
import type { SidecarStore } from '../store/sidecar.js';
import { notificationTables, type InboxItemRecord, type PushSubscriptionRecord } from '../store/schema.js';
import { inQuietHours, quietEndsAt } from './quiet-hours.js';

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
    const have = this.store.snapshot().vapid;
    if (have) return have;
    return this.store.transact((data) => {
      if (!data.vapid) {
        const k = webpush.generateVAPIDKeys();
        data.vapid = { public_key: k.publicKey, private_key: k.privateKey, created_ms: this.now() };
      }
      return data.vapid;
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
      const data = this.store.snapshot();
      const now = new Date(this.now());
      const send: InboxItemRecord[] = [];
      const hold: { item: InboxItemRecord; due: number }[] = [];
      for (const item of items) {
        if (!(data.push_subscriptions ?? []).some((s) => s.user_id === item.user_id)) continue;
        const q = (data.quiet_hours ?? []).find((x) => x.user_id === item.user_id);
        if (q && inQuietHours(now, q.quiet_start, q.quiet_end)) hold.push({ item, due: quietEndsAt(now, q.quiet_end) });
        else send.push(item);
      }
      if (hold.length > 0) {
        await this.store.transact((d) => {
          const t = notificationTables(d);
          for (const h of hold) t.held_pushes.push({ id: newId(), user_id: h.item.user_id, item_id: h.item.id, due_ms: h.due });
        });
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
    let next: number | null = null;
    for (const h of this.store.snapshot().held_pushes ?? []) if (next === null || h.due_ms < next) next = h.due_ms;
    const delay = next === null ? SAFETY_NET_MS : Math.min(SAFETY_NET_MS, Math.max(0, next - this.now()));
    this.timer = setTimeout(() => this.rearm(), delay);
    this.timer.unref?.();
  }

  /** Sends the held pushes whose quiet hours ended (each once: removed from the store before sending). */
  private async releaseDue(): Promise<void> {
    const now = this.now();
    if (!(this.store.snapshot().held_pushes ?? []).some((h) => h.due_ms <= now)) return;
    const items = await this.store.transact((d) => {
      const t = notificationTables(d);
      const due = t.held_pushes.filter((h) => h.due_ms <= now);
      t.held_pushes = t.held_pushes.filter((h) => h.due_ms > now);
      return due
        .map((h) => t.inbox.find((i) => i.id === h.item_id && i.user_id === h.user_id))
        .filter((i): i is InboxItemRecord => i !== undefined && i.state !== 'done');
    });
    for (const item of items) await this.sendItem(item);
  }

  private async sendItem(item: InboxItemRecord): Promise<void> {
    const subs = (this.store.snapshot().push_subscriptions ?? []).filter((s) => s.user_id === item.user_id);
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
      await webpush.sendNotification({ endpoint: sub.endpoint, keys: { p256dh: sub.p256dh, auth: sub.auth } }, payload, {
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
        await this.store.transact((d) => {
          const t = notificationTables(d);
          t.push_subscriptions = t.push_subscriptions.filter(
            (s) => !(s.user_id === sub.user_id && s.installation_id === sub.installation_id && s.endpoint === sub.endpoint),
          );
        });
        this.log(`push: subscription of installation ${sub.installation_id} is gone (${status}); removed`);
      } else {
        this.log(`push: sending to installation ${sub.installation_id} failed: ${status ?? (e as Error).message}`);
      }
    }
  }
}

function pushOf(ctx: ActionContext): PushDelivery {
  const p = ctx.services.reminders?.push;
  if (!p) throw new AppError('service_unavailable', 'Web push is not available on this server');
  return p;
}

export async function vapidPublicKey(ctx: ActionContext) {
  return { public_key: (await pushOf(ctx).keys()).public_key };
}

const str = (v: unknown): v is string => typeof v === 'string' && v.length > 0;

export async function subscribe(ctx: ActionContext, body: { installation_id: string; subscription: Record<string, unknown> }) {
  const push = pushOf(ctx);
  const userId = callerOf(ctx).userId;
  if (!str(body.installation_id)) throw errors.badRequest('installation_id is required', { field: 'body.installation_id' });
  const { endpoint, keys } = body.subscription as { endpoint?: unknown; keys?: { p256dh?: unknown; auth?: unknown } };
  if (!str(endpoint) || !keys || !str(keys.p256dh) || !str(keys.auth)) {
    throw errors.badRequest('subscription needs endpoint and keys.p256dh and keys.auth', { field: 'body.subscription' });
  }
  if (!pushEndpointAllowed(endpoint)) {
    throw new AppError('push_endpoint_rejected', 'The endpoint is not an HTTPS address of a known push service', {
      details: { field: 'body.subscription.endpoint' },
    });
  }
  await push.keys();
  const record: PushSubscriptionRecord = {
    user_id: userId,
    installation_id: body.installation_id,
    endpoint,
    p256dh: keys.p256dh,
    auth: keys.auth,
    created_ms: Date.now(),
  };
  await ctx.services.store.transact((data) => {
    const t = notificationTables(data);
    // One subscription per Installation; an endpoint belongs to whoever registered it last.
    t.push_subscriptions = t.push_subscriptions.filter(
      (s) => !(s.user_id === userId && s.installation_id === body.installation_id) && s.endpoint !== endpoint,
    );
    t.push_subscriptions.push(record);
  });
  return { installation_id: record.installation_id, endpoint: record.endpoint, created_ms: record.created_ms };
}

export async function unsubscribe(ctx: ActionContext, installationId: string) {
  const userId = callerOf(ctx).userId;
  const removed = await ctx.services.store.transact((data) => {
    const t = notificationTables(data);
    const before = t.push_subscriptions.length;
    t.push_subscriptions = t.push_subscriptions.filter((s) => !(s.user_id === userId && s.installation_id === installationId));
    return before - t.push_subscriptions.length;
  });
  if (removed === 0) throw errors.notFound(`No push subscription for installation ${installationId}`, { installation_id: installationId });
  return { installation_id: installationId, removed: true };
}
