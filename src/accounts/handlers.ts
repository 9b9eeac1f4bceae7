/**
 * Handlers of the account actions built so far: who am I, users and roles,
 * sessions and App Passwords. Each one validates what the schema cannot,
 * calls the domain functions in users.ts / credentials.ts, and returns data.
 */
import fs from 'node:fs';
import { callerOf, type ActionContext } from '../actions/context.js';
import { reply } from '../actions/reply.js';
import { errors } from '../core/errors.js';
import { hashSecret, newId, newSecret } from '../core/ids.js';
import { paths } from '../core/config.js';
import type { AppPasswordRecord, SessionRecord } from '../store/schema.js';
import { oidcLinksOf, passkeysOf, recoveryKeyOf } from '../store/sign-in.js';
import {
  appPasswordsOf,
  deleteAppPassword,
  deleteSession,
  deleteSessionsOf,
  insertAppPassword,
  liveSessionsOf,
} from '../store/sessions.js';
import { listUsers as allUsers, updateUser } from '../store/users.js';
import type { Caller, Grant } from './caller.js';
import { APP_PASSWORD_PREFIX } from './credentials.js';
import { isSubsetOf } from './grants.js';
import { checkDisplayName, checkUniqueUsername, checkUsername, findUser, noSuchUser, publicUser, setDisabled, setRole } from './users.js';


const list = <T>(items: T[]) => ({ items, next_cursor: null });

export function currentUser(ctx: ActionContext) {
  const caller = callerOf(ctx);
  return publicUser(findUser(ctx.services.store, caller.userId));
}

export function accountSecurity(ctx: ActionContext) {
  const caller = callerOf(ctx);
  const store = ctx.services.store;
  const now = ctx.now();
  const windowMs = ctx.services.config.recentConfirmationSeconds * 1000;
  const confirmedUntil = caller.confirmedAt === null ? null : caller.confirmedAt + windowMs;
  return {
    user_id: caller.userId,
    credential: caller.credential.kind,
    sessions: liveSessionsOf(store, caller.userId, now).length,
    app_passwords: appPasswordsOf(store, caller.userId).length,
    passkeys: passkeysOf(store, caller.userId).length,
    oidc_identities: oidcLinksOf(store, caller.userId).map((l) => ({ provider: l.provider, email: l.email, created_at: l.created_at })),
    recovery_key_set: recoveryKeyOf(store, caller.userId) !== undefined,
    recent_confirmation: {
      confirmed_at: caller.confirmedAt,
      fresh_until: confirmedUntil,
      fresh: confirmedUntil !== null && confirmedUntil > now,
    },
  };
}

export function listUsers(ctx: ActionContext) {
  return list(allUsers(ctx.services.store).map(publicUser));
}

export async function updateProfile(ctx: ActionContext, body: { display_name: string; username: string }) {
  const caller = callerOf(ctx);
  checkUsername(body.username);
  checkDisplayName(body.display_name);
  const config = ctx.services.config;
  const before = findUser(ctx.services.store, caller.userId).username;
  if (before !== body.username) await ctx.services.vaults.release(before);
  const me = await updateUser(ctx.services.store, caller.userId, (me, users) => {
    if (body.username !== me.username) {
      checkUniqueUsername(users, body.username, me.id);
      // The Home folder carries the username; move it in the same step so the two never disagree. A Home given with --home stays where it is.
      const from = paths.home(config, me.username);
      if (!me.home_path && fs.existsSync(from)) fs.renameSync(from, paths.home(config, body.username));
      me.username = body.username;
    }
    me.display_name = body.display_name;
  });
  if (!me) throw noSuchUser(caller.userId);
  return publicUser(me);
}

async function changeUser(ctx: ActionContext, id: string, change: Parameters<typeof updateUser>[2]) {
  const user = await updateUser(ctx.services.store, id, change);
  if (!user) throw noSuchUser(id);
  return publicUser(user);
}

export function updateRole(ctx: ActionContext, id: string, role: string) {
  const caller = callerOf(ctx);
  return changeUser(ctx, id, (target, users) => setRole(target, users, caller, role));
}

export function updateDisabled(ctx: ActionContext, id: string, disabled: boolean) {
  const caller = callerOf(ctx);
  return changeUser(ctx, id, (target, users) => setDisabled(target, users, caller, disabled));
}

export function updateQuota(ctx: ActionContext, id: string, quota: number | null) {
  return changeUser(ctx, id, (target) => {
    target.quota_override_bytes = quota;
  });
}

function publicSession(s: SessionRecord, caller: Caller) {
  return {
    id: s.id,
    kind: s.kind,
    installation_name: s.installation_name,
    created_at: s.created_at,
    expires_at: s.expires_at,
    last_used_at: s.last_used_at,
    current: caller.credential.kind === 'session' && caller.credential.id === s.id,
  };
}

