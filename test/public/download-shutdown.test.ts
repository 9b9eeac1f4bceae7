/**
 * A visitor who starts a large download and stops reading (a paused browser
 * tab, a dead phone connection) must not keep the server from stopping:
 * close() waits a grace period for answers under way, then cuts what is
 * still open, and the Homes are closed as usual.
 */
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { startPublicRig, type PublicRig } from './fixture.js';

let rig: PublicRig | undefined;
afterAll(() => rig && fs.rmSync(rig.inst.dataDir, { recursive: true, force: true }));

it('stops while a client holds a streamed 40 MiB download unread', async () => {
  rig = await startPublicRig();
  fs.writeFileSync(path.join(rig.home, 'Share/big.bin'), Buffer.alloc(40 * 1024 * 1024, 7));
  const link = await rig.link({ target: { kind: 'folder', path: 'Share' }, permissions: { view: true, download: true } });
  const { port } = new URL(rig.inst.url);
  const socket = net.connect(Number(port), '127.0.0.1');
  await new Promise<void>((resolve) => socket.once('connect', resolve));
  socket.write(`GET /api/v1/public/${link.slug}/download?path=big.bin HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
  // The status line arrives, then the client reads no more.
  const head = await new Promise<string>((resolve) => socket.once('data', (d: Buffer) => resolve(d.toString('latin1', 0, 64))));
  socket.pause();
  expect(head).toMatch(/^HTTP\/1\.1 200/);
  let closed = false;
  const closing = rig.inst.server.close().then(() => (closed = true));
  // Generous: the grace period is a few seconds; before the fix close() never returned.
  await Promise.race([closing, new Promise((r) => setTimeout(r, 25_000))]);
  expect(closed).toBe(true);
  socket.destroy();
}, 40_000);
