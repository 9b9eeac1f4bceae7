/**
 * isIgnoredPath runs its name rules as one expression over the whole path
 * (src/vault/ignore.ts): each rule must hold for a name in any position —
 * first, middle (a folder), last — and nowhere else inside a name.
 */
import { describe, expect, it } from 'vitest';
import { isIgnoredPath } from '../../src/vault/ignore.js';

const IGNORED_NAMES = [
  '.DS_Store', 'Thumbs.db', 'desktop.ini', '.directory', '.obsidian', 'note.swp', 'note.swa', 'note.swx', 'note.md~', '~',
  '.#note.md', '#note.md#', '##', '.~lock.report.odt#', 'a.md___jb_tmp___', 'a.md___jb_bak___', '.goutputstream-XYZ',
  'x.crswap', '.syncthing.a.md.tmp', '~syncthing~a.md.tmp', '.a.md.quire-tmp-123', '.git', '.GIT', '.Hg', '_fossil_',
];
const KEPT_NAMES = [
  'note.md', 'x.DS_Store', 'Thumbs.dbx', 'note.swz', 'note.sw', 'a~b.md', '#', '#a', 'a#b#', 'x.swp.md', '.gitignore',
  '.github', '.obsidian2', 'my.obsidian', '.syncthing.a.md', 'a.crswap.md', '2024', '#a\nb#', '.quire',
];

describe('isIgnoredPath: name rules in every position', () => {
  for (const name of IGNORED_NAMES) {
    it.each([name, `Notes/${name}`, `${name}/inner.md`, `Notes/${name}/inner.md`])(`${JSON.stringify(name)} ignored as %j`, (rel) => {
      expect(isIgnoredPath(rel)).toBe(true);
    });
  }
  for (const name of KEPT_NAMES) {
    it.each([name, `Notes/${name}`, `${name}/inner.md`, `Notes/${name}/inner.md`])(`${JSON.stringify(name)} kept as %j`, (rel) => {
      expect(isIgnoredPath(rel)).toBe(false);
    });
  }
  it.each([
    ['4913', true],
    ['Notes/5036', true],
    ['4913/inner.md', false], // vim's probe is a file: only the last segment
    ['.quire/cache', true],
    ['.quire/cache/x.md', true],
    ['.quire/cachex', false],
    ['', false],
  ])('%j: %s', (rel, expected) => {
    expect(isIgnoredPath(rel)).toBe(expected);
  });
});
