/**
 * The services a handler may use. Areas add their service here as they are
 * built; tests and the command line's local vault mode assemble their own.
 */
import type { Config } from './config.js';
import type { SidecarStore } from '../store/sidecar.js';
import type { Vaults } from '../vault/vaults.js';

export interface Services {
  config: Config;
  store: SidecarStore;
  /** The users' Homes and their indexes. */
  vaults: Vaults;
}
