/**
 * Fetches one web page for a clip, defensively: HTTP(S) only, every
 * redirect hop followed by hand (at most `maxRedirects`) and checked again,
 * the host resolved once per hop and every address checked before the
 * connection is made to exactly that address (no second lookup to rebind),
 * one deadline for the whole fetch, a streamed size limit, and only HTML.
 * Every refusal is a 400 `bad_request` with a precise `details.reason`.
 */
import dns from 'node:dns/promises';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import zlib from 'node:zlib';
import type { Readable } from 'node:stream';
import { AppError, type ErrorDetails } from '../core/errors.js';
import { isPublicAddress } from './address.js';

export interface FetchLimits {
  /** Connect to private, loopback and link-local addresses too (QUIRE_CLIP_ALLOW_PRIVATE=1). */
  allowPrivate: boolean;
  maxBytes?: number;
  timeoutMs?: number;
  maxRedirects?: number;
}

export const DEFAULT_MAX_BYTES = 5 * 1024 * 1024;
export const DEFAULT_TIMEOUT_MS = 10_000;
export const DEFAULT_MAX_REDIRECTS = 5;

export interface FetchedPage {
  /** The address after redirects: relative links resolve against it. */
  finalUrl: URL;
  html: string;
  contentType: string;
}

const HTML_TYPES = new Set(['text/html', 'application/xhtml+xml']);

export function refuse(reason: string, message: string, more: ErrorDetails = {}): AppError {
  return new AppError('bad_request', message, { details: { reason, ...more } });
}

class Timeout extends Error {}

/** Checks the scheme of one hop. */
export function checkScheme(url: URL): void {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw refuse('scheme_not_allowed', `Only http and https addresses can be clipped, not ${url.protocol}`, { url: url.href });
  }
}

/** Resolves a host and returns the address to connect to, refusing it if any address is not public. */
async function resolveHost(url: URL, allowPrivate: boolean): Promise<{ address: string; family: number }> {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  let addresses: Array<{ address: string; family: number }>;
  if (net.isIP(host)) {
    addresses = [{ address: host, family: net.isIP(host) }];
  } else {
    try {
      addresses = await dns.lookup(host, { all: true, verbatim: true });
    } catch (e) {
      throw refuse('fetch_failed', `Could not resolve ${host}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`, {
        host,
      });
    }
  }
  if (addresses.length === 0) throw refuse('fetch_failed', `Could not resolve ${host}`, { host });
  if (!allowPrivate) {
    const bad = addresses.find((a) => !isPublicAddress(a.address));
    if (bad) {
      throw refuse(
        'address_not_allowed',
        `${host} resolves to ${bad.address}, which is not a public internet address; the operator can allow it with QUIRE_CLIP_ALLOW_PRIVATE=1`,
        { host, address: bad.address },
      );
    }
  }
  return addresses[0]!;
}

function request(url: URL, pinned: { address: string; family: number }, signal: AbortSignal): Promise<http.IncomingMessage> {
  return new Promise((resolve, reject) => {
    const lib = url.protocol === 'https:' ? https : http;
    const req = lib.request(
      url,
      {
        method: 'GET',
        signal,
        headers: {
          'user-agent': 'Mozilla/5.0 (compatible; QuireClipper/1)',
          accept: 'text/html,application/xhtml+xml;q=0.9,*/*;q=0.1',
          'accept-encoding': 'gzip, deflate, br',
        },
        // Connect to the address that was checked, never a fresh lookup.
        lookup: ((_host: string, opts: { all?: boolean }, cb: (...args: unknown[]) => void) => {
          if (opts?.all) cb(null, [pinned]);
          else cb(null, pinned.address, pinned.family);
        }) as unknown as typeof dns.lookup,
      },
      resolve,
    );
    req.on('error', reject);
    req.end();
  });
}

function decoded(res: http.IncomingMessage): Readable {
  const enc = String(res.headers['content-encoding'] ?? '').trim().toLowerCase();
  if (enc === 'gzip' || enc === 'x-gzip') return res.pipe(zlib.createGunzip());
  if (enc === 'deflate') return res.pipe(zlib.createInflate());
  if (enc === 'br') return res.pipe(zlib.createBrotliDecompress());
  return res;
}

