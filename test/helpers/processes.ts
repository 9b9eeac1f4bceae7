/** Ports and processes for tests that run real servers (Quire in its own process, Radicale, Dovecot). */
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';

/** A loopback port free now, so a server started later (or started again) can take it. */
export async function freePort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as net.AddressInfo).port;
  await new Promise((r) => srv.close(r));
  return port;
}

/** Stops `child` with SIGTERM, waits until it has exited, then removes its folders `dirs`. */
export async function stopProcess(child: ChildProcess, ...dirs: string[]): Promise<void> {
  if (child.exitCode === null) {
    const gone = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    await gone;
  }
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
}
