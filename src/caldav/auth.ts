/**
 * Who a DAV request is: HTTP Basic with the username and an App Password (what
 * calendar apps send), or a bearer token (a session or App Password), checked
 * by the accounts area's `authenticate`. Failed attempts are counted and
 * throttled per address by the same hook as the API's (accounts/rate-limit.ts).
 */
import type { Caller } from '../accounts/caller.js';
import { authenticate, basicCredentials, bearerToken } from '../accounts/credentials.js';
import { AppError } from '../core/errors.js';
import type { SidecarStore } from '../store/sidecar.js';

export const REALM = 'Quire calendars';
export const CHALLENGE = `Basic realm="${REALM}", charset="UTF-8"`;

const unauthorized = (message: string) => new AppError('unauthorized', message, { headers: { 'www-authenticate': CHALLENGE } });

export function davCaller(store: SidecarStore, header: string | string[] | undefined, now: number): Caller {
  if (header === undefined || header === '') throw unauthorized('Sign in with your username and an App Password');
  const basic = basicCredentials(header);
  let caller: Caller;
  try {
    caller = authenticate(store, basic ? basic.password : bearerToken(header) ?? '', now);
  } catch (e) {
    if (e instanceof AppError && e.status === 401) throw unauthorized(basic ? 'Wrong username or App Password' : e.message);
    throw e;
  }
  // Usernames are unique ignoring case, and people type them as they like.
  if (basic && basic.username.toLowerCase() !== caller.username.toLowerCase()) throw unauthorized('Wrong username or App Password');
  if (!caller.grants.some((g) => g.scope === 'data')) {
    throw new AppError('forbidden', 'This credential has no data scope; create an App Password with data access for calendar apps', {
      details: { reason: 'missing_scope', needs: 'data:read' },
    });
  }
  return caller;
}

export const canWrite = (caller: Caller) => caller.grants.some((g) => g.scope === 'data' && g.access === 'write');
