#!/usr/bin/env -S node --max-semi-space-size=32 --no-allocation-site-pretenuring
// The `quire` command: runs the TypeScript sources from a bundle kept in
// node_modules/.cache/quire (rebuilt when a source changes), or through tsx
// (src/core/bundle.mjs), so no build step is needed.
import { fileURLToPath } from 'node:url';
import { runTypeScript } from '../src/core/bundle.mjs';

await runTypeScript(fileURLToPath(new URL('../src/surfaces/cli/main.ts', import.meta.url)));
