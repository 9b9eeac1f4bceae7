/**
 * Passkeys (WebAuthn, through @simplewebauthn/server): registration for the
 * first setup, invites, re-enrolment, recovery and adding a passkey; sign-in;
 * the passkey check that gives a session its recent confirmation; listing,
 * renaming and removing passkeys. The relying-party ID and origin come from
 * configuration (QUIRE_RP_ID, QUIRE_ORIGIN). Challenges live in single-use
 * flows; counters and origins are checked by the library on every assertion.
 */
import type { AuthenticationResponseJSON, RegistrationResponseJSON } from '@simplewebauthn/server';
import { callerOf, type ActionContext } from '../actions/context.js';
import { reply } from '../actions/reply.js';
import { relyingParty } from '../core/config.js';
import { AppError, errors } from '../core/errors.js';
import { hashSecret, newId, newSecret, sameSecret } from '../core/ids.js';
import type { AuthFlowRecord, PasskeyRecord, UserRecord } from '../store/schema.js';
import type { SidecarStore } from '../store/sidecar.js';
import { confirmSession as markConfirmed } from '../store/sessions.js';
import {
  completeRegistration,
  deletePasskey,
  findInviteByTokenHash,
  findPasskey,
  findReenrolLinkByTokenHash,
  passkeysOf,
  recoveryKeyOf,
  replaceRecoveryKey,
  insertReenrolLink,
  signInMethodsOf,
  updatePasskey,
  type SignInMethods,
} from '../store/sign-in.js';
import { findUserById, findUserByName, hasUsers, instanceSettings, listUsers } from '../store/users.js';
import type { Caller, Role } from './caller.js';
import { issueSession, newSession } from './credentials.js';
import { addFlow, takeFlow } from './flows.js';
import { checkDisplayName, checkRole, checkUniqueUsername, checkUsername, ensureHomeFolder, findUser, newUser, noSuchUser, publicUser } from './users.js';

const enc = new TextEncoder();

/** What a registration flow carries until `register_finish`. */
interface RegisterData {
  purpose: 'setup' | 'invite' | 'signup' | 'reenrol' | 'recovery' | 'add';
  /** For a new user: the id, name and role they will get. */
  new_user?: { id: string; username: string; display_name: string; role: Role; quota_override_bytes: number | null };
  invite_id?: string;
  reenrol_id?: string;
}

export function publicPasskey(p: PasskeyRecord) {
  return {
    id: p.id,
    name: p.name,
    created_at: p.created_at,
    last_used_at: p.last_used_at,
    device_type: p.device_type,
    backed_up: p.backed_up,
  };
}

/** True when the user can still sign in without passkey `exceptId` (another passkey or a linked identity). */
export function hasOtherSignIn(methods: SignInMethods, exceptPasskeyId: string | null, exceptProvider: string | null = null): boolean {
  return methods.passkeys.some((p) => p.id !== exceptPasskeyId) || methods.identities.some((l) => l.provider !== exceptProvider);
}

function sessionOf(caller: Caller): string {
  if (caller.credential.kind !== 'session') {
    throw errors.forbidden('Only a signed-in session can do this; App Passwords cannot confirm or change sign-in methods', {
      reason: 'not_a_session',
    });
  }
  return caller.credential.id;
}

/**
 * @simplewebauthn/server, loaded at the first ceremony: with its ASN.1
 * packages it is the largest module tree the server would otherwise load at
 * start (docs/performance.md, "Start-up").
 */
const webauthn = () => import('@simplewebauthn/server');

async function registrationOptions(ctx: ActionContext, user: { id: string; username: string; display_name: string }, exclude: PasskeyRecord[]) {
  const rp = relyingParty(ctx.services.config);
  return (await webauthn()).generateRegistrationOptions({
    rpName: rp.name,
    rpID: rp.id,
    userName: user.username,
    userDisplayName: user.display_name,
    userID: enc.encode(user.id),
    attestationType: 'none',
    excludeCredentials: exclude.map((p) => ({ id: p.id, transports: p.transports })),
    authenticatorSelection: { residentKey: 'required', userVerification: 'preferred' },
  });
}

async function startRegistration(ctx: ActionContext, data: RegisterData, user: { id: string; username: string; display_name: string }, opts: { userId: string | null; sessionId?: string | null }) {
  const options = await registrationOptions(ctx, user, opts.userId ? passkeysOf(ctx.services.store, opts.userId) : []);
  const flow = await addFlow(
    ctx.services.store,
    {
      kind: data.purpose === 'add' ? 'add' : 'register',
      challenge: options.challenge,
      user_id: opts.userId,
      session_id: opts.sessionId ?? null,
      data: data as unknown as Record<string, unknown>,
    },
    ctx.now(),
  );
  return { flow: flow.id, expires_at: flow.expires_at, options };
}

