// `node --require <this file>`: appends the URL of every CommonJS module to
// the file named by $QUIRE_IMPORT_LOG as it loads, beside what
// record-imports.mjs logs of the ES module loader, which Node 20's require()
// does not go through; so a test can read what was loaded at a given line of
// output (test/foundation/serve-start.test.ts), or at exit (test/cli/thin.test.ts).
const fs = require('node:fs');
const Module = require('node:module');
const { pathToFileURL } = require('node:url');

const load = Module.prototype.load;
Module.prototype.load = function (filename) {
  fs.appendFileSync(process.env.QUIRE_IMPORT_LOG, `${pathToFileURL(filename).href}\n`);
  return load.apply(this, arguments);
};
