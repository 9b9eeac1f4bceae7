/**
 * A Quire server for the file drop benchmark, in its own process, so that its RSS is the
 * server's alone. Creates a user with an Inbox folder and a file drop link to it, emits
 * { url, slug, pid, rss }, samples its RSS every 20 ms, and answers lines on stdin:
 * `reset` (the peak starts again from now) and `rss` ({ rss, peak, cpuS: CPU seconds used so far }); `close` stops it.
 * Usage: public-upload-server.ts --data <dataDir>
 */
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { startServer } from '../src/server.js';
import { addUser } from '../src/surfaces/cli/admin.js';
import { emit, parseArgs } from './lib.js';

const args = parseArgs(process.argv.slice(2));
const dataDir = path.resolve(String(args.data));
const server = await startServer({ dataDir, host: '127.0.0.1', port: 0, log: () => undefined });
const { token } = await addUser(server.services, { username: 'drop', role: 'member' });
fs.mkdirSync(path.join(dataDir, 'homes', 'drop', 'Inbox'), { recursive: true });
let slug = '';
while (!slug) {
  const r = await fetch(`${server.url}/api/v1/links`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ target: { kind: 'folder', path: 'Inbox' }, permissions: { upload: true } }),
  });
  if (r.status === 201) slug = ((await r.json()) as { slug: string }).slug;
  else await new Promise((res) => setTimeout(res, 100)); // the Home is still being indexed
}
let peak = process.memoryUsage.rss();
setInterval(() => (peak = Math.max(peak, process.memoryUsage.rss())), 20);
emit({ url: server.url, slug, pid: process.pid, rss: process.memoryUsage.rss() });

readline.createInterface({ input: process.stdin }).on('line', async (l) => {
  const cmd = l.trim();
  const cpu = () => {
    const u = process.cpuUsage();
    return (u.user + u.system) / 1e6;
  };
  if (cmd === 'reset') {
    peak = process.memoryUsage.rss();
    emit({ rss: peak, peak, cpuS: cpu() });
  }
  if (cmd === 'rss') emit({ rss: process.memoryUsage.rss(), peak: Math.max(peak, process.memoryUsage.rss()), cpuS: cpu() });
  if (cmd === 'close') {
    await server.close();
    process.exit(0);
  }
});
