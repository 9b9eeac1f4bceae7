/**
 * The owner account a benchmark's server process works as: created on the first run over a data
 * folder, issued a fresh token on later runs (generated Homes are kept between runs).
 */
import { loadConfig } from '../src/core/config.js';
import { openServices } from '../src/server.js';
import { findUserByName } from '../src/store/users.js';
import { addUser, issueAdminToken } from '../src/surfaces/cli/admin.js';

export async function benchOwner(dataDir: string, username: string) {
  const services = await openServices(loadConfig({ dataDir }));
  return findUserByName(services.store, username) ? issueAdminToken(services, username) : addUser(services, { username, role: 'owner' });
}
