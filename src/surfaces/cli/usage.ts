/** What every command shares: its output, the usage error (exit code 2), and how a failure is printed. */
import { toAppError } from '../../core/errors.js';

export class UsageError extends Error {}

export interface Io {
  out: (s: string) => void;
  err: (s: string) => void;
}

/** Prints a command's failure as `quire: …`; returns its exit code (2 usage error, 1 any other). */
export function reportFailure(e: unknown, io: Io): number {
  if (e instanceof UsageError) {
    io.err(`quire: ${e.message}`);
    return 2;
  }
  const err = toAppError(e);
  io.err(`quire: ${err.code}: ${e instanceof Error && err.code !== 'internal' ? err.message : (e as Error).message ?? String(e)}`);
  return 1;
}
