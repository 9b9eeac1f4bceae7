/**
 * A Quire server for bench/request-limits.ts, in its own process: creates an owner, starts on a
 * loopback port, prints `{ url, token, pid }` as one JSON line, and stops on stdin `close`.
 * Usage: node dist-bench/bench/request-limits-server.js --data <dir> [env QUIRE_* settings]
 */
import path from 'node:path';
import readline from 'node:readline';
import { loadConfig } from '../src/core/config.js';
import { openServices, startServer } from '../src/server.js';
import { addUser } from '../src/surfaces/cli/admin.js';

const i = process.argv.indexOf('--data');
const dataDir = path.resolve(process.argv[i + 1]!);
const services = await openServices(loadConfig({ dataDir }));
const { token } = await addUser(services, { username: 'bench', role: 'owner' });
const server = await startServer({ dataDir, host: '127.0.0.1', port: 0, log: () => undefined });
process.stdout.write(JSON.stringify({ url: server.url, token, pid: process.pid }) + '\n');
for await (const line of readline.createInterface({ input: process.stdin })) {
  if (line.trim() === 'close') {
    await server.close();
    process.exit(0);
  }
}
