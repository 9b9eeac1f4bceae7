/**
 * A Quire server in its own process (test/collab/server-child.ts), for tests that kill it with
 * SIGKILL and start it again on the same data folder and port.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import readline from 'node:readline';

const CHILD = path.resolve(__dirname, '../collab/server-child.ts');
const started = new Set<ChildProcess>();

export interface ChildServer {
  child: ChildProcess;
  url: string;
  /** The users created on first start, by username. */
  tokens: Record<string, string>;
}

/** Starts the server on `dataDir` and `port` with `users` (created if new); resolves once it listens. */
export async function startChildServer(dataDir: string, port: number, users: string[] = [], env: Record<string, string> = {}): Promise<ChildServer> {
  // Node itself with tsx's loader, not the tsx wrapper: a SIGKILL must reach the server's own process.
  const child = spawn(process.execPath, ['--import', 'tsx', CHILD, dataDir, String(port), ...users], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, ...env },
  });
  started.add(child);
  const line = await new Promise<string>((resolve, reject) => {
    const rl = readline.createInterface({ input: child.stdout! });
    rl.once('line', resolve);
    child.once('exit', (code) => reject(new Error(`server child exited with ${code}`)));
  });
  return { child, ...(JSON.parse(line) as { url: string; tokens: Record<string, string> }) };
}

/** SIGKILLs every server this file started (for `afterAll`), also one that never answered. */
export function killChildServers(): void {
  for (const c of started) c.kill('SIGKILL');
  started.clear();
}