function newUserFrom(users: readonly UserRecord[], body: { username: string; display_name: string }, role: Role, quota: number | null) {
  checkUsername(body.username);
  checkDisplayName(body.display_name);
  checkUniqueUsername(users, body.username);
  return { id: newId(), username: body.username, display_name: body.display_name, role, quota_override_bytes: quota };
}

// ---------------------------------------------------------------------------------------------
// Starting a registration

export async function setupStart(ctx: ActionContext, body: { display_name: string; token?: string | null; username: string }) {
  const store = ctx.services.store;
  if (hasUsers(store)) {
    throw errors.conflict('This Instance is already set up; sign in, or ask an admin for an invite', { reason: 'already_set_up' });
  }
  const expected = instanceSettings(store).setup_token_hash;
  if (!body.token || !expected || !sameSecret(hashSecret(body.token), expected)) {
    throw errors.forbidden('The setup token is missing or wrong; use the one printed when the server started', {
      reason: 'bad_setup_token',
    });
  }
  const user = newUserFrom(listUsers(store), body, 'owner', null);
  return startRegistration(ctx, { purpose: 'setup', new_user: user }, user, { userId: null });
}

/** Finds the active invite whose token is `token`, or throws 403. */
export function activeInvite(store: SidecarStore, token: string, now: number) {
  const inv = findInviteByTokenHash(store, hashSecret(token));
  if (!inv || inv.revoked_at !== null || inv.used_at !== null || inv.expires_at <= now) {
    throw errors.forbidden('This invite link is unknown, used, revoked or expired', { reason: 'invite_invalid' });
  }
  return inv;
}

export async function inviteStart(ctx: ActionContext, body: { display_name: string; token?: string | null; username: string }) {
  const store = ctx.services.store;
  if (!body.token) {
    if (!instanceSettings(store).open_signup) {
      throw errors.forbidden('Signup needs an invite on this Instance', { reason: 'invite_required' });
    }
    const user = newUserFrom(listUsers(store), body, 'member', null);
    return startRegistration(ctx, { purpose: 'signup', new_user: user }, user, { userId: null });
  }
  const inv = activeInvite(store, body.token, ctx.now());
  const user = newUserFrom(listUsers(store), body, inv.role, inv.quota_override_bytes);
  return startRegistration(ctx, { purpose: 'invite', new_user: user, invite_id: inv.id }, user, { userId: null });
}

export async function reenrolStart(ctx: ActionContext, token: string) {
  const now = ctx.now();
  const link = findReenrolLinkByTokenHash(ctx.services.store, hashSecret(token));
  if (!link || link.used_at !== null || link.expires_at <= now) {
    throw errors.forbidden('This re-enrolment link is unknown, used or expired', { reason: 'reenrol_invalid' });
  }
  const user = findUser(ctx.services.store, link.user_id);
  if (user.disabled) throw errors.forbidden('This account is disabled', { reason: 'disabled' });
  return startRegistration(ctx, { purpose: 'reenrol', reenrol_id: link.id }, user, { userId: user.id });
}

export async function recoveryStart(ctx: ActionContext, body: { key: string; username: string }) {
  const refuse = () => errors.forbidden('Unknown username or wrong recovery key', { reason: 'recovery_invalid' });
  const user = findUserByName(ctx.services.store, body.username);
  const rec = user ? recoveryKeyOf(ctx.services.store, user.id) : undefined;
  // Compare even when there is no key, so both failures take the same time.
  const ok = sameSecret(hashSecret(body.key), rec?.key_hash ?? hashSecret(newSecret('x')));
  if (!user || !rec || !ok) throw refuse();
  if (user.disabled) throw errors.forbidden('This account is disabled', { reason: 'disabled' });
  return startRegistration(ctx, { purpose: 'recovery' }, user, { userId: user.id });
}

export async function addStart(ctx: ActionContext) {
  const caller = callerOf(ctx);
  const sessionId = sessionOf(caller);
  const user = findUser(ctx.services.store, caller.userId);
  return startRegistration(ctx, { purpose: 'add' }, user, { userId: user.id, sessionId });
}

// ---------------------------------------------------------------------------------------------
// Finishing a registration

