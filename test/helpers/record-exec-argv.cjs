// `node --require <this file>` (in NODE_OPTIONS, so the processes a command
// starts load it too): appends one JSON line per Node.js process to the file
// named by $QUIRE_EXEC_ARGV_LOG, its command's arguments and the Node.js
// flags it runs with (test/cli/launcher.test.ts). Worker threads are not processes: left out.
const fs = require('node:fs');
const { isMainThread } = require('node:worker_threads');

if (isMainThread) fs.appendFileSync(process.env.QUIRE_EXEC_ARGV_LOG, `${JSON.stringify({ pid: process.pid, args: process.argv.slice(2), flags: process.execArgv })}\n`);
