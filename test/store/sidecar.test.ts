import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { SidecarStore } from '../../src/store/sidecar.js';

const nextTurn = () => new Promise((r) => setImmediate(r));

describe('SidecarStore.snapshot', () => {
  afterEach(() => vi.restoreAllMocks());

  it('looks at the file once per turn of the event loop, however often a request asks', async () => {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'quire-sidecar-')), 'state', 'sidecar.json');
    const store = await SidecarStore.open(file);
    await nextTurn();
    const stat = vi.spyOn(fs, 'statSync');
    store.snapshot();
    store.snapshot();
    store.snapshot();
    expect(stat).toHaveBeenCalledTimes(1);
    await nextTurn();
    store.snapshot();
    expect(stat).toHaveBeenCalledTimes(2);
  });

  it("sees another process's write from the next turn on", async () => {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'quire-sidecar-')), 'state', 'sidecar.json');
    const store = await SidecarStore.open(file);
    const before = store.snapshot();
    expect(before.users).toEqual([]);
    // Another process (the admin command line) adds a user, as a new file renamed over the old one.
    const changed = { ...before, users: [{ id: 'u1', username: 'ada' }] };
    fs.writeFileSync(file + '.tmp', JSON.stringify(changed));
    fs.renameSync(file + '.tmp', file);
    expect(store.snapshot().users).toEqual([]);
    await nextTurn();
    expect(store.snapshot().users).toEqual([{ id: 'u1', username: 'ada' }]);
  });
});
