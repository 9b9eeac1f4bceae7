/**
 * The server killed (SIGKILL) in the middle of a session: nothing that was written back is lost,
 * the history survives, and the providers reconnect to the restarted server with their tickets
 * and bring what they typed meanwhile, each character once.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { killChildServers, startChildServer } from '../helpers/child-server.js';
import { freePort } from '../helpers/processes.js';
import { tempDir } from '../helpers/instance.js';
import { connect, textOf, waitFor } from './helpers.js';

const dataDir = tempDir('quire-collab-restart-');
afterAll(() => {
  killChildServers();
  fs.rmSync(dataDir, { recursive: true, force: true });
});
const startChild = (port: number, users: string[] = []) => startChildServer(dataDir, port, users);

async function api(url: string, token: string, method: string, route: string) {
  const res = await fetch(url + route, { method, headers: { authorization: `Bearer ${token}` } });
  return { status: res.status, body: (await res.json()) as any };
}

const count = (s: string, word: string) => s.split(word).length - 1;

it('loses nothing written back, keeps history and takes the clients back', { timeout: 60_000 }, async () => {
  const port = await freePort();
  const first = await startChild(port, ['kim']);
  const notePath = path.join(dataDir, 'homes', 'kim', 'Notes', 'Log.md');
  fs.mkdirSync(path.dirname(notePath), { recursive: true });
  fs.writeFileSync(notePath, '---\nid: log\n---\n');
  const token = first.tokens.kim!;
  await waitFor('the note to be indexed', async () => (await api(first.url, token, 'GET', '/api/v1/notes/log')).status === 200);
  const session = (await api(first.url, token, 'GET', '/api/v1/collab/notes/log')).body;
  const p = await connect(session);
  for (let i = 0; i < 10; i++) textOf(p).insert(textOf(p).length, `before${i} `);
  await waitFor('the edits to be written back', () => fs.readFileSync(notePath, 'utf8').includes('before9 '));
  const written = fs.readFileSync(notePath, 'utf8');
  const pointsBefore = (await api(first.url, token, 'GET', '/api/v1/collab/history/log?limit=1000')).body.points;
  expect(pointsBefore.length).toBeGreaterThan(1);

  // Typing goes on; the server dies before (most of) it is written back.
  for (let i = 0; i < 5; i++) textOf(p).insert(textOf(p).length, `during${i} `);
  first.child.kill('SIGKILL');
  await new Promise((r) => first.child.once('exit', r));
  const afterKill = fs.readFileSync(notePath, 'utf8');
  expect(afterKill.startsWith(written)).toBe(true);
  for (let i = 0; i < 5; i++) textOf(p).insert(textOf(p).length, `offline${i} `);

  const second = await startChild(port);
  // The same provider reconnects by itself with its ticket and sends what the server lacks.
  await waitFor(
    'the restarted server to hold everything, once',
    () => {
      const f = fs.readFileSync(notePath, 'utf8');
      return ['before9 ', 'during4 ', 'offline4 '].every((w) => count(f, w) === 1) && f === textOf(p).toString();
    },
    30_000,
  );
  const text = textOf(p).toString();
  for (const w of ['before0 ', 'during0 ', 'offline0 ']) expect(count(text, w)).toBe(1);
  const pointsAfter = (await api(second.url, token, 'GET', '/api/v1/collab/history/log?limit=1000')).body.points;
  expect(pointsAfter.slice(0, pointsBefore.length)).toEqual(pointsBefore);
  expect(pointsAfter.length).toBeGreaterThan(pointsBefore.length);
  // Kim's edits are hers: the test user signs in as a named installation.
  expect(pointsAfter[1].author).toEqual({ user: 'kim', installation: expect.any(String) });
  p.destroy();
  second.child.kill('SIGTERM');
  await new Promise((r) => second.child.once('exit', r));
});
