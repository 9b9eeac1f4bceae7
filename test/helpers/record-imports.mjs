// `node --import <this file>`: appends the URL of every module the process
// loads through the ES module loader to the file named by $QUIRE_IMPORT_LOG
// (test/foundation/cli-start.test.ts).
import { register } from 'node:module';

register('./record-imports-hooks.mjs', import.meta.url);
