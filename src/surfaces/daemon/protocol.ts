/**
 * The vault daemon's wire: one request per connection over a Unix socket,
 * one JSON line each way. Kept apart from the daemon so the command line's
 * client side loads nothing but this and node:net (docs/cli.md, "Vault
 * daemon").
 */
import net from 'node:net';
import type { ActionOutcome } from '../../actions/reply.js';
import type { RawInput } from '../../actions/validate.js';
import type { ErrorEnvelope } from '../../core/errors.js';

export { daemonFiles, vaultRealPath } from './socket-path.js';

export type DaemonRequest =
  | { op: 'call'; action: string; input: RawInput }
  | RunRequest
  | { op: 'status' }
  | { op: 'stop' };

/**
 * A whole command from the thin client (thin.ts): its argv, read by the
 * daemon with the command line's own parsing. `cwd` resolves its `--vault`;
 * `tz` is the caller's TZ, the one variable of its environment the
 * command's output depends on (local dates of `today`, `log`, `--due`).
 */
export interface RunRequest {
  op: 'run';
  build: string;
  argv: string[];
  cwd: string;
  tz: string | null;
  /** How the answer comes back: a JSON line (the default, the Node thin client), or `frames` (runFrames: the native one, which reads no JSON). */
  wire?: 'frames';
}

/** What the command printed, in order (1 stdout, 2 stderr), and its exit code. */
export interface RunResult {
  output: Array<[1 | 2, string]>;
  code: number;
}

export interface DaemonStatus {
  pid: number;
  /** The build it runs (socket-path.ts `buildId`): a client of another build replaces it. */
  build: string;
  vault: string;
  socket: string;
  startedAt: string;
  /** Notes in the index; null while it is being built. */
  notes: number | null;
  /** The opening's background work (full text, snapshot) is done: calls no longer share the CPU with it. */
  warm: boolean;
  /** Seconds without a request before it exits. */
  idleSeconds: number;
  idleLeftSeconds: number;
}

/** An outcome with its bytes (if any) as base64: JSON carries no Buffer. */
export type WireOutcome = Omit<ActionOutcome, 'body'> & { body?: unknown; bodyBase64?: string };

export type DaemonReply =
  | { ok: true; outcome?: WireOutcome; status?: DaemonStatus; run?: RunResult }
  /** A run request the daemon leaves to the full command line (another build, TZ or folder; a form its parser does not take), having done nothing. */
  | { ok: false; fallback: string }
  | { ok: false; status: number; error: ErrorEnvelope['error'] };

export function toWire(o: ActionOutcome): WireOutcome {
  const { body, ...rest } = o;
  return Buffer.isBuffer(body) ? { ...rest, bodyBase64: body.toString('base64') } : { ...rest, body };
}

export function fromWire(w: WireOutcome): ActionOutcome {
  const { bodyBase64, body, ...rest } = w;
  return { ...rest, body: bodyBase64 !== undefined ? Buffer.from(bodyBase64, 'base64') : body } as ActionOutcome;
}

/**
 * A run request's answer for the native thin client (src/surfaces/cli/native/thin.c),
 * which then has no JSON to unescape: frames of one kind byte, a 4-byte
 * big-endian length and that many bytes. An answer is either one `f` frame
 * (the reason, UTF-8: the daemon did nothing, the full command line runs
 * it; an error before running counts as such, as thin.ts treats every
 * `ok: false`), or `o` (stdout) and `e` (stderr) frames in the order printed,
 * then one `x` frame holding the exit code (int32).
 */
export function runFrames(reply: DaemonReply): Buffer {
  const frame = (kind: string, body: Buffer) => {
    const head = Buffer.alloc(5);
    head.write(kind, 0, 'latin1');
    head.writeUInt32BE(body.length, 1);
    return [head, body];
  };
  if (!reply.ok || !reply.run) return Buffer.concat(frame('f', Buffer.from('fallback' in reply ? reply.fallback : 'error' in reply ? reply.error.message : 'it does not take whole commands')));
  const parts: Buffer[] = [];
  // Lines printed one after another to the same stream make one frame: one write(2) each on the other side.
  const output = reply.run.output;
  for (let i = 0; i < output.length; ) {
    const fd = output[i]![0];
    let text = '';
    for (; i < output.length && output[i]![0] === fd; i++) text += output[i]![1];
    parts.push(...frame(fd === 1 ? 'o' : 'e', Buffer.from(text)));
  }
  const code = Buffer.alloc(4);
  code.writeInt32BE(reply.run.code);
  parts.push(...frame('x', code));
  return Buffer.concat(parts);
}

/**
 * Sends one request and reads the one-line reply. Rejects with the socket
 * error's code (ENOENT, ECONNREFUSED: no daemon there) when it cannot
 * connect, and with `EPIPE` when the daemon went away before answering.
 */
export function request(socket: string, req: DaemonRequest): Promise<DaemonReply> {
  return new Promise((resolve, reject) => {
    const conn = net.createConnection(socket);
    let text = '';
    let connected = false;
    conn.setEncoding('utf8');
    conn.on('connect', () => {
      connected = true;
      conn.write(JSON.stringify(req) + '\n');
    });
    conn.on('data', (d: string) => (text += d));
    conn.on('error', (e: NodeJS.ErrnoException) => reject(Object.assign(e, { connected })));
    conn.on('close', () => {
      const line = text.split('\n', 1)[0];
      if (!line) return reject(Object.assign(new Error('The vault daemon closed the connection without answering'), { code: 'EPIPE', connected }));
      try {
        resolve(JSON.parse(line) as DaemonReply);
      } catch {
        reject(Object.assign(new Error('The vault daemon answered something that is not JSON'), { code: 'EPROTO', connected }));
      }
    });
  });
}
