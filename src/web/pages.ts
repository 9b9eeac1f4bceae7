/**
 * The few browser pages the browser-only flows need: first setup, invite
 * registration, sign-in (passkey or OpenID Connect), recovery, re-enrolment,
 * command-line approval and a small account page. Plain HTML with one
 * script (src/web/auth-script.ts), no inline script, a strict CSP. The
 * pages keep the session token in localStorage and send it as a bearer
 * token; they never put it in a URL the server sees.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest, preHandlerAsyncHookHandler } from 'fastify';
import { checkCallbackIssuer } from '../accounts/oidc.js';
import { installRateLimits } from '../accounts/rate-limit.js';
import { AppError } from '../core/errors.js';
import type { Services } from '../core/services.js';
import { AUTH_SCRIPT } from './auth-script.js';
import { registerPublicPages } from './public-page.js';

const esc = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

const CSS = `body{font:16px/1.5 system-ui,sans-serif;max-width:36rem;margin:2rem auto;padding:0 1rem;color:#1d1d1f;background:#fff}
label{display:block;margin:.75rem 0 .25rem;font-weight:600}input{font:inherit;padding:.4rem;width:100%;box-sizing:border-box}
button{font:inherit;padding:.5rem 1rem;margin:.75rem .5rem 0 0;cursor:pointer}
[role=alert]{color:#a00}[role=status]{color:#060}code.user-code{font-size:1.4rem;letter-spacing:.1em}
nav a{margin-right:1rem}#breadcrumb ol{list-style:none;padding:0;display:flex;flex-wrap:wrap}#breadcrumb li+li::before{content:"/";margin:0 .5rem}#breadcrumb a{margin:0}@media (prefers-color-scheme:dark){body{background:#111;color:#eee}}`;

function page(services: Services, name: string, title: string, body: string): string {
  const instance = esc(services.config.instanceName);
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(title)} · ${instance}</title>
<link rel="stylesheet" href="/assets/quire.css">
<script src="/assets/auth.js" defer></script>
</head>
<body data-page="${name}">
<header><nav aria-label="${instance}"><a href="/login">Sign in</a><a href="/account">Account</a><a href="/recover">Recover</a></nav></header>
<main>
<h1>${esc(title)}</h1>
${body}
<p id="status" role="status" aria-live="polite"></p>
<p id="error" role="alert" aria-live="assertive"></p>
</main>
</body>
</html>
`;
}

const PAGES: Record<string, { title: string; body: string }> = {
  setup: {
    title: 'Set up this Instance',
    body: `<p>Create the first account (the owner) and its passkey. Use the one-time setup token the server printed when it started.</p>
<form id="register-form">
<label for="token">Setup token</label><input id="token" name="token" autocomplete="off" required>
<label for="username">Username</label><input id="username" name="username" autocomplete="username webauthn" required>
<label for="display_name">Display name</label><input id="display_name" name="display_name" autocomplete="name" required>
<label for="passkey_name">Name for this passkey</label><input id="passkey_name" name="passkey_name" value="My passkey" required>
<button type="submit">Create account with a passkey</button>
</form>`,
  },
  invite: {
    title: 'Join with an invite',
    body: `<form id="register-form">
<input id="token" name="token" type="hidden">
<label for="username">Username</label><input id="username" name="username" autocomplete="username webauthn" required>
<label for="display_name">Display name</label><input id="display_name" name="display_name" autocomplete="name" required>
<label for="passkey_name">Name for this passkey</label><input id="passkey_name" name="passkey_name" value="My passkey" required>
<button type="submit">Create account with a passkey</button>
</form>`,
  },
  reenrol: {
    title: 'Register a new passkey',
    body: `<p>An admin sent you this link so you can register a new passkey for your account.</p>
<form id="register-form">
<input id="token" name="token" type="hidden">
<label for="passkey_name">Name for this passkey</label><input id="passkey_name" name="passkey_name" value="My passkey" required>
<button type="submit">Register a passkey</button>
</form>`,
  },
  recover: {
    title: 'Recover your account',
    body: `<p>Enter your username and recovery key to register a new passkey. The key works once.</p>
<form id="register-form">
<label for="username">Username</label><input id="username" name="username" autocomplete="username" required>
<label for="key">Recovery key</label><input id="key" name="key" autocomplete="off" required>
<label for="passkey_name">Name for this passkey</label><input id="passkey_name" name="passkey_name" value="Recovered passkey" required>
<button type="submit">Register a passkey</button>
</form>`,
  },
  login: {
    title: 'Sign in',
    body: `<button id="passkey-login" type="button">Sign in with a passkey</button>
<div id="oidc-providers"></div>`,
  },
  'signed-in': { title: 'Signing in…', body: `<p>One moment.</p>` },
  'cli-approve': {
    title: 'Approve a command-line sign-in',
    body: `<div id="approval" aria-live="polite"></div>
<form id="code-form" hidden><label for="user_code">Code shown by the command line</label><input id="user_code" name="user_code" autocomplete="off" required><button type="submit">Continue</button></form>
<div id="approval-actions" hidden><button id="approve" type="button">Approve</button><button id="deny" type="button">Deny</button></div>`,
  },
  account: {
    title: 'Your account',
    body: `<p id="who"></p>
<h2>Passkeys</h2><ul id="passkeys"></ul>
<button id="sign-out" type="button">Sign out</button>`,
  },
};

const ROUTES: Record<string, string> = {
  '/setup': 'setup',
  '/invite': 'invite',
  '/reenrol': 'reenrol',
  '/recover': 'recover',
  '/login': 'login',
  '/signed-in': 'signed-in',
  '/cli/approve': 'cli-approve',
  '/account': 'account',
};

const SECURITY_HEADERS = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
};

function send(res: FastifyReply, type: string, body: string) {
  return res.headers(SECURITY_HEADERS).type(type).send(body);
}

/** Registers the pages, their script and style, and the sign-in rate limits on the app. */
export function registerWeb(app: FastifyInstance, services: Services): void {
  installRateLimits(app, services);
  // The OpenID Connect callback may carry `iss` (RFC 9207), which the spec's query does not list:
  // check it against the provider here and drop it before the action validates its query.
  // A hook of that route only (the actions' routes are added after this), not one every request runs.
  app.addHook('onRoute', (route) => {
    if (route.method !== 'GET' || route.url !== '/api/v1/auth/oidc/:provider/callback') return;
    const checkIssuer: preHandlerAsyncHookHandler = async (req: FastifyRequest, res: FastifyReply) => {
      const q = req.query as Record<string, unknown>;
      if (q.iss === undefined) return;
      try {
        checkCallbackIssuer(services.config, (req.params as { provider: string }).provider, String(q.iss));
      } catch (e) {
        return res.code(400).type('application/json; charset=utf-8').send((e as AppError).toEnvelope());
      }
      delete q.iss;
    };
    route.preHandler = [...[route.preHandler ?? []].flat(), checkIssuer];
  });
  for (const [url, name] of Object.entries(ROUTES)) {
    const p = PAGES[name]!;
    app.get(url, (_req, res) => send(res, 'text/html; charset=utf-8', page(services, name, p.title, p.body)));
  }
  app.get('/assets/auth.js', (_req, res) => send(res, 'text/javascript; charset=utf-8', AUTH_SCRIPT));
  app.get('/assets/quire.css', (_req, res) => send(res, 'text/css; charset=utf-8', CSS));
  registerPublicPages(app, services);
}
