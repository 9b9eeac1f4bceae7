#!/usr/bin/env node
// The `quire` command's JavaScript: bin/quire (the launcher a person runs,
// package.json "bin") starts it with the server's Node.js flags for the
// long-running commands and with none otherwise; `node bin/quire.js …` runs it
// without flags. It is CommonJS (bin/package.json): a warm --vault call is
// answered by the folder's daemon through dist/surfaces/cli/thin.cjs and never
// starts Node's ES module loader; anything else runs the full command line,
// the bundle dist/bundle/main.js (docs/cli.md, "Thin client"; docs/architecture.md,
// "The build").
'use strict';
const fs = require('node:fs');
const path = require('node:path');

const dist = path.join(__dirname, '..', 'dist');
if (!fs.existsSync(path.join(dist, '.built'))) {
  process.stderr.write('quire: dist/ is missing; run `npm run build` (or `npm install`) in the Quire folder first\n');
  process.exit(2);
}
const argv = process.argv.slice(2);
const full = () => import(path.join(dist, 'bundle/main.js'));
// The native thin client (bin/quire runs it first) asked the daemon, which left the call: not twice.
const asked = process.env.QUIRE_THIN_ASKED === '1';
delete process.env.QUIRE_THIN_ASKED;
if (argv.includes('--vault') && !asked) require(path.join(dist, 'surfaces/cli/thin.cjs')).runThin(argv).then((done) => done || full());
else full();
