/**
 * `quire action run` and `quire actions list`: the catalog as a command
 * line. Against a server they need only the catalog's facts (catalog.ts);
 * the registry, with the areas' code, is loaded for `--vault` alone.
 */
import { checkConfirmation } from '../../actions/confirmation.js';
import type { RawInput } from '../../actions/validate.js';
import { toAppError, type AppError } from '../../core/errors.js';
import { HttpTransport, outcomeAsJson, type Transport } from '../client/transport.js';
import { loadCatalog, type CatalogEntry } from './catalog.js';
import { inputFromFlags, type Call, type QuickCall, type Shortcut } from './shortcuts.js';
import { loadCredential } from './stored-credentials.js';
import { UsageError, type Io } from './usage.js';

export interface RunOptions {
  input?: string;
  confirm?: boolean;
  json?: boolean;
  server?: string;
  token?: string;
  vault?: string;
  verbose?: boolean;
}

export function parseInput(text: string | undefined): RawInput {
  if (text === undefined || text.trim() === '') return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw new UsageError(`--input is not valid JSON: ${(e as Error).message}`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new UsageError('--input must be a JSON object with optional members path, query, headers and body');
  }
  const unknown = Object.keys(value).filter((k) => !['path', 'query', 'headers', 'body'].includes(k));
  if (unknown.length > 0) {
    throw new UsageError(`--input has unknown member(s) ${unknown.join(', ')}; use path, query, headers and body`);
  }
  return value as RawInput;
}

export async function resolveTransport(
  opts: RunOptions,
  env: NodeJS.ProcessEnv = process.env,
  local: { watch: boolean } = { watch: false },
): Promise<Transport & { close?: () => Promise<void> }> {
  if (opts.vault) {
    if (opts.server) throw new UsageError('Use either --vault or --server, not both');
    // A one-off call goes to the folder's daemon (docs/cli.md); MCP, a long-lived process, keeps its own index.
    if (!local.watch && env.QUIRE_DAEMON !== 'off') {
      const say = opts.verbose ? (line: string) => process.stderr.write(line + '\n') : () => undefined;
      const daemon = await (await import('../daemon/client.js')).daemonTransport(opts.vault, env, say);
      if (daemon) return daemon;
    } else if (opts.verbose) process.stderr.write('vault daemon: off (QUIRE_DAEMON=off); indexing in this process\n');
    const { LocalTransport, terminalProgress } = await import('../client/local.js');
    return LocalTransport.open(opts.vault, { watch: local.watch, onProgress: terminalProgress() });
  }
  // Without --token or QUIRE_TOKEN, fall back to the credential `quire login` stored.
  const explicitToken = opts.token || env.QUIRE_TOKEN || null;
  const stored = explicitToken ? null : loadCredential(opts.server || env.QUIRE_SERVER || undefined, env);
  const server = opts.server || env.QUIRE_SERVER || stored?.server;
  if (!server) throw new UsageError('No server: pass --server URL, set QUIRE_SERVER, or run quire login');
  return new HttpTransport(server, explicitToken ?? stored?.token ?? null);
}

/** The connection a command's options name; the vault daemon answering a thin client gives its own index instead. */
export type TransportFor = (opts: RunOptions) => Promise<Transport & { close?: () => Promise<void> }>;

export function lookupAction(catalog: readonly CatalogEntry[], name: string): CatalogEntry {
  const action = catalog.find((a) => a.name === name);
  if (!action) throw new UsageError(`Unknown action "${name}"; see: quire actions list`);
  return action;
}

