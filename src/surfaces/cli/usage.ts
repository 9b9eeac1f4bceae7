/** What every command shares: its output and the usage error (exit code 2). */
export class UsageError extends Error {}

export interface Io {
  out: (s: string) => void;
  err: (s: string) => void;
}
