/** The live vault follows the disk: bulk rewrites settle, and the server's own writes count once. */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Vault, type VaultChange } from '../../src/vault/vault.js';
import { tempDir } from '../helpers/instance.js';
import { eventually } from '../helpers/wait.js';

let vault: Vault | null = null;
afterEach(async () => {
  await vault?.close();
  vault = null;
});

describe('live vault', () => {
  it('settles to the disk after a git-checkout-like rewrite of 1,000 files', async () => {
    const root = tempDir();
    fs.mkdirSync(path.join(root, 'Notes'));
    for (let i = 0; i < 1000; i++) fs.writeFileSync(path.join(root, `Notes/n${i}.md`), `# Note ${i}\n#v1\n`);
    vault = new Vault({ root, cacheFile: null });
    await vault.ready;
    expect(vault.index.noteCount).toBe(1000);
    // Rewrite every file, delete a quarter, add 100 new ones, all at once.
    for (let i = 0; i < 1000; i++) {
      if (i % 4 === 0) fs.unlinkSync(path.join(root, `Notes/n${i}.md`));
      else fs.writeFileSync(path.join(root, `Notes/n${i}.md`), `# Note ${i} v2\n#v2 [[n${(i + 1) % 1000}]]\n`);
    }
    for (let i = 1000; i < 1100; i++) fs.writeFileSync(path.join(root, `Notes/n${i}.md`), `# New ${i}\n#v2\n`);
    await eventually(() => vault!.index.noteCount === 850 && vault!.index.notesWithTag('v2').length === 850, 15_000, 100);
    expect(vault.index.notesWithTag('v1')).toEqual([]);
    expect(vault.index.noteByPath('Notes/n1.md')!.title).toBe('Note 1 v2');
    expect(vault.index.noteByPath('Notes/n4.md')).toBeUndefined();
    expect(vault.index.backlinks('Notes/n2.md').map((b) => b.from)).toEqual(['Notes/n1.md']);
  });

  it('processes the server\'s own write once and ignores swap files', async () => {
    const root = tempDir();
    vault = new Vault({ root, cacheFile: null });
    await vault.ready;
    const seen: VaultChange[] = [];
    vault.onChange((c) => seen.push(c));
    await vault.home.write('Notes/Mine.md', '# Mine\n', { ifNoneMatch: '*' });
    // The index has it before write() returned.
    expect(vault.index.noteByPath('Notes/Mine.md')!.title).toBe('Mine');
    fs.writeFileSync(path.join(root, 'Notes/.Mine.md.swp'), 'swap');
    fs.writeFileSync(path.join(root, 'Notes/Other.md'), '# Other\n');
    await eventually(() => vault!.index.noteByPath('Notes/Other.md'), 5000);
    await new Promise((r) => setTimeout(r, 300));
    expect(seen.filter((c) => c.path === 'Notes/Mine.md')).toEqual([
      { kind: 'upsert', path: 'Notes/Mine.md', etag: expect.any(String), source: 'api' },
    ]);
    expect(seen.filter((c) => c.path === 'Notes/Other.md').map((c) => c.source)).toEqual(['external']);
    expect(vault.index.has('Notes/.Mine.md.swp')).toBe(false);
  });
});
