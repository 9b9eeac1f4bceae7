#!/usr/bin/env node
// Runs a TypeScript file (benchmarks, scripts) the way `quire` runs: `node bin/run-ts.js bench/run.ts [args]`.
import path from 'node:path';
import { runTypeScript } from '../src/core/bundle.mjs';

const [file, ...rest] = process.argv.slice(2);
if (!file) {
  console.error('usage: node bin/run-ts.js <file.ts> [args]');
  process.exit(2);
}
process.argv = [process.argv[0], path.resolve(file), ...rest];
await runTypeScript(path.resolve(file));
