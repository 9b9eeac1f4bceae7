/**
 * History through the API with three real authors typing: points with their authors, preview,
 * restore as a new point, and undoing one author's changes while keeping the other two's.
 * Also a shared canvas: its export for the user it is shared with, and element events reaching
 * an open canvas session.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseCanvasNote } from '../../src/canvas/excalidraw-file.js';
import type { TestInstance } from '../helpers/instance.js';
import { connect, settled, textOf, waitFor } from './helpers.js';
import { startTrio, type Member } from './trio.js';

let inst: TestInstance;
let ann: Member, bob: Member, cat: Member;
let home: string;
const file = (rel: string) => fs.readFileSync(path.join(home, rel), 'utf8');

beforeAll(async () => {
  ({ inst, ann, bob, cat, home } = await startTrio());
  fs.mkdirSync(path.join(home, 'Notes'), { recursive: true });
  fs.writeFileSync(path.join(home, 'Notes/Trio.md'), '---\nid: trio\n---\n');
  expect((await inst.api('GET', '/api/v1/notes/trio', { token: ann.token })).status).toBe(200);
  for (const username of ['bob', 'cat']) {
    await inst.api('POST', '/api/v1/notes/trio/shares', { token: ann.token, body: { username, access: 'edit' } });
  }
});
afterAll(() => inst.close());

const points = async () => (await inst.api('GET', '/api/v1/collab/history/trio?limit=1000', { token: ann.token })).body.points as Array<{ point: number; author: any }>;

describe('history of a note three people edit', () => {
  it('records points by author, previews, undoes one author and restores', async () => {
    const a = await connect((await inst.api('GET', '/api/v1/collab/notes/trio', { token: ann.token })).body);
    const b = await connect((await inst.api('GET', '/api/v1/collab/shared/ann/notes/trio', { token: bob.token })).body);
    const c = await connect((await inst.api('GET', '/api/v1/collab/shared/ann/notes/trio', { token: cat.token })).body);
    const type = async (p: typeof a, line: string) => {
      textOf(p).insert(textOf(p).length, line);
      await settled(p);
      await waitFor('everyone to see it', () => [a, b, c].every((q) => textOf(q).toString().includes(line)));
    };
    await type(a, 'ann 1\n');
    await type(b, 'bob 1\n');
    await type(c, 'cat 1\n');
    await type(b, 'bob 2\n');
    // Bob also deletes part of ann's line.
    textOf(b).delete(textOf(b).toString().indexOf('ann 1') + 3, 2);
    await settled(b);
    await type(a, 'ann 2\n');
    await waitFor('the file to catch up', () => file('Notes/Trio.md') === textOf(a).toString());
    expect(file('Notes/Trio.md')).toBe('---\nid: trio\n---\nann\nbob 1\ncat 1\nbob 2\nann 2\n');

    const pts = await points();
    expect(pts[0]!.author).toEqual({ installation: 'disk' });
    const authors = new Set(pts.map((p) => p.author.user));
    expect([...authors].sort()).toEqual(['ann', 'bob', 'cat', undefined].sort());
    const bobsPoints = pts.filter((p) => p.author.user === 'bob');
    const bobAuthor = bobsPoints[0]!.author;

    // The text as it was after bob's first line.
    const preview = await fetch(`${inst.url}/api/v1/collab/history/trio/points/${bobsPoints[0]!.point}/preview`, { headers: { authorization: `Bearer ${ann.token}` } });
    expect(preview.status).toBe(200);
    expect(await preview.text()).toBe('---\nid: trio\n---\nann 1\nbob 1\n');

    const body = { author: bobAuthor, from: 0, to: pts[pts.length - 1]!.point };
    const pre = await inst.api('POST', '/api/v1/collab/history/trio/undo/preflight', { token: ann.token, body });
    expect(pre.status).toBe(200);
    expect(pre.body.points).toEqual(bobsPoints.map((p) => p.point));
    expect(pre.body.changes.map((ch: any) => [ch.deleted, ch.inserted])).toEqual([['\nbob', ''], ['bob 2\n', '']]);
    expect(file('Notes/Trio.md')).toBe('---\nid: trio\n---\nann\nbob 1\ncat 1\nbob 2\nann 2\n');

    // Only the owner reverses: bob cannot.
    expect((await inst.api('POST', '/api/v1/collab/history/trio/undo', { token: bob.token, body })).status).toBe(404);
    const undo = await inst.api('POST', '/api/v1/collab/history/trio/undo', { token: ann.token, body });
    expect(undo.status).toBe(200);
    expect(undo.body.changed).toBe(true);
    const expected = '---\nid: trio\n---\nann 1\ncat 1\nann 2\n';
    await waitFor('the clients to see the undo', () => [a, b, c].every((q) => textOf(q).toString() === expected));
    expect(file('Notes/Trio.md')).toBe(expected);
    const after = await points();
    expect(after[after.length - 1]).toMatchObject({ point: undo.body.point, author: { user: 'ann' } });

    // Restore the state after bob's first line: a new point, everyone sees it.
    const restore = await inst.api('POST', `/api/v1/collab/history/trio/points/${bobsPoints[0]!.point}/restore`, { token: ann.token });
    expect(restore.status).toBe(200);
    expect(restore.body.point).toBeGreaterThan(undo.body.point);
    await waitFor('the restore to reach the clients', () => textOf(c).toString() === '---\nid: trio\n---\nann 1\nbob 1\n');
    expect(file('Notes/Trio.md')).toBe('---\nid: trio\n---\nann 1\nbob 1\n');
    for (const p of [a, b, c]) p.destroy();
  });

  it('answers bad points, authors and ranges with 4xx', async () => {
    const q = (m: string, r: string, body?: unknown) => inst.api(m, r, { token: ann.token, body });
    expect((await q('GET', '/api/v1/collab/history/trio/points/99999/preview')).status).toBe(404);
    expect((await q('GET', '/api/v1/collab/history/trio/points/abc/preview')).status).toBe(404);
    expect((await q('GET', '/api/v1/collab/history/trio?limit=5000')).status).toBe(400);
    expect((await q('POST', '/api/v1/collab/history/trio/undo', { author: { who: 'x' }, from: 0, to: 3 })).status).toBe(400);
    expect((await q('POST', '/api/v1/collab/history/trio/undo', { author: { user: 'bob' }, from: 5, to: 3 })).status).toBe(400);
    expect((await q('GET', '/api/v1/collab/history/nope')).status).toBe(404);
  });
});

describe('a shared canvas', () => {
  it('exports for the user it is shared with, and element events reach an open canvas session', async () => {
    const c = await inst.api('POST', '/api/v1/notes', { token: ann.token, body: { title: 'Board', canvas: true } });
    expect(c.status).toBe(201);
    const id = c.body.id;
    expect((await inst.api('GET', `/api/v1/collab/shared/ann/notes/${id}/export?format=svg`, { token: bob.token })).status).toBe(404);
    await inst.api('POST', `/api/v1/notes/${id}/shares`, { token: ann.token, body: { username: 'bob', access: 'view' } });
    const svg = await fetch(`${inst.url}/api/v1/collab/shared/ann/notes/${id}/export?format=svg`, { headers: { authorization: `Bearer ${bob.token}` } });
    expect(svg.status).toBe(200);
    expect((await svg.text()).startsWith('<svg')).toBe(true);

    const view = await connect((await inst.api('GET', `/api/v1/collab/shared/ann/notes/${id}`, { token: bob.token })).body);
    const element = { id: 'r1', type: 'rectangle', x: 1, y: 2, width: 30, height: 40, angle: 0, strokeColor: '#000', backgroundColor: 'transparent', fillStyle: 'solid', strokeWidth: 1, roughness: 1, opacity: 100, seed: 1, version: 1, versionNonce: 1, isDeleted: false };
    const ev = await inst.api('POST', `/api/v1/collab/notes/${id}/events`, { token: ann.token, body: { elements: [element] } });
    expect(ev.status).toBe(200);
    await waitFor('the open canvas session to get the element', () => parseCanvasNote(textOf(view).toString()).scene.elements.some((e) => e.id === 'r1'), 5000);
    view.destroy();
  });
});
