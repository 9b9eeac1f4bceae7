/**
 * Sign-in ceremonies in progress, kept in the sidecar store so that they
 * survive a restart and work whichever process answers. A flow is single
 * use: finishing takes it out of the store first (in its own transaction),
 * so a replayed or failed finish can never use it again. Expired flows are
 * ignored and swept whenever a new one starts.
 */
import { randomBytes } from 'node:crypto';
import { AppError } from '../core/errors.js';
import type { SidecarStore } from '../store/sidecar.js';
import type { AuthFlowRecord } from '../store/schema.js';
import { insertFlow, takeFlow as takeFlowRecord } from '../store/sign-in.js';

/** How long a started ceremony stays usable. */
export const FLOW_TTL_MS = 5 * 60 * 1000;

export const randomToken = (bytes = 32): string => randomBytes(bytes).toString('base64url');

/** Starts a flow, sweeping expired ones. */
export async function addFlow(
  store: SidecarStore,
  flow: Omit<AuthFlowRecord, 'id' | 'created_at' | 'expires_at'>,
  now: number,
  ttlMs = FLOW_TTL_MS,
): Promise<AuthFlowRecord> {
  const record: AuthFlowRecord = { id: randomToken(), created_at: now, expires_at: now + ttlMs, ...flow };
  await insertFlow(store, record, now);
  return record;
}

export const flowGone = () =>
  new AppError('bad_request', 'This sign-in flow is unknown, already used or expired; start again', {
    details: { field: 'body.flow', reason: 'flow_expired' },
  });

/**
 * Removes and returns the flow `id` of one of `kinds`. It is gone from the
 * store whatever happens next. `check` may refuse it (the flow is still spent).
 */
export async function takeFlow(
  store: SidecarStore,
  id: string,
  kinds: ReadonlyArray<AuthFlowRecord['kind']>,
  now: number,
): Promise<AuthFlowRecord> {
  const flow = await takeFlowRecord(store, id);
  if (!flow || flow.expires_at <= now || !kinds.includes(flow.kind)) throw flowGone();
  return flow;
}
