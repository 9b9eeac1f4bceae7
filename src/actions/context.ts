/** What a handler gets besides its input: who calls, and the services it may use. */
import type { Services } from '../core/services.js';
import type { Caller } from '../accounts/caller.js';
import { AppError } from '../core/errors.js';

export type SurfaceName = 'http' | 'cli' | 'mcp' | 'local';

export interface ActionContext {
  /** null only for scope `none` actions called without a token. */
  caller: Caller | null;
  services: Services;
  surface: SurfaceName;
  /** Milliseconds since the epoch; tests move it with a fake clock. */
  now: () => number;
}

/** The caller of an action that needs one; dispatch guarantees it for scoped actions. */
export function callerOf(ctx: ActionContext): Caller {
  if (!ctx.caller) throw new AppError('unauthorized', 'This action needs a bearer token');
  return ctx.caller;
}
