/**
 * The index follows every change on disk, whoever made it: git checkouts,
 * stash and pop, resets, files deleted and written back with the same bytes,
 * folders moved out of the Home and back. A real server on loopback, the
 * real `git` command, and after each settle the live index is compared with
 * a fresh scan of the same folder.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Caller } from '../../src/accounts/caller.js';
import type { HomeIndex } from '../../src/index/home-index.js';
import { Vault } from '../../src/vault/vault.js';
import { startInstance, tempDir, type TestInstance } from '../helpers/instance.js';
import { eventually } from '../helpers/wait.js';

/** Random operations of the long run (QUIRE_GIT_OPS overrides; 1,000 takes about two minutes on 2 cores). */
const GIT_OPS = Number(process.env.QUIRE_GIT_OPS ?? 1000);
/** The run is reproducible: the same seed gives the same operations. */
const SEED = Number(process.env.QUIRE_GIT_OPS_SEED ?? 20261126);
/** How long the index may take to match the disk after one settle. */
const SETTLE_TIMEOUT_MS = Number(process.env.QUIRE_GIT_OPS_SETTLE_MS ?? 10_000);
/** The run stops after this many mismatches (each costs a settle timeout). */
const MAX_MISMATCHES = Number(process.env.QUIRE_GIT_OPS_MAX_MISMATCHES ?? 3);

let inst: TestInstance;
const outside = tempDir('quire-git-outside-');

beforeAll(async () => {
  inst = await startInstance();
});
afterAll(async () => {
  await inst.close();
  fs.rmSync(outside, { recursive: true, force: true });
});

interface Account {
  token: string;
  home: string;
  vault: Vault;
  api(method: string, route: string, body?: unknown, headers?: Record<string, string>): ReturnType<TestInstance['api']>;
  git(...args: string[]): string;
}

async function account(username: string): Promise<Account> {
  const u = await inst.user(username, 'member');
  const home = path.join(inst.dataDir, 'homes', username);
  const { vault } = await inst.server.services.vaults.forCaller({ userId: u.id } as Caller);
  await vault.ready;
  const git = (...args: string[]) => execFileSync('git', args, { cwd: home, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  git('init', '-q', '-b', 'main');
  git('config', 'user.email', 'test@example.org');
  git('config', 'user.name', 'Test');
  git('config', 'commit.gpgsign', 'false');
  return {
    token: u.token,
    home,
    vault,
    git,
    api: (method, route, body, headers) => inst.api(method, route, { token: u.token, body, headers }),
  };
}

/** What the index says about the Home: notes with ids, titles, tags, links and tasks, and the other files. */
function view(index: HomeIndex): string[] {
  const out: string[] = [];
  const notes = [...index.notes()].sort((a, b) => (a.path < b.path ? -1 : 1));
  for (const n of notes) {
    const links = index.outgoing(n.path).map((l) => `${l.target}->${l.resolved}@${l.line}`);
    out.push(`note ${n.path} id=${n.id} etag=${n.etag} title=${JSON.stringify(n.title)} tags=${n.tags.join(',')} links=${links.join(' ')}`);
  }
  const tasks = [...index.tasks()].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : a.line - b.line));
  for (const t of tasks) out.push(`task ${t.path}:${t.line} ${t.noteId} [${t.status}] ${t.text}`);
  for (const f of [...index.files()].sort((a, b) => (a.path < b.path ? -1 : 1))) out.push(`file ${f.path} ${f.size}`);
  return out;
}

/** A fresh scan of the folder, as a restart would see it. */
async function freshView(root: string): Promise<string[]> {
  const v = new Vault({ root, cacheFile: null, watch: false, scanThreads: 1 });
  try {
    await v.ready;
    return view(v.index);
  } finally {
    await v.close();
  }
}

function diff(live: string[], fresh: string[]): string {
  const a = new Set(live);
  const b = new Set(fresh);
  const lines = [...fresh.filter((l) => !a.has(l)).map((l) => `  missing from the live index: ${l}`), ...live.filter((l) => !b.has(l)).map((l) => `  only in the live index:      ${l}`)];
  return lines.slice(0, 40).join('\n') + (lines.length > 40 ? `\n  … ${lines.length - 40} more` : '');
}

/**
 * Waits until the live index equals a fresh scan and the watcher has nothing
 * pending, twice in a row (an equal index with events still queued proves
 * nothing). Returns null when it does, else the diff.
 */