/** Reads the (decompressed) body, refusing it as soon as it passes maxBytes. */
async function readLimited(res: http.IncomingMessage, maxBytes: number, url: URL): Promise<Buffer> {
  const declared = Number(res.headers['content-length']);
  if (Number.isFinite(declared) && declared > maxBytes) {
    res.destroy();
    throw refuse('too_large', `The page is larger than ${maxBytes} bytes`, { url: url.href, limit: String(maxBytes) });
  }
  const chunks: Buffer[] = [];
  let total = 0;
  const stream = decoded(res);
  try {
    for await (const chunk of stream) {
      total += (chunk as Buffer).length;
      if (total > maxBytes) {
        throw refuse('too_large', `The page is larger than ${maxBytes} bytes`, { url: url.href, limit: String(maxBytes) });
      }
      chunks.push(chunk as Buffer);
    }
  } catch (e) {
    res.destroy();
    throw e;
  }
  return Buffer.concat(chunks);
}

/** The charset from the Content-Type header, else from a `<meta>` near the start, else UTF-8. */
export function decodeHtml(bytes: Buffer, contentType: string): string {
  let label = /charset\s*=\s*"?([\w.:-]+)/i.exec(contentType)?.[1];
  if (!label) {
    const head = bytes.subarray(0, 4096).toString('latin1');
    label = /<meta[^>]+charset\s*=\s*["']?([\w.:-]+)/i.exec(head)?.[1];
  }
  try {
    return new TextDecoder(label ?? 'utf-8').decode(bytes);
  } catch {
    return new TextDecoder('utf-8').decode(bytes);
  }
}

export async function fetchPage(input: string | URL, limits: FetchLimits): Promise<FetchedPage> {
  const maxBytes = limits.maxBytes ?? DEFAULT_MAX_BYTES;
  const timeoutMs = limits.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const maxRedirects = limits.maxRedirects ?? DEFAULT_MAX_REDIRECTS;
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
  try {
    for (let hop = 0; ; hop++) {
      checkScheme(url);
      const pinned = await race(resolveHost(url, limits.allowPrivate));
      let res: http.IncomingMessage;
      try {
        res = await race(request(url, pinned, controller.signal));
      } catch (e) {
        if (e instanceof Timeout || timedOut) throw e;
        throw refuse('fetch_failed', `Could not fetch ${url.href}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`, {
          url: url.href,
        });
      }
      const status = res.statusCode ?? 0;
      if (status >= 300 && status < 400 && res.headers.location) {
        res.resume();
        if (hop >= maxRedirects) {
          throw refuse('too_many_redirects', `More than ${maxRedirects} redirects`, { url: url.href, limit: String(maxRedirects) });
        }
        try {
          url = new URL(res.headers.location, url);
        } catch {
          throw refuse('fetch_failed', `Invalid redirect address from ${url.href}`, { url: url.href });
        }
        continue;
      }
      if (status < 200 || status >= 300) {
        res.resume();
        throw refuse('fetch_failed', `The page answered HTTP ${status}`, { url: url.href, status: String(status) });
      }
      const contentType = String(res.headers['content-type'] ?? '');
      const mime = contentType.split(';')[0]!.trim().toLowerCase();
      if (!HTML_TYPES.has(mime)) {
        res.resume();
        throw refuse('not_html', `Only HTML pages can be clipped, this one is ${mime || 'untyped'}`, {
          url: url.href,
          content_type: mime,
        });
      }
      const bytes = await race(readLimited(res, maxBytes, url));
      return { finalUrl: url, html: decodeHtml(bytes, contentType), contentType: mime };
    }
  } catch (e) {
    if (e instanceof Timeout || (timedOut && !(e instanceof AppError))) {
      throw refuse('timeout', `The page did not arrive within ${timeoutMs} ms`, { url: url.href, limit: String(timeoutMs) });
    }
    if (e instanceof AppError) throw e;
    throw refuse('fetch_failed', `Could not fetch ${url.href}: ${(e as Error).message}`, { url: url.href });
  } finally {
    clearTimeout(timer);
    if (!timedOut) controller.abort();
  }
}
