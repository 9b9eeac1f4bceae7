/**
 * Abuse resistance for sign-in: a small sliding-window limiter per IP and
 * route, and a count of failed bearer tokens per IP. It sits in the HTTP
 * surface (a Fastify hook) because the generated action routes share one
 * handler; over the limit a request gets 429 `too_many_requests` with
 * `Retry-After` before dispatch runs.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../core/errors.js';
import type { Services } from '../core/services.js';
import { authenticate, basicCredentials, bearerToken } from './credentials.js';

const WINDOW_MS = 60_000;

export class SlidingWindowLimiter {
  private readonly hits = new Map<string, number[]>();

  /** Records a hit for `key` and returns the seconds to wait if it is over `limit`, else 0. */
  hit(key: string, limit: number, now = Date.now()): number {
    const list = this.recent(key, now);
    if (list.length >= limit) return Math.max(1, Math.ceil((list[0]! + WINDOW_MS - now) / 1000));
    list.push(now);
    this.hits.set(key, list);
    return 0;
  }

  /** Seconds to wait if `key` already has `limit` hits in the window, without recording one. */
  blocked(key: string, limit: number, now = Date.now()): number {
    const list = this.recent(key, now);
    return list.length >= limit ? Math.max(1, Math.ceil((list[0]! + WINDOW_MS - now) / 1000)) : 0;
  }

  record(key: string, now = Date.now()): void {
    const list = this.recent(key, now);
    list.push(now);
    this.hits.set(key, list);
  }

  private recent(key: string, now: number): number[] {
    const list = (this.hits.get(key) ?? []).filter((t) => t > now - WINDOW_MS);
    if (list.length === 0) this.hits.delete(key);
    if (this.hits.size > 50_000) this.sweep(now);
    return list;
  }

  private sweep(now: number): void {
    for (const [k, v] of this.hits) if (!v.some((t) => t > now - WINDOW_MS)) this.hits.delete(k);
  }
}

/** Routes where someone proves who they are, or tries to: each is limited per IP. */
const SIGN_IN_ROUTE = /^\/api\/v1\/auth\/(setup\/start|invites\/start|passkeys\/(login|registration|reenrol|recovery)\/|assert\/|cli\/(start|token|approve)|oidc\/|app-password-profiles\/)/;
const PAGE_ROUTE = /^\/(setup|invite|login|recover|reenrol|cli\/approve|signed-in)\b/;

function tooMany(res: FastifyReply, retryAfter: number, what: string) {
  const err = new AppError('too_many_requests', `Too many ${what} from this address; retry in ${retryAfter} s`, {
    details: { reason: 'rate_limited', retry_after: String(retryAfter) },
  });
  return res.code(429).header('retry-after', String(retryAfter)).type('application/json; charset=utf-8').send(err.toEnvelope());
}

function validToken(services: Services, header: string): boolean {
  try {
    // CalDAV clients send the App Password as HTTP Basic (src/caldav/auth.ts).
    const token = basicCredentials(header)?.password ?? bearerToken(header);
    return token !== null && authenticate(services.store, token, Date.now()) !== null;
  } catch {
    return false;
  }
}

export function installRateLimits(app: FastifyInstance, services: Services): void {
  const routes = new SlidingWindowLimiter();
  const failures = new SlidingWindowLimiter();

  // Callback hooks rather than async ones: they run on every request, and a promise each is garbage in a burst.
  app.addHook('onRequest', (req: FastifyRequest, res: FastifyReply, done: () => void) => {
    const config = services.config;
    if (req.headers.authorization) {
      const wait = failures.blocked(req.ip, config.bearerFailureLimitPerMinute);
      // Only the guessing stops: a valid token from the same address (a neighbour behind the same
      // NAT, or the owner after a typo) is still served. Checking it is one hash and a lookup.
      if (wait > 0 && !validToken(services, req.headers.authorization)) return void tooMany(res, wait, 'failed sign-in tokens');
    }
    const path = req.url.split('?')[0]!;
    if (SIGN_IN_ROUTE.test(path) || PAGE_ROUTE.test(path)) {
      const route = req.routeOptions.url ?? path;
      const wait = routes.hit(`${req.ip} ${req.method} ${route}`, config.authRateLimitPerMinute);
      if (wait > 0) return void tooMany(res, wait, 'sign-in requests');
    }
    done();
  });

  app.addHook('onResponse', (req: FastifyRequest, res: FastifyReply, done: () => void) => {
    if (res.statusCode === 401 && req.headers.authorization) failures.record(req.ip);
    done();
  });
}
