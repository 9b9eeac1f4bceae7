/**
 * Local vault mode: content actions run in process on a folder, with no
 * server and no account. The folder's owner is the only caller; the index
 * is built here. Everything it derives (index snapshot, journal client ids,
 * scheduled state, tag-rewrite records) goes to the user's cache folder
 * (`localCacheDir`), never into the vault: docs/quire-folder.md.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Caller } from '../../accounts/caller.js';
import type { ActionOutcome } from '../../actions/reply.js';
import type { ActionDef } from '../../actions/types.js';
import type { RawInput } from '../../actions/validate.js';
import { loadConfig } from '../../core/config.js';
import { AppError } from '../../core/errors.js';
import type { Services } from '../../core/services.js';
import { SidecarStore } from '../../store/sidecar.js';
import { LocalVaults } from '../../vault/vaults.js';
import { ChangeLogs } from '../../changes/change-log.js';
import { JobRunner } from '../../jobs/runner.js';
import type { VaultProgress } from '../../vault/vault.js';
import type { Transport } from './transport.js';
import { shareWriterLocksIn } from '../../vault/lock.js';
import { localCacheDir, writerLocksDir } from './user-dirs.js';

export function localCaller(root: string): Caller {
  return {
    userId: 'local',
    username: path.basename(root),
    role: 'owner',
    credential: { kind: 'local', id: 'local' },
    grants: [{ scope: 'data', access: 'write' }],
    homePrefix: null,
    confirmedAt: null,
  };
}

/** A progress bar on stderr when it is a terminal; nothing otherwise. */
export function terminalProgress(stream: NodeJS.WriteStream = process.stderr): ((p: VaultProgress) => void) | undefined {
  if (!stream.isTTY) return undefined;
  return ({ done, total }) => {
    const width = 30;
    const filled = total ? Math.round((done / total) * width) : width;
    stream.write(`\rindexing [${'#'.repeat(filled)}${' '.repeat(width - filled)}] ${done}/${total} files`);
    if (done >= total) stream.write('\n');
  };
}

export class LocalTransport implements Transport {
  private constructor(
    private readonly services: Services,
    private readonly caller: Caller,
    readonly vaults: LocalVaults,
  ) {}

  static async open(
    root: string,
    opts: { watch: boolean; debounceMs?: number; onProgress?: (p: VaultProgress) => void; env?: NodeJS.ProcessEnv },
  ): Promise<LocalTransport> {
    const abs = path.resolve(root);
    const st = fs.statSync(abs, { throwIfNoEntry: false });
    if (!st?.isDirectory()) throw new AppError('not_found', `No folder at ${abs}`);
    const cacheDir = localCacheDir(abs, opts.env);
    // Its writes share one writer lock per folder with `quire serve --vault` and the vault daemon (src/vault/lock.ts).
    shareWriterLocksIn(writerLocksDir(opts.env));
    const vaults = new LocalVaults(abs, cacheDir, { watch: opts.watch, onProgress: opts.onProgress, ...(opts.debounceMs ? { debounceMs: opts.debounceMs } : {}) });
    // Scheduled state of a local vault (reminders and the like) lives with its cache; so does anything kept under the config's state folder.
    const store = await SidecarStore.open(path.join(cacheDir, 'local-state.json'));
    const config = loadConfig({ dataDir: cacheDir });
    const changes = new ChangeLogs();
    changes.attach(localCaller(abs).username, vaults.vault);
    const jobs = await JobRunner.open(null);
    const services: Services = { config, store, vaults, changes, jobs };
    const t = new LocalTransport(services, localCaller(abs), vaults);
    await vaults.vault.ready;
    return t;
  }

  async call(given: ActionDef<any> | { name: string }, input: RawInput): Promise<ActionOutcome> {
    // The catalog's facts (the command line) or a bare name (the vault daemon) carry no handler: the declaration comes from the registry.
    const action = 'handler' in given && given.handler ? given : (await import('../../actions/registry.js')).findAction(given.name);
    if (!action) throw new AppError('not_found', `Unknown action "${given.name}"`, { details: { reason: 'unknown_action' } });
    if (!action.scopes.includes('data') || action.scopes.some((s) => s === 'account' || s === 'admin')) {
      throw new AppError('bad_request', `${action.name} is not a content action; local vault mode (--vault) runs only data-scope actions. Use --server for the rest.`, {
        details: { reason: 'not_a_content_action', action: action.name },
      });
    }
    // Loaded at the first call, not before the folder opens: the vault daemon starts indexing sooner (docs/cli.md).
    const { dispatch } = await import('../../actions/dispatch.js');
    // The command line and MCP checked --confirm before calling.
    return dispatch(action, input, { services: this.services, surface: 'local', caller: this.caller, confirm: true });
  }

  close(): Promise<void> {
    return this.vaults.close();
  }
}
