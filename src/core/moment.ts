/**
 * Moment, loaded at its first use: only Daily notes and templates format
 * dates with it, and loading it costs a server's start tens of milliseconds
 * (docs/performance.md, "Start-up"). It is CommonJS, so `require` gives the
 * same instance an `import` would.
 */
import { createRequire } from 'node:module';
import type momentOf from 'moment';

let loaded: typeof momentOf | undefined;

export function moment(): typeof momentOf {
  return (loaded ??= createRequire(import.meta.url)('moment') as typeof momentOf);
}
