/**
 * Connected Accounts (spec part 1, section 4.3; docs/calendar-sync.md): a provider account
 * whose mail side is verified by IMAP and SMTP sign-in and stored for later use, and whose
 * calendar side is a CalDAV account of the calendar area (discovered, mirrored, synced).
 */
import type { ActionContext } from '../actions/context.js';
import { callerOf } from '../actions/context.js';
import { reply } from '../actions/reply.js';
import { AppError, errors } from '../core/errors.js';
import { newId } from '../core/ids.js';
import { openScope, type Scope } from '../notes/access.js';
import type { IntegrationAccountRecord } from '../store/schema.js';
import { openSecret, sealSecret } from '../calendar/account-secret.js';
import { checkImap, checkSmtp } from './mail-check.js';
import { hostsFor, parseMailHost, type Hosts, type HostOverrides, type Provider } from './providers.js';
import { addIntegration, getIntegration, integrationView, listIntegrations, patchIntegration, removeIntegrationRecord } from './integration-store.js';
import { calendarCode } from '../calendar/lazy-load.js';

// Calendar sync (tsdav, ical.js) is loaded by the first call that connects or changes an account, not by every start.
const account = async () => (await calendarCode()).account;

export interface CreateBody extends HostOverrides {
  provider: Provider;
  email: string;
  username: string;
  app_password: string;
  calendar_enabled?: boolean | null;
  mail_enabled?: boolean | null;
}

async function verifyMail(ctx: ActionContext, hosts: Hosts, username: string, password: string): Promise<void> {
  if (!hosts.imap) throw errors.badRequest('body.imap_host is needed for provider `other` when mail is enabled', { field: 'body.imap_host' });
  if (!hosts.smtp) throw errors.badRequest('body.smtp_host is needed for provider `other` when mail is enabled', { field: 'body.smtp_host' });
  const allow = ctx.services.config.allowPrivateFetch;
  await checkImap(parseMailHost(hosts.imap, 'imap', 'body.imap_host'), username, password, allow);
  await checkSmtp(parseMailHost(hosts.smtp, 'smtp', 'body.smtp_host'), username, password, allow);
}

/** Connects the CalDAV side; with `required` a failure is the answer, else (calendar_enabled missing) the side stays off. */
async function connectCalendar(ctx: ActionContext, scope: Scope, hosts: Hosts, username: string, password: string, integrationId: string, required: boolean) {
  if (!hosts.caldav) {
    if (required) throw errors.badRequest('body.caldav_endpoint is needed for provider `other` when calendar is enabled', { field: 'body.caldav_endpoint' });
    return null;
  }
  try {
    return await (await account()).connectAccount(ctx.services.config, ctx.services.store, scope, callerOf(ctx).userId, { endpoint: hosts.caldav, username, password, integrationId });
  } catch (e) {
    if (required || !(e instanceof AppError && e.status < 500)) throw e;
    return null;
  }
}

export async function createIntegration(ctx: ActionContext, body: CreateBody) {
  const userId = callerOf(ctx).userId;
  for (const k of ['email', 'username', 'app_password'] as const) if (!body[k].trim()) throw errors.badRequest(`body.${k} must not be empty`, { field: `body.${k}` });
  const hosts = hostsFor(body.provider, body);
  const mail = body.mail_enabled !== false;
  if (mail) await verifyMail(ctx, hosts, body.username, body.app_password);
  const scope = await openScope(ctx);
  const id = newId();
  const calendar = body.calendar_enabled === false ? null : await connectCalendar(ctx, scope, hosts, body.username, body.app_password, id, body.calendar_enabled === true);
  const now = Date.now();
  const rec: IntegrationAccountRecord = {
    id, user_id: userId, provider: body.provider, email: body.email.trim(), username: body.username, secret: sealSecret(ctx.services.config, body.app_password),
    imap_host: hosts.imap, smtp_host: hosts.smtp, caldav_endpoint: hosts.caldav, carddav_endpoint: hosts.carddav,
    calendar_enabled: calendar !== null, mail_enabled: mail, calendar_account_id: calendar?.id ?? null, migrated_from: null, created_ms: now, updated_ms: now,
  };
  await addIntegration(ctx.services.store, rec);
  const job = calendar ? await (await account()).startFirstSync(ctx, scope, calendar) : null;
  return reply({ account: integrationView(rec), job }, { status: 201 });
}

export function listIntegrationViews(ctx: ActionContext) {
  return { accounts: listIntegrations(ctx.services.store, callerOf(ctx).userId).map(integrationView) };
}

/** Turns each side on or off: mail is verified again when turned on; the calendar side is connected the first time, else enabled or disabled. */
export async function updateIntegration(ctx: ActionContext, id: string, body: { calendar_enabled?: boolean | null; mail_enabled?: boolean | null }) {
  const userId = callerOf(ctx).userId;
  const rec = getIntegration(ctx.services.store, userId, id);
  const password = openSecret(ctx.services.config, rec.secret);
  const hosts: Hosts = { imap: rec.imap_host, smtp: rec.smtp_host, caldav: rec.caldav_endpoint, carddav: rec.carddav_endpoint };
  const patch: Partial<IntegrationAccountRecord> = {};
  let job = null;
  if (body.mail_enabled === true && !rec.mail_enabled) await verifyMail(ctx, hosts, rec.username, password);
  if (typeof body.mail_enabled === 'boolean') patch.mail_enabled = body.mail_enabled;
  if (typeof body.calendar_enabled === 'boolean' && body.calendar_enabled !== rec.calendar_enabled) {
    const scope = await openScope(ctx);
    if (rec.calendar_account_id) {
      await (await account()).setAccountEnabled(ctx.services.store, scope, userId, rec.calendar_account_id, body.calendar_enabled);
    } else if (body.calendar_enabled) {
      const cal = await connectCalendar(ctx, scope, hosts, rec.username, password, rec.id, true);
      patch.calendar_account_id = cal!.id;
      job = await (await account()).startFirstSync(ctx, scope, cal!);
    }
    patch.calendar_enabled = body.calendar_enabled;
  }
  return { account: integrationView(await patchIntegration(ctx.services.store, userId, id, patch)), job };
}

/** Removes the account and its calendar side (the mirrored calendar folders go with it). */
export async function deleteIntegration(ctx: ActionContext, id: string) {
  const userId = callerOf(ctx).userId;
  const rec = getIntegration(ctx.services.store, userId, id);
  if (rec.calendar_account_id) {
    try {
      await (await account()).removeAccount(ctx.services.config, ctx.services.store, await openScope(ctx), userId, rec.calendar_account_id);
    } catch (e) {
      if (!(e instanceof AppError && e.status === 404)) throw e; // removed through calendar_remove_account already
    }
  }
  await removeIntegrationRecord(ctx.services.store, userId, id);
  return { id, deleted: true };
}
