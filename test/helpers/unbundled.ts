/**
 * What a process loaded, as if the command line ran one file per file: each
 * chunk of its bundle (dist/bundle/, scripts/build.mjs writeCliBundle) is
 * replaced by the modules it holds, a source src/x.ts named as its built
 * file …/dist/x.js and a package's file as it sits in node_modules/. Tests
 * that check what a command loads (no server code for `--help`, no heavy
 * library before index ready) read these names.
 */
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const REPO = path.resolve(__dirname, '../..');
const BUNDLE = pathToFileURL(path.join(REPO, 'dist/bundle/')).href;

export function unbundled(loaded: string[]): string[] {
  const inputs = JSON.parse(fs.readFileSync(path.join(REPO, 'dist/bundle/inputs.json'), 'utf8')) as Record<string, string[]>;
  return loaded.flatMap((url) => {
    if (!url.startsWith(BUNDLE)) return [url];
    const held = inputs[url.slice(BUNDLE.length)];
    if (held === undefined) return [url];
    return held.map((rel) => pathToFileURL(path.join(REPO, rel.replace(/^src\/(.*)\.ts$/, 'dist/$1.js'))).href);
  });
}
