/**
 * CalDAV accounts as the API sees them: connect (discover, mirror each remote calendar into a
 * Home calendar folder, first sync as a job), list, enable/disable, remove, and the refreshes
 * (one calendar, or everything the user has) as jobs with progress. One sync at a time per
 * account (a refresh asked for during another waits for it). docs/calendar-sync.md.
 */
import type { ActionContext } from '../actions/context.js';
import { callerOf } from '../actions/context.js';
import { reply } from '../actions/reply.js';
import type { Config } from '../core/config.js';
import { AppError, errors } from '../core/errors.js';
import { newId } from '../core/ids.js';
import { parseOutboundUrl } from '../core/outbound.js';
import type { JobRecord } from '../jobs/runner.js';
import { openScope, type Scope } from '../notes/access.js';
import type { SidecarStore } from '../store/sidecar.js';
import type { CalendarAccountRecord } from '../store/schema.js';
import { openSecret, sealSecret } from './account-secret.js';
import {
  accountView, addAccount, getAccount, listAccounts, listSubscriptions, patchAccount, removeAccountRecord,
} from './account-store.js';
import { davOf, discoverCalendars, syncAccount, type SyncCounts } from './sync.js';
import { newCalendarState, removeSyncState, writeSyncState, type AccountSyncState } from './sync-state.js';
import { createMirrorCalendar, freeCalendarId, patchMirrorMeta, removeMirrorCalendar } from './sync-mirror.js';
import { refreshSubscription } from './subscription.js';

const running = new Map<string, Promise<unknown>>();

/** Runs `fn` after any sync of the same account already running. */
function serial<T>(key: string, fn: () => Promise<T>): Promise<T> {
  const before = running.get(key) ?? Promise.resolve();
  const p = before.catch(() => undefined).then(fn);
  running.set(key, p);
  void p.catch(() => undefined).finally(() => {
    if (running.get(key) === p) running.delete(key);
  });
  return p;
}

/** Syncs one account now and records the outcome on it (last_sync_ms, last_error). */
export async function runAccountSync(config: Config, store: SidecarStore, scope: Scope, account: CalendarAccountRecord, opts: { onlyCalendarId?: string; progress?: (d: number, t: number) => void } = {}): Promise<SyncCounts> {
  return serial(account.id, async () => {
    try {
      const counts = await syncAccount(config, scope, account, openSecret(config, account.secret), opts);
      await patchAccount(store, account.user_id, account.id, { last_sync_ms: Date.now(), last_error: null });
      return counts;
    } catch (e) {
      await patchAccount(store, account.user_id, account.id, { last_sync_ms: Date.now(), last_error: (e as Error).message }).catch(() => undefined);
      throw e;
    }
  });
}

export interface ConnectInput {
  endpoint: string;
  username: string;
  password: string;
  integrationId?: string | null;
}

/**
 * Discovers the account's calendars (a wrong password, an unreachable or non-CalDAV
 * endpoint answer 400 with the reason before anything is written), then makes one mirror
 * folder per remote calendar and records the account. The first sync is left to the caller.
 */
export async function connectAccount(config: Config, store: SidecarStore, scope: Scope, userId: string, input: ConnectInput): Promise<CalendarAccountRecord> {
  const endpoint = parseOutboundUrl(input.endpoint, 'body.endpoint').href;
  if (!input.username) throw errors.badRequest('body.username must not be empty', { field: 'body.username' });
  if (!input.password) throw errors.badRequest('body.app_password must not be empty', { field: 'body.app_password' });
  const remote = await discoverCalendars(davOf(config, input.username, input.password), endpoint);
  const now = Date.now();
  const id = newId();
  const rec: CalendarAccountRecord = {
    id, user_id: userId, endpoint, username: input.username, secret: sealSecret(config, input.password), enabled: true,
    integration_id: input.integrationId ?? null, calendars: [], created_ms: now, updated_ms: now, last_sync_ms: null, last_error: null,
  };
  const state: AccountSyncState = { calendars: {} };
  for (const c of remote) {
    const calendarId = await freeCalendarId(scope, c.name);
    await createMirrorCalendar(scope, calendarId, { name: c.name, color: c.color }, { kind: 'caldav', id });
    rec.calendars.push({ calendar_id: calendarId, href: c.url, name: c.name });
    state.calendars[calendarId] = newCalendarState(c.url);
  }
  await writeSyncState(config, id, state);
  return addAccount(store, rec);
}

/**
 * Starts `fn` as a job of the caller, or runs it at once where no job runner is; the command
 * line's local vault mode exits after the call, so there the job is waited for.
 */
async function launch(ctx: ActionContext, kind: string, meta: Record<string, unknown>, fn: (progress: (d: number, t: number) => void) => Promise<unknown>): Promise<{ job: JobRecord | null; result?: unknown }> {
  const jobs = ctx.services.jobs;
  if (!jobs) return { job: null, result: await fn(() => undefined) };
  const job = jobs.start(callerOf(ctx).userId, kind, (j) => fn((d, t) => j.progress(d, t)), { meta });
  return { job: ctx.surface === 'local' ? ((await jobs.wait(job.id)) ?? job) : job };
}

/** 202 while the job runs, 200 once it is over. */
const jobReply = (r: { job: JobRecord | null; result?: unknown }) => reply(r, { status: r.job && (r.job.state === 'queued' || r.job.state === 'running') ? 202 : 200 });

