/**
 * The vault daemon (`quire daemon run --vault DIR`, started by the first
 * `--vault` call): one process per folder that keeps the folder's index in
 * memory, follows edits with the watcher, and answers the command line over
 * a Unix socket in the user's runtime folder. It exits after an idle period
 * (QUIRE_DAEMON_IDLE seconds, default 900), on `quire daemon stop`, and on
 * SIGTERM/SIGINT, saving the index snapshot to the user's cache folder.
 *
 * Freshness: before each answer the daemon waits until the watcher has
 * nothing pending (its events read, held-back paths settled, batches
 * applied to the index), so an edit made before a call is in that call's
 * answer (docs/cli.md, "Every answer fresh").
 */
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import type { ActionOutcome } from '../../actions/reply.js';
import type { RawInput } from '../../actions/validate.js';
import { toAppError } from '../../core/errors.js';
import { LocalTransport } from '../client/local.js';
import type { Transport } from '../client/transport.js';
import { preloadDeferred } from '../deferred-modules.js';
import { daemonFiles, request, runFrames, toWire, vaultRealPath, type DaemonReply, type DaemonRequest, type DaemonStatus, type RunRequest, type RunResult } from './protocol.js';
import { buildId } from './socket-path.js';
import { CALL_WAIT_ENV } from './spawn.js';

export const DEFAULT_IDLE_SECONDS = 15 * 60;
/** The daemon's watcher batches edits after this quiet time (the server's default is 50 ms): a call waits at most about this long for an edit made just before it. */
const DEBOUNCE_MS = 10;
/** Longest a call waits for a folder that keeps changing (a long `git checkout`) before answering from what is indexed. */
const SETTLE_LIMIT_MS = 3000;

/** A call that failed because code it loads at first use is gone (dispatch turns that into `reason: upgraded`). */
const isUpgraded = (e: unknown) => toAppError(e).details?.reason === 'upgraded';
const upgradedError = () => Object.assign(new Error('Quire was upgraded while this daemon ran'), { code: 'ERR_MODULE_NOT_FOUND' });

export function idleSeconds(env: NodeJS.ProcessEnv): number {
  const raw = env.QUIRE_DAEMON_IDLE;
  const n = raw === undefined || raw === '' ? DEFAULT_IDLE_SECONDS : Number(raw);
  return Number.isFinite(n) && n > 0 ? n : DEFAULT_IDLE_SECONDS;
}

/** Takes the socket; a live daemon already there wins (this one exits), a stale socket file (a crash) is replaced. */
async function claimSocket(server: net.Server, socket: string): Promise<boolean> {
  fs.mkdirSync(path.dirname(socket), { recursive: true, mode: 0o700 });
  for (let attempt = 0; attempt < 2; attempt++) {
    const taken = await new Promise<boolean>((resolve, reject) => {
      const onError = (e: NodeJS.ErrnoException) => (e.code === 'EADDRINUSE' ? resolve(false) : reject(e));
      server.once('error', onError);
      server.listen(socket, () => {
        server.off('error', onError);
        resolve(true);
      });
    });
    if (taken) return true;
    const alive = await request(socket, { op: 'status' }).then(
      () => true,
      () => false,
    );
    if (alive) return false;
    fs.rmSync(socket, { force: true });
  }
  return false;
}

/** The command line's reading and running of a whole command, for the thin client's requests. */
const loadCli = () =>
  Promise.all([import('../cli/catalog.js'), import('../cli/shortcuts.js'), import('../cli/run-action.js'), import('../cli/usage.js')]).then(
    ([catalog, shortcuts, runAction, usage]) => ({ ...catalog, ...shortcuts, ...runAction, ...usage }),
  );

