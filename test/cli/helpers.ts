/** A small vault and a private set of XDG folders for the command-line tests, with every daemon they start stopped afterwards. */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { request, type DaemonStatus } from '../../src/surfaces/daemon/protocol.js';
import { daemonFiles, vaultRealPath } from '../../src/surfaces/daemon/socket-path.js';
import { tempDir } from '../helpers/instance.js';

const REPO = path.resolve(__dirname, '../..');

export interface CliWorld {
  env: Record<string, string>;
  runtime: string;
  makeVault(files?: Record<string, string>): string;
  /** Pids of the daemons whose notes are in the runtime folder now. */
  daemonPids(): number[];
  cleanup(): Promise<void>;
}

export const SAMPLE: Record<string, string> = {
  'Home.md': '# Home\n\nSee [[Project Alpha]]. #inbox\n\n- [ ] call Ada 📅 2020-01-02\n- [ ] later 📅 2999-01-01\n',
  'Project Alpha.md': '---\ntags: [project]\n---\n# Project Alpha\n\nBack to [[Home]]. #inbox\n',
  'Books/Dune.md': '# Dune\n\nA book about sand. [[Home]]\n',
};

export function cliWorld(): CliWorld {
  const root = tempDir('quire-cli-');
  const runtime = path.join(root, 'run');
  const env = {
    XDG_RUNTIME_DIR: runtime,
    XDG_CACHE_HOME: path.join(root, 'cache'),
    XDG_STATE_HOME: path.join(root, 'state'),
    XDG_CONFIG_HOME: path.join(root, 'config'),
    QUIRE_DAEMON: '',
    TZ: 'UTC',
  };
  const started = new Set<number>();
  const daemonPids = () => {
    const dir = path.join(runtime, 'quire');
    if (!fs.existsSync(dir)) return [];
    const pids = fs
      .readdirSync(dir)
      .filter((n) => n.endsWith('.json'))
      .map((n) => (JSON.parse(fs.readFileSync(path.join(dir, n), 'utf8')) as { pid: number }).pid);
    for (const p of pids) started.add(p);
    return pids;
  };
  let n = 0;
  return {
    env,
    runtime,
    daemonPids,
    makeVault(files = SAMPLE) {
      const dir = path.join(root, `vault${++n}`);
      for (const [rel, text] of Object.entries(files)) {
        fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
        fs.writeFileSync(path.join(dir, rel), text);
      }
      return dir;
    },
    async cleanup() {
      daemonPids();
      for (const pid of started) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          /* already gone */
        }
      }
      fs.rmSync(root, { recursive: true, force: true });
    },
  };
}

export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Every file under a folder with its size: what "nothing else was written" is checked against. */
export function treeOf(dir: string): string[] {
  const out: string[] = [];
  const walk = (rel: string) => {
    for (const e of fs.readdirSync(path.join(dir, rel), { withFileTypes: true })) {
      const r = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) walk(r);
      else out.push(`${r} ${fs.statSync(path.join(dir, r)).size}`);
    }
  };
  walk('');
  return out.sort();
}

export async function until(check: () => boolean, timeoutMs = 15_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The status a vault's running daemon answers. */
export async function daemonStatus(vault: string, env: Record<string, string>): Promise<DaemonStatus> {
  const socket = daemonFiles(vaultRealPath(vault), { ...process.env, ...env }).socket;
  return ((await request(socket, { op: 'status' })) as { ok: true; status: DaemonStatus }).status;
}

/**
 * A real daemon of another build on `vault`: this install (dist/, bin/) copied
 * beside with another build stamp, started as a client of that build would.
 * Resolves once it answers a status request (its socket file appears at
 * bind(2), a moment before it listens). The caller removes `install`.
 */
export async function startOtherBuildDaemon(world: CliWorld, vault: string): Promise<{ install: string; status: DaemonStatus }> {
  const install = tempDir('quire-old-build-');
  fs.cpSync(path.join(REPO, 'dist'), path.join(install, 'dist'), { recursive: true });
  fs.writeFileSync(path.join(install, 'dist/.built'), 'an older build\n');
  fs.cpSync(path.join(REPO, 'bin'), path.join(install, 'bin'), { recursive: true });
  fs.copyFileSync(path.join(REPO, 'package.json'), path.join(install, 'package.json'));
  for (const link of ['node_modules', 'spec']) fs.symlinkSync(path.join(REPO, link), path.join(install, link));
  const child = spawn(process.execPath, [path.join(install, 'bin/quire.js'), 'daemon', 'run', '--vault', vault], {
    env: { ...process.env, ...world.env },
    stdio: 'ignore',
    detached: true,
  });
  child.unref();
  const end = Date.now() + 15_000;
  for (;;) {
    world.daemonPids();
    const status = await daemonStatus(vault, world.env).catch(() => undefined);
    if (status !== undefined) return { install, status };
    if (Date.now() > end) throw new Error("the other build's daemon did not answer in time");
    await new Promise((r) => setTimeout(r, 50));
  }
}