export async function createAccountAction(ctx: ActionContext, body: { endpoint: string; username: string; app_password: string }) {
  const scope = await openScope(ctx);
  const rec = await connectAccount(ctx.services.config, ctx.services.store, scope, callerOf(ctx).userId, { endpoint: body.endpoint, username: body.username, password: body.app_password });
  return reply({ account: accountView(rec), job: await startFirstSync(ctx, scope, rec) }, { status: 201 });
}

export function listAccountViews(ctx: ActionContext) {
  return { accounts: listAccounts(ctx.services.store, callerOf(ctx).userId).map(accountView) };
}

/** Disabling stops its syncs and hides its calendars (visible: false in each calendar.json); enabling shows them again. */
export async function setAccountEnabled(store: SidecarStore, scope: Scope, userId: string, id: string, enabled: boolean) {
  const before = getAccount(store, userId, id);
  if (before.enabled !== enabled) for (const c of before.calendars) await patchMirrorMeta(scope, c.calendar_id, { visible: enabled });
  return accountView(await patchAccount(store, userId, id, { enabled }));
}

/** Starts the first sync of a freshly connected account as a job of the caller. */
export async function startFirstSync(ctx: ActionContext, scope: Scope, rec: CalendarAccountRecord): Promise<JobRecord | null> {
  return (await launch(ctx, 'calendar_sync', { account_id: rec.id }, (progress) => runAccountSync(ctx.services.config, ctx.services.store, scope, rec, { progress }))).job;
}

/** Removes the account, its mirror folders (files changed since their last sync stay) and its sync state. */
export async function removeAccount(config: Config, store: SidecarStore, scope: Scope, userId: string, id: string) {
  const account = getAccount(store, userId, id);
  return serial(account.id, async () => {
    let removed = 0;
    let kept = 0;
    for (const c of account.calendars) {
      const r = await removeMirrorCalendar(scope, c.calendar_id);
      removed += r.removed;
      kept += r.kept;
    }
    await removeAccountRecord(store, userId, id);
    await removeSyncState(config, id);
    return { id, removed: true, events_removed: removed, events_kept: kept };
  });
}

export async function refreshCalendarAction(ctx: ActionContext, calendarId: string) {
  const userId = callerOf(ctx).userId;
  const scope = await openScope(ctx);
  const account = listAccounts(ctx.services.store, userId).find((a) => a.calendars.some((c) => c.calendar_id === calendarId));
  const sub = listSubscriptions(ctx.services.store, userId).find((s) => s.calendar_id === calendarId);
  if (!account && !sub) throw errors.notFound(`Calendar ${JSON.stringify(calendarId)} is not mirrored from a CalDAV account or a subscription; there is nothing to refresh it from`, { field: 'path.id', id: calendarId });
  if (account && !account.enabled) throw errors.conflict(`The CalDAV account of calendar ${JSON.stringify(calendarId)} is disabled; enable it first`, { field: 'path.id', reason: 'account_disabled' });
  return jobReply(
    await launch(ctx, 'calendar_refresh', { calendar_id: calendarId }, (progress) =>
      account
        ? runAccountSync(ctx.services.config, ctx.services.store, scope, account, { onlyCalendarId: calendarId, progress })
        : refreshSubscription({ store: ctx.services.store, config: ctx.services.config, userId }, scope, sub!.id),
    ),
  );
}

/** Refreshes every enabled account and every subscription of the caller; a failing one is reported and the others still run. */
export async function refreshEverything(config: Config, store: SidecarStore, scope: Scope, userId: string, progress: (d: number, t: number) => void = () => undefined) {
  const accounts = listAccounts(store, userId).filter((a) => a.enabled);
  const subs = listSubscriptions(store, userId);
  const total = accounts.length + subs.length;
  let done = 0;
  const results: Array<{ kind: 'account' | 'subscription'; id: string; ok: boolean; error: string | null; counts?: unknown }> = [];
  for (const a of accounts) {
    try {
      results.push({ kind: 'account', id: a.id, ok: true, error: null, counts: await runAccountSync(config, store, scope, a) });
    } catch (e) {
      results.push({ kind: 'account', id: a.id, ok: false, error: (e as Error).message });
    }
    progress(++done, total);
  }
  for (const s of subs) {
    try {
      const r = await refreshSubscription({ store, config, userId }, scope, s.id);
      results.push({ kind: 'subscription', id: s.id, ok: true, error: null, counts: { added: r.added, changed: r.changed, removed: r.removed, not_modified: r.not_modified } });
    } catch (e) {
      results.push({ kind: 'subscription', id: s.id, ok: false, error: (e as Error).message });
    }
    progress(++done, total);
  }
  const failed = results.filter((r) => !r.ok);
  if (failed.length > 0 && failed.length === results.length) throw new AppError('bad_request', `Every refresh failed: ${failed.map((f) => f.error).join('; ')}`);
  return { refreshed: results };
}

export async function refreshNowAction(ctx: ActionContext) {
  const scope = await openScope(ctx);
  return jobReply(await launch(ctx, 'calendar_refresh', { all: true }, (progress) => refreshEverything(ctx.services.config, ctx.services.store, scope, callerOf(ctx).userId, progress)));
}
