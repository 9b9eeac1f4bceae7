/**
 * A 32-byte secret kept in a file of the data folder's `state/` (never in a Home), made at first
 * use. Created exclusively (`wx`, mode 0600) so that two processes starting together agree on one
 * key; read once per process and remembered. Collaboration tickets, public-page grants and the
 * sealing of account secrets each have their own file.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

const keys = new Map<string, Buffer>();

export function stateKey(file: string): Buffer {
  let key = keys.get(file);
  if (key) return key;
  try {
    key = fs.readFileSync(file);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    fs.mkdirSync(path.dirname(file), { recursive: true });
    try {
      key = crypto.randomBytes(32);
      fs.writeFileSync(file, key, { mode: 0o600, flag: 'wx' });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      key = fs.readFileSync(file);
    }
  }
  if (key.length !== 32) throw new Error(`${file} is not a 32-byte key`);
  keys.set(file, key);
  return key;
}
