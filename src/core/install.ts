/**
 * Where the install's own files are: the one place that turns a module's
 * location into paths. A module cannot find its files by its own URL, since
 * the same code runs from three places: src/ under the tests, dist/ one file
 * per file (workers, dist-bench, tests of built code) and the command line's
 * bundle, dist/bundle/ (chunks named by hash; docs/architecture.md, "The
 * build"). Each starts here: the install root is the nearest folder above
 * this module holding a package.json named "quire".
 */
import fs from 'node:fs';

function findRoot(): { root: URL; version: string } {
  for (let dir = new URL('./', import.meta.url); ; ) {
    try {
      const pkg = JSON.parse(fs.readFileSync(new URL('package.json', dir), 'utf8')) as { name?: string; version: string };
      if (pkg.name === 'quire') return { root: dir, version: pkg.version };
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    }
    const up = new URL('../', dir);
    if (up.href === dir.href) throw new Error(`no package.json named "quire" above ${import.meta.url}`);
    dir = up;
  }
}

const found = findRoot();

/** The install's root folder (package.json, spec/, bin/, vault-fixtures/). */
export const INSTALL_ROOT: URL = found.root;
/** package.json's version. */
export const VERSION: string = found.version;
/** The built tree, dist/, one file per source file: what a worker thread runs. */
export const BUILT_TREE: URL = new URL('dist/', INSTALL_ROOT);
/** The tree the running code comes from: src/ when the tests run the sources, dist/ otherwise (the bundle too). */
export const CODE_TREE: URL = import.meta.url.endsWith('.ts') ? new URL('src/', INSTALL_ROOT) : BUILT_TREE;

/** A file of the install by its path from the root: `installFile('spec/actions.json')`. */
export const installFile = (rel: string): URL => new URL(rel, INSTALL_ROOT);
/** A file beside the code by its path in src/ (copied as is into dist/): `codeFile('web/auth.browser.js')`. */
export const codeFile = (rel: string): URL => new URL(rel, CODE_TREE);
