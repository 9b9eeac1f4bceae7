/**
 * A server in its own process, for tests that kill it: `tsx server-child.ts <data dir> <port> [user...]`.
 * Creates the named users on first start and prints one JSON line: the URL and their tokens.
 */
import { startServer } from '../../src/server.js';
import { addUser } from '../../src/surfaces/cli/admin.js';

const [dataDir, port, ...users] = process.argv.slice(2);
const server = await startServer({ dataDir: dataDir!, host: '127.0.0.1', port: Number(port), log: () => undefined });
const tokens: Record<string, string> = {};
for (const username of users) tokens[username] = (await addUser(server.services, { username, role: 'member' })).token;
process.stdout.write(JSON.stringify({ url: server.url, tokens }) + '\n');
process.on('SIGTERM', () => void server.close().then(() => process.exit(0)));
