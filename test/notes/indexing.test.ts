/** Startup indexing: progress and readiness as an operator sees them, and the cache. */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/core/config.js';
import { generateVault } from '../helpers/generate-vault.js';
import { openServices, startServer } from '../../src/server.js';
import { addUser } from '../../src/surfaces/cli/admin.js';
import { HomeIndex, type SearchHit } from '../../src/index/home-index.js';
import { Vault } from '../../src/vault/vault.js';
import { tempDir } from '../helpers/instance.js';

function fillHome(home: string, count: number) {
  for (const f of generateVault(7, count)) {
    fs.mkdirSync(path.dirname(path.join(home, f.path)), { recursive: true });
    fs.writeFileSync(path.join(home, f.path), f.text);
  }
}

describe('indexing a Home', () => {
  it('logs "index ready" per Home, and requests made meanwhile wait for a complete index', async () => {
    const dataDir = tempDir();
    const services = await openServices(loadConfig({ dataDir }));
    const { token } = await addUser(services, { username: 'big', role: 'member' });
    fillHome(path.join(dataDir, 'homes/big'), 600);
    const lines: string[] = [];
    const server = await startServer({ dataDir, port: 0, log: (l) => lines.push(l) });
    try {
      // Asked at once: the answer counts every note, never a partial index.
      const r = await fetch(`${server.url}/api/v1/notes?limit=500`, { headers: { authorization: `Bearer ${token}` } });
      expect(r.status).toBe(200);
      const body = (await r.json()) as { items: unknown[]; next_cursor: string | null };
      const r2 = await fetch(`${server.url}/api/v1/notes?limit=500&cursor=${body.next_cursor}`, { headers: { authorization: `Bearer ${token}` } });
      const total = body.items.length + ((await r2.json()) as { items: unknown[] }).items.length;
      expect(total).toBe(600);
      await new Promise((res) => setTimeout(res, 50));
      expect(lines.some((l) => /^index ready: 600 notes in \d+ ms/.test(l))).toBe(true);
    } finally {
      await server.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('answers 503 with progress when the index is not ready within the wait', async () => {
    const root = tempDir();
    fillHome(root, 300);
    const vault = new Vault({ root, cacheFile: null, watch: false });
    await expect(vault.whenReady(0)).rejects.toMatchObject({ code: 'service_unavailable' });
    await vault.ready;
    expect((await vault.whenReady(0)).noteCount).toBe(300);
    await vault.close();
  });

  it('restarts from the cache re-reading only changed files; deleting the cache loses nothing', async () => {
    const root = tempDir();
    fillHome(root, 200);
    const cacheFile = path.join(tempDir(), 'index.ndjson');
    const cold = new Vault({ root, cacheFile, watch: false });
    expect((await cold.ready).parsed).toBe(200);
    await cold.close();
    const first = 'gen/note-0.md';
    fs.appendFileSync(path.join(root, first), '\nAn edit made while the server was down. #offline\n');
    fs.writeFileSync(path.join(root, 'gen', 'Brand new.md'), '# Brand new\n');
    const warm = new Vault({ root, cacheFile, watch: false });
    const stats = await warm.ready;
    expect(stats.parsed).toBe(2);
    expect(warm.index.noteCount).toBe(201);
    expect(warm.index.notesWithTag('offline').map((n) => n.path)).toEqual([first]);
    const signature = (v: Vault) =>
      [...v.index.notes()]
        .map((n) => [n.path, n.id, n.tags.join(','), v.index.outgoing(n.path).map((l) => l.resolved).join(','), v.index.backlinks(n.path).length])
        .sort((a, b) => (String(a[0]) < String(b[0]) ? -1 : 1));
    const before = signature(warm);
    expect(before.some((row) => (row[4] as number) > 0)).toBe(true);
    await warm.close();
    fs.rmSync(cacheFile);
    const rebuilt = new Vault({ root, cacheFile, watch: false });
    expect((await rebuilt.ready).parsed).toBe(201);
    expect(signature(rebuilt)).toEqual(before);
    await rebuilt.close();
  });

  it('search after a restart: the saved full-text index catches up with edits made while stopped, and rebuilds when lost', async () => {
    const root = tempDir();
    fillHome(root, 120);
    fs.writeFileSync(path.join(root, 'gen', 'Kept.md'), 'albatross stays here\n');
    fs.writeFileSync(path.join(root, 'gen', 'Edited.md'), 'pelican before the edit\n');
    fs.writeFileSync(path.join(root, 'gen', 'Removed.md'), 'cormorant will be removed\n');
    const cacheFile = path.join(tempDir(), 'index.ndjson');
    const paths = async (v: Vault, q: string) => (await v.index.search(q)).map((h) => h.path);
    const cold = new Vault({ root, cacheFile, watch: false });
    await cold.ready;
    expect(await paths(cold, 'pelican')).toEqual(['gen/Edited.md']);
    await cold.close();
    expect(fs.existsSync(cacheFile + '.search')).toBe(true);

    fs.writeFileSync(path.join(root, 'gen', 'Edited.md'), 'flamingo after the edit\n');
    fs.rmSync(path.join(root, 'gen', 'Removed.md'));
    const warm = new Vault({ root, cacheFile, watch: false });
    expect((await warm.ready).parsed).toBe(1);
    expect(await paths(warm, 'albatross')).toEqual(['gen/Kept.md']);
    expect(await paths(warm, 'flamingo')).toEqual(['gen/Edited.md']);
    expect(await paths(warm, 'pelican')).toEqual([]);
    expect(await paths(warm, 'cormorant')).toEqual([]);
    expect((await warm.index.searchStatus()).documents).toBe(122);
    await warm.close();

    // A lost full-text file (facts snapshot still there): every note is read and parsed again.
    fs.rmSync(cacheFile + '.search');
    const lost = new Vault({ root, cacheFile, watch: false });
    expect((await lost.ready).parsed).toBe(122);
    expect(await paths(lost, 'albatross')).toEqual(['gen/Kept.md']);
    expect((await lost.index.searchStatus()).documents).toBe(122);
    await lost.close();

    // A corrupt one is the same as a lost one.
    fs.writeFileSync(cacheFile + '.search', '{"format":"quire-search","version":1,"etags":[],"index":{}}');
    const corrupt = new Vault({ root, cacheFile, watch: false });
    await corrupt.ready;
    expect(await paths(corrupt, 'flamingo')).toEqual(['gen/Edited.md']);
    await corrupt.close();
  });

  it('the full text tokenized by scan workers answers what an index fed note by note answers', async () => {
    const root = tempDir();
    fillHome(root, 700); // enough notes to read for the scan to use worker threads
    const vault = new Vault({ root, cacheFile: null, watch: false, scanThreads: 2 });
    expect((await vault.ready).parsed).toBe(700);
    // Documents come in another order, so scores may differ in the last bits and ties may swap.
    const comparable = (hits: SearchHit[]) =>
      hits.map((h) => ({ ...h, score: Math.round(h.score * 1e9) / 1e9 })).sort((a, b) => b.score - a.score || (a.path < b.path ? -1 : 1));
    const inline = new HomeIndex({ mode: 'sync' });
    for (const n of vault.index.notes()) {
      const text = fs.readFileSync(path.join(root, n.path), 'utf8');
      inline.upsertNote(n.path, n.facts, vault.index.statOf(n.path)!, text);
    }
    for (const q of ['project', 'vault note', 'garden', 'café', 'obsidian', 'résumé', 'xyzzy']) {
      for (const opts of [{}, { limit: 5 }, { pathPrefix: 'gen/1' }, { tag: 'project' }, { combineWith: 'OR' as const }]) {
        expect(comparable(await vault.index.search(q, opts))).toEqual(comparable(await inline.search(q, opts)));
      }
    }
    expect((await vault.index.search('project')).length).toBeGreaterThan(0);
    await vault.close();
  });

  it('goes idle once the opening and its background work are done, and after each snapshot save (the server collects garbage then)', async () => {
    const root = tempDir();
    fillHome(root, 150);
    const cacheFile = path.join(tempDir(), 'index.ndjson');
    const idle: string[] = [];
    const vault = new Vault({ root, cacheFile, watch: false });
    vault.onIdle(() => idle.push(pending(vault)));
    await vault.ready;
    await vault.index.whenIdle();
    await new Promise((r) => setTimeout(r, 20));
    // After the links and tags were resolved, not during the opening.
    expect(idle).toEqual(['0 pending']);
    await vault.saveSnapshot();
    expect(idle).toEqual(['0 pending', '0 pending']);
    await vault.close();
  });
});

function pending(v: Vault): string {
  const w = v.index.pendingWork();
  return `${w.notes + w.keys + w.tags} pending`;
}
