/**
 * Safe resolution of Home-relative paths. A Home-relative path is what the
 * API, the index and the watcher use to name a file: forward slashes, no
 * leading slash, exactly one spelling per file. docs/vault-disk.md lists the
 * rules; each refusal is an AppError with `details: { path, reason, … }`.
 *
 * Decisions:
 * - `.` segments and empty segments (`a//b`, trailing `/`) are REFUSED, not
 *   normalised: one file has one spelling, so ETag records, case checks and
 *   index keys can compare strings.
 * - The path is not Unicode-normalised: the bytes a client sends are the
 *   bytes on disk (a file written as NFD by a Mac stays reachable). The
 *   case-conflict check compares NFC + lower case, so an NFD twin of an NFC
 *   name is refused as a conflict instead of silently created.
 * - Symlinks inside the Home are followed as long as their target stays in
 *   the Home; a dangling or looping link on the way is refused because where
 *   it leads cannot be checked.
 */
import { realpathSync } from 'node:fs';
import { lstat, readdir, realpath } from 'node:fs/promises';
import path from 'node:path';
import { AppError } from '../core/errors.js';
import { fsError, pathError, show } from './errors.js';
import { isForeignSettingsSegment, isVcsSegment, TEMP_MARKER } from './ignore.js';
import { isInside } from './walk.js';

/** Longest file or folder name, in UTF-8 bytes (ext4, APFS, NTFS: 255). */
export const MAX_SEGMENT_BYTES = 255;
/** Longest absolute path the kernel accepts (Linux PATH_MAX 4096 including the NUL). */
export const MAX_PATH_BYTES = 4095;

const CONTROL = /[\u0000-\u001f\u007f]/;
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

function hex(ch: string): string {
  return 'U+' + ch.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0');
}

export interface ValidateOptions {
  /** Accept `''` as the Home root itself (for listing). Default false. */
  allowRoot?: boolean;
}

/**
 * Checks the spelling of a Home-relative path without touching the disk and
 * returns its segments (`[]` for the root when allowed). Throws AppError.
 */
export function validateRelPath(rel: unknown, opts: ValidateOptions = {}): string[] {
  if (typeof rel !== 'string') {
    throw pathError(String(rel), 'not_a_string', 'A path must be a string');
  }
  if (rel === '') {
    if (opts.allowRoot) return [];
    throw pathError(rel, 'empty', 'The path is empty; name a file inside the Home');
  }
  const ctl = CONTROL.exec(rel);
  if (ctl) {
    const segment = segmentAt(rel, ctl.index);
    throw pathError(
      rel,
      'control_character',
      `Path ${show(rel)} contains the control character ${hex(ctl[0])} in segment ${show(segment)}; control characters are not allowed in names`,
      { segment, character: hex(ctl[0]) },
    );
  }
  const sur = LONE_SURROGATE.exec(rel);
  if (sur) {
    const segment = segmentAt(rel, sur.index);
    throw pathError(rel, 'invalid_unicode', `Path ${show(rel)} contains an unpaired UTF-16 surrogate in segment ${show(segment)}`, {
      segment,
    });
  }
  if (rel.startsWith('//') || rel.startsWith('\\\\')) {
    throw pathError(rel, 'absolute', `Path ${show(rel)} is a UNC network path; give a path relative to the Home`, { form: 'unc' });
  }
  if (/^[A-Za-z]:/.test(rel)) {
    throw pathError(rel, 'absolute', `Path ${show(rel)} starts with a Windows drive (${rel.slice(0, 2)}); give a path relative to the Home`, {
      form: 'drive',
    });
  }
  if (rel.startsWith('/')) {
    throw pathError(rel, 'absolute', `Path ${show(rel)} is absolute; give a path relative to the Home without a leading "/"`, {
      form: 'posix',
    });
  }
  if (rel.includes('\\')) {
    throw pathError(
      rel,
      'backslash',
      `Path ${show(rel)} contains a backslash; separate folders with "/" (a backslash is not allowed in names either)`,
      { segment: segmentAt(rel, rel.indexOf('\\')) },
    );
  }
  const segs = rel.split('/');
  for (let i = 0; i < segs.length; i++) {
    const seg = segs[i]!;
    const where = `segment ${i + 1} of ${show(rel)}`;
    if (seg === '') {
      const what = i === segs.length - 1 ? 'a trailing "/"' : i === 0 ? 'a leading "/"' : 'a doubled "/"';
      throw pathError(rel, 'empty_segment', `${where} is empty (${what}); write each folder name once`, { segment: '', index: String(i) });
    }
    if (seg === '.') {
      throw pathError(rel, 'dot_segment', `${where} is "."; remove it, paths are written without "./"`, { segment: seg, index: String(i) });
    }
    if (seg === '..') {
      throw pathError(rel, 'dot_dot_segment', `${where} is ".."; paths may not climb out of a folder`, { segment: seg, index: String(i) });
    }
    const bytes = Buffer.byteLength(seg, 'utf8');
    if (bytes > MAX_SEGMENT_BYTES) {
      throw pathError(
        rel,
        'segment_too_long',
        `The name ${show(seg.slice(0, 40) + '…')} (${where}) is ${bytes} bytes in UTF-8; the limit is ${MAX_SEGMENT_BYTES}`,
        { segment: seg, bytes: String(bytes), limit: String(MAX_SEGMENT_BYTES) },
        'name_too_long',
      );
    }
    if (seg.includes(TEMP_MARKER)) {
      throw pathError(rel, 'reserved_name', `The name ${show(seg)} (${where}) contains "${TEMP_MARKER}", which is reserved for the server's temporary files`, {
        segment: seg,
      });
    }
    // Every Home operation passes here, so this one check keeps a repository's data (and the credentials its config may hold) away from every action.
    if (isVcsSegment(seg)) {
      throw pathError(
        rel,
        'internal_path',
        `Path ${show(rel)} is inside ${show(seg)}, a version-control folder; its files are not vault content and cannot be read, listed or changed here`,
        { segment: seg },
        'forbidden',
      );
    }
  }
  return segs;
}

