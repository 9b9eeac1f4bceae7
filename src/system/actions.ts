/**
 * Section 4.3 of the spec: system information and Connected Accounts (6 actions).
 * Declarations only; handlers are attached when the area is built.
 */
import { Type, type TSchema } from '@sinclair/typebox';
import { defineAction } from '../actions/types.js';
import { systemInfo } from './handlers.js';

const AREA = '4.3 System';

const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

const StringId = Type.Object(
  { id: Type.String({ minLength: 1, description: 'ID of the Connected Account' }) },
  { additionalProperties: false },
);

const Provider = Type.Union(
  [
    Type.Literal('provider_1'),
    Type.Literal('provider_2'),
    Type.Literal('provider_3'),
    Type.Literal('provider_4'),
    Type.Literal('other'),
  ],
  { description: 'The first four are hosted-provider values; host overrides are accepted only for `other`' },
);

export const actions = [
  defineAction({
    name: 'integration_accounts',
    method: 'GET',
    route: '/api/v1/system/integrations/accounts',
    tool: 'svc_api_integration_accounts',
    surfaces: ['cli', 'mcp', 'webmcp'],
    scopes: ['data'],
    effect: 'read',
    requestEncoding: 'none',
    responseEncoding: 'json',
    recentConfirmation: false,
    area: AREA,
    summary: "Lists the caller's Connected Accounts (mail and calendar services).",
    input: {},
  }),
  defineAction({
    name: 'integration_create_account',
    method: 'POST',
    route: '/api/v1/system/integrations/accounts',
    tool: 'svc_api_integration_create_account',
    surfaces: ['cli', 'mcp', 'webmcp'],
    scopes: ['data'],
    effect: 'destructive',
    requestEncoding: 'json',
    responseEncoding: 'json',
    recentConfirmation: false,
    area: AREA,
    summary:
      'Connects a mail and calendar account with its provider, email, username and app password. Host overrides are accepted only for provider `other`; calendar and mail are on when not given.',
    input: {
      body: Type.Object(
        {
          app_password: Type.String({ description: 'App password issued by the provider' }),
          caldav_endpoint: Type.Optional(Nullable(Type.String())),
          calendar_enabled: Type.Optional(
            Nullable(Type.Boolean({ description: 'Missing means on after successful discovery' })),
          ),
          carddav_endpoint: Type.Optional(Nullable(Type.String())),
          email: Type.String(),
          imap_host: Type.Optional(
            Nullable(Type.String({ description: 'Host override, accepted only for provider `other`' })),
          ),
          mail_enabled: Type.Optional(Nullable(Type.Boolean({ description: 'Missing means on' }))),
          provider: Provider,
          smtp_host: Type.Optional(
            Nullable(Type.String({ description: 'Host override, accepted only for provider `other`' })),
          ),
          username: Type.String(),
        },
        { additionalProperties: false },
      ),
    },
  }),
  defineAction({
    name: 'integration_delete_account',
    method: 'DELETE',
    route: '/api/v1/system/integrations/accounts/{id}',
    tool: 'svc_api_integration_delete_account',
    surfaces: ['cli', 'mcp', 'webmcp'],
    scopes: ['data'],
    effect: 'destructive',
    requestEncoding: 'none',
    responseEncoding: 'json',
    recentConfirmation: false,
    area: AREA,
    summary: 'Removes a Connected Account.',
    input: { path: StringId },
  }),
  defineAction({
    name: 'integration_legacy_migration_status',
    method: 'GET',
    route: '/api/v1/system/integrations/legacy-migration',
    tool: 'svc_api_integration_legacy_migration_status',
    surfaces: ['cli', 'mcp', 'webmcp'],
    scopes: ['data'],
    effect: 'read',
    requestEncoding: 'none',
    responseEncoding: 'json',
    recentConfirmation: false,
    area: AREA,
    summary: 'Shows the status of the migration of legacy integration settings to Connected Accounts.',
    input: {},
  }),
  defineAction({
    name: 'integration_update_account',
    method: 'PATCH',
    route: '/api/v1/system/integrations/accounts/{id}',
    tool: 'svc_api_integration_update_account',
    surfaces: ['cli', 'mcp', 'webmcp'],
    scopes: ['data'],
    effect: 'destructive',
    requestEncoding: 'json',
    responseEncoding: 'json',
    recentConfirmation: false,
    area: AREA,
    summary: 'Turns the calendar or mail service of a Connected Account on or off.',
    input: {
      path: StringId,
      body: Type.Object(
        {
          calendar_enabled: Type.Optional(Nullable(Type.Boolean())),
          mail_enabled: Type.Optional(Nullable(Type.Boolean())),
        },
        { additionalProperties: false },
      ),
    },
  }),
  defineAction({
    name: 'system_info',
    method: 'GET',
    route: '/api/v1/system/info',
    tool: 'svc_api_system_info',
    surfaces: ['cli', 'mcp', 'webmcp'],
    scopes: ['none'],
    effect: 'read',
    requestEncoding: 'none',
    responseEncoding: 'json',
    recentConfirmation: false,
    area: AREA,
    summary: 'Shows information about the Instance; needs no bearer token.',
    input: {},
    handler: systemInfo,
  }),
];
