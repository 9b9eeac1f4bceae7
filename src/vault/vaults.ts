/**
 * The vaults of an Instance, one per user, opened at start (or on first use)
 * and closed on shutdown. In the command line's local vault mode there is
 * exactly one, for the folder given. What a vault derives (the index
 * snapshot, the journal's client ids) is kept outside its Home: under
 * `<data>/state/` here, in the user's cache folder in local mode.
 */
import fs from 'node:fs';
import path from 'node:path';
import { paths, type Config } from '../core/config.js';
import { AppError } from '../core/errors.js';
import type { SidecarStore } from '../store/sidecar.js';
import type { UserRecord } from '../store/schema.js';
import { findUserById, instanceSettings, listUsers } from '../store/users.js';
import type { Caller } from '../accounts/caller.js';
import { homeDirOf } from '../accounts/users.js';
import { keepClientIdsAt } from '../journal/client-ids.js';
import { Vault, type VaultOptions } from './vault.js';

export interface VaultAccess {
  vault: Vault;
  /** Bytes the Home may hold for this caller's writes; 0 = unlimited. */
  quotaBytes: number;
}

export interface Vaults {
  forCaller(caller: Caller): Promise<VaultAccess>;
  /** Closes a user's vault before their Home folder moves; it reopens on next use. */
  release(username: string): Promise<void>;
  close(): Promise<void>;
}

export class InstanceVaults implements Vaults {
  private readonly open = new Map<string, Vault>();
  private readonly openedListeners = new Set<(username: string, vault: Vault) => void>();
  private announceAfter: Promise<unknown> = Promise.resolve();
  private closed = false;

  /**
   * Each Home's `index ready` line waits for `p` too: the server opens the
   * Homes before it listens, and the line tells a person that a request
   * made now is answered from the index.
   */
  announceReadyAfter(p: Promise<unknown>): void {
    this.announceAfter = p;
  }

  /** Called (synchronously) each time a user's vault opens, e.g. to start its change journal. */
  onVaultOpened(cb: (username: string, vault: Vault) => void): () => void {
    this.openedListeners.add(cb);
    return () => this.openedListeners.delete(cb);
  }

  constructor(
    private readonly config: Config,
    private readonly store: SidecarStore,
    private readonly log: (line: string) => void = () => undefined,
    private readonly vaultDefaults: Partial<VaultOptions> = {},
  ) {}

  private vaultOf(user: UserRecord): Vault {
    const { username } = user;
    let v = this.open.get(username);
    if (!v) {
      // A folder given with --home that is gone (an unmounted drive, a moved vault) is not recreated
      // empty: the user's writes would land beside their notes, not among them.
      if (user.home_path && !fs.existsSync(user.home_path)) {
        throw new AppError('service_unavailable', `The Home folder of ${JSON.stringify(username)} is missing on the server (an unmounted drive or a moved folder); nothing was created in its place`, {
          details: { reason: 'home_missing' },
        });
      }
      const started = Date.now();
      v = new Vault({
        root: homeDirOf(this.config, user),
        cacheFile: path.join(paths.cache(this.config), `${username}.index.ndjson`),
        onProgress: (p) => this.log(`indexing ${username}: ${p.done}/${p.total} files`),
        followSymlinks: this.config.followSymlinks,
        backgroundAfter: this.announceAfter,
        ...this.vaultDefaults,
      });
      // By user id: the records stay the user's through a change of username.
      keepClientIdsAt(v.home, path.join(paths.state(this.config), 'journal', `${user.id}.client-ids.json`));
      Promise.all([v.ready, this.announceAfter]).then(
        ([s]) => this.log(`index ready: ${s.notes} notes in ${s.ms} ms (${username}; ${s.parsed} parsed, ${Date.now() - started} ms to ready)`),
        (e) => this.log(`index failed for ${username}: ${(e as Error).message}`),
      );
      this.open.set(username, v);
      for (const cb of this.openedListeners) cb(username, v);
    }
    return v;
  }

  /** Starts indexing every user's Home, one after another so a small machine stays responsive. */
  async openAll(): Promise<void> {
    for (const u of listUsers(this.store)) {
      if (this.closed) return;
      if (u.disabled) continue;
      try {
        await this.vaultOf(u).ready.catch(() => undefined);
      } catch (e) {
        this.log(`index not opened for ${u.username}: ${(e as Error).message}`);
      }
    }
  }

  async forCaller(caller: Caller): Promise<VaultAccess> {
    const user = findUserById(this.store, caller.userId);
    if (!user) throw new AppError('unauthorized', 'Unknown user');
    return {
      vault: this.vaultOf(user),
      quotaBytes: user.quota_override_bytes ?? instanceSettings(this.store).default_quota_bytes,
    };
  }

  async release(username: string): Promise<void> {
    const v = this.open.get(username);
    this.open.delete(username);
    await v?.close();
  }

  async close(): Promise<void> {
    this.closed = true;
    const all = [...this.open.values()];
    this.open.clear();
    await Promise.all(all.map((v) => v.close()));
  }
}

/** Local vault mode: one folder, its owner the only caller, no quota; what it derives goes to `cacheDir`, outside the folder. */
export class LocalVaults implements Vaults {
  readonly vault: Vault;

  constructor(root: string, cacheDir: string, opts: Partial<VaultOptions> = {}) {
    this.vault = new Vault({ root, cacheFile: path.join(cacheDir, 'index.ndjson'), ...opts });
    keepClientIdsAt(this.vault.home, path.join(cacheDir, 'journal-client-ids.json'));
  }

  async forCaller(): Promise<VaultAccess> {
    return { vault: this.vault, quotaBytes: 0 };
  }

  async release(): Promise<void> {}

  close(): Promise<void> {
    return this.vault.close();
  }
}
