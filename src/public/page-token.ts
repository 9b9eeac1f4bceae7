/**
 * What the `/p/{slug}` page keeps in its cookie once a visitor has typed the right password: a
 * signed, expiring grant, not the password (so the password never goes back to the browser).
 * The grant names the link and its expiry; its HMAC also covers the link's current password
 * hash, so changing or removing-and-setting the password ends every grant at once, and a revoked
 * link is refused before any password is looked at. The key is kept under
 * `<data>/state/public/page.key` (never in a Home), like the collab tickets' key (a separate
 * key: a ticket is never a grant). docs/public-links.md, "The page".
 */
import crypto from 'node:crypto';
import path from 'node:path';
import { stateKey } from '../core/state-key.js';

/** How long a grant opens the link: a working day, then the visitor types the password again. */
export const PAGE_GRANT_TTL_MS = 12 * 60 * 60 * 1000;
/** Grants travel where passwords do (`X-Public-Password`); this shape tells them apart (a password shaped so is not believable). */
const PREFIX = 'qpage_';
const SHAPE = /^qpage_([A-Za-z0-9_-]{8,})\.([A-Za-z0-9_-]{43})$/;

interface Grant {
  /** Link id. */
  l: string;
  /** Expiry, Unix ms. */
  exp: number;
}

/** The signing key of a data directory, made at first use. */
const keyOf = (stateDir: string): Buffer => stateKey(path.join(stateDir, 'public', 'page.key'));

const sign = (key: Buffer, body: string, passwordHash: string) => crypto.createHmac('sha256', key).update(`${body}\n${passwordHash}`).digest('base64url');

/** A grant for a link whose password was just checked. */
export function issuePageGrant(stateDir: string, link: { id: string; password_hash: string }, now: number): string {
  const body = Buffer.from(JSON.stringify({ l: link.id, exp: now + PAGE_GRANT_TTL_MS } satisfies Grant)).toString('base64url');
  return `${PREFIX}${body}.${sign(keyOf(stateDir), body, link.password_hash)}`;
}

/** Whether a string is shaped as a grant (then it is never checked as a password). */
export const isPageGrant = (s: string) => SHAPE.test(s);

/**
 * Whether an `X-Public-Password` value is a password sent to be checked, which counts against the
 * sender's address when wrong; a grant is not a guess (it cannot be made without the key).
 */
export const isPasswordGuess = (value: unknown): value is string => typeof value === 'string' && !isPageGrant(value);

/** True when `token` is a grant this server signed for this link and its current password, not expired. */
export function pageGrantOpens(stateDir: string, token: string, link: { id: string; password_hash: string }, now: number): boolean {
  const m = SHAPE.exec(token);
  if (!m) return false;
  const want = Buffer.from(sign(keyOf(stateDir), m[1]!, link.password_hash));
  const given = Buffer.from(m[2]!);
  if (want.length !== given.length || !crypto.timingSafeEqual(want, given)) return false;
  try {
    const g = JSON.parse(Buffer.from(m[1]!, 'base64url').toString('utf8')) as Grant;
    return g.l === link.id && typeof g.exp === 'number' && g.exp > now;
  } catch {
    return false;
  }
}
