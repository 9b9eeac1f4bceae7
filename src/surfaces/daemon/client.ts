/**
 * The command line's side of the vault daemon: reach the folder's daemon,
 * starting it when there is none (or only a stale socket left by a crash),
 * and send each action there. Loads no index, vault or area code.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { ActionOutcome } from '../../actions/reply.js';
import type { ActionDef } from '../../actions/types.js';
import type { RawInput } from '../../actions/validate.js';
import { AppError } from '../../core/errors.js';
import type { Transport } from '../client/transport.js';
import { daemonFiles, fromWire, request, vaultRealPath, type DaemonReply, type DaemonRequest, type DaemonStatus } from './protocol.js';
import { buildId, daemonRuntimeDir, SOCKET_PATH_LIMIT } from './socket-path.js';
import { START_TIMEOUT_MS, startDaemon, STARTED_ENV } from './spawn.js';

const unreachable = (e: unknown) => ['ENOENT', 'ECONNREFUSED', 'ENOTSOCK'].includes((e as NodeJS.ErrnoException).code ?? '');

function replyOrThrow(reply: DaemonReply): DaemonReply & { ok: true } {
  if (reply.ok) return reply;
  if ('fallback' in reply) throw new AppError('internal', `The vault daemon did not take the request: ${reply.fallback}`);
  throw new AppError(reply.error.code, reply.error.message, { status: reply.status, details: reply.error.details });
}

export class DaemonTransport implements Transport {
  constructor(
    readonly socket: string,
    private readonly restart: () => Promise<void>,
  ) {}

  async call(action: ActionDef<any>, input: RawInput): Promise<ActionOutcome> {
    const req: DaemonRequest = { op: 'call', action: action.name, input };
    let reply: DaemonReply;
    try {
      reply = await request(this.socket, req);
    } catch (e) {
      // Gone between two calls (idle exit, stopped, killed): start it again once. A daemon that died mid-answer is not retried: a write may have happened.
      if (!unreachable(e)) throw e;
      await this.restart();
      reply = await request(this.socket, req);
    }
    if (!reply.ok && 'fallback' in reply) {
      // It did nothing and left (Quire was upgraded under it, daemon.ts): a daemon of this install takes the call.
      await this.restart();
      reply = await request(this.socket, req);
    }
    return fromWire(replyOrThrow(reply).outcome!);
  }
}

async function waitForSocket(socket: string, timeoutMs: number): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    try {
      replyOrThrow(await request(socket, { op: 'status' }));
      return;
    } catch (e) {
      if (!unreachable(e) || Date.now() > until) throw e;
    }
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * A transport to the folder's daemon, started if needed; null when it
 * cannot run (no runtime folder, a socket path too long, it did not come
 * up): the caller then indexes in process. `say` hears why (--verbose).
 */
export async function daemonTransport(dir: string, env: NodeJS.ProcessEnv, say: (line: string) => void): Promise<DaemonTransport | null> {
  let vault: string;
  try {
    vault = vaultRealPath(dir);
  } catch {
    throw new AppError('not_found', `No folder at ${path.resolve(dir)}`);
  }
  const files = daemonFiles(vault, env);
  if (Buffer.byteLength(files.socket) > SOCKET_PATH_LIMIT) {
    say(`vault daemon: socket path ${files.socket} is too long for a Unix socket; indexing in this process`);
    return null;
  }
  const start = async () => {
    say(`vault daemon: starting one for ${vault} (log: ${files.log})`);
    startDaemon(vault, env, files.log);
    await waitForSocket(files.socket, START_TIMEOUT_MS);
  };
  try {
    if (env[STARTED_ENV] === files.socket) {
      // The thin client started it and could not send the call (it ended first, or was not up within the time): wait for the socket once more.
      delete env[STARTED_ENV];
      say('vault daemon: waiting for the one started before the command line loaded');
      await waitForSocket(files.socket, START_TIMEOUT_MS);
      return new DaemonTransport(files.socket, start);
    }
    if (fs.existsSync(files.socket)) {
      try {
        const running = replyOrThrow(await request(files.socket, { op: 'status' })).status!;
        const build = buildId();
        if (running.build === build) {
          say(`vault daemon: using the running one for ${vault}`);
          return new DaemonTransport(files.socket, start);
        }
        // Started before a rebuild (or by another install of Quire): its code is not this one's, so it is replaced, never used.
        say(`vault daemon: the running one is of another build (${running.build ?? 'unknown'}, this is ${build}); replacing it`);
        await stopRunning(files.socket);
      } catch (e) {
        if (!unreachable(e)) throw e;
        say('vault daemon: stale socket (a daemon that ended without cleaning up); starting a new one');
      }
    }
    await start();
    return new DaemonTransport(files.socket, start);
  } catch (e) {
    say(`vault daemon: cannot run (${(e as Error).message}); indexing in this process`);
    return null;
  }
}

/** Every daemon of this user: their status, or `stale` for a socket nobody answers on. */
export async function listDaemons(env: NodeJS.ProcessEnv): Promise<Array<DaemonStatus | { vault: string; socket: string; stale: true }>> {
  const dir = daemonRuntimeDir(env);
  let names: string[];
  try {
    names = fs.readdirSync(dir).filter((n) => n.endsWith('.json'));
  } catch {
    return [];
  }
  const out: Array<DaemonStatus | { vault: string; socket: string; stale: true }> = [];
  for (const n of names) {
    let info: { vault: string; socket: string };
    try {
      info = JSON.parse(fs.readFileSync(path.join(dir, n), 'utf8')) as { vault: string; socket: string };
    } catch {
      continue;
    }
    try {
      out.push(replyOrThrow(await request(info.socket, { op: 'status' })).status!);
    } catch {
      out.push({ vault: info.vault, socket: info.socket, stale: true });
    }
  }
  return out;
}

/** Tells the daemon on `socket` to stop and waits until its process is gone (it saves its snapshot first), so a next one starts fresh. */
async function stopRunning(socket: string): Promise<DaemonStatus> {
  const status = replyOrThrow(await request(socket, { op: 'stop' })).status!;
  const until = Date.now() + 10_000;
  while (Date.now() < until && alive(status.pid)) await new Promise((r) => setTimeout(r, 20));
  return status;
}

/** Stops the folder's daemon; false when none was running. */
export async function stopDaemon(dir: string, env: NodeJS.ProcessEnv): Promise<DaemonStatus | null> {
  const files = daemonFiles(vaultRealPath(dir), env);
  try {
    return await stopRunning(files.socket);
  } catch (e) {
    if (!unreachable(e)) throw e;
    fs.rmSync(files.socket, { force: true });
    fs.rmSync(files.info, { force: true });
    return null;
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