export async function runDaemon(dir: string, env: NodeJS.ProcessEnv = process.env): Promise<void> {
  // Read first: a rebuild while this daemon runs gives clients another build id, and they replace it.
  const build = buildId();
  const vault = vaultRealPath(dir);
  const files = daemonFiles(vault, env);
  const idleMs = idleSeconds(env) * 1000;
  const startedAt = new Date().toISOString();
  let transport: LocalTransport | null = null;
  let lastRequest = Date.now();
  /** Requests being answered: the idle time counts from the end of the last one, never during one. */
  let inFlight = 0;
  let stopping = false;

  /** Whether a call or a whole command came (status and stop do not count). */
  let called = false;

  // The folder opens once this daemon holds the socket (below): a second daemon started for the same folder
  // at the same moment (two first calls) leaves before it reads anything.
  let open!: () => void;
  const opening = new Promise<void>((resolve) => (open = resolve)).then(() => LocalTransport.open(vault, { watch: true, debounceMs: DEBOUNCE_MS, env }));
  let warm = false;
  opening.then(
    (t) => {
      transport = t;
      // Warm once the opening's background work is done and the code calls load at first use is loaded too
      // (deferred-modules.ts): a daemon left running over an upgrade then no longer needs its old files.
      const after = Promise.all([t.vaults.vault.index.whenIdle(), cli.catch(() => undefined)]);
      void preloadDeferred({ which: 'daemon', after, busy: () => inFlight > 0, log: (line) => process.stderr.write(`quire daemon: ${line}\n`), stopped: () => stopping }).then(
        () => (warm = true),
      );
    },
    () => undefined,
  );

  // The command line's code (for the thin client's requests, the first of which comes as soon as this daemon
  // listens) loads once the folder is open: loaded and run beside the opening, it made the first call slower
  // (docs/cli.md, "Opening first").
  const cli = opening.then(loadCli, loadCli);
  cli.catch(() => undefined);

  const status = (): DaemonStatus => ({
    pid: process.pid,
    build,
    vault,
    socket: files.socket,
    startedAt,
    notes: transport ? transport.vaults.vault.index.noteCount : null,
    warm,
    idleSeconds: idleMs / 1000,
    idleLeftSeconds: Math.max(0, Math.round((lastRequest + idleMs - Date.now()) / 1000)),
  });

  /** An action called on the index once the watcher has nothing pending: every answer sees the edits made before it. */
  const freshCall = async (action: Parameters<LocalTransport['call']>[0], input: RawInput): Promise<ActionOutcome> => {
    const t = await opening;
    // Events the kernel queued before the request arrived are read in this loop turn; let them be marked first.
    await new Promise((r) => setImmediate(r));
    const until = Date.now() + SETTLE_LIMIT_MS;
    while (!(t.vaults.vault.watcherStats()?.idle ?? true) && Date.now() < until) await new Promise((r) => setTimeout(r, 2));
    return t.call(action, input);
  };

  /** A whole command from the thin client, read and printed as the in-process command line does; left to the full command line when this daemon cannot answer it alike. */
  const run = async (req: RunRequest): Promise<DaemonReply> => {
    if (req.build !== build) return { ok: false, fallback: `this daemon runs build ${build}, the command is of build ${req.build}` };
    if ((req.tz ?? null) !== (env.TZ ?? null)) return { ok: false, fallback: 'another TZ than the daemon' };
    const c = await cli;
    const quick = c.parseQuickly(req.argv, await c.loadCatalog());
    if (!quick) return { ok: false, fallback: 'a form for commander' };
    let named: string | null = null;
    try {
      named = vaultRealPath(path.resolve(req.cwd, String(quick.opts.vault)));
    } catch {
      /* not a folder: the full command line says so */
    }
    if (named !== vault) return { ok: false, fallback: 'another folder' };
    const output: RunResult['output'] = [];
    const io = { out: (s: string) => output.push([1, s + '\n']), err: (s: string) => output.push([2, s + '\n']) };
    let calls = 0;
    let codeGoneAtFirst = false;
    const call: Transport['call'] = async (action, input) => {
      calls++;
      try {
        return await freshCall(action, input);
      } catch (e) {
        if (calls === 1 && isUpgraded(e)) codeGoneAtFirst = true;
        throw e;
      }
    };
    const transportFor = async (opts: { verbose?: boolean }): Promise<Transport> => {
      if (opts.verbose) io.err(`vault daemon: the running one for ${vault} answered the whole command (thin client)`);
      await opening;
      return { call };
    };
    let code: number;
    try {
      code = await c.runQuickly(quick, io, transportFor);
    } catch (e) {
      code = c.reportFailure(e, io);
    }
    // Its first call failed before doing anything: the full command line (the new install's) runs it again.
    if (codeGoneAtFirst) throw upgradedError();
    return { ok: true, run: { output, code } };
  };

  const answer = async (req: DaemonRequest): Promise<DaemonReply> => {
    if (req.op === 'status') return { ok: true, status: status() };
    if (req.op === 'run') {
      // A command left to the full command line is not a call: that one calls next, or never (a mistyped command).
      const reply = await run(req);
      if (reply.ok) called = true;
      return reply;
    }
    if (req.op !== 'stop') called = true;
    if (req.op === 'stop') {
      setImmediate(() => void stop());
      return { ok: true, status: status() };
    }
    return { ok: true, outcome: toWire(await freshCall({ name: req.action }, req.input ?? {})) };
  };

  const server = net.createServer((conn) => {
    let text = '';
    conn.setEncoding('utf8');
    conn.on('error', () => undefined);
    conn.on('data', (d: string) => {
      text += d;
      const nl = text.indexOf('\n');
      if (nl < 0) return;
      lastRequest = Date.now();
      let req: DaemonRequest;
      try {
        req = JSON.parse(text.slice(0, nl)) as DaemonRequest;
      } catch {
        conn.end(JSON.stringify({ ok: false, status: 400, error: { code: 'bad_request', message: 'Not a JSON request' } }) + '\n');
        return;
      }
      inFlight++;
      const send = (reply: DaemonReply) => conn.end(req.op === 'run' && req.wire === 'frames' ? runFrames(reply) : JSON.stringify(reply) + '\n');
      answer(req)
        .then(send, (e) => {
          if (isUpgraded(e)) {
            // Quire was upgraded under this daemon: the call failed on loading code, before doing anything. The
            // client runs it elsewhere (the full command line, which starts a daemon of the new install); this one
            // leaves, its socket removed before the answer goes out, so no later call reaches it.
            void stop();
            return send({ ok: false, fallback: `Quire was upgraded while this daemon (build ${build}) ran; it leaves` });
          }
          const err = toAppError(e);
          send({ ok: false, status: err.status, error: err.toEnvelope().error });
        })
        .finally(() => {
          inFlight--;
          lastRequest = Date.now();
        });
    });
  });

  const stop = async () => {
    if (stopping) return;
    stopping = true;
    clearInterval(idleTimer);
    server.close();
    fs.rmSync(files.socket, { force: true });
    fs.rmSync(files.info, { force: true });
    // Answers already under way finish first (a write from another call, when a newer build replaces this daemon).
    const until = Date.now() + 30_000;
    while (inFlight > 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
    await (await opening.catch(() => null))?.close().catch(() => undefined);
    process.exit(0);
  };

  if (!(await claimSocket(server, files.socket))) {
    // Another daemon serves this folder (two first calls at once): it answers; this one leaves, having opened nothing.
    process.stdout.write(`quire daemon ${process.pid}: another one serves ${vault}; leaving\n`);
    process.exit(0);
  }
  process.stdout.write(`quire daemon ${process.pid}: serving ${vault}\n`);
  open();
  // A daemon is started by a call, which needs the actions' code (every area's, dispatch and the input
  // validator: LocalTransport.call imports them): it loads while the folder opens. Loaded at the call, after
  // `ready`, it took 0.8-1.1 s there, beside the opening's background work (docs/cli.md, "Opening first").
  Promise.all([import('../../actions/registry.js'), import('../../actions/dispatch.js').then((d) => d.loadValidation())]).catch(() => undefined);
  fs.writeFileSync(files.info, JSON.stringify({ pid: process.pid, vault, socket: files.socket, startedAt }) + '\n');
  const idleTimer = setInterval(() => {
    if (inFlight === 0 && Date.now() - lastRequest >= idleMs) void stop();
  }, Math.min(idleMs, 30_000));
  // Started by the thin client before the command was read (spawn.ts): the full command line may never call it.
  const callWait = Number(env[CALL_WAIT_ENV]);
  if (callWait > 0) {
    setTimeout(() => {
      if (!called && inFlight === 0) void stop();
    }, Math.min(callWait * 1000, idleMs));
  }
  process.once('SIGTERM', () => void stop());
  process.once('SIGINT', () => void stop());
  // A folder that cannot be indexed answers each call with the reason; the daemon leaves at its idle time.
  opening.catch((e) => process.stderr.write(`quire daemon: ${(e as Error).message}\n`));
}
