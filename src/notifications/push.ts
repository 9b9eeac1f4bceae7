/**
 * The web push actions: the Instance's public VAPID key and one subscription
 * per Installation. Delivery itself is in delivery.ts.
 */
import { callerOf, type ActionContext } from '../actions/context.js';
import { AppError, errors } from '../core/errors.js';
import type { PushSubscriptionRecord } from '../store/schema.js';
import { deletePushSubscriptions, savePushSubscription } from '../store/notifications.js';
import { pushEndpointAllowed, type PushDelivery } from './delivery.js';

function pushOf(ctx: ActionContext): PushDelivery {
  const p = ctx.services.reminders?.push;
  if (!p) throw new AppError('service_unavailable', 'Web push is not available on this server');
  return p;
}

export async function vapidPublicKey(ctx: ActionContext) {
  return { public_key: (await pushOf(ctx).keys()).public_key };
}

/** The subscription's shape is the action's schema; what is checked here is where it may send. */
export async function subscribe(
  ctx: ActionContext,
  body: { installation_id: string; subscription: { endpoint: string; keys: { p256dh: string; auth: string } } },
) {
  const push = pushOf(ctx);
  const userId = callerOf(ctx).userId;
  const { endpoint, keys } = body.subscription;
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
  await savePushSubscription(ctx.services.store, record);
  return { installation_id: record.installation_id, endpoint: record.endpoint, created_ms: record.created_ms };
}

export async function unsubscribe(ctx: ActionContext, installationId: string) {
  const userId = callerOf(ctx).userId;
  const removed = await deletePushSubscriptions(ctx.services.store, userId, installationId);
  if (removed === 0) throw errors.notFound(`No push subscription for installation ${installationId}`, { installation_id: installationId });
  return { installation_id: installationId, removed: true };
}
