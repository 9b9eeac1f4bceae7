import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { stateKey } from '../../src/core/state-key.js';

const dir = () => fs.mkdtempSync(path.join(os.tmpdir(), 'quire-state-key-'));

describe('stateKey', () => {
  it('makes a 32-byte key at first use, readable by its owner only, and gives the same key after', () => {
    const file = path.join(dir(), 'area', 'some.key');
    const key = stateKey(file);
    expect(key.length).toBe(32);
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(fs.readFileSync(file).equals(key)).toBe(true);
    expect(stateKey(file).equals(key)).toBe(true);
  });

  it('reads a key another process made', () => {
    const file = path.join(dir(), 'made-elsewhere.key');
    const other = Buffer.alloc(32, 7);
    fs.writeFileSync(file, other, { mode: 0o600 });
    expect(stateKey(file).equals(other)).toBe(true);
  });

  it('refuses a file that is not a 32-byte key', () => {
    const file = path.join(dir(), 'short.key');
    fs.writeFileSync(file, 'not a key');
    expect(() => stateKey(file)).toThrow(/not a 32-byte key/);
  });
});
