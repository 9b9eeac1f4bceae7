import os from 'node:os';
import path from 'node:path';
import { defineConfig } from 'vitest/config';

// The command line keeps local-vault caches and `serve --vault` state in the user's folders
// (docs/quire-folder.md); tests, and the CLIs they start, keep theirs in a temporary folder instead.
const userDirs = path.join(os.tmpdir(), `quire-test-user-dirs-${process.pid}`);

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    setupFiles: ['test/setup/yield-between-tests.ts'],
    globalSetup: ['test/setup/build-dist.mjs'],
    env: {
      XDG_CACHE_HOME: path.join(userDirs, 'cache'),
      XDG_STATE_HOME: path.join(userDirs, 'state'),
    },
  },
});
