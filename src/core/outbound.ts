/**
 * Every outbound HTTP request Quire makes (web clips, calendar subscriptions,
 * CalDAV accounts, web push) goes through here, defensively: HTTP(S) only,
 * each redirect hop followed by hand (at most `maxRedirects`) and checked
 * again, the host resolved once per hop and every address checked before
 * the connection is made to exactly that address (no second lookup to
 * rebind), one deadline for the whole exchange, a streamed size limit.
 * Private, loopback and link-local addresses are refused unless the
 * operator set QUIRE_FETCH_ALLOW_PRIVATE=1 (alias QUIRE_CLIP_ALLOW_PRIVATE=1,
 * `Config.allowPrivateFetch`). Every refusal is a 400 `bad_request` with a
 * precise `details.reason` (docs/calendar-sync.md, "Outbound fetches").
 */
import dns from 'node:dns/promises';
import http from 'node:http';
import { createRequire } from 'node:module';
import net from 'node:net';
import type { Readable } from 'node:stream';
import { AppError, type ErrorDetails } from './errors.js';
import { isPublicAddress } from './address.js';

// TLS and zlib are required by the first fetch, not at every start of the server: under its Node.js flags Node compiles
// its own modules without their code cache, about 12 ms for these two (docs/performance.md, "Start-up").
const requireBuiltin = createRequire(import.meta.url);
const https = (): typeof import('node:https') => requireBuiltin('node:https');
const zlib = (): typeof import('node:zlib') => requireBuiltin('node:zlib');

export interface OutboundLimits {
  /** Connect to private, loopback and link-local addresses too (Config.allowPrivateFetch). */
  allowPrivate: boolean;
  maxBytes?: number;
  timeoutMs?: number;
  maxRedirects?: number;
}

export interface OutboundRequest extends OutboundLimits {
  method?: string;
  headers?: Record<string, string>;
  body?: string | Buffer | null;
  /** 'manual' hands a 3xx back as it is (CalDAV discovery reads its Location itself). */
  redirect?: 'follow' | 'manual';
  /** Called once the status and headers are in, before the body is read: throw to refuse the answer. */
  onHeaders?: (res: { status: number; headers: http.IncomingHttpHeaders; url: URL }) => void;
  /** What the message calls the resource ("The page", "The calendar"). */
  noun?: string;
}

export interface OutboundResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  /** The address after redirects. */
  url: URL;
}

export const DEFAULT_MAX_BYTES = 5 * 1024 * 1024;
export const DEFAULT_TIMEOUT_MS = 10_000;
export const DEFAULT_MAX_REDIRECTS = 5;

export function refuse(reason: string, message: string, more: ErrorDetails = {}): AppError {
  return new AppError('bad_request', message, { details: { reason, ...more } });
}

class Timeout extends Error {}

export function checkScheme(url: URL, verb = 'fetched'): void {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw refuse('scheme_not_allowed', `Only http and https addresses can be ${verb}, not ${url.protocol}`, { url: url.href });
  }
}

/** Parses a user-given address, refusing anything but an absolute http(s) URL, naming `field`. */
export function parseOutboundUrl(text: string, field: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new AppError('bad_request', `${field} is not an absolute address`, { details: { field, reason: 'invalid_url' } });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new AppError('bad_request', `${field} must be an http or https address, not ${url.protocol}`, { details: { field, reason: 'scheme_not_allowed' } });
  }
  return url;
}

/** Resolves a host and returns the address to connect to, refusing it if any address is not public. */
export async function resolveHost(url: URL, allowPrivate: boolean): Promise<{ address: string; family: number }> {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  let addresses: Array<{ address: string; family: number }>;
  if (net.isIP(host)) {
    addresses = [{ address: host, family: net.isIP(host) }];
  } else {
    try {
      addresses = await dns.lookup(host, { all: true, verbatim: true });
    } catch (e) {
      throw refuse('fetch_failed', `Could not resolve ${host}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`, { host });
    }
  }
  if (addresses.length === 0) throw refuse('fetch_failed', `Could not resolve ${host}`, { host });
  if (!allowPrivate) {
    const bad = addresses.find((a) => !isPublicAddress(a.address));
    if (bad) {
      throw refuse(
        'address_not_allowed',
        `${host} resolves to ${bad.address}, which is not a public internet address; the operator can allow it with QUIRE_FETCH_ALLOW_PRIVATE=1`,
        { host, address: bad.address },
      );
    }
  }
  return addresses[0]!;
}

function send(url: URL, pinned: { address: string; family: number }, req: OutboundRequest, signal: AbortSignal): Promise<http.IncomingMessage> {
  return new Promise((resolve, reject) => {
    const lib = url.protocol === 'https:' ? https() : http;
    const r = lib.request(
      url,
      {
        method: req.method ?? 'GET',
        signal,
        headers: { 'accept-encoding': 'gzip, deflate, br', ...req.headers },
        // Connect to the address that was checked, never a fresh lookup.
        lookup: ((_host: string, opts: { all?: boolean }, cb: (...args: unknown[]) => void) => {
          if (opts?.all) cb(null, [pinned]);
          else cb(null, pinned.address, pinned.family);
        }) as unknown as typeof dns.lookup,
      },
      resolve,
    );
    r.on('error', reject);
    r.end(req.body ?? undefined);
  });
}

