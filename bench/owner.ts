/**
 * The owner account a benchmark's server process works as: created on the first run over a data
 * folder, issued a fresh token on later runs (generated Homes are kept between runs).
 */
import { loadConfig } from '../src/core/config.js';
import { openServices } from '../src/server.js';
import { addUser, issueAdminToken } from '../src/surfaces/cli/admin.js';

export async function benchOwner(dataDir: string, username: string) {
  const services = await openServices(loadConfig({ dataDir }));
  const exists = services.store.snapshot().users.some((u) => u.username === username);
  return exists ? issueAdminToken(services, username) : addUser(services, { username, role: 'owner' });
}
