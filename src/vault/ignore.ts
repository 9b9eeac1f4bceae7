/**
 * Which Home-relative paths are not part of the vault's content: the watcher
 * does not report them, the quota does not count them and listings hide
 * them. One list for all, so `home.usage()` always measures exactly what the
 * watcher tracks. It also names the two kinds of internals the path gate
 * (src/vault/paths.ts) refuses: version-control folders (never read, listed
 * or written) and other applications' settings (never written).
 * docs/vault-disk.md explains each rule.
 */

/** Marker in the names of the server's own temp files (`.<name>.quire-tmp-<random>`). Reserved: no path may contain it. */
export const TEMP_MARKER = '.quire-tmp-';

/**
 * Folders where earlier versions kept derived state inside the Home (derived
 * state now lives outside it: docs/quire-folder.md). Still ignored, so an
 * old copy is neither indexed nor counted.
 */
export const INTERNAL_DIRS: readonly string[] = ['.quire/cache', '.quire/tmp'];

/**
 * Version-control data, matched as a segment anywhere and ignoring case (a
 * case-insensitive disk opens `.GIT` as `.git`). A repository's config can
 * hold credentials (remote URLs with tokens), so no action may read, list
 * or write below these (`isVcsSegment`, checked by the path gate).
 * Fossil keeps a checkout file (`.fslckout`, `_FOSSIL_`) instead of a folder.
 */
const VCS_SEGMENTS: ReadonlySet<string> = new Set(['.git', '.hg', '.svn', '.bzr', '_darcs', '.jj', '.pijul', '.fslckout', '_fossil_']);

/** True for a path segment that is (or holds) a version-control tool's own data. */
export function isVcsSegment(seg: string): boolean {
  return VCS_SEGMENTS.has(seg.toLowerCase());
}

/**
 * Settings folders of other applications, matched as a segment anywhere (a
 * Home may hold several Obsidian vaults). The server reads them but never
 * writes them (`isForeignSettingsSegment`, checked by Home's writes), and
 * they are not content: not indexed, not counted, not listed.
 */
const FOREIGN_SETTINGS_SEGMENTS: ReadonlySet<string> = new Set(['.obsidian']);

export function isForeignSettingsSegment(seg: string): boolean {
  return FOREIGN_SETTINGS_SEGMENTS.has(seg);
}

/** Exact file names ignored anywhere. */
const IGNORED_NAMES = new Set(['.DS_Store', 'Thumbs.db', 'desktop.ini', '.directory']);

/** Patterns on the last segment (the file or folder name). */
const IGNORED_NAME_PATTERNS: readonly RegExp[] = [
  /\.sw[a-p]$/, //           vim swap files (.swp, .swo, …)
  /\.swx$/, //               vim's probe for swap-file support
  /~$/, //                   vim / emacs / nano backups (`note.md~`)
  /^\.#/, //                 emacs lock links (`.#note.md`)
  /^#.*#$/, //               emacs auto-save (`#note.md#`)
  /^\.~lock\..*#$/, //       LibreOffice locks
  /___jb_(tmp|old|bak)___$/, // JetBrains safe-write
  /^\.goutputstream-/, //    GNOME/gedit safe-write
  /\.crswap$/, //            Chromium File System Access writes
  /^\.syncthing\..*\.tmp$/, // Syncthing
  /^~syncthing~.*\.tmp$/,
  /\.quire-tmp-/, //         our own atomic-write temp files
];

/**
 * Vim's "can I create a file here?" probe: named 4913, then +123 while taken.
 * Matching only that sequence keeps a note named `2024` visible.
 */
function isVimProbe(name: string): boolean {
  if (!/^\d{4,5}$/.test(name)) return false;
  const n = Number(name);
  return n >= 4913 && (n - 4913) % 123 === 0 && n < 4913 + 123 * 100;
}

export function isTempName(name: string): boolean {
  return name.includes(TEMP_MARKER);
}

/** True for a path (file or folder, Home-relative, forward slashes) that is not vault content. `''` (the root) is never ignored. */
export function isIgnoredPath(rel: string): boolean {
  if (rel === '') return false;
  const segs = rel.split('/');
  for (let i = 0; i < segs.length; i++) {
    const seg = segs[i]!;
    if (isVcsSegment(seg) || isForeignSettingsSegment(seg)) return true;
    if (IGNORED_NAMES.has(seg)) return true;
    if (seg.includes(TEMP_MARKER)) return true;
    // A backup or lock *folder* (`foo~/`) is as ignorable as a file; patterns apply to every segment.
    for (const re of IGNORED_NAME_PATTERNS) if (re.test(seg)) return true;
  }
  const last = segs[segs.length - 1]!;
  if (isVimProbe(last)) return true;
  for (const dir of INTERNAL_DIRS) if (rel === dir || rel.startsWith(dir + '/')) return true;
  return false;
}
