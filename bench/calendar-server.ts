/**
 * A real Quire server on the calendar benchmark Home, in its own process (the
 * load generator does not share its event loop). Creates the user if needed,
 * starts the server, waits for the index, builds the calendar index with one
 * request, emits { url, token, readyMs, calendarMs }, then waits for `close` on stdin.
 * Usage: calendar-server.ts --data <dataDir> --user <name>
 */
import path from 'node:path';
import readline from 'node:readline';
import type { Caller } from '../src/accounts/caller.js';
import { startServer } from '../src/server.js';
import { benchOwner } from './owner.js';
import { emit, parseArgs } from './lib.js';

const args = parseArgs(process.argv.slice(2));
const dataDir = path.resolve(String(args.data));
const username = String(args.user);

const { user, token } = await benchOwner(dataDir, username);
const t0 = performance.now();
const server = await startServer({ dataDir, host: '127.0.0.1', port: 0, log: () => undefined });
const { vault } = await server.services.vaults.forCaller({ userId: user.id } as Caller);
await vault.ready;
const readyMs = performance.now() - t0;
const t1 = performance.now();
const res = await fetch(`${server.url}/api/v1/calendar/calendars`, { headers: { authorization: `Bearer ${token}` } });
if (res.status !== 200) throw new Error(`calendar_calendars answered ${res.status}: ${await res.text()}`);
const calendarMs = performance.now() - t1;
emit({ url: server.url, token, readyMs: Math.round(readyMs), calendarMs: Math.round(calendarMs), rss: process.memoryUsage().rss, pid: process.pid });

readline.createInterface({ input: process.stdin }).on('line', async (l) => {
  if (l.trim() === 'rss') emit({ rss: process.memoryUsage().rss });
  if (l.trim() === 'close') {
    await server.close();
    process.exit(0);
  }
});
