/**
 * Section 4.1 of the spec: accounts and authentication.
 * Handlers live in handlers.ts; actions without one answer 501 not_implemented.
 */
import { Type } from '@sinclair/typebox';
import { Nullable, Obj, OneOf, specAction } from '../actions/spec.js';
import { publicBaseUrl } from '../core/config.js';
import * as cli from './cli-signin.js';
import * as h from './handlers.js';
import * as inv from './invites.js';
import * as oidc from './oidc.js';
import * as p from './passkeys.js';
import * as profiles from './profiles.js';

const UuidId = Obj({ id: Type.String({ format: 'uuid', description: 'UUID of the record' }) });
const StringId = Obj({ id: Type.String({ minLength: 1, description: 'ID of the record' }) });
const ProviderPath = Obj({ provider: Type.String({ minLength: 1, description: 'OpenID Connect provider key' }) });

const Role = OneOf(['owner', 'admin', 'member', 'guest'], { description: 'User role' });
const SessionKind = OneOf(['web', 'installation'], {
  description: '`web` for a browser session, `installation` for an installed app or command line',
});
const QuotaOverride = Type.Union([Type.Integer({ minimum: 0 }), Type.Null()], {
  description: 'Storage quota in bytes: null inherits the Instance default, 0 means unlimited',
});
const WebAuthnCredential = Type.Unknown({ description: 'The WebAuthn credential returned by the authenticator' });
const Flow = Type.String({ description: 'The flow ID returned by the matching start action' });
/** The body of `assert_finish` and `remove_finish`: a passkey check's answer. */
const PasskeyCheck = Obj({ credential: WebAuthnCredential, flow: Flow });
/** The body of `invite_start` and `setup_start`: the new User, and the invite token where there is one. */
const NewUser = Obj({
  display_name: Type.String(),
  token: Type.Optional(Nullable(Type.String({ description: 'Invite link token' }))),
  username: Type.String(),
});

