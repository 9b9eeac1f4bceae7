/**
 * Canvas Notes against hostile input, end to end on a real server: hand-written
 * drawings (frontmatter that stalled the YAML reader, data nested deeper than
 * JSON.stringify can write, a drawing that takes seconds to render) and
 * element events past the documented limits. Always a 400 naming what is
 * wrong, never a 500, and the server keeps answering meanwhile.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderCanvasNote } from '../../src/canvas/excalidraw-file.js';
import { eventually } from '../helpers/wait.js';
import { startInstance, type TestInstance } from '../helpers/instance.js';
import { el } from './fixtures.js';

let inst: TestInstance;
let user: { id: string; token: string };
let home: string;

const api = (method: string, route: string, body?: unknown) => inst.api(method, route, { token: user.token, body });
const write = (rel: string, text: string) => {
  fs.mkdirSync(path.dirname(path.join(home, rel)), { recursive: true });
  fs.writeFileSync(path.join(home, rel), text);
};
/** The id the index gave a file written by hand. */
const idOf = async (rel: string): Promise<string> =>
  (await eventually(async () => ((await api('GET', '/api/v1/notes?limit=500')).body.items as Array<{ path: string; id: string }>).find((n) => n.path === rel), 15_000))!.id;
const nested = (depth: number) => `${'['.repeat(depth)}1${']'.repeat(depth)}`;

beforeAll(async () => {
  inst = await startInstance();
  user = await inst.user('ines', 'member');
  home = path.join(inst.dataDir, 'homes', 'ines');
  await api('POST', '/api/v1/notes', { title: 'Start' });
});
afterAll(() => inst.close());

describe('hand-written canvases', () => {
  const aliasChain = () => {
    let fm = 'a0: &a0 [x]\n';
    for (let i = 1; i < 20_000; i++) fm += `a${i}: &a${i} [*a${i - 1}]\n`;
    return fm;
  };
  const blockNest = () => {
    let fm = 'k:\n';
    for (let i = 0; i < 3000; i++) fm += ' '.repeat(i + 1) + '- \n';
    return fm;
  };
  it.each([
    ['chains 20,000 aliases', 'Aliases', aliasChain()],
    ['nests 20,000 deep in flow style', 'Flow', `x: ${'['.repeat(20_000)}${']'.repeat(20_000)}\n`],
    ['nests 3,000 deep in block style', 'Block', blockNest()],
  ])('indexes a canvas whose frontmatter %s, and answers it with 400 not_canvas at once', async (_, name, yaml) => {
    const drawing = renderCanvasNote({ title: name, id: 'unused' }).replace(/^---[\s\S]*?\n---\n/, '');
    write(`Notes/${name}.excalidraw.md`, `---\nexcalidraw-plugin: parsed\n${yaml}---\n${drawing}`);
    const id = await idOf(`Notes/${name}.excalidraw.md`);
    for (const r of [
      await api('GET', `/api/v1/notes/${id}/export?format=svg`),
      await api('POST', `/api/v1/collab/notes/${id}/events`, { elements: [el('rectangle')] }),
    ]) {
      expect(r.status).toBe(400);
      expect(r.body.error.details.reason).toBe('not_canvas');
      expect(r.body.error.message).toMatch(/longer than|aliases|nested more than/);
    }
    expect((await inst.api('GET', '/api/v1/system/info')).status).toBe(200);
  });

  it('answers a drawing with data nested 5,000 deep with 400 invalid_scene, and leaves the file alone', async () => {
    const text = renderCanvasNote({ title: 'Nested', id: 'hand-nested', scene: { elements: [el('rectangle', { customData: 7 })] } }).replace(
      '"customData": 7',
      `"customData": ${nested(5000)}`,
    );
    write('Notes/Nested.excalidraw.md', text);
    const id = await idOf('Notes/Nested.excalidraw.md');
    for (const r of [
      await api('POST', `/api/v1/collab/notes/${id}/events`, { elements: [el('ellipse')] }),
      await api('GET', `/api/v1/notes/${id}/export?format=svg`),
    ]) {
      expect(r.status).toBe(400);
      expect(r.body.error.details.reason).toBe('invalid_scene');
      expect(r.body.error.message).toMatch(/nests more than 32 levels/);
    }
    expect(fs.readFileSync(path.join(home, 'Notes/Nested.excalidraw.md'), 'utf8')).toBe(text);
  });

  it('keeps answering other requests while a large drawing is rendered', async () => {
    const elements = Array.from({ length: 20_000 }, (_, i) => el('rectangle', { x: (i % 200) * 120, y: Math.floor(i / 200) * 80, backgroundColor: '#a5d8ff', fillStyle: 'hachure' }));
    write('Notes/Large.excalidraw.md', renderCanvasNote({ title: 'Large', id: 'hand-large', scene: { elements } }));
    const id = await idOf('Notes/Large.excalidraw.md');
    const order: string[] = [];
    const exported = api('GET', `/api/v1/notes/${id}/export?format=svg&limit=16`).then((r) => (order.push('export'), r));
    await new Promise((r) => setTimeout(r, 400));
    const info = await inst.api('GET', '/api/v1/system/info');
    order.push('info');
    expect(info.status).toBe(200);
    const r = await exported;
    expect(r.status).toBe(206);
    expect(order).toEqual(['info', 'export']);
  }, 60_000);
});

describe('canvas_elements_event limits', () => {
  it('answers an element nested 40 deep with 400 naming body.elements and its index, and writes nothing', async () => {
    const c = await api('POST', '/api/v1/notes', { title: 'Board', canvas: true });
    const file = path.join(home, c.body.path);
    const before = fs.readFileSync(file, 'utf8');
    const r = await api('POST', `/api/v1/collab/notes/${c.body.id}/events`, {
      elements: [el('rectangle'), el('rectangle', { customData: JSON.parse(nested(40)) })],
    });
    expect(r.status).toBe(400);
    expect(r.body.error.details).toMatchObject({ field: 'body.elements', index: '1', reason: 'too_deep', max: '32' });
    expect(fs.readFileSync(file, 'utf8')).toBe(before);
  });

  it('answers a line of 10,001 points with 400 naming body.elements', async () => {
    const c = await api('POST', '/api/v1/notes', { title: 'Lines', canvas: true });
    const points = Array.from({ length: 10_001 }, (_, i) => [i, i % 3]);
    const r = await api('POST', `/api/v1/collab/notes/${c.body.id}/events`, { elements: [el('line', { points })] });
    expect(r.status).toBe(400);
    expect(r.body.error.details).toMatchObject({ field: 'body.elements', index: '0', reason: 'too_many', max: '10000' });
  });
});
