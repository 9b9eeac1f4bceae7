/**
 * The one path every call takes, whatever the surface: authenticate, check
 * scopes and role, recent confirmation, `--confirm`, validate, run the
 * handler, and turn every failure into an AppError.
 */
import { AppError, errors, toAppError } from '../core/errors.js';
import { onFirstUse } from '../core/first-use.js';
import type { Services } from '../core/services.js';
import type { Caller } from '../accounts/caller.js';
import { authenticate } from '../accounts/credentials.js';
import { accessNeeded, missingScopes } from '../accounts/grants.js';
import { checkConfirmation } from './confirmation.js';
import type { ActionContext, SurfaceName } from './context.js';
import { toOutcome, type ActionOutcome } from './reply.js';
import type { ActionDef } from './types.js';
import type { RawInput } from './validate.js';

/**
 * Input validation (ajv, 0.28 MB of code, and the schemas it compiles) is loaded by the first call, not by every
 * start: a server listens and its Homes index without it (docs/performance.md, "Start-up").
 */
let validation: typeof import('./validate.js') | undefined;
/** The input validator, imported once and kept (core/first-use.ts says why); the server and daemon preload it (surfaces/deferred-modules.ts). */
export const loadValidation = onFirstUse(async () => (validation = await import('./validate.js')));

export interface CallOptions {
  services: Services;
  surface: SurfaceName;
  /** The bearer token sent with the call, if any. */
  token?: string | null;
  /** An already-known caller (the command line's local vault mode). */
  caller?: Caller;
  /** `--confirm` on the command line, `confirm: true` over MCP. HTTP callers confirm by calling. */
  confirm?: boolean;
  /** Reports unexpected failures; the caller never sees their text. */
  onInternalError?: (err: unknown, action: ActionDef<any>) => void;
}

function checkAccess(action: ActionDef<any>, caller: Caller | null, now: number, rcSeconds: number): void {
  const needsCaller = action.scopes.some((s) => s !== 'none');
  if (!needsCaller) return;
  if (!caller) throw new AppError('unauthorized', 'This action needs a bearer token (Authorization: Bearer <token>)');
  const missing = missingScopes(caller.grants, action.scopes, accessNeeded(action));
  if (missing.length > 0) {
    throw new AppError('forbidden', `This credential lacks the scope this action needs: ${missing.join(', ')}`, {
      details: { reason: 'missing_scope', needs: missing.join(',') },
    });
  }
  if (action.recentConfirmation) {
    const fresh = caller.confirmedAt !== null && now - caller.confirmedAt <= rcSeconds * 1000;
    if (!fresh) {
      throw new AppError('forbidden', 'This action needs a recent confirmation: confirm with your passkey or identity provider, then retry', {
        details: { reason: 'recent_confirmation_required' },
      });
    }
  }
}

export async function dispatch(action: ActionDef<any>, raw: RawInput, opts: CallOptions): Promise<ActionOutcome> {
  const now = Date.now();
  try {
    let caller: Caller | null = opts.caller ?? null;
    if (!caller && opts.token) {
      try {
        caller = authenticate(opts.services.store, opts.token, now);
      } catch (e) {
        // A route that needs no token ignores a stale one rather than failing.
        if (action.scopes.some((s) => s !== 'none')) throw e;
      }
    }
    checkAccess(action, caller, now, opts.services.config.recentConfirmationSeconds);
    checkConfirmation(action, opts.confirm, opts.surface);
    const input = (validation ?? (await loadValidation())).validateInput(action, raw);
    if (!action.handler) throw errors.notImplemented(action.name);
    const ctx: ActionContext = { caller, services: opts.services, surface: opts.surface, now: () => Date.now() };
    return toOutcome(await action.handler(ctx, input as never));
  } catch (e) {
    if (!(e instanceof AppError)) opts.onInternalError?.(e, action);
    throw toAppError(e);
  }
}