/**
 * Refuses a change (write, delete, either end of a move) below another
 * application's settings folder (`.obsidian/`): the server reads those
 * settings but never changes them. Home's writes call it; reads do not.
 */
export function checkServerMayChange(rel: string): void {
  const seg = typeof rel === 'string' ? rel.split('/').find(isForeignSettingsSegment) : undefined;
  if (seg !== undefined) {
    throw pathError(
      rel,
      'internal_path',
      `Path ${show(rel)} is inside ${show(seg)}, another application's settings; the server reads them but never changes them`,
      { segment: seg },
      'forbidden',
    );
  }
}

/** The segment of `rel` that holds the character at `index`. */
function segmentAt(rel: string, index: number): string {
  const start = rel.lastIndexOf('/', index - 1) + 1;
  const end = rel.indexOf('/', index);
  return rel.slice(start, end === -1 ? undefined : end);
}

function errCode(e: unknown): string | undefined {
  return (e as NodeJS.ErrnoException | undefined)?.code;
}

/** realpath of the Home root; a missing Home is a server-side problem. */
export async function realHomeRoot(homeRoot: string): Promise<string> {
  try {
    return await realpath(homeRoot);
  } catch (e) {
    throw new AppError('internal', 'The Home folder does not exist or cannot be read', {
      details: { reason: 'home_unavailable', code: errCode(e) ?? 'unknown' },
    });
  }
}

/** Converts an absolute path under `rootAbs` to a Home-relative path with forward slashes. */
export function toHomeRel(rootAbs: string, abs: string): string {
  const r = path.relative(rootAbs, abs);
  return path.sep === '/' ? r : r.split(path.sep).join('/');
}

/**
 * Returns the absolute path (under `path.resolve(homeRoot)`) of a
 * Home-relative path, or throws AppError. Checks the spelling
 * (validateRelPath) and that neither the path nor any existing prefix of it
 * leaves the Home through a symlink (realpath of the longest existing prefix).
 */
export async function resolveHomePath(homeRoot: string, rel: string, opts: ValidateOptions & { followOutside?: boolean } = {}): Promise<string> {
  return (await resolveHomePathReal(homeRoot, rel, opts)).abs;
}

/**
 * `resolveHomePath`, also giving the realpath of the whole path (null when
 * it does not exist) so a caller can tell a path without any symlink
 * (`real === abs`) without another system call. `rootReal`: the Home root's
 * realpath when the caller keeps it.
 */
