/**
 * A warm start trusts the snapshot for a file whose size, mtime and ctime
 * are unchanged, and reads no more of it; any edit made while the server
 * was down must still be seen, even one that kept the size and put the
 * mtime back (`touch -d`): the ctime moved.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { Vault } from '../../src/vault/vault.js';
import { tmpDir } from './helpers.js';

const SECONDS = 1_700_000_000;

async function openClose(root: string, cacheFile: string) {
  const v = new Vault({ root, cacheFile, watch: false, scanThreads: 1 });
  const stats = await v.ready;
  const links = v.index.noteByPath('a.md')!.facts.links;
  const targets = Array.from({ length: links.length }, (_, i) => links.target(i));
  await v.close();
  return { stats, targets };
}

describe('warm start', () => {
  it('reads only the files whose stat changed, and sees a same-size edit whose mtime was restored with touch -d', async () => {
    const root = await tmpDir();
    const cacheFile = path.join(await tmpDir('quire-cache-'), 'index.ndjson');
    const a = path.join(root, 'a.md');
    fs.writeFileSync(a, '# A\n\n[[bee]]\n');
    for (let i = 0; i < 5; i++) fs.writeFileSync(path.join(root, `other-${i}.md`), `# Other ${i}\n`);
    fs.utimesSync(a, SECONDS, SECONDS);

    const cold = await openClose(root, cacheFile);
    expect(cold.stats.parsed).toBe(6);
    expect(cold.targets).toEqual(['bee']);

    // Nothing changed: every note is trusted from the snapshot, none read again.
    const warm = await openClose(root, cacheFile);
    expect(warm.stats.parsed).toBe(0);
    expect(warm.targets).toEqual(['bee']);

    // Edited while the server was stopped: same size, mtime put back; only the ctime tells.
    await new Promise((r) => setTimeout(r, 20)); // file times move by the kernel's tick
    fs.writeFileSync(a, '# A\n\n[[cat]]\n');
    execFileSync('touch', ['-d', `@${SECONDS}`, a]);
    const st = fs.statSync(a);
    expect([st.size, st.mtimeMs]).toEqual([13, SECONDS * 1000]);

    const edited = await openClose(root, cacheFile);
    expect(edited.targets).toEqual(['cat']);
    expect(edited.stats.parsed).toBe(1);
  });
});

describe('warm start beside a server starting', () => {
  it('leaves the index\'s background work until `backgroundAfter` (the server listening)', async () => {
    const root = await tmpDir();
    const cacheFile = path.join(await tmpDir('quire-cache-'), 'index.ndjson');
    fs.writeFileSync(path.join(root, 'a.md'), '# A\n[[b]] #x\n');
    fs.writeFileSync(path.join(root, 'b.md'), '# B\n[[a]] #y/z\n');
    const first = new Vault({ root, cacheFile, watch: false, scanThreads: 1 });
    await first.ready;
    await first.close();
    let listening!: () => void;
    const v = new Vault({ root, cacheFile, watch: false, scanThreads: 1, backgroundAfter: new Promise<void>((resolve) => (listening = resolve)) });
    await v.ready;
    await new Promise((r) => setTimeout(r, 300)); // six times the deferred work's idle wait (50 ms)
    expect(v.index.pendingWork()).toMatchObject({ tags: 2, restoring: 2 });
    listening();
    await v.index.whenIdle();
    expect(v.index.pendingWork()).toEqual({ notes: 0, keys: 0, tags: 0, restoring: 0 });
    expect(v.index.tags().map((t) => t.tag)).toEqual(['x', 'y', 'y/z']);
    expect(v.index.backlinks('a.md').map((b) => b.from)).toEqual(['b.md']);
    await v.close();
  });
});
