// Loader hooks of record-imports.mjs (they run on the loader's own thread).
import fs from 'node:fs';

export async function load(url, context, next) {
  fs.appendFileSync(process.env.QUIRE_IMPORT_LOG, `${url}\n`);
  return next(url, context);
}
