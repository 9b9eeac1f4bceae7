import { mkdtemp, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach } from 'vitest';
import { AppError } from '../../src/core/errors.js';

const made: string[] = [];

/** A fresh folder under os.tmpdir(), removed after the test. */
export async function tmpDir(prefix = 'quire-vault-'): Promise<string> {
  const d = await mkdtemp(path.join(os.tmpdir(), prefix));
  made.push(d);
  return d;
}

afterEach(async () => {
  while (made.length > 0) await rm(made.pop()!, { recursive: true, force: true });
});

/** Runs fn and returns the AppError it throws (fails the test otherwise). */
export async function appError(fn: () => Promise<unknown> | unknown): Promise<AppError> {
  try {
    await fn();
  } catch (e) {
    if (e instanceof AppError) return e;
    throw new Error(`expected an AppError, got ${String(e)}`);
  }
  throw new Error('expected an AppError, but nothing was thrown');
}

/** Every file name below `dir`, recursively (Home-relative). */
export async function allFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (e.isFile()) out.push(path.relative(dir, path.join(e.parentPath ?? (e as { path: string }).path, e.name)));
  }
  return out.sort();
}

/** Polls until `check` returns true (or throws on timeout with `describe()`'s text). */
export async function waitFor(check: () => boolean | Promise<boolean>, timeoutMs = 5000, describe?: () => string): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > until) throw new Error(`timed out after ${timeoutMs} ms${describe ? ': ' + describe() : ''}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
