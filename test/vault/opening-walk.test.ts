/**
 * The opening of a Vault walks the Home once: the watcher's start-up walk
 * is also the list the scan reads (src/vault/walk.ts). These check what a
 * user relies on: every file is indexed whichever way the opening ran, and
 * a file written while the Home opens is not missed.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { HomeIndex } from '../../src/index/home-index.js';
import { Vault } from '../../src/vault/vault.js';
import { generateVault } from '../helpers/generate-vault.js';
import { tmpDir, waitFor } from './helpers.js';

function fill(root: string, count: number): void {
  for (const [i, f] of generateVault(11, count).entries()) {
    // Spread over folders, so the walk has several to read.
    const rel = f.path.replace('gen/', `gen/${i % 7}/`);
    fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
    fs.writeFileSync(path.join(root, rel), f.text);
  }
  fs.writeFileSync(path.join(root, 'picture.png'), Buffer.from([1, 2, 3]));
}

/** What the index holds, independent of the order notes were indexed in. */
function contents(index: HomeIndex) {
  const notes = [...index.notes()].map((n) => ({ path: n.path, etag: n.etag, id: n.id, title: n.title, tags: n.tags, aliases: n.aliases, words: n.wordCount, links: n.facts.links.toArray(), tasks: n.facts.tasks }));
  const files = [...index.files()].map((f) => ({ path: f.path, size: f.size }));
  const byPath = (a: { path: string }, b: { path: string }) => (a.path < b.path ? -1 : 1);
  return { notes: notes.sort(byPath), files: files.sort(byPath) };
}

describe('opening a Home: one walk', () => {
  it('indexes the same whether the watcher walked and threads scanned, or the vault walked and scanned inline', async () => {
    const root = await tmpDir();
    fill(root, 650); // enough notes for the scan threads
    const watched = new Vault({ root, cacheFile: null, scanThreads: 2 });
    const unwatched = new Vault({ root, cacheFile: null, watch: false, scanThreads: 1 });
    try {
      expect((await watched.ready).parsed).toBe(650);
      expect((await unwatched.ready).parsed).toBe(650);
      expect(watched.index.fileCount).toBe(1);
      expect(contents(watched.index)).toEqual(contents(unwatched.index));
      // The watcher learned every file from the walk the scan read.
      expect(watched.watcherStats()?.knownFiles).toBe(651);
    } finally {
      await Promise.all([watched.close(), unwatched.close()]);
    }
  });

  it('a note written while the Home opens is indexed', async () => {
    const root = await tmpDir();
    fill(root, 600);
    const vault = new Vault({ root, cacheFile: null, scanThreads: 2 });
    let opened = false;
    void vault.ready.then(() => (opened = true));
    const late: string[] = [];
    // Write notes, in folders the walk reads early and late, until the opening is done.
    while (!opened) {
      const rel = `gen/${late.length % 7}/late-${late.length}.md`;
      fs.writeFileSync(path.join(root, rel), `# Late ${late.length}\n\n[[note-1]]\n`);
      late.push(rel);
      await new Promise((r) => setTimeout(r, 2));
    }
    try {
      await waitFor(() => late.every((rel) => vault.index.noteByPath(rel) !== undefined) && vault.watcherStats()!.idle, 10_000, () => `missing: ${late.filter((rel) => !vault.index.noteByPath(rel)).join(', ')}`);
      expect(late.length).toBeGreaterThan(1);
      expect(vault.index.noteCount).toBe(600 + late.length);
      expect(vault.index.noteByPath(late[late.length - 1]!)!.title).toBe(`Late ${late.length - 1}`);
    } finally {
      await vault.close();
    }
  });
});