export async function registerFinish(ctx: ActionContext, body: { credential: unknown; flow: string; name: string }) {
  const name = body.name.trim();
  if (name.length === 0 || name.length > 100) {
    throw errors.badRequest('name must be 1 to 100 characters and not blank', { field: 'body.name' });
  }
  const now = ctx.now();
  const flow = await takeFlow(ctx.services.store, body.flow, ['register', 'add'], now);
  const rp = relyingParty(ctx.services.config);
  let info;
  try {
    const v = await (await webauthn()).verifyRegistrationResponse({
      response: body.credential as RegistrationResponseJSON,
      expectedChallenge: flow.challenge,
      expectedOrigin: rp.origin,
      expectedRPID: rp.id,
      requireUserVerification: false,
    });
    if (!v.verified) throw new Error('not verified');
    info = v.registrationInfo;
  } catch (e) {
    throw new AppError('bad_request', `The passkey registration did not verify: ${(e as Error).message}`, {
      details: { field: 'body.credential', reason: 'registration_failed' },
    });
  }
  const d = flow.data as unknown as RegisterData;
  const userId = d.new_user?.id ?? flow.user_id!;
  const passkey: PasskeyRecord = {
    id: info.credential.id,
    user_id: userId,
    name,
    public_key: Buffer.from(info.credential.publicKey).toString('base64url'),
    counter: info.credential.counter,
    transports: (info.credential.transports ?? []) as string[],
    device_type: info.credentialDeviceType,
    backed_up: info.credentialBackedUp,
    created_at: now,
    last_used_at: null,
  };
  const issued = d.purpose === 'add' ? null : newSession(userId, { kind: 'web', now, config: ctx.services.config, confirmed: true });
  const nu = d.new_user;
  const user = await completeRegistration(ctx.services.store, {
    passkey,
    newUser: nu
      ? (users) => {
          checkRole(nu.role);
          return newUser(users, { id: nu.id, username: nu.username, displayName: nu.display_name, role: nu.role, quotaOverrideBytes: nu.quota_override_bytes, now });
        }
      : undefined,
    inviteId: d.invite_id,
    reenrolLinkId: d.reenrol_id,
    dropRecoveryKey: d.purpose === 'recovery',
    startedBy: d.purpose === 'add' ? flow.session_id : null,
    session: issued?.session,
    now,
    check: (state) => {
      if (state.passkeyTaken) throw errors.conflict('This passkey is already registered', { reason: 'passkey_exists' });
      if (nu) {
        if (d.purpose === 'setup' && state.users.length > 0) {
          throw errors.conflict('This Instance was set up meanwhile', { reason: 'already_set_up' });
        }
        const inv = state.invite;
        if (d.invite_id && (!inv || inv.revoked_at !== null || inv.used_at !== null || inv.expires_at <= now)) {
          throw errors.forbidden('This invite link was used, revoked or expired meanwhile', { reason: 'invite_invalid' });
        }
        if (d.purpose === 'signup' && !state.instance.open_signup) {
          throw errors.forbidden('Signup was closed meanwhile', { reason: 'invite_required' });
        }
        return;
      }
      if (!state.user) throw noSuchUser(userId);
      if (state.user.disabled) throw errors.forbidden('This account is disabled', { reason: 'disabled' });
      if (d.reenrol_id && (!state.reenrolLink || state.reenrolLink.used_at !== null)) {
        throw errors.forbidden('This re-enrolment link was used meanwhile', { reason: 'reenrol_invalid' });
      }
      if (d.purpose === 'add' && !(state.session && state.session.expires_at > now)) {
        throw errors.unauthorized('The session that started adding this passkey has ended');
      }
    },
  });
  const result = issued
    ? { user: publicUser(user), passkey: publicPasskey(passkey), ...sessionOut(issued.token, issued.session) }
    : { user: publicUser(user), passkey: publicPasskey(passkey) };
  if (d.new_user) await ensureHomeFolder(ctx.services.config, d.new_user.username);
  return reply(result, { status: 201 });
}

export function sessionOut(token: string, s: { id: string; kind: string; installation_name: string | null; expires_at: number }) {
  return { token, session: { id: s.id, kind: s.kind, installation_name: s.installation_name, expires_at: s.expires_at } };
}

// ---------------------------------------------------------------------------------------------
// Assertions: sign-in, confirmation, removal

