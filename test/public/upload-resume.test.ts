/**
 * tus-js-client (Node) sends 50 MB in 5 MB chunks to a file drop; the server (its own process) is
 * killed with SIGKILL in the middle and started again on the same port; the client resumes
 * where the server's bytes end, and the file in the Home is byte for byte the one sent. Also
 * the expiration of an abandoned upload.
 */
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Upload } from 'tus-js-client';
import { afterAll, expect, it } from 'vitest';
import { killChildServers, startChildServer } from '../helpers/child-server.js';
import { freePort } from '../helpers/processes.js';
import { tempDir } from '../helpers/instance.js';

const dataDir = tempDir('quire-upload-resume-');
afterAll(() => {
  killChildServers();
  fs.rmSync(dataDir, { recursive: true, force: true });
});
const startChild = (port: number, users: string[] = [], env: Record<string, string> = {}) => startChildServer(dataDir, port, users, env);

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

it('resumes a 50 MB upload in 5 MB chunks across a SIGKILL of the server, the bytes identical', { timeout: 90_000 }, async () => {
  const port = await freePort();
  const first = await startChild(port, ['olive']);
  const home = path.join(dataDir, 'homes', 'olive');
  fs.mkdirSync(path.join(home, 'Inbox'), { recursive: true });
  const token = first.tokens.olive!;
  let link: any;
  for (let i = 0; i < 100 && !link; i++) {
    const r = await fetch(`${first.url}/api/v1/links`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ target: { kind: 'folder', path: 'Inbox' }, permissions: { upload: true } }),
    });
    if (r.status === 201) link = await r.json();
    else await new Promise((res) => setTimeout(res, 100)); // the Home is still being indexed
  }
  expect(link).toBeDefined();

  const data = randomBytes(50 * 1024 * 1024);
  const CHUNK = 5 * 1024 * 1024;
  let killed: Promise<void> | null = null;
  let restarted: Promise<unknown> | null = null;
  let offsetAtRestart = -1;
  const done = new Promise<string>((resolve, reject) => {
    const upload = new Upload(data, {
      endpoint: `${first.url}/api/v1/public/${link.slug}/uploads`,
      chunkSize: CHUNK,
      metadata: { filename: 'big.bin' },
      retryDelays: Array(60).fill(250),
      onChunkComplete: (_size, accepted) => {
        // Two chunks in: kill the server while the third is on its way, then start it again.
        if (accepted >= 2 * CHUNK && killed === null) {
          first.child.kill('SIGKILL');
          killed = new Promise((r) => first.child.once('exit', () => r()));
          restarted = killed.then(() => {
            offsetAtRestart = fs.readdirSync(path.join(dataDir, 'state', 'uploads')).filter((n) => !n.endsWith('.json')).map((n) => fs.statSync(path.join(dataDir, 'state', 'uploads', n)).size)[0] ?? -1;
            return startChild(port, []);
          });
        }
      },
      onError: reject,
      onSuccess: () => resolve(upload.url!),
    });
    upload.start();
  });
  await done;
  expect(killed).not.toBeNull();
  await restarted;
  // The server had at least the two acknowledged chunks when it died, and the client did not start over.
  expect(offsetAtRestart).toBeGreaterThanOrEqual(2 * CHUNK);
  const file = path.join(home, 'Inbox', 'big.bin');
  expect(fs.statSync(file).size).toBe(data.length);
  expect(sha(fs.readFileSync(file))).toBe(sha(data));
  expect(fs.readdirSync(path.join(home, 'Inbox'))).toEqual(['big.bin']);
  // One upload, resumed: no second one was created after the restart.
  expect(fs.readdirSync(path.join(dataDir, 'state', 'uploads')).filter((n) => n.endsWith('.json'))).toHaveLength(1);
});

it('an abandoned upload expires: 410, and its bytes are removed', { timeout: 30_000 }, async () => {
  const port = await freePort();
  const srv = await startChild(port, ['pat'], { QUIRE_UPLOAD_EXPIRY_MS: '400' });
  fs.mkdirSync(path.join(dataDir, 'homes', 'pat', 'Drop'), { recursive: true });
  let link: any;
  for (let i = 0; i < 100 && !link; i++) {
    const r = await fetch(`${srv.url}/api/v1/links`, {
      method: 'POST',
      headers: { authorization: `Bearer ${srv.tokens.pat}`, 'content-type': 'application/json' },
      body: JSON.stringify({ target: { kind: 'folder', path: 'Drop' }, permissions: { upload: true } }),
    });
    if (r.status === 201) link = await r.json();
    else await new Promise((res) => setTimeout(res, 100));
  }
  const V = { 'tus-resumable': '1.0.0' };
  const c = await fetch(`${srv.url}/api/v1/public/${link.slug}/uploads`, {
    method: 'POST',
    headers: { ...V, 'upload-length': '10', 'upload-metadata': `filename ${Buffer.from('late.txt').toString('base64')}` },
  });
  expect(c.status).toBe(201);
  expect(c.headers.get('upload-expires')).toBeTruthy();
  const url = srv.url + c.headers.get('location')!;
  const id = url.slice(url.lastIndexOf('/') + 1);
  await new Promise((r) => setTimeout(r, 600));
  const late = await fetch(url, {
    method: 'PATCH',
    headers: { ...V, 'upload-offset': '0', 'content-type': 'application/offset+octet-stream' },
    body: 'abc',
  });
  expect([404, 410]).toContain(late.status);
  // The sweep (every expiry period) removes the bytes and the record.
  const dir = path.join(dataDir, 'state', 'uploads');
  for (let i = 0; i < 50 && fs.existsSync(path.join(dir, id)); i++) await new Promise((r) => setTimeout(r, 100));
  expect(fs.existsSync(path.join(dir, id))).toBe(false);
  expect(fs.existsSync(path.join(dir, `${id}.json`))).toBe(false);
  expect((await fetch(url, { method: 'HEAD', headers: V })).status).toBe(404);
  srv.child.kill('SIGKILL');
});
