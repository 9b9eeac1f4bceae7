/** `npm start`: a demo Instance with one user whose Home is the sample vault in vault-fixtures/demo/. */
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { loadConfig, paths } from '../../core/config.js';
import { installFile } from '../../core/install.js';
import { openServices, startServer, type RunningServer } from '../../server.js';
import { findUserByName } from '../../store/users.js';
import { addUser, issueAdminToken } from './admin.js';

const DEMO_VAULT = fileURLToPath(installFile('vault-fixtures/demo'));
const DEMO_USER = 'demo';

export async function runDemo(opts: { dataDir: string; port?: string }): Promise<RunningServer> {
  const config = loadConfig({ dataDir: opts.dataDir, port: opts.port });
  const log = (line: string) => console.log(line);
  const services = await openServices(config, log);
  const exists = findUserByName(services.store, DEMO_USER) !== undefined;
  let token: string;
  if (exists) {
    token = (await issueAdminToken(services, DEMO_USER)).token;
  } else {
    token = (await addUser(services, { username: DEMO_USER, role: 'owner', displayName: 'Demo User' })).token;
    await fs.promises.cp(DEMO_VAULT, paths.home(config, DEMO_USER), { recursive: true, errorOnExist: false, force: false });
  }
  // The same services: the server starts opening the Home as soon as it has them.
  const server = await startServer({ log, services });
  console.log(`demo user "${DEMO_USER}" (owner); Home: ${paths.home(config, DEMO_USER)}`);
  console.log(`token: ${token}`);
  console.log(`try:   curl -H "Authorization: Bearer ${token}" ${server.url}/api/v1/auth/me`);
  console.log(`   or: QUIRE_SERVER=${server.url} QUIRE_TOKEN=${token} npx quire action run current_user`);
  return server;
}