async function startAssertion(ctx: ActionContext, kind: AuthFlowRecord['kind'], userId: string | null, sessionId: string | null, extra: Record<string, unknown> = {}) {
  const rp = relyingParty(ctx.services.config);
  const allow = userId ? passkeysOf(ctx.services.store, userId) : [];
  if (userId && allow.length === 0) {
    throw errors.conflict('This account has no passkey; confirm with your identity provider instead (oidc_reauth_start)', {
      reason: 'no_passkeys',
    });
  }
  const options = await (await webauthn()).generateAuthenticationOptions({
    rpID: rp.id,
    userVerification: 'preferred',
    allowCredentials: allow.map((p) => ({ id: p.id, transports: p.transports })),
  });
  const flow = await addFlow(ctx.services.store, { kind, challenge: options.challenge, user_id: userId, session_id: sessionId, data: extra }, ctx.now());
  return { flow: flow.id, expires_at: flow.expires_at, options };
}

/**
 * Verifies an assertion against its flow: the credential must be a passkey
 * of the flow's user (any user for sign-in), and its signature, challenge,
 * origin, RP ID and counter must check out. Updates the counter.
 */
async function verifyAssertion(ctx: ActionContext, flow: AuthFlowRecord, credential: unknown): Promise<{ passkey: PasskeyRecord; user: UserRecord }> {
  const fail = (why: string) =>
    new AppError('unauthorized', `The passkey check failed: ${why}`, { details: { reason: 'passkey_check_failed' } });
  const response = credential as AuthenticationResponseJSON;
  if (!response || typeof response !== 'object' || typeof response.id !== 'string') throw fail('no credential');
  const passkey = findPasskey(ctx.services.store, response.id);
  if (!passkey) throw fail('unknown passkey');
  if (flow.user_id && passkey.user_id !== flow.user_id) throw fail('this passkey belongs to another account');
  const user = findUserById(ctx.services.store, passkey.user_id);
  if (!user) throw fail('unknown passkey');
  if (user.disabled) throw errors.unauthorized('This account is disabled');
  const rp = relyingParty(ctx.services.config);
  let newCounter: number;
  try {
    const v = await (await webauthn()).verifyAuthenticationResponse({
      response,
      expectedChallenge: flow.challenge,
      expectedOrigin: rp.origin,
      expectedRPID: rp.id,
      credential: {
        id: passkey.id,
        publicKey: new Uint8Array(Buffer.from(passkey.public_key, 'base64url')),
        counter: passkey.counter,
        transports: passkey.transports as never,
      },
      requireUserVerification: false,
    });
    if (!v.verified) throw new Error('signature did not verify');
    newCounter = v.authenticationInfo.newCounter;
  } catch (e) {
    throw fail((e as Error).message);
  }
  const now = ctx.now();
  const updated = await updatePasskey(ctx.services.store, passkey.id, (p) => {
    // Another finish may have raced us with the same counter: refuse a counter that did not grow.
    if ((newCounter !== 0 || p.counter !== 0) && newCounter <= p.counter) throw fail('signature counter did not increase');
    p.counter = newCounter;
    p.last_used_at = now;
  });
  if (!updated) throw fail('the passkey was removed meanwhile');
  return { passkey: updated, user: { ...user } };
}

export const loginStart = (ctx: ActionContext) => startAssertion(ctx, 'login', null, null);

export async function loginFinish(
  ctx: ActionContext,
  body: { credential: unknown; flow: string; installation_name?: string | null; kind: 'web' | 'installation' },
) {
  const now = ctx.now();
  const flow = await takeFlow(ctx.services.store, body.flow, ['login'], now);
  const { user } = await verifyAssertion(ctx, flow, body.credential);
  const installationName = body.kind === 'installation' ? (body.installation_name?.trim() || 'installation').slice(0, 100) : null;
  const issued = await issueSession(ctx.services.store, user.id, { kind: body.kind, installationName, now, config: ctx.services.config, confirmed: true });
  return reply({ user: publicUser(user), ...sessionOut(issued.token, issued.session) }, { status: 201 });
}

export async function assertStart(ctx: ActionContext) {
  const caller = callerOf(ctx);
  return startAssertion(ctx, 'assert', caller.userId, sessionOf(caller));
}

/** Marks session `sessionId` recently confirmed now. */
export async function confirmSession(ctx: ActionContext, sessionId: string) {
  const now = ctx.now();
  if (!(await markConfirmed(ctx.services.store, sessionId, now))) throw errors.unauthorized('This session has ended');
  return { confirmed_at: now, fresh_until: now + ctx.services.config.recentConfirmationSeconds * 1000 };
}

export async function assertFinish(ctx: ActionContext, body: { credential: unknown; flow: string }) {
  const caller = callerOf(ctx);
  const sessionId = sessionOf(caller);
  const flow = await takeFlow(ctx.services.store, body.flow, ['assert'], ctx.now());
  if (flow.session_id !== sessionId) throw errors.forbidden('This passkey check was started by another session', { reason: 'flow_mismatch' });
  await verifyAssertion(ctx, flow, body.credential);
  return confirmSession(ctx, sessionId);
}

