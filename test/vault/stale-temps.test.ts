/**
 * Temp files that interrupted writes leave behind are removed when a Home is
 * opened: a real child process is SIGKILLed in the middle of its writes,
 * and every file it had written is still whole.
 */
import { spawn } from 'node:child_process';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { Home } from '../../src/vault/home.js';
import { TEMP_MARKER } from '../../src/vault/ignore.js';
import { allFiles, tmpDir, waitFor } from './helpers.js';

const KILL_WRITER = fileURLToPath(new URL('./kill-writer.ts', import.meta.url));

const temps = async (dir: string) => (await allFiles(dir)).filter((f) => f.includes(TEMP_MARKER));

/** Starts the writer, waits until one of its temp files exists, and SIGKILLs it there. */
async function killMidWrite(dir: string): Promise<void> {
  const child = spawn(process.execPath, ['--import', 'tsx', KILL_WRITER, dir], { stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise((resolve) => child.on('exit', resolve));
  try {
    await new Promise<void>((resolve, reject) => {
      child.stdout.once('data', () => resolve());
      child.on('exit', (code) => reject(new Error(`writer exited early (${code})`)));
    });
    const notes = path.join(dir, 'Notes');
    await waitFor(async () => (await readdir(notes)).some((n) => n.includes(TEMP_MARKER)), 20_000, () => 'no temp file appeared');
  } finally {
    child.kill('SIGKILL');
    await exited;
  }
}

describe('Home.removeStaleTemps', () => {
  it('removes the temp files of writes cut by SIGKILL; every note is still whole', { timeout: 120_000 }, async () => {
    const dir = await tmpDir();
    for (let k = 0; k < 3; k++) await killMidWrite(dir);
    const left = await temps(dir);
    expect(left.length).toBeGreaterThan(0);

    // Folders the Home ignores are not entered: a temp-like name inside .git is git's business.
    await mkdir(path.join(dir, '.git'), { recursive: true });
    await writeFile(path.join(dir, '.git', `.x${TEMP_MARKER}keep`), 'git data');

    const removed = await new Home(dir).removeStaleTemps({ olderThanMs: 0 });
    expect(removed.sort()).toEqual(left);
    expect(await temps(dir)).toEqual([`.git/.x${TEMP_MARKER}keep`]);
    const notes = (await allFiles(dir)).filter((f) => f.startsWith('Notes/'));
    expect(notes.length).toBeGreaterThan(0);
    for (const f of notes) {
      const text = await readFile(path.join(dir, f), 'utf8');
      expect(text.length, f).toBe(2 * 1024 * 1024);
      expect(text.split(text[0]!).join(''), `${f} holds bytes of two writes`).toBe('');
    }
  });

  it('keeps temp files younger than the threshold (another process may be writing them) and those this process uses', async () => {
    const dir = await tmpDir();
    await writeFile(path.join(dir, `.a.md${TEMP_MARKER}0123456789ab`), 'in flight elsewhere');
    const home = new Home(dir, { displacedGraceMs: 60_000 });
    await home.write('b.md', 'one');
    await home.write('b.md', 'two'); // keeps the replaced file aside for its grace period
    const before = await temps(dir);
    expect(before.length).toBe(2);
    expect(await home.removeStaleTemps()).toEqual([]);
    // With no age threshold, only the set-aside file this process still holds is kept.
    expect(await home.removeStaleTemps({ olderThanMs: 0 })).toEqual([`.a.md${TEMP_MARKER}0123456789ab`]);
    expect(await temps(dir)).toHaveLength(1);
    await home.settleDisplaced();
    expect(await allFiles(dir)).toEqual(['b.md']);
  });
});
