/** Instance configuration: command-line flags, then environment, then defaults. */
import path from 'node:path';
import { VERSION } from './install.js';

export { VERSION };
export const API_VERSION = 'v1';

export interface Config {
  /** Root of the data directory: `homes/` and `state/` live below it. */
  dataDir: string;
  host: string;
  port: number;
  instanceName: string;
  /** How long a recent confirmation lasts (seconds). */
  recentConfirmationSeconds: number;
  /** Lifetime of sessions by kind (seconds). */
  sessionTtlSeconds: { web: number; installation: number };
  /**
   * The address people use to reach the server (QUIRE_PUBLIC_URL), e.g.
   * `https://notes.example.org`; null means the address the server listens on.
   * Links the server hands out (command-line approval, invites, setup profiles,
   * OpenID Connect redirect URIs) start with it.
   */
  publicBaseUrl: string | null;
  /** WebAuthn relying-party ID (QUIRE_RP_ID); null derives it from the origin's host name. */
  rpId: string | null;
  /** WebAuthn origin (QUIRE_ORIGIN), e.g. `https://notes.example.org`; null derives it from the public URL. */
  origin: string | null;
  /** OpenID Connect providers (QUIRE_OIDC_PROVIDERS, a JSON array). */
  oidcProviders: OidcProviderConfig[];
  /** Sign-in requests allowed per IP per minute on each sign-in route (QUIRE_AUTH_RATE_LIMIT). */
  authRateLimitPerMinute: number;
  /** Failed bearer tokens allowed per IP per minute before 429 (QUIRE_BEARER_FAILURE_LIMIT). */
  bearerFailureLimitPerMinute: number;
  /** Let every outbound fetch (clips, subscriptions, CalDAV accounts, push) reach private, loopback and link-local addresses (QUIRE_FETCH_ALLOW_PRIVATE=1; QUIRE_CLIP_ALLOW_PRIVATE=1 is an alias). */
  allowPrivateFetch: boolean;
  /**
   * Which reverse proxies' `X-Forwarded-For` names the client (QUIRE_TRUST_PROXY): false (the
   * default) ignores the header, a number trusts that many hops, a string lists proxy addresses
   * and CIDRs. Rate limits count the address this yields (docs/reliability.md).
   */
  trustProxy: boolean | number | string;
  /** Open connections allowed from one address; 0 = no limit (QUIRE_MAX_CONNECTIONS_PER_IP). */
  maxConnectionsPerIp: number;
  /** Time a client has to send a request's headers (QUIRE_HEADERS_TIMEOUT_MS). */
  headersTimeoutMs: number;
  /** Time a client has to send a whole request, body included (QUIRE_REQUEST_TIMEOUT_MS). */
  requestTimeoutMs: number;
  /** Bytes of large request bodies (over 1 MiB) read at once; more wait with 503 (QUIRE_LARGE_BODY_BUDGET). */
  largeBodyBudgetBytes: number;
  /**
   * Follow symbolic links in a Home that lead outside it (`quire serve --vault --follow-symlinks`,
   * QUIRE_FOLLOW_SYMLINKS=1): the index, search and watcher then see what they point at. Off by
   * default: no link is followed out of a Home (docs/vault-disk.md, "Symlinks").
   */
  followSymlinks: boolean;
  /** Set by the server once it listens: `http://host:port`. */
  listenUrl?: string;
}

export interface OidcProviderConfig {
  /** The `{provider}` route segment, e.g. `google`. */
  key: string;
  /** Shown on the sign-in page. */
  name: string;
  /** Issuer URL; its `/.well-known/openid-configuration` is discovered. */
  issuer: string;
  client_id: string;
  client_secret?: string;
  /** Extra scopes besides `openid email profile`. */
  scopes?: string[];
  /** Allow an `http://` issuer (loopback test providers only). */
  allow_insecure_http?: boolean;
}

