/**
 * Account secrets (CalDAV and Connected Account app passwords) sealed at rest:
 * AES-256-GCM under one Instance key kept in `<data>/state/account-secrets.key`
 * (32 random bytes, made on first use with file mode 0600), outside the sidecar
 * store, so a copy of the store alone reveals no password. Sealed form:
 * `v1.<iv b64url>.<tag b64url>.<ciphertext b64url>` (docs/calendar-sync.md).
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import path from 'node:path';
import { paths, type Config } from '../core/config.js';
import { stateKey } from '../core/state-key.js';

const KEY_FILE = 'account-secrets.key';
const keyOf = (config: Config): Buffer => stateKey(path.join(paths.state(config), KEY_FILE));

export function sealSecret(config: Config, plain: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', keyOf(config), iv);
  const data = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
  return ['v1', iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), data.toString('base64url')].join('.');
}

export function openSecret(config: Config, sealed: string): string {
  const [v, iv, tag, data] = sealed.split('.');
  if (v !== 'v1' || !iv || !tag || data === undefined) throw new Error('not a sealed secret');
  const decipher = createDecipheriv('aes-256-gcm', keyOf(config), Buffer.from(iv, 'base64url'));
  decipher.setAuthTag(Buffer.from(tag, 'base64url'));
  return Buffer.concat([decipher.update(Buffer.from(data, 'base64url')), decipher.final()]).toString('utf8');
}