/** Runs one action; returns the process exit code (0 ok, 1 action error, 2 usage / refused). */
export async function runAction(name: string, opts: RunOptions, io: Io, transportFor: TransportFor = resolveTransport): Promise<number> {
  const action = lookupAction(await loadCatalog(), name);
  if (action.surfaces.length === 0) {
    throw new UsageError(`${name} is a browser-only route; it has no command-line action`);
  }
  const input = parseInput(opts.input);
  try {
    checkConfirmation(action, opts.confirm, 'cli');
  } catch (e) {
    const err = e as AppError;
    if (opts.json) io.out(JSON.stringify(err.toEnvelope()));
    else io.err(`refused: ${err.message}`);
    return 2;
  }
  const transport = await transportFor(opts);
  try {
    const outcome = await transport.call(action, input);
    const value = outcomeAsJson(outcome);
    if (opts.json) io.out(JSON.stringify(value));
    else if (typeof value === 'string') io.out(value.endsWith('\n') ? value.slice(0, -1) : value);
    else if (value !== null) io.out(JSON.stringify(value, null, 2));
    return 0;
  } catch (e) {
    return printError(toAppError(e), opts, io);
  } finally {
    await transport.close?.();
  }
}

/** A short command (shortcuts.ts): its actions through the connection given, printed for a person or as JSON. */
export async function runShortcut(
  s: Shortcut,
  flags: Parameters<typeof inputFromFlags>[0],
  words: string[],
  opts: RunOptions & Record<string, unknown>,
  io: Io,
  transportFor: TransportFor = resolveTransport,
): Promise<number> {
  const catalog = await loadCatalog();
  const input = inputFromFlags(flags, opts);
  const transport = await transportFor(opts);
  const call: Call = async (name, callInput) => {
    const action = lookupAction(catalog, name);
    if (!s.confirmed) checkConfirmation(action, opts.confirm, 'cli');
    return outcomeAsJson(await transport.call(action, callInput));
  };
  try {
    const value = await s.run(call, words, input, opts);
    if (opts.json) io.out(JSON.stringify(value));
    else s.print(value, io);
    return 0;
  } catch (e) {
    if (e instanceof UsageError) throw e;
    return printError(toAppError(e), opts, io);
  } finally {
    await transport.close?.();
  }
}

/** A call parseQuickly read from argv, run as commander would have run it. */
export function runQuickly(q: QuickCall, io: Io, transportFor: TransportFor = resolveTransport): Promise<number> {
  return 'action' in q ? runAction(q.action, q.opts, io, transportFor) : runShortcut(q.shortcut, q.flags, q.words, q.opts, io, transportFor);
}

function printError(err: AppError, opts: RunOptions, io: Io): number {
  if (opts.json) io.out(JSON.stringify(err.toEnvelope()));
  else {
    const details = err.details ? ` (${Object.entries(err.details).map(([k, v]) => `${k}: ${v}`).join(', ')})` : '';
    io.err(`error: ${err.code}: ${err.message}${details}`);
  }
  return 1;
}

export function catalogRows(catalog: readonly CatalogEntry[]) {
  return catalog.map((a) => ({
    name: a.name,
    method: a.method,
    route: a.route,
    scopes: a.scopes,
    effect: a.effect,
    tool: a.tool,
    surfaces: a.surfaces,
    recent_confirmation: a.recentConfirmation,
    implemented: a.implemented,
    extension: Boolean(a.extension),
  }));
}

export async function listActions(json: boolean, io: Io): Promise<void> {
  const rows = catalogRows(await loadCatalog());
  if (json) {
    io.out(JSON.stringify(rows));
    return;
  }
  const done = rows.filter((r) => r.implemented).length;
  for (const r of rows) {
    const mark = r.implemented ? ' ' : '!';
    const rc = r.recent_confirmation ? ' RC' : '';
    const surf = r.surfaces.length ? r.surfaces.join(',') : 'browser';
    io.out(
      `${mark} ${r.name.padEnd(40)} ${r.method.padEnd(6)} ${r.route.padEnd(62)} ${r.scopes.join('+').padEnd(12)} ${r.effect === 'read' ? 'R' : 'D'}${rc} ${surf}${r.implemented ? '' : '  [not implemented]'}`,
    );
  }
  io.out(`\n${rows.length} actions, ${done} implemented; "!" marks actions that answer 501 not_implemented.`);
}