export interface ConfigInput {
  dataDir?: string;
  host?: string;
  port?: number | string;
  instanceName?: string;
  recentConfirmationSeconds?: number | string;
  publicBaseUrl?: string;
  rpId?: string;
  origin?: string;
  oidcProviders?: OidcProviderConfig[];
  allowPrivateFetch?: boolean;
  followSymlinks?: boolean;
  trustProxy?: string;
  maxConnectionsPerIp?: number;
  headersTimeoutMs?: number;
  requestTimeoutMs?: number;
  largeBodyBudgetBytes?: number;
}

function parseProviders(text: string | undefined): OidcProviderConfig[] {
  if (text === undefined || text.trim() === '') return [];
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw new Error(`QUIRE_OIDC_PROVIDERS is not valid JSON: ${(e as Error).message}`);
  }
  if (!Array.isArray(value)) throw new Error('QUIRE_OIDC_PROVIDERS must be a JSON array of providers');
  return value.map((p: Record<string, unknown>, i) => {
    for (const k of ['key', 'issuer', 'client_id']) {
      if (typeof p[k] !== 'string' || p[k] === '') throw new Error(`QUIRE_OIDC_PROVIDERS[${i}].${k} must be a non-empty string`);
    }
    if (!/^[a-z0-9_-]{1,40}$/.test(p.key as string)) {
      throw new Error(`QUIRE_OIDC_PROVIDERS[${i}].key must be lower-case letters, digits, "_" or "-"`);
    }
    return { name: p.key, ...p } as OidcProviderConfig;
  });
}

const trimSlash = (s: string | undefined) => (s === undefined || s === '' ? null : s.replace(/\/+$/, ''));

/** QUIRE_TRUST_PROXY: off, `1`/`true` (one hop), a hop count, or a comma list of addresses and CIDRs. */
export function parseTrustProxy(text: string | undefined): boolean | number | string {
  const v = (text ?? '').trim();
  if (v === '' || v === '0' || v.toLowerCase() === 'false') return false;
  if (v.toLowerCase() === 'true') return 1;
  if (/^[0-9]+$/.test(v)) return Number(v);
  const list = v.split(',').map((s) => s.trim());
  const bad = list.find((s) => !/^[0-9a-fA-F:.]+(\/[0-9]{1,3})?$/.test(s) && !['loopback', 'linklocal', 'uniquelocal'].includes(s));
  if (bad !== undefined) throw new Error(`QUIRE_TRUST_PROXY: "${bad}" is not an address, a CIDR, loopback, linklocal or uniquelocal`);
  return list.join(',');
}

function intOr(value: string | number | undefined, fallback: number, name: string): number {
  if (value === undefined || value === '') return fallback;
  const n = typeof value === 'number' ? value : Number(value);
  if (!Number.isInteger(n) || n < 0) throw new Error(`${name} must be a non-negative integer, got ${String(value)}`);
  return n;
}

