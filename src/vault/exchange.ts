/**
 * renameat2(RENAME_EXCHANGE): swaps two names in one step. The write path
 * uses it to replace a file so that whatever was at the path at that
 * instant (the checked file, or another program's newer save) survives
 * under the temp name and can be inspected; a plain rename(2) would destroy
 * it. Node has no binding for it, so it is called in libc through koffi (a
 * maintained FFI library whose npm package carries its prebuilt binaries).
 *
 * null where it cannot be had: not Linux, no glibc `renameat2` (glibc
 * 2.28+), or koffi not loadable. A file system that does not support the
 * flag answers EINVAL at call time; callers fall back then too.
 */
import { createRequire } from 'node:module';
import os from 'node:os';

/** Swaps `a` and `b` (both must exist). Throws an Error with the errno name as `code`. */
export type Exchange = (a: string, b: string) => void;

const AT_FDCWD = -100;
const RENAME_EXCHANGE = 2;

const errnoNames = new Map(Object.entries(os.constants.errno).map(([name, n]) => [n, name]));

let loaded: Exchange | null | undefined;

function load(): Exchange | null {
  if (process.platform !== 'linux') return null;
  try {
    const koffi = createRequire(import.meta.url)('koffi');
    const libc = koffi.load('libc.so.6');
    const renameat2 = libc.func('int renameat2(int olddirfd, const char *oldpath, int newdirfd, const char *newpath, unsigned int flags)');
    return (a, b) => {
      if (renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE) === 0) return;
      const code = errnoNames.get(koffi.errno()) ?? 'EIO';
      throw Object.assign(new Error(`${code}: renameat2 exchange`), { code });
    };
  } catch {
    return null;
  }
}

/** The exchange call, loaded on first use; null where unavailable. */
export function renameExchange(): Exchange | null {
  if (loaded === undefined) loaded = load();
  return loaded;
}
