/**
 * Link passwords: stored as scrypt hashes, checked with two sliding-window limits on failures
 * (per link, wherever the guesses come from; per IP address, whatever link they aim at).
 * A correct password is remembered for a few minutes (by link and a SHA-256 of the password),
 * so a page with twenty thumbnails costs one scrypt, not twenty.
 */
import { createHash, randomBytes, scrypt as scryptCb, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import { SlidingWindowLimiter } from '../accounts/rate-limit.js';
import { AppError } from '../core/errors.js';

/** N = 2^15, r = 8, p = 1: 32 MiB and tens of milliseconds per check on an idle core (160–540 ms measured on the loaded 2-core machine); four at once (libuv's pool) stay under 128 MiB. */
const N = 1 << 15;
const R = 8;
const P = 1;
const KEYLEN = 32;
const MAXMEM = 64 * 1024 * 1024;

/** Longest password accepted, in characters: scrypt's cost does not depend on it, a body's size does. */
export const PASSWORD_MAX = 1024;

/** Failed guesses allowed per minute on one link, and from one IP address. */
export const LINK_FAILURES_PER_MINUTE = 10;
export const IP_FAILURES_PER_MINUTE = 20;

const REMEMBER_MS = 5 * 60_000;
const REMEMBER_MAX = 10_000;

function scrypt(password: string, salt: Buffer, n: number, r: number, p: number): Promise<Buffer> {
  const opts: ScryptOptions = { N: n, r, p, maxmem: MAXMEM };
  return new Promise((resolve, reject) => scryptCb(password.normalize('NFC'), salt, KEYLEN, opts, (e, key) => (e ? reject(e) : resolve(key))));
}

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await scrypt(password, salt, N, R, P);
  return `scrypt$${N}$${R}$${P}$${salt.toString('base64url')}$${key.toString('base64url')}`;
}

async function matches(stored: string, password: string): Promise<boolean> {
  const [alg, n, r, p, salt, hash] = stored.split('$');
  if (alg !== 'scrypt' || !n || !r || !p || salt === undefined || hash === undefined) return false;
  const want = Buffer.from(hash, 'base64url');
  const got = await scrypt(password, Buffer.from(salt, 'base64url'), Number(n), Number(r), Number(p));
  return got.length === want.length && timingSafeEqual(got, want);
}

const linkFailures = new SlidingWindowLimiter();
const ipFailures = new SlidingWindowLimiter();
/** `<link id> <password_hash> <sha256(password)>` → when it was last verified. */
const remembered = new Map<string, number>();

function rememberKey(linkId: string, stored: string, password: string): string {
  return `${linkId} ${stored} ${createHash('sha256').update(password).digest('base64url')}`;
}

function tooMany(wait: number, what: string): AppError {
  return new AppError('too_many_requests', `Too many wrong passwords ${what}; retry in ${wait} s`, {
    details: { reason: 'rate_limited', retry_after: String(wait) },
    headers: { 'retry-after': String(wait) },
  });
}

export function passwordRequired(message: string): AppError {
  return new AppError('unauthorized', message, { details: { reason: 'password_required' } });
}

/** Seconds an address must wait before its next password guess, or 0. */
export function ipWait(ip: string, now = Date.now()): number {
  return ipFailures.blocked(ip, IP_FAILURES_PER_MINUTE, now);
}

export function recordIpFailure(ip: string, now = Date.now()): void {
  ipFailures.record(ip, now);
}

/**
 * Throws 401 `password_required` unless `password` opens a link with hash `stored`, and 429 once
 * the link has had too many wrong guesses this minute (checked before any hashing).
 */
export async function checkPassword(linkId: string, stored: string, password: string | undefined, now = Date.now()): Promise<void> {
  if (password === undefined || password === '') throw passwordRequired('This public link needs a password: send it in the X-Public-Password header');
  const key = rememberKey(linkId, stored, password);
  const seen = remembered.get(key);
  if (seen !== undefined && now - seen < REMEMBER_MS) return;
  const wait = linkFailures.blocked(linkId, LINK_FAILURES_PER_MINUTE, now);
  if (wait > 0) throw tooMany(wait, 'for this link');
  if (password.length > PASSWORD_MAX || !(await matches(stored, password))) {
    linkFailures.record(linkId, now);
    throw passwordRequired('The password for this public link is wrong');
  }
  remembered.delete(key);
  remembered.set(key, now);
  if (remembered.size > REMEMBER_MAX) remembered.delete(remembered.keys().next().value!);
}