export function loadConfig(input: ConfigInput = {}, env: NodeJS.ProcessEnv = process.env): Config {
  const port = intOr(input.port ?? env.QUIRE_PORT, 8787, 'port');
  if (port > 65535) throw new Error(`port must be at most 65535, got ${port}`);
  const headersTimeoutMs = intOr(input.headersTimeoutMs ?? env.QUIRE_HEADERS_TIMEOUT_MS, 10_000, 'QUIRE_HEADERS_TIMEOUT_MS');
  const requestTimeoutMs = intOr(input.requestTimeoutMs ?? env.QUIRE_REQUEST_TIMEOUT_MS, 120_000, 'QUIRE_REQUEST_TIMEOUT_MS');
  // A headers timeout longer than the whole request's could never fire: a setting mistake.
  if (requestTimeoutMs > 0 && headersTimeoutMs > requestTimeoutMs) {
    throw new Error(`QUIRE_HEADERS_TIMEOUT_MS (${headersTimeoutMs}) must not be longer than QUIRE_REQUEST_TIMEOUT_MS (${requestTimeoutMs})`);
  }
  return {
    dataDir: path.resolve(input.dataDir ?? env.QUIRE_DATA ?? './data'),
    host: input.host ?? env.QUIRE_HOST ?? '127.0.0.1',
    port,
    instanceName: input.instanceName ?? env.QUIRE_INSTANCE_NAME ?? 'Quire',
    recentConfirmationSeconds: intOr(
      input.recentConfirmationSeconds ?? env.QUIRE_RECENT_CONFIRMATION_SECONDS,
      300,
      'recent confirmation window',
    ),
    sessionTtlSeconds: { web: 30 * 24 * 3600, installation: 365 * 24 * 3600 },
    publicBaseUrl: trimSlash(input.publicBaseUrl ?? env.QUIRE_PUBLIC_URL),
    rpId: input.rpId ?? (env.QUIRE_RP_ID || null),
    origin: trimSlash(input.origin ?? env.QUIRE_ORIGIN),
    oidcProviders: input.oidcProviders ?? parseProviders(env.QUIRE_OIDC_PROVIDERS),
    authRateLimitPerMinute: intOr(env.QUIRE_AUTH_RATE_LIMIT, 60, 'QUIRE_AUTH_RATE_LIMIT'),
    bearerFailureLimitPerMinute: intOr(env.QUIRE_BEARER_FAILURE_LIMIT, 30, 'QUIRE_BEARER_FAILURE_LIMIT'),
    allowPrivateFetch: input.allowPrivateFetch ?? (env.QUIRE_FETCH_ALLOW_PRIVATE === '1' || env.QUIRE_CLIP_ALLOW_PRIVATE === '1'),
    followSymlinks: input.followSymlinks ?? env.QUIRE_FOLLOW_SYMLINKS === '1',
    trustProxy: parseTrustProxy(input.trustProxy ?? env.QUIRE_TRUST_PROXY),
    maxConnectionsPerIp: intOr(input.maxConnectionsPerIp ?? env.QUIRE_MAX_CONNECTIONS_PER_IP, 256, 'QUIRE_MAX_CONNECTIONS_PER_IP'),
    headersTimeoutMs,
    requestTimeoutMs,
    largeBodyBudgetBytes: intOr(input.largeBodyBudgetBytes ?? env.QUIRE_LARGE_BODY_BUDGET, 64 * 1024 * 1024, 'QUIRE_LARGE_BODY_BUDGET'),
  };
}

const LOOPBACK = new Set(['127.0.0.1', '[::1]', '::1', '0.0.0.0', '[::]']);

/**
 * The base URL links start with: QUIRE_PUBLIC_URL, else the address the
 * server listens on, with a loopback IP shown as `localhost` (browsers refuse
 * an IP address as a WebAuthn relying-party ID, and treat localhost as secure).
 */
export function publicBaseUrl(c: Config): string {
  if (c.publicBaseUrl) return c.publicBaseUrl;
  const listen = c.listenUrl ?? `http://${c.host}:${c.port}`;
  const u = new URL(listen);
  if (LOOPBACK.has(u.hostname)) u.hostname = 'localhost';
  return u.toString().replace(/\/+$/, '');
}

/** The WebAuthn relying party: QUIRE_RP_ID and QUIRE_ORIGIN, else derived from the public URL. */
export function relyingParty(c: Config): { id: string; origin: string; name: string } {
  const origin = c.origin ?? new URL(publicBaseUrl(c)).origin;
  return { id: c.rpId ?? new URL(origin).hostname, origin, name: c.instanceName };
}

export const paths = {
  homes: (c: Config) => path.join(c.dataDir, 'homes'),
  home: (c: Config, username: string) => path.join(c.dataDir, 'homes', username),
  state: (c: Config) => path.join(c.dataDir, 'state'),
  sidecar: (c: Config) => path.join(c.dataDir, 'state', 'sidecar.json'),
  cache: (c: Config) => path.join(c.dataDir, 'state', 'cache'),
};
