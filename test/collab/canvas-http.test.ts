/** Canvas Notes end to end: merging element events into the file, and chunked export. */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseCanvasNote } from '../../src/canvas/excalidraw-file.js';
import { runCli } from '../helpers/cli.js';
import { startInstance, type TestInstance } from '../helpers/instance.js';

let inst: TestInstance;
let user: { id: string; token: string };
let canvas: { id: string; path: string };

const el = (id: string, version: number, versionNonce: number, extra: Record<string, unknown> = {}) => ({
  id,
  type: 'rectangle',
  x: 10 * version,
  y: 20,
  width: 100,
  height: 60,
  angle: 0,
  strokeColor: '#1e1e1e',
  backgroundColor: 'transparent',
  fillStyle: 'solid',
  strokeWidth: 2,
  roughness: 1,
  opacity: 100,
  seed: 42,
  version,
  versionNonce,
  isDeleted: false,
  ...extra,
});
const api = (method: string, route: string, body?: unknown) => inst.api(method, route, { token: user.token, body });
const sceneOnDisk = () => parseCanvasNote(fs.readFileSync(path.join(inst.dataDir, 'homes/cara', canvas.path), 'utf8')).scene;

beforeAll(async () => {
  inst = await startInstance();
  user = await inst.user('cara', 'member');
  const c = await api('POST', '/api/v1/notes', { title: 'Board', canvas: true });
  canvas = c.body;
});
afterAll(() => inst.close());

describe('canvas_elements_event', () => {
  it('merges complete elements into the note by version, nonce and tombstones', async () => {
    const r = await api('POST', `/api/v1/collab/notes/${canvas.id}/events`, { elements: [el('a', 1, 5), el('b', 1, 9)] });
    expect(r.status).toBe(200);
    expect(r.body.changed).toBe(true);
    expect(sceneOnDisk().elements.map((e) => e.id).sort()).toEqual(['a', 'b']);
    // An older version loses; an equal version with a lower nonce wins; a deletion stays as a tombstone.
    await api('POST', `/api/v1/collab/notes/${canvas.id}/events`, { elements: [el('a', 0, 1, { x: 999 }), el('b', 1, 3, { x: 777 })] });
    let scene = sceneOnDisk();
    expect(scene.elements.find((e) => e.id === 'a')!.x).toBe(10);
    expect(scene.elements.find((e) => e.id === 'b')!.x).toBe(777);
    await api('POST', `/api/v1/collab/notes/${canvas.id}/events`, { elements: [el('a', 2, 1, { isDeleted: true })] });
    scene = sceneOnDisk();
    expect(scene.elements.find((e) => e.id === 'a')).toMatchObject({ isDeleted: true, version: 2 });
    const same = await api('POST', `/api/v1/collab/notes/${canvas.id}/events`, { elements: [el('a', 2, 1, { isDeleted: true })] });
    expect(same.body.changed).toBe(false);
  });

  it('refuses malformed elements and non-canvas notes', async () => {
    const bad = await api('POST', `/api/v1/collab/notes/${canvas.id}/events`, { elements: [{ id: 'x' }] });
    expect(bad.status).toBe(400);
    const plain = await api('POST', '/api/v1/notes', { title: 'Plain' });
    const notCanvas = await api('POST', `/api/v1/collab/notes/${plain.body.id}/events`, { elements: [el('z', 1, 1)] });
    expect(notCanvas.status).toBe(400);
  });
});

describe('export_canvas', () => {
  it('serves a render in chunks that join to the whole file, all with one ETag', async () => {
    await api('POST', `/api/v1/collab/notes/${canvas.id}/events`, { elements: [el('c', 1, 1, { type: 'ellipse' })] });
    const whole = await fetch(`${inst.url}/api/v1/notes/${canvas.id}/export?format=svg`, { headers: { authorization: `Bearer ${user.token}` } });
    expect(whole.status).toBe(200);
    const full = Buffer.from(await whole.arrayBuffer());
    expect(full.toString('utf8')).toMatch(/^<svg/);
    const etag = whole.headers.get('etag');
    const parts: Buffer[] = [];
    let offset: number | null = 0;
    while (offset !== null) {
      const res: Response = await fetch(`${inst.url}/api/v1/notes/${canvas.id}/export?format=svg&limit=200&offset=${offset}`, {
        headers: { authorization: `Bearer ${user.token}` },
      });
      expect(res.headers.get('etag')).toBe(etag);
      parts.push(Buffer.from(await res.arrayBuffer()));
      const next = res.headers.get('x-next-offset');
      offset = next === null ? null : Number(next);
    }
    expect(Buffer.concat(parts).equals(full)).toBe(true);
    const png = await fetch(`${inst.url}/api/v1/notes/${canvas.id}/export?format=png`, { headers: { authorization: `Bearer ${user.token}` } });
    expect(Buffer.from(await png.arrayBuffer()).subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
    const past = await api('GET', `/api/v1/notes/${canvas.id}/export?format=svg&offset=${full.length}`);
    expect(past.status).toBe(400);
  });

  it('gives base64 chunks with the ETag and next offset on the command line', async () => {
    const r = await runCli([
      'action', 'run', 'export_canvas', '--json', '--server', inst.url, '--token', user.token,
      '--input', JSON.stringify({ path: { id: canvas.id }, query: { format: 'svg', limit: 100 } }),
    ]);
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(Buffer.from(out.content_base64, 'base64').toString('utf8').startsWith('<svg')).toBe(true);
    expect(out.next_offset).toBe(100);
    expect(typeof out.etag).toBe('string');
  });
});