export function listSessions(ctx: ActionContext) {
  const caller = callerOf(ctx);
  return list(liveSessionsOf(ctx.services.store, caller.userId, ctx.now()).map((s) => publicSession(s, caller)));
}

export async function revokeSession(ctx: ActionContext, id: string) {
  const caller = callerOf(ctx);
  if (!(await deleteSession(ctx.services.store, id, caller.userId))) throw errors.notFound(`No session ${id} of yours`, { id });
  return { revoked: id };
}

export async function revokeAll(ctx: ActionContext, keepCurrent: boolean) {
  const caller = callerOf(ctx);
  const currentId = caller.credential.kind === 'session' ? caller.credential.id : null;
  const n = await deleteSessionsOf(ctx.services.store, caller.userId, keepCurrent ? currentId : null);
  return reply(`Revoked ${n} session${n === 1 ? '' : 's'}${keepCurrent && currentId ? '; this session stays signed in' : ''}.\n`, {
    contentType: 'text/plain; charset=utf-8',
  });
}

async function endCurrentSession(ctx: ActionContext, only?: 'installation') {
  const caller = callerOf(ctx);
  const cred = caller.credential;
  if (cred.kind !== 'session') {
    throw errors.badRequest('This credential is not a session; revoke an App Password with revoke_app_password', {
      reason: 'not_a_session',
    });
  }
  if (only && cred.sessionKind !== only) {
    throw errors.badRequest('This is a browser session, not a command-line session; use sign_out', {
      reason: 'not_a_cli_session',
    });
  }
  await deleteSession(ctx.services.store, cred.id);
  return { revoked: cred.id };
}

export const signOut = (ctx: ActionContext) => endCurrentSession(ctx);
export const cliLogout = (ctx: ActionContext) => endCurrentSession(ctx, 'installation');

function publicAppPassword(p: AppPasswordRecord) {
  return {
    id: p.id,
    name: p.name,
    scopes: p.scopes,
    expires_at: p.expires_at,
    home_prefix: p.home_prefix,
    plugin_scope: p.plugin_scope,
    created_at: p.created_at,
    last_used_at: p.last_used_at,
  };
}

export function listAppPasswords(ctx: ActionContext) {
  const caller = callerOf(ctx);
  return list(appPasswordsOf(ctx.services.store, caller.userId).map(publicAppPassword));
}

/** A Home prefix is a folder path inside the Home: relative, forward slashes, no `.` or `..`. */
function normaliseHomePrefix(prefix: string | null | undefined): string | null {
  if (prefix === null || prefix === undefined || prefix === '') return null;
  const segs = prefix.replace(/\/+$/, '').split('/');
  if (prefix.startsWith('/') || segs.some((s) => s === '' || s === '.' || s === '..' || /[\u0000-\u001f\\]/.test(s))) {
    throw errors.badRequest('home_prefix must be a relative folder path inside the Home, like "Notes/Work"', {
      field: 'body.home_prefix',
    });
  }
  return segs.join('/') + '/';
}

export async function createAppPassword(
  ctx: ActionContext,
  body: {
    name: string;
    expires_at?: number | null;
    home_prefix?: string | null;
    plugin_scope?: Record<string, unknown> | null;
    scopes?: Grant[];
  },
) {
  const caller = callerOf(ctx);
  const now = ctx.now();
  const name = body.name.trim();
  if (name.length === 0 || name.length > 200) {
    throw errors.badRequest('name must be 1 to 200 characters and not blank', { field: 'body.name' });
  }
  if (body.expires_at !== undefined && body.expires_at !== null && body.expires_at <= now) {
    throw errors.badRequest('expires_at must be in the future (Unix milliseconds)', { field: 'body.expires_at' });
  }
  const scopes: Grant[] = body.scopes ?? [{ scope: 'data', access: 'write' }];
  if (scopes.length === 0) throw errors.badRequest('scopes must name at least one scope', { field: 'body.scopes' });
  if (!isSubsetOf(scopes, caller.grants)) {
    throw errors.forbidden('An App Password cannot hold more than the session that creates it', {
      reason: 'scope_exceeds_caller',
    });
  }
  const password = newSecret(APP_PASSWORD_PREFIX);
  const record: AppPasswordRecord = {
    id: newId(),
    user_id: caller.userId,
    name,
    token_hash: hashSecret(password),
    scopes,
    expires_at: body.expires_at ?? null,
    home_prefix: normaliseHomePrefix(body.home_prefix),
    plugin_scope: body.plugin_scope ?? null,
    created_at: now,
    last_used_at: null,
  };
  await insertAppPassword(ctx.services.store, record);
  return reply({ app_password: publicAppPassword(record), password }, { status: 201 });
}

export async function revokeAppPassword(ctx: ActionContext, id: string) {
  const caller = callerOf(ctx);
  if (!(await deleteAppPassword(ctx.services.store, caller.userId, id))) throw errors.notFound(`No App Password ${id} of yours`, { id });
  return { revoked: id };
}