export async function resolveHomePathReal(
  homeRoot: string,
  rel: string,
  opts: ValidateOptions & { rootReal?: string; followOutside?: boolean } = {},
): Promise<{ abs: string; real: string | null }> {
  const segs = validateRelPath(rel, opts);
  const rootAbs = path.resolve(homeRoot);
  const abs = segs.length === 0 ? rootAbs : path.join(rootAbs, ...segs);
  if (Buffer.byteLength(abs, 'utf8') > MAX_PATH_BYTES) {
    throw pathError(rel, 'path_too_long', `Path ${show(rel.slice(0, 60) + '…')} is too long for the file system`, {}, 'name_too_long');
  }
  const rootReal = opts.rootReal ?? (await realHomeRoot(rootAbs));
  for (let i = segs.length; i >= 0; i--) {
    const prefix = i === 0 ? rootAbs : path.join(rootAbs, ...segs.slice(0, i));
    let real: string;
    try {
      // One realpath(3) call: far cheaper in place than as a promise through the thread pool (every read and write comes here).
      real = realpathSync.native(prefix);
    } catch (e) {
      const c = errCode(e);
      if (c === 'ENOENT' || c === 'ENOTDIR') continue;
      if (c === 'ELOOP') {
        const segment = await firstUnresolvable(rootAbs, segs, i);
        throw pathError(rel, 'symlink_unresolvable', `Path ${show(rel)} goes through a symbolic link loop at ${show(segment)}`, { segment });
      }
      throw fsError(e, 'stat', rel);
    }
    // followOutside: the owner of a vault served alone chose to follow links out of it (`serve --vault --follow-symlinks`).
    if (!opts.followOutside && !isInside(rootReal, real)) {
      const segment = await firstEscape(rootAbs, rootReal, segs, i);
      throw pathError(rel, 'symlink_escape', `Path ${show(rel)} leaves the Home through the symbolic link ${show(segment)}`, { segment });
    }
    if (real !== prefix) {
      // A link may lead where the name may not: a committed symlink to `.git/config` must not read the repository's config.
      const seg = path.relative(rootReal, real).split(path.sep).find(isVcsSegment);
      if (seg !== undefined) {
        throw pathError(rel, 'internal_path', `Path ${show(rel)} leads through a symbolic link into ${show(seg)}, a version-control folder`, { segment: seg }, 'forbidden');
      }
    }
    if (i < segs.length) {
      // The next component does not resolve. If it exists as a link, it is dangling: refuse.
      const next = path.join(prefix, segs[i]!);
      let isLink = false;
      try {
        isLink = (await lstat(next)).isSymbolicLink();
      } catch {
        isLink = false;
      }
      if (isLink) {
        const segment = segs.slice(0, i + 1).join('/');
        throw pathError(
          rel,
          'symlink_unresolvable',
          `Path ${show(rel)} goes through the symbolic link ${show(segment)}, whose target does not exist; where it leads cannot be checked`,
          { segment },
        );
      }
    }
    return { abs, real: i === segs.length ? real : null };
  }
  /* c8 ignore next */
  throw new AppError('internal', 'The Home folder disappeared while resolving a path', { details: { path: rel, reason: 'home_unavailable' } });
}

/** The shortest prefix (Home-relative) whose realpath lies outside the Home. */
async function firstEscape(rootAbs: string, rootReal: string, segs: string[], upTo: number): Promise<string> {
  for (let j = 1; j <= upTo; j++) {
    try {
      const real = await realpath(path.join(rootAbs, ...segs.slice(0, j)));
      if (!isInside(rootReal, real)) return segs.slice(0, j).join('/');
    } catch {
      /* keep looking */
    }
  }
  return segs.slice(0, upTo).join('/');
}

async function firstUnresolvable(rootAbs: string, segs: string[], upTo: number): Promise<string> {
  for (let j = 1; j <= upTo; j++) {
    try {
      await realpath(path.join(rootAbs, ...segs.slice(0, j)));
    } catch (e) {
      if (errCode(e) === 'ELOOP') return segs.slice(0, j).join('/');
    }
  }
  return segs.slice(0, upTo).join('/');
}

/**
 * The key two sibling names collide on: NFC, then Unicode lower case, with
 * the final sigma folded to σ. `Straße` and `STRASSE` stay different (the
 * simple case mapping macOS and Windows use does not expand ß).
 */
export function nameKey(name: string): string {
  return name.normalize('NFC').toLowerCase().replace(/ς/g, 'σ');
}

export interface CheckNewNameOptions {
  /** A Home-relative path that may collide without counting (the item being renamed onto a new case). */
  ignore?: string;
}

/**
 * Refuses to create `rel` when, at any level of the path, a new name differs
 * from an existing sibling only by case or Unicode normalisation:
 * AppError `name_conflict_case` (409) with `details.existing` naming the
 * existing path. Levels that already exist with the exact spelling pass.
 */
export async function checkNewName(homeRoot: string, rel: string, opts: CheckNewNameOptions = {}): Promise<void> {
  const segs = validateRelPath(rel);
  const rootAbs = path.resolve(homeRoot);
  for (let i = 0; i < segs.length; i++) {
    const seg = segs[i]!;
    const dir = i === 0 ? rootAbs : path.join(rootAbs, ...segs.slice(0, i));
    let names: string[];
    try {
      names = await readdir(dir);
    } catch (e) {
      const c = errCode(e);
      if (c === 'ENOENT' || c === 'ENOTDIR') return; // nothing exists below here, so nothing can collide
      throw fsError(e, 'list', segs.slice(0, i).join('/'));
    }
    if (names.includes(seg)) continue;
    const key = nameKey(seg);
    const clash = names
      .filter((n) => !n.includes(TEMP_MARKER) && nameKey(n) === key)
      .map((n) => [...segs.slice(0, i), n].join('/'))
      .filter((p) => p !== opts.ignore)
      .sort()[0];
    if (clash !== undefined) {
      const level = i === segs.length - 1 ? 'name' : 'folder name';
      throw new AppError(
        'name_conflict_case',
        `Cannot create ${show(rel)}: the ${level} ${show(seg)} differs from the existing ${show(clash)} only by case or Unicode form; use the existing name or choose another`,
        { details: { path: rel, reason: 'case_conflict', segment: seg, existing: clash } },
      );
    }
    return; // this level is new, so every deeper level is new too
  }
}
