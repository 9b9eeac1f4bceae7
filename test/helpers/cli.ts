/** Runs the real `quire` command as a child process. */
import { spawn } from 'node:child_process';
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
