/**
 * Section 4.3 of the spec: system information and Connected Accounts.
 * Connected Accounts' handlers are in src/integrations/integrations.ts (docs/calendar-sync.md).
 */
import { Type } from '@sinclair/typebox';
import { Nullable, Obj, OneOf, PathString, specAction } from '../actions/spec.js';
import { systemInfo } from './handlers.js';
import * as integ from '../integrations/integrations.js';
import { migrationStatus } from '../integrations/integration-store.js';
import { callerOf } from '../actions/context.js';

const HostOverride = Type.Optional(Nullable(Type.String({ description: 'Host override, accepted only for provider `other`' })));

export const actions = [
  specAction('integration_accounts', {
    summary: "Lists the caller's Connected Accounts (mail and calendar services).",
    handler: (ctx) => integ.listIntegrationViews(ctx),
  }),
  specAction('integration_create_account', {
    summary: 'Connects a mail and calendar account with its provider, email, username and app password. Host overrides are accepted only for provider `other`; calendar and mail are on when not given.',
    input: {
      body: Obj({
        app_password: Type.String({ description: 'App password issued by the provider' }),
        caldav_endpoint: Type.Optional(Nullable(Type.String())),
        calendar_enabled: Type.Optional(Nullable(Type.Boolean({ description: 'Missing means on after successful discovery' }))),
        carddav_endpoint: Type.Optional(Nullable(Type.String())),
        email: Type.String(),
        imap_host: HostOverride,
        mail_enabled: Type.Optional(Nullable(Type.Boolean({ description: 'Missing means on' }))),
        provider: OneOf(['provider_1', 'provider_2', 'provider_3', 'provider_4', 'other'], {
          description: 'The first four are hosted-provider values; host overrides are accepted only for `other`',
        }),
        smtp_host: HostOverride,
        username: Type.String(),
      }),
    },
    handler: (ctx, { body }) => integ.createIntegration(ctx, body),
  }),
  specAction('integration_delete_account', {
    summary: 'Removes a Connected Account.',
    input: { path: Obj({ id: PathString('ID of the Connected Account') }) },
    handler: (ctx, { path }) => integ.deleteIntegration(ctx, path.id),
  }),
  specAction('integration_legacy_migration_status', {
    summary: 'Shows the status of the migration of legacy integration settings to Connected Accounts.',
    handler: (ctx) => migrationStatus(ctx.services.store, callerOf(ctx).userId),
  }),
  specAction('integration_update_account', {
    summary: 'Turns the calendar or mail service of a Connected Account on or off.',
    input: {
      path: Obj({ id: PathString('ID of the Connected Account') }),
      body: Obj({ calendar_enabled: Type.Optional(Nullable(Type.Boolean())), mail_enabled: Type.Optional(Nullable(Type.Boolean())) }),
    },
    handler: (ctx, { path, body }) => integ.updateIntegration(ctx, path.id, body),
  }),
  specAction('system_info', {
    summary: 'Shows information about the Instance; needs no bearer token.',
    handler: systemInfo,
  }),
];