// ---------------------------------------------------------------------------------------------
// Managing passkeys

export function listPasskeys(ctx: ActionContext) {
  const caller = callerOf(ctx);
  return { items: passkeysOf(ctx.services.store, caller.userId).map(publicPasskey), next_cursor: null };
}

export async function renamePasskey(ctx: ActionContext, id: string, name: string) {
  const caller = callerOf(ctx);
  const clean = name.trim();
  if (clean.length === 0 || clean.length > 100) throw errors.badRequest('name must be 1 to 100 characters and not blank', { field: 'body.name' });
  const p = await updatePasskey(ctx.services.store, id, (x) => (x.name = clean), caller.userId);
  if (!p) throw errors.notFound(`No passkey ${id} of yours`, { id });
  return publicPasskey(p);
}

function refuseLastPasskey(methods: SignInMethods, passkeyId: string) {
  if (!hasOtherSignIn(methods, passkeyId)) {
    throw errors.conflict('This is your last way to sign in; add another passkey or link an identity provider first', {
      reason: 'last_sign_in_method',
    });
  }
}

export async function removeStart(ctx: ActionContext, id: string) {
  const caller = callerOf(ctx);
  const sessionId = sessionOf(caller);
  const methods = signInMethodsOf(ctx.services.store, caller.userId);
  if (!methods.passkeys.some((p) => p.id === id)) throw errors.notFound(`No passkey ${id} of yours`, { id });
  refuseLastPasskey(methods, id);
  return startAssertion(ctx, 'remove', caller.userId, sessionId, { passkey_id: id });
}

export async function removeFinish(ctx: ActionContext, body: { credential: unknown; flow: string }) {
  const caller = callerOf(ctx);
  const sessionId = sessionOf(caller);
  const flow = await takeFlow(ctx.services.store, body.flow, ['remove'], ctx.now());
  if (flow.session_id !== sessionId) throw errors.forbidden('This removal was started by another session', { reason: 'flow_mismatch' });
  await verifyAssertion(ctx, flow, body.credential);
  const id = String(flow.data.passkey_id);
  const removed = await deletePasskey(ctx.services.store, caller.userId, id, (methods) => refuseLastPasskey(methods, id), {
    sessionId,
    at: ctx.now(),
  });
  if (!removed) throw errors.notFound(`No passkey ${id} of yours`, { id });
  return { removed: id };
}

// ---------------------------------------------------------------------------------------------
// Recovery keys and re-enrolment links

export const RECOVERY_PREFIX = 'qr';

export async function recoveryKey(ctx: ActionContext) {
  const caller = callerOf(ctx);
  sessionOf(caller);
  const key = newSecret(RECOVERY_PREFIX);
  const now = ctx.now();
  await replaceRecoveryKey(ctx.services.store, { user_id: caller.userId, key_hash: hashSecret(key), created_at: now });
  return reply({ key, created_at: now, replaces_previous: true }, { status: 201 });
}

export const MAX_LINK_TTL_SECS = 30 * 24 * 3600;

export function checkTtl(ttl: number): void {
  if (!Number.isInteger(ttl) || ttl < 60 || ttl > MAX_LINK_TTL_SECS) {
    throw errors.badRequest(`ttl_secs must be from 60 to ${MAX_LINK_TTL_SECS} seconds`, { field: 'body.ttl_secs' });
  }
}

export async function reenrolIssue(ctx: ActionContext, body: { ttl_secs: number; user_id: string }, baseUrl: string) {
  const caller = callerOf(ctx);
  checkTtl(body.ttl_secs);
  const token = newSecret('qe');
  const now = ctx.now();
  const link = {
    id: newId(),
    user_id: body.user_id,
    token_hash: hashSecret(token),
    created_by: caller.userId,
    created_at: now,
    expires_at: now + body.ttl_secs * 1000,
    used_at: null,
  };
  await insertReenrolLink(ctx.services.store, link, (target) => {
    if (!target) throw noSuchUser(body.user_id);
    if (target.role === 'owner' && caller.role !== 'owner') {
      throw errors.forbidden('Only an owner can re-enrol an owner', { reason: 'owner_only' });
    }
  });
  return reply(
    { id: link.id, user_id: link.user_id, token, url: `${baseUrl}/reenrol#token=${token}`, expires_at: link.expires_at },
    { status: 201 },
  );
}
