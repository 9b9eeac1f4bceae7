/** Runs the real `quire` command as a child process. */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';

export const QUIRE_BIN = path.resolve(__dirname, '../../bin/quire.js');

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

export function runCli(args: string[], opts: { env?: Record<string, string>; input?: string; timeoutMs?: number } = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [QUIRE_BIN, ...args], {
      // In process by default: a test of the vault daemon (test/cli/) turns it on and stops what it started.
      env: { ...process.env, QUIRE_SERVER: '', QUIRE_TOKEN: '', QUIRE_DAEMON: 'off', ...opts.env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`quire ${args.join(' ')} timed out\nstdout: ${stdout}\nstderr: ${stderr}`));
    }, opts.timeoutMs ?? 20_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code: code ?? -1, stdout, stderr });
    });
    child.stdin.end(opts.input ?? '');
  });
}

export interface ServeStarted {
  url: string;
  token: string;
  /** Everything it printed so far. */
  out(): string;
}

/**
 * Starts `quire serve ARGS` (no QUIRE_DATA/QUIRE_PORT from this process) and,
 * in `ready`, waits for the URL and token it prints and, with
 * `untilIndexReady`, for its `index ready` line. `child` is returned at once
 * so the caller can register it for stopping before waiting; `onOutput`
 * sees the output as it grows.
 */
export function spawnServe(
  args: string[],
  opts: { env?: Record<string, string>; untilIndexReady?: boolean; onOutput?: (out: string) => void } = {},
): { child: ChildProcess; ready: Promise<ServeStarted> } {
  const child = spawn(process.execPath, [QUIRE_BIN, 'serve', ...args], {
    env: { ...process.env, QUIRE_DATA: '', QUIRE_PORT: '', ...opts.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const ready = new Promise<ServeStarted>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`quire serve printed no URL and token${opts.untilIndexReady ? ' and index ready line' : ''}:\n${out}`)), 60_000);
    const onData = (d: Buffer) => {
      out += d;
      opts.onOutput?.(out);
      const url = /^url:\s+(\S+)$/m.exec(out)?.[1];
      const token = /^token:\s+(\S+)$/m.exec(out)?.[1];
      if (url && token && (!opts.untilIndexReady || /^index ready/m.test(out))) {
        clearTimeout(timer);
        resolve({ url, token, out: () => out });
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`quire serve exited with ${code}:\n${out}`));
    });
  });
  return { child, ready };
}