async function settle(acc: Account, timeoutMs = SETTLE_TIMEOUT_MS): Promise<string | null> {
  const fresh = await freshView(acc.home);
  const until = Date.now() + timeoutMs;
  let streak = 0;
  let live: string[] = [];
  for (;;) {
    // Lets the event loop read the file-system events of what just happened.
    await new Promise((r) => setTimeout(r, 20));
    live = view(acc.vault.index);
    const quiet = acc.vault.watcherStats()?.idle === true;
    if (quiet && live.join('\n') === fresh.join('\n')) {
      if (++streak === 2) return null;
    } else streak = 0;
    if (Date.now() > until) return diff(live, fresh);
  }
}

const write = (root: string, rel: string, text: string) => {
  fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
  fs.writeFileSync(path.join(root, rel), text);
};

describe('files restored from outside come back into the index', () => {
  it('a note the server wrote, removed with git rm and restored with git checkout', async () => {
    const acc = await account('restore');
    const made = await acc.api('POST', '/api/v1/notes', { title: 'Kept', body: 'Words to find: quinoa.\n- [ ] water the plants\n', tags: ['kept'] });
    expect(made.status).toBe(201);
    const rel: string = made.body.path;
    acc.git('add', '-A');
    acc.git('commit', '-q', '-m', 'one');
    acc.git('rm', '-q', rel);
    await eventually(async () => !(await acc.api('GET', '/api/v1/notes?limit=100')).body.items.some((n: any) => n.path === rel), 5000);
    acc.git('checkout', 'HEAD', '--', rel);
    await eventually(async () => (await acc.api('GET', '/api/v1/notes?limit=100')).body.items.some((n: any) => n.path === rel), 5000);
    await eventually(async () => (await acc.api('GET', '/api/v1/notes/search?q=quinoa')).body.items?.length === 1, 5000);
    expect(await settle(acc)).toBeNull();
  });

  it('a file deleted and written back with the same bytes', async () => {
    const acc = await account('rewrite');
    const put = await acc.api('PUT', '/api/v1/files/content?path=Same.md', { content: '# Same\n\n#same\n' }, { 'if-none-match': '*' });
    expect(put.status).toBeLessThan(300);
    const abs = path.join(acc.home, 'Same.md');
    const bytes = fs.readFileSync(abs);
    fs.unlinkSync(abs);
    await eventually(() => !acc.vault.index.has('Same.md'), 5000);
    fs.writeFileSync(abs, bytes);
    await eventually(() => acc.vault.index.noteByPath('Same.md')?.title === 'Same', 5000);
    expect(await settle(acc)).toBeNull();
  });

  it('a folder moved out of the Home and back', async () => {
    const acc = await account('folder');
    for (const [rel, content] of [
      ['Projects/Hub.md', '# Hub\n'],
      ['Projects/Spoke.md', '# Spoke\n\nGoes to [[Hub]].\n'],
    ]) {
      const r = await acc.api('PUT', `/api/v1/files/content?path=${encodeURIComponent(rel!)}`, { content }, { 'if-none-match': '*' });
      expect(r.status).toBeLessThan(300);
    }
    const hub = 'Projects/Hub.md';
    expect((await acc.api('GET', `/api/v1/notes/backlinks?path=${encodeURIComponent(hub)}`)).status).toBe(200);
    const away = path.join(outside, 'Projects-away');
    fs.renameSync(path.join(acc.home, 'Projects'), away);
    await eventually(() => !acc.vault.index.has(hub), 5000);
    fs.renameSync(away, path.join(acc.home, 'Projects'));
    await eventually(() => acc.vault.index.has(hub), 5000);
    const back = await acc.api('GET', `/api/v1/notes/backlinks?path=${encodeURIComponent(hub)}`);
    expect(back.status).toBe(200);
    expect(JSON.stringify(back.body)).toContain('Projects/Spoke.md');
    expect(await settle(acc)).toBeNull();
  });
});

// ---- the long run -------------------------------------------------------------

/** mulberry32: small, seedable, good enough to pick operations. */
function rng(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    int: (n: number) => Math.floor(next() * n),
    pick: <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)]!,
    chance: (p: number) => next() < p,
  };
}

const FOLDERS = ['', 'A', 'A/deep', 'B', 'Projects'];
const NAMES = Array.from({ length: 24 }, (_, i) => `n${i}`);
const WORDS = ['apple', 'river', 'stone', 'cloud', 'ember', 'lantern', 'meadow', 'quartz', 'willow', 'harbor'];

