// vitest globalSetup: tests run the sources, but the `quire` processes they
// start and the worker threads run dist/ (bin/quire.js, src/core/worker.ts);
// build it once before the run when it is missing or older than src/.
import { buildDist, isStale } from '../../scripts/build.mjs';

export async function setup() {
  if (isStale()) await buildDist({ lenient: true });
}
