/**
 * The credential `quire login` stores: one session token per server, in
 * `$QUIRE_CONFIG_DIR` or `$XDG_CONFIG_HOME/quire` or `~/.config/quire`,
 * file `credentials.json`, mode 0600 (folder 0700). Later commands use it
 * when neither --token nor QUIRE_TOKEN is given.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export interface StoredCredential {
  server: string;
  token: string;
  username: string;
  session_id: string;
  created_at: number;
}

interface CredentialsFile {
  default_server: string | null;
  servers: Record<string, StoredCredential>;
}

export function configDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.QUIRE_CONFIG_DIR) return env.QUIRE_CONFIG_DIR;
  const base = env.XDG_CONFIG_HOME || path.join(env.HOME || os.homedir(), '.config');
  return path.join(base, 'quire');
}

export const credentialsFile = (env: NodeJS.ProcessEnv = process.env) => path.join(configDir(env), 'credentials.json');

/** A server URL in one canonical form, so `http://h:1/` and `http://h:1` name the same entry. */
export const serverKey = (url: string) => new URL(url).origin;

function read(env: NodeJS.ProcessEnv): CredentialsFile {
  try {
    const parsed = JSON.parse(fs.readFileSync(credentialsFile(env), 'utf8')) as CredentialsFile;
    return { default_server: parsed.default_server ?? null, servers: parsed.servers ?? {} };
  } catch {
    return { default_server: null, servers: {} };
  }
}

function write(env: NodeJS.ProcessEnv, data: CredentialsFile): void {
  const dir = configDir(env);
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const file = credentialsFile(env);
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, JSON.stringify(data, null, 2) + '\n', { mode: 0o600 });
  fs.chmodSync(tmp, 0o600);
  fs.renameSync(tmp, file);
}

export function storeCredential(cred: StoredCredential, env: NodeJS.ProcessEnv = process.env): void {
  const data = read(env);
  const key = serverKey(cred.server);
  data.servers[key] = { ...cred, server: key };
  data.default_server = key;
  write(env, data);
}

/** The stored credential for `server`, or for the default server when none is named. */
export function loadCredential(server: string | undefined, env: NodeJS.ProcessEnv = process.env): StoredCredential | null {
  const data = read(env);
  const key = server ? serverKey(server) : data.default_server;
  return key ? data.servers[key] ?? null : null;
}

export function forgetCredential(server: string, env: NodeJS.ProcessEnv = process.env): boolean {
  const data = read(env);
  const key = serverKey(server);
  if (!data.servers[key]) return false;
  delete data.servers[key];
  if (data.default_server === key) data.default_server = Object.keys(data.servers)[0] ?? null;
  write(env, data);
  return true;
}
