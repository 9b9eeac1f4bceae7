/**
 * walkTree (src/vault/walk.ts) gives every file of the tree once, with its
 * lstat, whether the walk statted them on the main thread (a small tree) or
 * on its stat thread (a large one, in batches): what the opening scan and
 * the watcher trust a file by.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { walkTree, type WalkedFile } from '../../src/vault/walk.js';
import { tmpDir } from './helpers.js';

async function walked(root: string): Promise<WalkedFile[]> {
  const out: WalkedFile[] = [];
  await walkTree(fs.realpathSync(root), '', { follow: false, ignored: (rel) => rel.endsWith('.skip'), file: (f) => out.push(f) });
  return out;
}

function expected(root: string, files: string[]) {
  return files.map((rel) => {
    const st = fs.lstatSync(path.join(root, rel));
    return { rel, abs: path.join(fs.realpathSync(root), rel), st: { size: st.size, mtimeMs: st.mtimeMs, ctimeMs: st.ctimeMs, birthtimeMs: st.birthtimeMs, ino: st.ino }, link: false };
  });
}

describe('walkTree', () => {
  it.each([
    ['a small tree (statted on the main thread)', 40],
    ['a large tree (statted on the stat thread)', 1_300],
  ])('%s: every file once, in listing order, with its lstat', async (_label, count) => {
    const root = await tmpDir();
    const files: string[] = [];
    for (let i = 0; i < count; i++) {
      const rel = `d${i % 3}/n${i}.md`;
      fs.mkdirSync(path.join(root, path.dirname(rel)), { recursive: true });
      fs.writeFileSync(path.join(root, rel), 'x'.repeat(i % 17));
      files.push(rel);
    }
    fs.writeFileSync(path.join(root, 'top.md'), 'top');
    fs.writeFileSync(path.join(root, 'ignored.skip'), '');
    fs.symlinkSync(path.join(root, 'top.md'), path.join(root, 'link.md'));
    const got = await walked(root);
    // Breadth-first, each folder in the order its listing gave.
    const order: string[] = [];
    for (const dir of ['', 'd0', 'd1', 'd2']) {
      for (const e of fs.readdirSync(path.join(root, dir), { withFileTypes: true })) {
        const rel = dir === '' ? e.name : `${dir}/${e.name}`;
        if (e.isFile() && !rel.endsWith('.skip')) order.push(rel);
      }
    }
    expect(order).toHaveLength(count + 1);
    expect(got).toEqual(expected(root, order));
  });

  it('a file removed after its folder was listed is left out', async () => {
    const root = await tmpDir();
    for (let i = 0; i < 700; i++) fs.writeFileSync(path.join(root, `n${i}.md`), '');
    const out: string[] = [];
    let removed = false;
    await walkTree(fs.realpathSync(root), '', {
      follow: false,
      ignored: () => false,
      // After the folder's listing, before its files' lstat.
      listed: () => {
        fs.rmSync(path.join(root, 'n5.md'));
        removed = true;
      },
      file: (f) => out.push(f.rel),
    });
    expect(removed).toBe(true);
    expect(out).toHaveLength(699);
    expect(out).not.toContain('n5.md');
  });
});
