/** `quire daemon status` and `quire daemon stop`: see docs/cli.md, "Vault daemon". */
import { listDaemons, stopDaemon } from '../daemon/client.js';
import type { Io } from './usage.js';

export async function daemonStatus(json: boolean, io: Io, env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const all = await listDaemons(env);
  if (json) {
    io.out(JSON.stringify(all));
    return;
  }
  if (all.length === 0) io.out('No vault daemon is running.');
  for (const d of all) {
    if ('stale' in d) io.out(`${d.vault}  not answering (stale socket; the next call replaces it)`);
    else {
      const notes = d.notes === null ? 'indexing' : `${d.notes} notes`;
      io.out(`${d.vault}  pid ${d.pid}, ${notes}, exits after ${Math.ceil(d.idleLeftSeconds / 60)} min idle`);
    }
  }
}

export async function daemonStop(vault: string, io: Io, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const stopped = await stopDaemon(vault, env);
  io.out(stopped ? `Stopped the vault daemon of ${stopped.vault} (pid ${stopped.pid}).` : `No vault daemon was running for ${vault}.`);
  return 0;
}
