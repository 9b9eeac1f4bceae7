#!/usr/bin/env -S node --max-semi-space-size=32 --no-allocation-site-pretenuring
// The `quire` command: the built JavaScript in dist/ (`npm run build`, which
// `npm install` runs). The first line's Node.js flags size the server's
// young generation (docs/performance.md, "Node.js flags").
import fs from 'node:fs';

const main = new URL('../dist/surfaces/cli/main.js', import.meta.url);
if (!fs.existsSync(main)) {
  process.stderr.write('quire: dist/ is missing; run `npm run build` (or `npm install`) in the Quire folder first\n');
  process.exit(2);
}
// A --vault call whose folder has a daemon running is answered by that daemon whole, and this process loads
// nothing more; anything else runs the full command line (docs/cli.md, "Thin client").
const argv = process.argv.slice(2);
const thin = argv.includes('--vault') ? await import(new URL('../dist/surfaces/cli/thin.js', import.meta.url).href) : null;
if (!(await thin?.runThin(argv))) await import(main.href);
