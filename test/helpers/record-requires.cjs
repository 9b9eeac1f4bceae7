// `node --require <this file>`: at exit, appends the URL of every CommonJS
// module the process loaded (its require cache) to the file named by
// $QUIRE_IMPORT_LOG, beside what record-imports.mjs logs of the ES module
// loader, which Node 20's require() does not go through (test/cli/thin.test.ts).
const fs = require('node:fs');
const { pathToFileURL } = require('node:url');

process.on('exit', () => {
  const urls = Object.keys(require.cache).filter((f) => f !== __filename).map((f) => `${pathToFileURL(f).href}\n`);
  fs.appendFileSync(process.env.QUIRE_IMPORT_LOG, urls.join(''));
});
