/**
 * Which Home-relative paths are not part of the vault's content: the watcher
 * does not report them and the quota does not count them. One list for both,
 * so `home.usage()` always measures exactly what the watcher tracks.
 * docs/vault-disk.md explains each rule.
 */

/** Marker in the names of the server's own temp files (`.<name>.quire-tmp-<random>`). Reserved: no path may contain it. */
export const TEMP_MARKER = '.quire-tmp-';

/** Server-internal folders (Home-relative). Not content; not counted; not watched. */
export const INTERNAL_DIRS: readonly string[] = ['.quire/cache', '.quire/tmp'];

/** Folders whose whole subtree is ignored, matched as a path segment anywhere. */
const IGNORED_DIR_SEGMENTS = new Set(['.git']);

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

/** `.obsidian/workspace.json`, `workspace-mobile.json`, `workspaces.json`: UI state rewritten on every click. */
const OBSIDIAN_VOLATILE = /^\.obsidian\/(workspace[^/]*|cache)$/;

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
    if (IGNORED_DIR_SEGMENTS.has(seg)) return true;
    if (IGNORED_NAMES.has(seg)) return true;
    if (seg.includes(TEMP_MARKER)) return true;
    // A backup or lock *folder* (`foo~/`) is as ignorable as a file; patterns apply to every segment.
    for (const re of IGNORED_NAME_PATTERNS) if (re.test(seg)) return true;
  }
  const last = segs[segs.length - 1]!;
  if (isVimProbe(last)) return true;
  for (const dir of INTERNAL_DIRS) if (rel === dir || rel.startsWith(dir + '/')) return true;
  if (segs[0] === '.obsidian' && segs.length >= 2 && OBSIDIAN_VOLATILE.test(segs[0] + '/' + segs[1])) return true;
  return false;
}
