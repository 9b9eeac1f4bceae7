/** Instance configuration: command-line flags, then environment, then defaults. */
import path from 'node:path';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const pkg = require('../../package.json') as { version: string };

export const VERSION: string = pkg.version;
export const API_VERSION = 'v1';

export interface Config {
  /** Root of the data directory: `homes/` and `state/` live below it. */
  dataDir: string;
  host: string;
  port: number;
  instanceName: string;
  /** How long a recent confirmation lasts (seconds). */
  recentConfirmationSeconds: number;
  /** Lifetime of sessions by kind (seconds). */
  sessionTtlSeconds: { web: number; installation: number };
}

export interface ConfigInput {
  dataDir?: string;
  host?: string;
  port?: number | string;
  instanceName?: string;
  recentConfirmationSeconds?: number | string;
}

function intOr(value: string | number | undefined, fallback: number, name: string): number {
  if (value === undefined || value === '') return fallback;
  const n = typeof value === 'number' ? value : Number(value);
  if (!Number.isInteger(n) || n < 0) throw new Error(`${name} must be a non-negative integer, got ${String(value)}`);
  return n;
}

export function loadConfig(input: ConfigInput = {}, env: NodeJS.ProcessEnv = process.env): Config {
  const port = intOr(input.port ?? env.QUIRE_PORT, 8787, 'port');
  if (port > 65535) throw new Error(`port must be at most 65535, got ${port}`);
  return {
    dataDir: path.resolve(input.dataDir ?? env.QUIRE_DATA ?? './data'),
    host: input.host ?? env.QUIRE_HOST ?? '127.0.0.1',
    port,
    instanceName: input.instanceName ?? env.QUIRE_INSTANCE_NAME ?? 'Quire',
    recentConfirmationSeconds: intOr(
      input.recentConfirmationSeconds ?? env.QUIRE_RECENT_CONFIRMATION_SECONDS,
      300,
      'recent confirmation window',
    ),
    sessionTtlSeconds: { web: 30 * 24 * 3600, installation: 365 * 24 * 3600 },
  };
}

export const paths = {
  homes: (c: Config) => path.join(c.dataDir, 'homes'),
  home: (c: Config, username: string) => path.join(c.dataDir, 'homes', username),
  state: (c: Config) => path.join(c.dataDir, 'state'),
  sidecar: (c: Config) => path.join(c.dataDir, 'state', 'sidecar.json'),
  cache: (c: Config) => path.join(c.dataDir, 'state', 'cache'),
};
