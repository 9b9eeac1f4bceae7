/** System information: what a client needs before it signs in. */
import type { ActionContext } from '../actions/context.js';
import { API_VERSION, VERSION } from '../core/config.js';
import { instanceSettings } from '../store/users.js';

export function systemInfo(ctx: ActionContext) {
  const instance = instanceSettings(ctx.services.store);
  return {
    name: ctx.services.config.instanceName,
    version: VERSION,
    api_version: API_VERSION,
    open_signup: instance.open_signup,
  };
}
