/**
 * What every content handler needs first: the caller's vault, its ready
 * index, the quota for writes, and the Home prefix an App Password may be
 * limited to (paths outside it, by name or through a symlink, are treated
 * as absent).
 */
import { lstatSync, realpathSync } from 'node:fs';
import nodePath from 'node:path';
import { callerOf, type ActionContext } from '../actions/context.js';
import { AppError, errors } from '../core/errors.js';
import type { HomeIndex } from '../index/home-index.js';
import type { Vault } from '../vault/vault.js';

export interface Scope {
  vault: Vault;
  index: HomeIndex;
  quotaBytes: number;
  /** `Notes/Work/` style prefix, or null for the whole Home. */
  prefix: string | null;
}

export async function openScope(ctx: ActionContext): Promise<Scope> {
  const caller = callerOf(ctx);
  const { vault, quotaBytes } = await ctx.services.vaults.forCaller(caller);
  const index = await vault.whenReady();
  return { vault, index, quotaBytes, prefix: caller.homePrefix };
}

/**
 * Whether a path lies in the caller's Home prefix: by name, and by where it
 * really is once symlinks are resolved. A link inside the prefix that leads
 * out of it (`Sub/up -> ../Notes`) is not followed: the path is treated as
 * outside, for reads, writes and listings alike.
 */
export function visible(scope: Scope, path: string): boolean {
  if (scope.prefix === null) return true;
  if (!path.startsWith(scope.prefix)) return false;
  const { rootAbs, rootReal, prefixReal } = realPrefixOf(scope);
  if (prefixReal === null) return false;
  const real = realRel(rootAbs, rootReal, path);
  return real !== null && (real + '/').startsWith(prefixReal);
}

const realPrefixes = new WeakMap<Scope, { rootAbs: string; rootReal: string; prefixReal: string | null }>();

/** The Home root and the prefix's real Home path (`Sub/`), once per request's Scope. */
function realPrefixOf(scope: Scope) {
  let r = realPrefixes.get(scope);
  if (!r) {
    const rootAbs = scope.vault.home.root;
    let rootReal: string;
    try {
      rootReal = realpathSync.native(rootAbs);
    } catch {
      rootReal = rootAbs;
    }
    const p = realRel(rootAbs, rootReal, scope.prefix!);
    r = { rootAbs, rootReal, prefixReal: p === null ? null : p === '' ? '' : p + '/' };
    realPrefixes.set(scope, r);
  }
  return r;
}

/**
 * The Home-relative path `rel` really names: the realpath of its longest
 * existing part, plus the part not created yet. null when it leaves the
 * Home, has a `.` or `..` segment, or passes a dangling link (nothing can
 * say where that leads).
 */
function realRel(rootAbs: string, rootReal: string, rel: string): string | null {
  const segs = rel.split('/').filter((s) => s !== '');
  // Such a path names nothing (the vault refuses it); without this, a part not created yet could climb back out.
  if (segs.some((s) => s === '..' || s === '.')) return null;
  for (let i = segs.length; i >= 0; i--) {
    const abs = nodePath.join(rootAbs, ...segs.slice(0, i));
    let real: string;
    try {
      // In place, as the vault resolves paths: one realpath(3) call in the common case.
      real = realpathSync.native(abs);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT' && code !== 'ENOTDIR') return null;
      try {
        if (lstatSync(abs).isSymbolicLink()) return null;
      } catch {
        /* absent: look at the part above */
      }
      continue;
    }
    const r = nodePath.relative(rootReal, real);
    if (r === '..' || r.startsWith(`..${nodePath.sep}`) || nodePath.isAbsolute(r)) return null;
    return [...(r === '' ? [] : r.split(nodePath.sep)), ...segs.slice(i)].join('/');
  }
  return null;
}

/** Refuses a path outside the caller's Home prefix as if it did not exist. */
export function checkVisible(scope: Scope, path: string): void {
  if (!visible(scope, path)) throw errors.notFound(`No such file: ${path}`, { path });
}

/** Writes outside the prefix are refused outright (the caller knows the path it named). */
export function checkWritable(scope: Scope, path: string): void {
  if (!visible(scope, path)) {
    throw new AppError('forbidden', `This credential may only change files under ${scope.prefix}`, {
      details: { reason: 'outside_home_prefix', path },
    });
  }
}
