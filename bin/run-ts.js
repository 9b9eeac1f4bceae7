#!/usr/bin/env node
// Runs a TypeScript file (benchmarks, scripts) through tsx: `node bin/run-ts.js bench/run.ts [args]`.
import { register } from 'tsx/esm/api';
import { pathToFileURL } from 'node:url';
import path from 'node:path';

register();
const [file, ...rest] = process.argv.slice(2);
if (!file) {
  console.error('usage: node bin/run-ts.js <file.ts> [args]');
  process.exit(2);
}
process.argv = [process.argv[0], path.resolve(file), ...rest];
await import(pathToFileURL(path.resolve(file)).href);
