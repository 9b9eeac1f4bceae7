/**
 * The documented role matrix, over every action of the catalog × every kind
 * of credential, on a real server. The expected answer of each row comes
 * from the tables below, which copy docs/api-conventions.md ("Roles" and
 * "Credentials"), never from src/accounts/grants.ts: a new action is covered
 * the day it is declared, and a drift between the code and the docs fails.
 *
 * Inputs are minimal (route placeholders filled, no body): dispatch checks
 * the credential before it validates, so any answer other than 401 or a
 * scope refusal means the call got past authorization.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registry, type AnyAction } from '../../src/actions/registry.js';
import { issueAdminToken } from '../../src/surfaces/cli/admin.js';
import { startInstance, type TestInstance } from '../helpers/instance.js';

type Scope = 'data' | 'account' | 'admin';
type Access = 'read' | 'write';
type Held = Partial<Record<Scope, Access>>;

/** docs/api-conventions.md, "Roles": what a session of each role holds. */
const ROLE_HOLDS: Record<'owner' | 'admin' | 'member' | 'guest', Held> = {
  owner: { data: 'write', account: 'write', admin: 'write' },
  admin: { data: 'write', account: 'write', admin: 'write' },
  member: { data: 'write', account: 'write' },
  guest: { data: 'read', account: 'read' },
};

/** docs/api-conventions.md, "Roles": account actions on one's own sign-ins, which need only `account:read`. */
const OWN_SIGN_IN = new Set(['approve', 'assert_start', 'assert_finish', 'oidc_reauth_start', 'sign_out', 'cli_logout', 'revoke_session', 'revoke_all']);

/** Spec 5.8: the change journal needs unrestricted data scope. */
const UNRESTRICTED_DATA = new Set(['changes_delta', 'changes_events']);

/** Actions that end the credential that calls them: each row gets a fresh session of the same user. */
const ENDS_CALLER = new Set(['sign_out', 'cli_logout']);

interface Cred {
  name: string;
  token: string | null;
  kind: 'session' | 'app_password' | 'none' | 'bad';
  holds: Held;
  prefix?: string;
  /** For sessions: whose fresh session to use for actions that end the caller. */
  username?: string;
}

type Expected = { status: 'ok' } | { status: 401 } | { status: 403; reason: string; needs?: string };

const rank: Record<Access, number> = { read: 1, write: 2 };

function expected(action: AnyAction, cred: Cred): Expected {
  const scopes = action.scopes.filter((s: string) => s !== 'none') as Scope[];
  if (scopes.length === 0) return { status: 'ok' };
  if (cred.kind === 'none' || cred.kind === 'bad') return { status: 401 };
  const need: Access = action.effect === 'read' || OWN_SIGN_IN.has(action.name) ? 'read' : 'write';
  const missing = scopes.filter((s) => !cred.holds[s] || rank[cred.holds[s]!] < rank[need]);
  if (missing.length > 0) return { status: 403, reason: 'missing_scope', needs: missing.map((s) => `${s}:${need}`).join(',') };
  // Sessions issued by `quire admin` count as confirmed; App Passwords never are.
  if (action.recentConfirmation && cred.kind === 'app_password') return { status: 403, reason: 'recent_confirmation_required' };
  if (UNRESTRICTED_DATA.has(action.name) && cred.prefix) return { status: 403, reason: 'home_prefix_restricted' };
  return { status: 'ok' };
}

/** Refusals that mean "not authorized"; any other 403 comes from the handler, after authorization. */
const AUTH_REASONS = new Set(['missing_scope', 'recent_confirmation_required', 'home_prefix_restricted']);

function urlOf(action: AnyAction): string {
  return action.route.replace(/\{([a-z_]+)\}/g, (_: string, name: string) => (name === 'id' || name.endsWith('_id') ? randomUUID() : 'x'));
}

let inst: TestInstance;
let creds: Cred[];

async function call(action: AnyAction, token: string | null): Promise<{ status: number; body: any }> {
  const headers: Record<string, string> = {};
  if (token) headers.authorization = `Bearer ${token}`;
  const ctrl = new AbortController();
  const res = await fetch(inst.url + urlOf(action), { method: action.method, headers, signal: ctrl.signal });
  // Event streams stay open once authorized: the status is all a row needs.
  if ((res.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
    ctrl.abort();
    return { status: res.status, body: undefined };
  }
  const text = await res.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: res.status, body };
}

