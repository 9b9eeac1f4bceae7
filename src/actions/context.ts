/** What a handler gets besides its input: who calls, and the services it may use. */
import type { Services } from '../core/services.js';
import type { Caller } from '../accounts/caller.js';

export type SurfaceName = 'http' | 'cli' | 'mcp' | 'local';

export interface ActionContext {
  /** null only for scope `none` actions called without a token. */
  caller: Caller | null;
  services: Services;
  surface: SurfaceName;
  /** Milliseconds since the epoch; tests move it with a fake clock. */
  now: () => number;
}
