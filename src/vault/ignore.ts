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

/*
 * The rules on names, each applied to every segment of a path (a backup or
 * lock *folder*, `foo~/`, is as ignorable as a file). They are written as ONE
 * expression over the whole path — `(?:^|/)` and `(?:/|$)` mark a segment's
 * edges, `[^/]` stands for "any character of the segment" — because the
 * watcher and the opening walk ask it of every path (10,000 at a warm start):
 * one pass instead of splitting the path and running a dozen expressions per
 * segment (docs/vault-disk.md, "Ignored files").
 */
const IGNORED_SEGMENT = new RegExp(
  [
    String.raw`(?:^|/)(?:\.DS_Store|Thumbs\.db|desktop\.ini|\.directory|\.obsidian)(?:/|$)`, // exact names; Obsidian's settings
    String.raw`\.sw[a-p](?:/|$)`, //                vim swap files (.swp, .swo, …)
    String.raw`\.swx(?:/|$)`, //                    vim's probe for swap-file support
    String.raw`~(?:/|$)`, //                        vim / emacs / nano backups (`note.md~`)
    String.raw`(?:^|/)\.#`, //                      emacs lock links (`.#note.md`)
    String.raw`(?:^|/)#[^/\n\r\u2028\u2029]*#(?:/|$)`, // emacs auto-save (`#note.md#`)
    String.raw`(?:^|/)\.~lock\.[^/\n\r\u2028\u2029]*#(?:/|$)`, // LibreOffice locks
    String.raw`___jb_(?:tmp|old|bak)___(?:/|$)`, // JetBrains safe-write
    String.raw`(?:^|/)\.goutputstream-`, //         GNOME/gedit safe-write
    String.raw`\.crswap(?:/|$)`, //                 Chromium File System Access writes
    String.raw`(?:^|/)\.syncthing\.[^/\n\r\u2028\u2029]*\.tmp(?:/|$)`, // Syncthing
    String.raw`(?:^|/)~syncthing~[^/\n\r\u2028\u2029]*\.tmp(?:/|$)`,
    String.raw`\.quire-tmp-`, //                    our own atomic-write temp files (TEMP_MARKER)
  ].join('|'),
);

/** VCS_SEGMENTS as a path expression; case-insensitive like isVcsSegment. */
const VCS_SEGMENT = new RegExp(`(?:^|/)(?:${[...VCS_SEGMENTS].map((s) => s.replace(/\./g, '\\.')).join('|')})(?:/|$)`, 'i');

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
  if (IGNORED_SEGMENT.test(rel) || VCS_SEGMENT.test(rel)) return true;
  if (isVimProbe(rel.slice(rel.lastIndexOf('/') + 1))) return true;
  for (const dir of INTERNAL_DIRS) if (rel === dir || rel.startsWith(dir + '/')) return true;
  return false;
}