beforeAll(async () => {
  inst = await startInstance();
  // Nine credentials × every action from one address: the per-address limits would answer 429 first.
  inst.server.services.config.authRateLimitPerMinute = 1_000_000;
  inst.server.services.config.bearerFailureLimitPerMinute = 1_000_000;
  const owner = await inst.user('olga', 'owner');
  const admin = await inst.user('adam', 'admin');
  const member = await inst.user('mia', 'member');
  const guest = await inst.user('gus', 'guest');
  const ap = async (token: string, body: object) => {
    const r = await inst.api('POST', '/api/v1/auth/app-passwords', { token, body });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    return r.body.password as string;
  };
  const all = (access: Access) => (['data', 'account', 'admin'] as const).map((scope) => ({ scope, access }));
  creds = [
    { name: 'owner session', token: owner.token, kind: 'session', holds: ROLE_HOLDS.owner, username: 'olga' },
    { name: 'admin session', token: admin.token, kind: 'session', holds: ROLE_HOLDS.admin, username: 'adam' },
    { name: 'member session', token: member.token, kind: 'session', holds: ROLE_HOLDS.member, username: 'mia' },
    { name: 'guest session', token: guest.token, kind: 'session', holds: ROLE_HOLDS.guest, username: 'gus' },
    {
      name: 'read-only App Password',
      token: await ap(owner.token, { name: 'ro', scopes: all('read') }),
      kind: 'app_password',
      holds: { data: 'read', account: 'read', admin: 'read' },
    },
    {
      name: 'read-write App Password',
      token: await ap(owner.token, { name: 'rw', scopes: all('write') }),
      kind: 'app_password',
      holds: { data: 'write', account: 'write', admin: 'write' },
    },
    {
      name: 'App Password with home_prefix',
      token: await ap(member.token, { name: 'sub', home_prefix: 'Sub', scopes: [{ scope: 'data', access: 'write' }, { scope: 'account', access: 'write' }] }),
      kind: 'app_password',
      holds: { data: 'write', account: 'write' },
      prefix: 'Sub/',
    },
    {
      name: "guest's App Password asking for more than the role",
      // Created while the user was a member, then cut down when the role was lowered.
      token: await (async () => {
        const u = await inst.user('gina', 'member');
        const t = await ap(u.token, { name: 'was-member', scopes: [{ scope: 'data', access: 'write' }, { scope: 'account', access: 'write' }] });
        const r = await inst.api('PATCH', `/api/v1/auth/users/${u.id}/role`, { token: owner.token, body: { role: 'guest' } });
        expect(r.status).toBe(200);
        return t;
      })(),
      kind: 'app_password',
      holds: ROLE_HOLDS.guest,
    },
    { name: 'no token', token: null, kind: 'none', holds: {} },
    { name: 'bad token', token: `qs_${'A'.repeat(43)}`, kind: 'bad', holds: {} },
  ];
});
afterAll(() => inst.close());

describe('the role matrix', () => {
  it('the documented tables name only declared actions', () => {
    const names = new Set(registry.map((a) => a.name));
    for (const n of [...OWN_SIGN_IN, ...UNRESTRICTED_DATA, ...ENDS_CALLER]) expect(names.has(n), n).toBe(true);
  });

  it(`every action × every credential is authorized or refused as docs/api-conventions.md says`, async () => {
    const breaches: string[] = [];
    let rows = 0;
    for (const cred of creds) {
      const rowsOf = async (action: AnyAction) => {
        let token = cred.token;
        if (ENDS_CALLER.has(action.name) && cred.kind === 'session') token = (await issueAdminToken(inst.server.services, cred.username!)).token;
        const got = await call(action, token);
        const want = expected(action, cred);
        rows++;
        const where = `${action.name} as ${cred.name}: got ${got.status} ${JSON.stringify(got.body?.error ?? null)}, want`;
        if (want.status === 'ok') {
          const reason = got.body?.error?.details?.reason;
          if (got.status === 401 || (got.status === 403 && AUTH_REASONS.has(reason))) breaches.push(`${where} authorized`);
        } else if (want.status === 401) {
          if (got.status !== 401 || got.body?.error?.code !== 'unauthorized') breaches.push(`${where} 401`);
        } else {
          const d = got.body?.error?.details ?? {};
          if (got.status !== 403 || d.reason !== want.reason || (want.needs !== undefined && d.needs !== want.needs)) {
            breaches.push(`${where} 403 ${want.reason} ${want.needs ?? ''}`);
          }
        }
      };
      // A few calls at a time per credential: no row changes what another row sees (see ENDS_CALLER).
      const queue = [...registry];
      await Promise.all(
        Array.from({ length: 4 }, async () => {
          for (let a = queue.shift(); a; a = queue.shift()) await rowsOf(a);
        }),
      );
    }
    expect(rows).toBe(registry.length * creds.length);
    expect(breaches).toEqual([]);
  }, 120_000);

  it('a guest reads her account and ends her sessions, but changes nothing about it', async () => {
    const gus = creds.find((c) => c.name === 'guest session')!.token!;
    expect((await inst.api('GET', '/api/v1/auth/sessions', { token: gus })).status).toBe(200);
    for (const [method, route, body] of [
      ['POST', '/api/v1/auth/recovery/key', undefined],
      ['POST', '/api/v1/auth/passkeys/add/start', undefined],
      ['POST', '/api/v1/auth/app-passwords', { name: 'mine', scopes: [{ scope: 'account', access: 'write' }] }],
      ['PATCH', '/api/v1/auth/me/profile', { display_name: 'Gus', username: 'gus2' }],
    ] as const) {
      const r = await inst.api(method, route, { token: gus, body });
      expect(r.status, route).toBe(403);
      expect(r.body.error.details).toMatchObject({ reason: 'missing_scope', needs: 'account:write' });
    }
    const spare = await issueAdminToken(inst.server.services, 'gus');
    const out = await inst.api('DELETE', '/api/v1/auth/session', { token: spare.token });
    expect(out.status).toBe(200);
    expect((await inst.api('GET', '/api/v1/auth/me', { token: spare.token })).status).toBe(401);
  });
});
