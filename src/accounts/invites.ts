/**
 * Invite links and the Instance's sign-in policy: open signup, whether the
 * share dialog may invite, and the sign-in options the browser pages show.
 */
import { callerOf, type ActionContext } from '../actions/context.js';
import { reply } from '../actions/reply.js';
import { publicBaseUrl, relyingParty } from '../core/config.js';
import { errors } from '../core/errors.js';
import { hashSecret, newId, newSecret } from '../core/ids.js';
import type { InviteRecord } from '../store/schema.js';
import { insertInvite, listInvites as allInvites, updateInvite } from '../store/sign-in.js';
import { hasUsers, instanceSettings, updateInstance } from '../store/users.js';
import type { Role } from './caller.js';
import { checkTtl } from './passkeys.js';

export const INVITE_PREFIX = 'qi';

function inviteStatus(i: InviteRecord, now: number): 'active' | 'used' | 'revoked' | 'expired' {
  if (i.revoked_at !== null) return 'revoked';
  if (i.used_at !== null) return 'used';
  if (i.expires_at <= now) return 'expired';
  return 'active';
}

export function publicInvite(i: InviteRecord, now: number) {
  return {
    id: i.id,
    role: i.role,
    quota_override_bytes: i.quota_override_bytes,
    ttl_secs: i.ttl_secs,
    created_by: i.created_by,
    created_at: i.created_at,
    expires_at: i.expires_at,
    used_at: i.used_at,
    used_by: i.used_by,
    revoked_at: i.revoked_at,
    status: inviteStatus(i, now),
  };
}

export async function createInvite(ctx: ActionContext, body: { role: Role; quota_override_bytes?: number | null; ttl_secs: number }) {
  const caller = callerOf(ctx);
  checkTtl(body.ttl_secs);
  if (body.role === 'owner' && caller.role !== 'owner') {
    throw errors.forbidden('Only an owner can invite an owner', { reason: 'owner_only' });
  }
  const token = newSecret(INVITE_PREFIX);
  const now = ctx.now();
  const invite: InviteRecord = {
    id: newId(),
    token_hash: hashSecret(token),
    role: body.role,
    quota_override_bytes: body.quota_override_bytes ?? null,
    ttl_secs: body.ttl_secs,
    created_by: caller.userId,
    created_at: now,
    expires_at: now + body.ttl_secs * 1000,
    used_at: null,
    used_by: null,
    revoked_at: null,
  };
  await insertInvite(ctx.services.store, invite);
  const url = `${publicBaseUrl(ctx.services.config)}/invite#token=${token}`;
  return reply({ invite: publicInvite(invite, now), token, url }, { status: 201 });
}

export function listInvites(ctx: ActionContext) {
  const now = ctx.now();
  const items = [...allInvites(ctx.services.store)]
    .sort((a, b) => b.created_at - a.created_at)
    .map((i) => publicInvite(i, now));
  return { items, next_cursor: null };
}

export async function revokeInvite(ctx: ActionContext, id: string) {
  const now = ctx.now();
  const inv = await updateInvite(ctx.services.store, id, (inv) => {
    if (inv.used_at !== null) throw errors.conflict('This invite was already used', { reason: 'invite_used' });
    inv.revoked_at ??= now;
  });
  if (!inv) throw errors.notFound(`No invite ${id}`, { id });
  return publicInvite(inv, now);
}

export async function setSignup(ctx: ActionContext, open: boolean) {
  await updateInstance(ctx.services.store, { open_signup: open });
  return { open_signup: open };
}

export function shareInvitesSetting(ctx: ActionContext) {
  return { share_invites: instanceSettings(ctx.services.store).share_invites };
}

export async function setShareInvitesSetting(ctx: ActionContext, value: boolean) {
  await updateInstance(ctx.services.store, { share_invites: value });
  return { share_invites: value };
}

/** What the sign-in pages need to know before anyone signs in. Reveals no User data. */
export function authOptions(ctx: ActionContext) {
  const config = ctx.services.config;
  const rp = relyingParty(config);
  return {
    instance_name: config.instanceName,
    setup_required: !hasUsers(ctx.services.store),
    open_signup: instanceSettings(ctx.services.store).open_signup,
    passkeys: true,
    rp_id: rp.id,
    origin: rp.origin,
    oidc_providers: config.oidcProviders.map((p) => ({ key: p.key, name: p.name })),
  };
}