function decoded(res: http.IncomingMessage): Readable {
  const enc = String(res.headers['content-encoding'] ?? '').trim().toLowerCase();
  if (enc === 'gzip' || enc === 'x-gzip') return res.pipe(zlib().createGunzip());
  if (enc === 'deflate') return res.pipe(zlib().createInflate());
  if (enc === 'br') return res.pipe(zlib().createBrotliDecompress());
  return res;
}

/** Reads the (decompressed) body, refusing it as soon as it passes maxBytes. */
async function readLimited(res: http.IncomingMessage, maxBytes: number, url: URL, noun: string): Promise<Buffer> {
  const tooLarge = () => refuse('too_large', `${noun} is larger than ${maxBytes} bytes`, { url: url.href, limit: String(maxBytes) });
  const declared = Number(res.headers['content-length']);
  if (Number.isFinite(declared) && declared > maxBytes) {
    res.destroy();
    throw tooLarge();
  }
  const chunks: Buffer[] = [];
  let total = 0;
  try {
    for await (const chunk of decoded(res)) {
      total += (chunk as Buffer).length;
      if (total > maxBytes) throw tooLarge();
      chunks.push(chunk as Buffer);
    }
  } catch (e) {
    res.destroy();
    throw e;
  }
  return Buffer.concat(chunks);
}

/** One outbound exchange within the limits; any status comes back (the caller judges it). */
export async function outboundFetch(input: string | URL, req: OutboundRequest): Promise<OutboundResponse> {
  const maxBytes = req.maxBytes ?? DEFAULT_MAX_BYTES;
  const timeoutMs = req.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const maxRedirects = req.maxRedirects ?? DEFAULT_MAX_REDIRECTS;
  const noun = req.noun ?? 'The answer';
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort(new Timeout());
  }, timeoutMs);
  const deadline = new Promise<never>((_, reject) => {
    controller.signal.addEventListener('abort', () => reject(new Timeout()), { once: true });
  });
  deadline.catch(() => undefined);
  const race = <T>(p: Promise<T>): Promise<T> => Promise.race([p, deadline]);
  let url = typeof input === 'string' ? new URL(input) : input;
  let current = req;
  try {
    for (let hop = 0; ; hop++) {
      checkScheme(url);
      const pinned = await race(resolveHost(url, req.allowPrivate));
      let res: http.IncomingMessage;
      try {
        res = await race(send(url, pinned, current, controller.signal));
      } catch (e) {
        if (e instanceof Timeout || timedOut) throw e;
        throw refuse('fetch_failed', `Could not fetch ${url.href}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`, { url: url.href });
      }
      const status = res.statusCode ?? 0;
      if (status >= 300 && status < 400 && res.headers.location && req.redirect !== 'manual') {
        res.resume();
        if (hop >= maxRedirects) throw refuse('too_many_redirects', `More than ${maxRedirects} redirects`, { url: url.href, limit: String(maxRedirects) });
        try {
          url = new URL(res.headers.location, url);
        } catch {
          throw refuse('fetch_failed', `Invalid redirect address from ${url.href}`, { url: url.href });
        }
        // 307 and 308 repeat the request as it was; the others become a GET without a body.
        if (status !== 307 && status !== 308) current = { ...current, method: current.method === 'HEAD' ? 'HEAD' : 'GET', body: null };
        continue;
      }
      try {
        req.onHeaders?.({ status, headers: res.headers, url });
      } catch (e) {
        res.resume();
        throw e;
      }
      const body = await race(readLimited(res, maxBytes, url, noun));
      return { status, headers: res.headers, body, url };
    }
  } catch (e) {
    if (e instanceof Timeout || (timedOut && !(e instanceof AppError))) {
      throw refuse('timeout', `${noun} did not arrive within ${timeoutMs} ms`, { url: url.href, limit: String(timeoutMs) });
    }
    if (e instanceof AppError) throw e;
    throw refuse('fetch_failed', `Could not fetch ${url.href}: ${(e as Error).message}`, { url: url.href });
  } finally {
    clearTimeout(timer);
    if (!timedOut) controller.abort();
  }
}

const NULL_BODY = new Set([101, 204, 205, 304]);

/**
 * A WHATWG `fetch` over outboundFetch, for libraries that take one (tsdav):
 * the same address checks and limits, and a refusal becomes a rejected
 * promise carrying the AppError.
 */
export function guardedFetch(limits: OutboundLimits & { noun?: string }): typeof globalThis.fetch {
  return (async (input: string | URL | Request, init: RequestInit = {}) => {
    const href = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    const headers: Record<string, string> = {};
    new Headers(init.headers ?? (input instanceof Request ? input.headers : undefined)).forEach((v, k) => (headers[k] = v));
    const body = init.body == null ? null : typeof init.body === 'string' ? init.body : Buffer.from(await new Response(init.body).arrayBuffer());
    const res = await outboundFetch(href, { ...limits, method: init.method ?? 'GET', headers, body, redirect: init.redirect === 'manual' ? 'manual' : 'follow' });
    const out = new Headers();
    for (const [k, v] of Object.entries(res.headers)) {
      if (v === undefined || k === 'content-encoding' || k === 'content-length') continue;
      for (const one of Array.isArray(v) ? v : [v]) out.append(k, one);
    }
    const status = res.status < 200 || res.status > 599 ? 502 : res.status;
    const response = new Response(NULL_BODY.has(status) ? null : new Uint8Array(res.body), { status, headers: out });
    Object.defineProperty(response, 'url', { value: res.url.href });
    return response;
  }) as typeof globalThis.fetch;
}