/** A note whose frontmatter id follows its name (names are unique in every tree, so ids are too). */
function noteText(r: ReturnType<typeof rng>, name: string): string {
  const lines = ['---', `id: id-${name}`, `tags: [${r.pick(['alpha', 'beta', 'gamma/sub'])}]`, '---', `# ${name} ${r.pick(WORDS)}`, ''];
  for (let i = 0, n = 1 + r.int(3); i < n; i++) lines.push(`See [[${r.pick(NAMES)}]] and ${r.pick(WORDS)} #${r.pick(['t1', 't2', 'proj/x'])}.`);
  for (let i = 0, n = r.int(3); i < n; i++) lines.push(`- [${r.pick([' ', 'x'])}] ${r.pick(WORDS)} task ${r.int(100)}`);
  return lines.join('\n') + '\n';
}

/** Notes of the current tree by name (paths relative to the Home). */
function notesOnDisk(home: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (rel: string) => {
    for (const ent of fs.readdirSync(rel ? path.join(home, rel) : home, { withFileTypes: true })) {
      if (ent.name === '.git') continue;
      const child = rel ? `${rel}/${ent.name}` : ent.name;
      if (ent.isDirectory()) walk(child);
      else if (ent.isFile() && ent.name.endsWith('.md')) out.set(ent.name.slice(0, -3), child);
    }
  };
  walk('');
  return out;
}

