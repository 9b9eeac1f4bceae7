/**
 * A real Quire server for the collaboration benchmark, in its own process (the clients do not
 * share its event loop or its memory figure). Writes `--notes` notes into a fresh Home, starts the
 * server, waits for the index, emits { url, token, pid, rss }, then answers `rss` lines on stdin
 * with its RSS and exits on `close`.
 * Usage: collab-server.ts --data <dataDir> --notes <n>
 */
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { startServer } from '../src/server.js';
import { addUser } from '../src/surfaces/cli/admin.js';
import { performance as perf } from 'node:perf_hooks';
import { emit, parseArgs } from './lib.js';

const args = parseArgs(process.argv.slice(2));
const dataDir = path.resolve(String(args.data));
const notes = Number(args.notes ?? 200);

const server = await startServer({ dataDir, host: '127.0.0.1', port: 0, log: () => undefined });
const { token } = await addUser(server.services, { username: 'collab', role: 'member' });
const home = path.join(dataDir, 'homes', 'collab', 'Notes');
fs.mkdirSync(home, { recursive: true });
const para = 'A paragraph of an ordinary note, with [[links]] and #tags, long enough to look like one. '.repeat(8);
for (let i = 0; i < notes; i++) {
  fs.writeFileSync(path.join(home, `N${i}.md`), `---\nid: n${i}\n---\n# Note ${i}\n\n${`${para}\n\n`.repeat(4)}`);
}
// The first request opens the Home; wait until every note is indexed.
for (;;) {
  const r = await fetch(`${server.url}/api/v1/notes/n${notes - 1}`, { headers: { authorization: `Bearer ${token}` } });
  if (r.status === 200) break;
  await new Promise((res) => setTimeout(res, 100));
}
emit({ url: server.url, token, pid: process.pid, rss: process.memoryUsage().rss });

readline.createInterface({ input: process.stdin }).on('line', async (l) => {
  if (l.trim() === 'rss') emit({ rss: process.memoryUsage().rss, busyMs: perf.eventLoopUtilization().active });
  if (l.trim() === 'close') {
    await server.close();
    process.exit(0);
  }
});
