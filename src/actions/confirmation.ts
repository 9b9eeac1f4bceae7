/** The `--confirm` rule, in a module of its own so that a client (`quire action run --server`) checks it without loading dispatch's dependencies. */
import { AppError } from '../core/errors.js';
import type { SurfaceName } from './context.js';
import type { ActionDef } from './types.js';

/**
 * The action surfaces (command line, MCP) refuse a destructive call without
 * an explicit confirmation before anything is sent or run.
 */
export function checkConfirmation(action: Pick<ActionDef<any>, 'name' | 'effect'>, confirm: boolean | undefined, surface: SurfaceName): void {
  if (surface === 'http' || action.effect !== 'destructive' || confirm === true) return;
  const how = surface === 'mcp' ? 'set "confirm": true in the tool arguments' : 'add --confirm';
  throw new AppError('bad_request', `${action.name} changes data; ${how} to run it`, {
    details: { reason: 'confirmation_required', action: action.name },
  });
}