describe(`${GIT_OPS} random git operations`, () => {
  it(
    'keep the live index equal to a fresh scan',
    async () => {
      const r = rng(SEED);
      const acc = await account('fuzz');
      const { git, home } = acc;
      // Some notes by the server itself, so that its own writes are in the history.
      for (const name of NAMES.slice(0, 4)) {
        const put = await acc.api('PUT', `/api/v1/files/content?path=${name}.md`, { content: noteText(r, name) }, { 'if-none-match': '*' });
        expect(put.status).toBeLessThan(300);
      }
      // A history of commits: edits, new notes, deletions, renames across folders.
      const commits: string[] = [];
      for (let c = 0; c < 16; c++) {
        const present = notesOnDisk(home);
        for (let k = 0, n = 2 + r.int(5); k < n; k++) {
          const name = r.pick(NAMES);
          const at = present.get(name);
          const roll = r.next();
          if (!at) {
            const rel = (r.pick(FOLDERS) ? r.pick(FOLDERS.filter(Boolean)) + '/' : '') + name + '.md';
            write(home, rel, noteText(r, name));
            present.set(name, rel);
          } else if (roll < 0.6) write(home, at, noteText(r, name));
          else if (roll < 0.75) {
            fs.unlinkSync(path.join(home, at));
            present.delete(name);
          } else {
            const to = (r.chance(0.7) ? r.pick(FOLDERS.filter(Boolean)) + '/' : '') + name + '.md';
            if (to !== at) {
              fs.mkdirSync(path.dirname(path.join(home, to)), { recursive: true });
              fs.renameSync(path.join(home, at), path.join(home, to));
              present.set(name, to);
            }
          }
        }
        if (c % 5 === 4) write(home, `att/file${c}.txt`, `attachment ${c}\n`);
        git('add', '-A');
        git('commit', '-q', '--allow-empty', '-m', `c${c}`);
        commits.push(git('rev-parse', 'HEAD').trim());
      }
      let ops = 0;
      let settles = 1;
      const mismatches: string[] = [];
      const built = await settle(acc);
      if (built !== null) mismatches.push(`after building the history:\n${built}`);
      /** Operations that must follow the last one (the second half of a pair). */
      const pending: Array<() => Promise<void> | void> = [];
      const etagOf = async (rel: string) => (await acc.api('GET', `/api/v1/files/content?path=${encodeURIComponent(rel)}`)).headers.get('etag');

      const randomOp = async (): Promise<string> => {
        const present = notesOnDisk(home);
        const names = [...present.keys()];
        const roll = r.next();
        if (roll < 0.2) {
          git('checkout', '-q', '-f', r.pick(commits));
          return 'checkout';
        }
        if (roll < 0.3) {
          git('reset', '-q', '--hard', r.pick(commits));
          return 'reset';
        }
        if (roll < 0.42 && names.length > 0) {
          // Local edits, an untracked note, then stash -u; pop follows.
          for (let k = 0, n = 1 + r.int(3); k < n; k++) {
            const name = r.pick(names);
            write(home, present.get(name)!, noteText(r, name));
          }
          write(home, `B/u${r.int(5)}.md`, `# untracked\n#u ${r.pick(WORDS)}\n`);
          const before = git('stash', 'list').split('\n').filter(Boolean).length;
          git('stash', 'push', '-q', '-u');
          if (git('stash', 'list').split('\n').filter(Boolean).length > before) pending.push(() => void git('stash', 'pop', '-q'));
          return 'stash';
        }
        if (roll < 0.52 && names.length > 0) {
          // git rm, then restore from HEAD (when HEAD has it).
          const rel = present.get(r.pick(names))!;
          fs.unlinkSync(path.join(home, rel));
          pending.push(() => {
            try {
              git('checkout', 'HEAD', '--', rel);
            } catch {
              /* not in HEAD: stays deleted */
            }
          });
          return 'rm';
        }
        if (roll < 0.62 && names.length > 0) {
          // Deleted, then written back with the very same bytes.
          const abs = path.join(home, present.get(r.pick(names))!);
          const bytes = fs.readFileSync(abs);
          fs.unlinkSync(abs);
          pending.push(() => {
            fs.mkdirSync(path.dirname(abs), { recursive: true });
            fs.writeFileSync(abs, bytes);
          });
          return 'delete-rewrite';
        }
        if (roll < 0.7) {
          // A folder moved out of the Home, and back.
          const folder = r.pick(['A', 'B', 'Projects']);
          const abs = path.join(home, folder);
          if (!fs.existsSync(abs)) return randomOp();
          const away = path.join(outside, `${folder}-${ops}`);
          fs.renameSync(abs, away);
          pending.push(() => {
            if (!fs.existsSync(abs)) fs.renameSync(away, abs);
          });
          return 'mv-out';
        }
        if (roll < 0.76) {
          const from = r.pick(['A', 'B', 'Projects']);
          const to = r.pick(['A', 'B', 'Projects', 'C']);
          if (from === to || !fs.existsSync(path.join(home, from)) || fs.existsSync(path.join(home, to))) return randomOp();
          fs.renameSync(path.join(home, from), path.join(home, to));
          // And back: left behind, untracked, it would hold a second copy of each note (same ids) after the next checkout.
          pending.push(() => {
            if (fs.existsSync(path.join(home, to)) && !fs.existsSync(path.join(home, from))) fs.renameSync(path.join(home, to), path.join(home, from));
          });
          return 'rename-folder';
        }
        if (roll < 0.9 && names.length > 0) {
          // The server writes a note (its own write), sometimes committed afterwards.
          const name = r.pick(names);
          const rel = present.get(name)!;
          const etag = await etagOf(rel);
          const put = await acc.api('PUT', `/api/v1/files/content?path=${encodeURIComponent(rel)}`, { content: noteText(r, name) }, etag ? { 'if-match': etag } : {});
          if (put.status >= 300) throw new Error(`files_write ${rel}: ${put.status} ${put.text}`);
          if (r.chance(0.5)) {
            git('add', '-A');
            git('commit', '-q', '-m', `api ${ops}`);
            commits.push(git('rev-parse', 'HEAD').trim());
          }
          return 'api-write';
        }
        if (names.length > 0) {
          const rel = present.get(r.pick(names))!;
          const etag = await etagOf(rel);
          const del = await acc.api('DELETE', `/api/v1/files/content?path=${encodeURIComponent(rel)}`, undefined, etag ? { 'if-match': etag } : {});
          if (del.status >= 300) throw new Error(`files_delete ${rel}: ${del.status} ${del.text}`);
          // The same bytes come back from git.
          pending.push(() => {
            try {
              git('checkout', 'HEAD', '--', rel);
            } catch {
              /* not in HEAD */
            }
          });
          return 'api-delete';
        }
        return randomOp();
      };

      const counts = new Map<string, number>();
      const history: string[] = [];
      while (ops < GIT_OPS && mismatches.length < MAX_MISMATCHES) {
        let label: string;
        const next = pending.shift();
        if (next) {
          await next();
          label = 'second-half';
        } else label = await randomOp();
        ops++;
        counts.set(label, (counts.get(label) ?? 0) + 1);
        history.push(label);
        // Usually settle after each operation; sometimes let two or three pile up into one batch.
        if (r.chance(0.65) || ops === GIT_OPS) {
          settles++;
          const d = await settle(acc);
          if (d !== null) mismatches.push(`after operation ${ops} (${history.slice(-4).join(', ')}):\n${d}`);
        }
      }
      console.log(
        `git operations: ${ops} run, ${settles} settles, ${mismatches.length} mismatches (seed ${SEED}); ${[...counts].map(([k, v]) => `${k} ${v}`).join(', ')}`,
      );
      expect(mismatches, mismatches.join('\n\n')).toEqual([]);
    },
    15 * 60_000,
  );
});
