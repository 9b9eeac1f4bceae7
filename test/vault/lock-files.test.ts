import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { AppError } from '../../src/core/errors.js';
import { shareWriterLocksIn, WriterLock, writerLockFile } from '../../src/vault/lock.js';

// The lock files shared across processes (`serve --vault` and the vault daemon on one folder).
// shareWriterLocksIn is process-wide, so these cases live in their own file.
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'quire-lock-files-'));
const locks = path.join(tmp, 'locks');
const home = path.join(tmp, 'home');
fs.mkdirSync(home);
shareWriterLocksIn(locks);
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

describe('writer lock files', () => {
  it('holds the lock file while fn runs and removes it after', async () => {
    const seen = await WriterLock.forRoot(home).run(async () => fs.existsSync(`${writerLockFile(locks, home)}.lock`));
    expect(seen).toBe(true);
    expect(fs.existsSync(`${writerLockFile(locks, home)}.lock`)).toBe(false);
  });

  it('makes the state folder again when it was removed while the process ran', async () => {
    fs.rmSync(locks, { recursive: true });
    await expect(WriterLock.forRoot(home).run(async () => 'written')).resolves.toBe('written');
  });

  it('names a lock that cannot be made as such at once, not as another process holding it', async () => {
    fs.rmSync(locks, { recursive: true });
    fs.writeFileSync(locks, 'a file where the lock folder should be');
    const started = Date.now();
    const err = await WriterLock.forRoot(home)
      .run(async () => 'written')
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).details).toMatchObject({ reason: 'writer_lock_failed' });
    expect((err as AppError).message).toContain(home);
    expect(Date.now() - started).toBeLessThan(5_000); // not proper-lockfile's 30 s of retries
    fs.rmSync(locks);
  });
});