export const actions = [
  specAction('account_security', { summary: "Shows the security overview of the caller's account.", handler: h.accountSecurity }),
  specAction('add_start', {
    summary: 'Starts adding a passkey to the caller\'s account. Needs a recent confirmation.',
    handler: p.addStart,
  }),
  specAction('approval_page', {
    summary: 'Shows the page where a signed-in User approves a command-line sign-in request identified by `user_code`. Browser flow only.',
    input: { query: Obj({ user_code: Type.String({ description: 'The code the command line shows to the User' }) }) },
    handler: (ctx, { query }) => cli.approvalPage(ctx, query.user_code),
  }),
  specAction('approve', {
    summary: 'Approves a pending command-line sign-in request. Browser flow only.',
    handler: (ctx, { query }) => cli.approve(ctx, query as Record<string, unknown>),
  }),
  specAction('assert_finish', {
    summary: 'Completes a passkey check started by `assert_start`; a successful check gives the credential a recent confirmation.',
    input: { body: PasskeyCheck },
    handler: (ctx, { body }) => p.assertFinish(ctx, body),
  }),
  specAction('assert_start', {
    summary: 'Starts a passkey check that confirms the caller recently; finish it with `assert_finish`.',
    handler: p.assertStart,
  }),
  specAction('auth_options', { summary: 'Lists the sign-in options of the Instance. Browser flow only.', handler: inv.authOptions }),
  specAction('cli_logout', { summary: 'Ends the current command-line session.', handler: h.cliLogout }),
  specAction('create_app_password', {
    summary:
      'Creates an App Password with a name and optional scopes, expiry, Home prefix and plugin scope; its secret is sent only over the authenticated session. Needs a recent confirmation.',
    input: {
      body: Obj({
        expires_at: Type.Optional(Nullable(Type.Integer({ description: 'Expiry time (int64); null or omitted for no expiry' }))),
        home_prefix: Type.Optional(Nullable(Type.String({ description: 'Limits the App Password to this part of the Home' }))),
        name: Type.String({ description: 'Name shown in the list of App Passwords' }),
        plugin_scope: Type.Optional(Nullable(Type.Object({}, { additionalProperties: true }))),
        scopes: Type.Optional(
          Type.Array(
            Obj({
              scope: OneOf(['data', 'account', 'admin']),
              access: OneOf(['read', 'write'], { description: '`read` stops at read-only actions' }),
            }),
            { description: 'Scopes the App Password grants, each with read or write access' },
          ),
        ),
      }),
    },
    handler: (ctx, { body }) => h.createAppPassword(ctx, body),
  }),
  specAction('create_app_password_profiles', {
    summary: 'Creates setup-profile download links for an App Password, given its secret `password`. Needs a recent confirmation.',
    input: { path: UuidId, body: Obj({ password: Type.String({ description: 'The App Password secret' }) }) },
    handler: (ctx, { path, body }) => profiles.createProfiles(ctx, path.id, body.password),
  }),
  specAction('create_invite', {
    summary:
      'Creates an invite link for a role, valid for `ttl_secs` seconds, with an optional quota override (null inherits the default, 0 unlimited). Admin only; needs a recent confirmation.',
    input: {
      body: Obj({
        quota_override_bytes: Type.Optional(QuotaOverride),
        role: Role,
        ttl_secs: Type.Integer({ description: 'Lifetime of the invite link in seconds' }),
      }),
    },
    handler: (ctx, { body }) => inv.createInvite(ctx, body),
  }),
  specAction('current_user', { summary: 'Shows the signed-in User.', handler: h.currentUser }),
  specAction('download_app_password_profile', {
    summary: 'Downloads an App Password setup profile through the token of its download link; needs no bearer token.',
    input: { path: Obj({ token: Type.String({ minLength: 1, description: 'Token of the setup-profile download link' }) }) },
    handler: (ctx, { path }) => profiles.downloadProfile(ctx, path.token),
  }),
  specAction('exchange', {
    summary: 'Exchanges an approved command-line sign-in (`device_code` plus the `verifier` of its challenge) for a session token. Browser flow only.',
    input: {
      body: Obj({
        device_code: Type.String({ description: 'Device code returned by `start`' }),
        verifier: Type.String({ description: 'Verifier matching the challenge sent to `start`' }),
      }),
    },
    handler: (ctx, { body }) => cli.exchange(ctx, body),
  }),
  specAction('invite_start', {
    summary: 'Starts passkey registration of a new User with an invite link; finish with `register_finish`. Browser flow only.',
    input: { body: NewUser },
    handler: (ctx, { body }) => p.inviteStart(ctx, body),
  }),
  specAction('list_app_passwords', { summary: "Lists the caller's App Passwords (never their secrets).", handler: h.listAppPasswords }),
  specAction('list_invites', { summary: 'Lists the invite links of the Instance. Admin only.', handler: inv.listInvites }),
  specAction('list_passkeys', { summary: "Lists the caller's passkeys.", handler: p.listPasskeys }),
  specAction('list_sessions', { summary: "Lists the caller's active sessions (web and installations).", handler: h.listSessions }),
  specAction('list_users', { summary: 'Lists the Users of the Instance. Admin only.', handler: h.listUsers }),
  specAction('login_finish', {
    summary: 'Completes a passkey sign-in started by `login_start` and creates a `web` or `installation` session. Browser flow only.',
    input: {
      body: Obj({
        credential: WebAuthnCredential,
        flow: Flow,
        installation_name: Type.Optional(Nullable(Type.String({ description: 'Name of the Installation, for `installation` sessions' }))),
        kind: SessionKind,
      }),
    },
    handler: (ctx, { body }) => p.loginFinish(ctx, body),
  }),
  specAction('login_start', {
    summary: 'Starts a passkey sign-in; finish it with `login_finish` and the same `flow`. Browser flow only.',
    handler: p.loginStart,
  }),
  specAction('oidc_browser_callback', {
    summary:
      'Browser redirect target of an OpenID Connect provider; freshness is checked only when the callback links an identity to an existing session. Browser flow only.',
    input: {
      path: ProviderPath,
      query: Obj({
        code: Type.Optional(Type.String({ description: 'Authorization code from the provider' })),
        error: Type.Optional(Type.String({ description: 'Error reported by the provider' })),
        state: Type.Optional(Type.String({ description: 'State value of the sign-in flow' })),
      }),
    },
    handler: (ctx, { path, query, headers }) => oidc.browserCallback(ctx, path.provider, query, headers as Record<string, unknown>),
  }),
  specAction('oidc_callback', {
    summary: 'Completes an OpenID Connect sign-in with the provider\'s `code` and `state` and creates a session. Browser flow only.',
    input: {
      path: ProviderPath,
      body: Obj({
        code: Type.String({ description: 'Authorization code from the provider' }),
        installation_name: Type.Optional(Nullable(Type.String({ description: 'Name of the Installation, for `installation` sessions' }))),
        kind: Type.Optional(Nullable(SessionKind)),
        state: Type.String({ description: 'State value of the sign-in flow' }),
      }),
    },
    handler: (ctx, { path, body }) => oidc.finishOidc(ctx, path.provider, body),
  }),
  specAction('oidc_link_start', {
    summary: "Starts linking an OpenID Connect identity of `provider` to the caller's account. Needs a recent confirmation.",
    input: { path: ProviderPath },
    handler: (ctx, { path }) => oidc.oidcLinkStart(ctx, path.provider),
  }),
  specAction('oidc_reauth_start', {
    summary: 'Starts an OpenID Connect sign-in with `provider` to confirm the caller\'s identity, giving a recent confirmation.',
    input: { path: ProviderPath },
    handler: (ctx, { path }) => oidc.oidcReauthStart(ctx, path.provider),
  }),
  specAction('oidc_start', {
    summary: 'Starts an OpenID Connect sign-in with `provider`; it returns through a callback. Browser flow only.',
    input: { path: ProviderPath },
    handler: (ctx, { path }) => oidc.oidcStart(ctx, path.provider),
  }),
  specAction('oidc_unlink', {
    summary: "Removes the link between the caller's account and its `provider` identity. Needs a recent confirmation.",
    input: { path: ProviderPath },
    handler: (ctx, { path }) => oidc.oidcUnlink(ctx, path.provider),
  }),
  specAction('recovery_key', {
    summary: "Returns the recovery key of the caller's account. Needs a recent confirmation.",
    handler: p.recoveryKey,
  }),
  specAction('recovery_start', {
    summary: 'Starts registering a new passkey with a username and its recovery `key`; finish with `register_finish`. Browser flow only.',
    input: { body: Obj({ key: Type.String({ description: 'The recovery key' }), username: Type.String() }) },
    handler: (ctx, { body }) => p.recoveryStart(ctx, body),
  }),
  specAction('reenrol_issue', {
    summary: 'Issues a passkey re-enrolment link for a User, valid for `ttl_secs` seconds. Admin only; needs a recent confirmation.',
    input: {
      body: Obj({
        ttl_secs: Type.Integer({ description: 'Lifetime of the re-enrolment link in seconds' }),
        user_id: Type.String({ format: 'uuid' }),
      }),
    },
    handler: (ctx, { body }) => p.reenrolIssue(ctx, body, publicBaseUrl(ctx.services.config)),
  }),
  specAction('reenrol_start', {
    summary: 'Starts registering a new passkey with a re-enrolment link `token`; finish with `register_finish`. Browser flow only.',
    input: { body: Obj({ token: Type.String({ description: 'Re-enrolment link token' }) }) },
    handler: (ctx, { body }) => p.reenrolStart(ctx, body.token),
  }),
  specAction('register_finish', {
    summary: 'Completes a passkey registration started by an invite, the first setup, a re-enrolment or a recovery, and names the passkey. Browser flow only.',
    input: { body: Obj({ credential: WebAuthnCredential, flow: Flow, name: Type.String({ description: 'Name of the passkey' }) }) },
    handler: (ctx, { body }) => p.registerFinish(ctx, body),
  }),
  specAction('remove_finish', {
    summary: 'Completes removing a passkey with a passkey check started by `remove_start`.',
    input: { body: PasskeyCheck },
    handler: (ctx, { body }) => p.removeFinish(ctx, body),
  }),
  specAction('remove_start', {
    summary: 'Starts removing passkey `id`; finish with `remove_finish`.',
    input: { path: StringId },
    handler: (ctx, { path }) => p.removeStart(ctx, path.id),
  }),
  specAction('rename_passkey', {
    summary: 'Renames one of the caller\'s passkeys.',
    input: { path: StringId, body: Obj({ name: Type.String({ description: 'New name' }) }) },
    handler: (ctx, { path, body }) => p.renamePasskey(ctx, path.id, body.name),
  }),
  specAction('revoke_all', {
    summary: "Ends all of the caller's sessions, keeping the current one when `keep_current` is true. Needs a recent confirmation.",
    input: { body: Obj({ keep_current: Type.Boolean({ description: 'Keep the session making this request' }) }) },
    handler: (ctx, { body }) => h.revokeAll(ctx, body.keep_current),
  }),
  specAction('revoke_app_password', {
    summary: 'Revokes one of the caller\'s App Passwords. Needs a recent confirmation.',
    input: { path: UuidId },
    handler: (ctx, { path }) => h.revokeAppPassword(ctx, path.id),
  }),
  specAction('revoke_invite', {
    summary: 'Revokes an invite link. Admin only; needs a recent confirmation.',
    input: { path: StringId },
    handler: (ctx, { path }) => inv.revokeInvite(ctx, path.id),
  }),
  specAction('revoke_session', {
    summary: 'Ends one of the caller\'s sessions. Needs a recent confirmation.',
    input: { path: StringId },
    handler: (ctx, { path }) => h.revokeSession(ctx, path.id),
  }),
  specAction('set_share_invites_setting', {
    summary:
      'Sets the Instance policy for invites from the share dialog; the body is a bare JSON boolean. Admin only; needs a recent confirmation (a fresh admin assertion).',
    input: { body: Type.Boolean({ description: 'Whether the share dialog may invite new Users' }) },
    handler: (ctx, { body }) => inv.setShareInvitesSetting(ctx, body),
  }),
  specAction('set_signup', {
    summary: 'Opens or closes self-service signup on the Instance. Admin only; needs a recent confirmation.',
    input: { body: Obj({ open_signup: Type.Boolean({ description: 'True allows signup without an invite' }) }) },
    handler: (ctx, { body }) => inv.setSignup(ctx, body.open_signup),
  }),
  specAction('setup_start', {
    summary: 'Starts the first setup of the Instance with a passkey for its first User; finish with `register_finish`. Browser flow only.',
    input: { body: NewUser },
    handler: (ctx, { body }) => p.setupStart(ctx, body),
  }),
  specAction('share_invites_setting', {
    summary: 'Reads the share dialog policy for inviting new Users; returns no User data.',
    handler: inv.shareInvitesSetting,
  }),
  specAction('sign_out', { summary: 'Ends the current session.', handler: h.signOut }),
  specAction('start', {
    summary:
      'Starts a command-line sign-in request with a `challenge` and the `installation_name`; a signed-in User approves it, then `exchange` returns the token. Browser flow only.',
    input: {
      body: Obj({
        challenge: Type.String({ description: 'Challenge that the `verifier` later sent to `exchange` must match' }),
        installation_name: Type.String({ description: 'Name of the command-line Installation' }),
        redirect_uri: Type.Optional(Nullable(Type.String())),
      }),
    },
    handler: (ctx, { body }) => cli.cliStart(ctx, body),
  }),
  specAction('update_disabled', {
    summary: 'Disables or re-enables sign-in for a User. Admin only; needs a recent confirmation.',
    input: { path: UuidId, body: Obj({ disabled: Type.Boolean({ description: 'True disables sign-in, false enables it' }) }) },
    handler: (ctx, { path, body }) => h.updateDisabled(ctx, path.id, body.disabled),
  }),
  specAction('update_profile', {
    summary: "Changes the caller's display name and username.",
    input: { body: Obj({ display_name: Type.String(), username: Type.String() }) },
    handler: (ctx, { body }) => h.updateProfile(ctx, body),
  }),
  specAction('update_quota', {
    summary: "Sets a User's storage quota override in bytes (null inherits the Instance default, 0 unlimited). Admin only; needs a recent confirmation.",
    input: { path: UuidId, body: Obj({ quota_override_bytes: Type.Optional(QuotaOverride) }) },
    handler: (ctx, { path, body }) => h.updateQuota(ctx, path.id, body.quota_override_bytes ?? null),
  }),
  specAction('update_role', {
    summary: "Changes a User's role (owner, admin, member or guest). Admin only; needs a recent confirmation.",
    input: { path: UuidId, body: Obj({ role: Role }) },
    handler: (ctx, { path, body }) => h.updateRole(ctx, path.id, body.role),
  }),
];
