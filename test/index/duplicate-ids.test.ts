/**
 * Two files with one frontmatter `id` (Obsidian's "Make a copy", a version
 * restored beside a moved note): the note that claimed the id first keeps
 * it, the other answers under its path-derived id until it is next written.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { derivedId, HomeIndex } from '../../src/index/home-index.js';
import { extractFacts } from '../../src/markdown/extract.js';
import { startServer, type RunningServer } from '../../src/server.js';
import { startInstance, type TestInstance } from '../helpers/instance.js';
import { eventually } from '../helpers/wait.js';

function put(idx: HomeIndex, p: string, id: string, birthtimeMs: number, body = ''): void {
  const text = `---\nid: ${id}\n---\n${body}\n`;
  idx.upsertNote(p, extractFacts(text, p), { size: text.length, mtimeMs: birthtimeMs, etag: `${p}@${body}`, birthtimeMs }, text);
}

describe('who owns a contested id (HomeIndex)', () => {
  const cases: Array<{ name: string; steps: Array<[string, number, string?]>; owner: string }> = [
    { name: 'the older file, whatever the path order', steps: [['b.md', 10], ['a.md', 20]], owner: 'b.md' },
    { name: 'the older file, seen second', steps: [['a.md', 20], ['b.md', 10]], owner: 'b.md' },
    { name: 'the path first when born together', steps: [['b.md', 10], ['a.md', 10]], owner: 'a.md' },
    // A rename-style save gives the owner a new inode and a later birth: it keeps the id.
    { name: 'the owner after its own rename-style save', steps: [['a.md', 10], ['b.md', 20], ['a.md', 30, 'edited']], owner: 'a.md' },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const idx = new HomeIndex();
      for (const [p, born, body] of c.steps) put(idx, p, 'shared', born, body);
      expect(idx.noteById('shared')!.path).toBe(c.owner);
      const ids = [...idx.notes()].map((n) => n.id);
      expect(new Set(ids).size).toBe(ids.length);
      const other = c.owner === 'a.md' ? 'b.md' : 'a.md';
      expect(idx.noteByPath(other)!.id).toBe(derivedId(other));
      expect(idx.noteById(derivedId(other))!.path).toBe(other);
    });
  }

  it('hands the id to the next claimant when the owner goes, and back to nobody else', () => {
    const idx = new HomeIndex();
    put(idx, 'a.md', 'shared', 10);
    put(idx, 'b.md', 'shared', 20);
    idx.remove('a.md');
    expect(idx.noteById('shared')!.path).toBe('b.md');
    put(idx, 'a.md', 'shared', 30); // restored later: a newer claim
    expect(idx.noteById('shared')!.path).toBe('b.md');
  });

  it('keeps a claim older than its file across a snapshot', () => {
    const idx = new HomeIndex();
    put(idx, 'a.md', 'shared', 10);
    put(idx, 'b.md', 'shared', 20);
    put(idx, 'a.md', 'shared', 30, 'saved again');
    const again = HomeIndex.fromSnapshot(idx.toSnapshot());
    expect(again.noteById('shared')!.path).toBe('a.md');
    expect(again.noteByPath('b.md')!.id).toBe(derivedId('b.md'));
  });
});

describe('a copied note over HTTP', () => {
  let inst: TestInstance;
  let token: string;
  let home: string;
  const servers: RunningServer[] = [];
  beforeAll(async () => {
    inst = await startInstance();
    token = (await inst.user('olivia', 'owner')).token;
    home = path.join(inst.dataDir, 'homes', 'olivia');
  });
  afterAll(async () => {
    for (const s of servers) await s.close();
    await inst.close().catch(() => undefined);
  });

  it('keeps the original under its id, through edits and a restart, and gives the copy its own', async () => {
    const created = await inst.api('POST', '/api/v1/notes', { token, body: { title: 'Wombat', body: 'original' } });
    expect(created.status).toBe(201);
    const id: string = created.body.id;
    // "Wombat copy.md" sorts before "Wombat.md": path order alone would give the copy the id.
    fs.copyFileSync(path.join(home, 'Notes/Wombat.md'), path.join(home, 'Notes/Wombat copy.md'));
    const listed = await eventually(async () => {
      const r = await inst.api('GET', '/api/v1/notes', { token });
      return r.body.items.length === 2 ? r.body.items : null;
    });
    const ids = listed.map((n: { id: string }) => n.id);
    expect(new Set(ids).size).toBe(2);
    expect((await inst.api('GET', `/api/v1/notes/${id}`, { token })).body.path).toBe('Notes/Wombat.md');
    const copyId = listed.find((n: { path: string }) => n.path === 'Notes/Wombat copy.md').id;
    expect(copyId).not.toBe(id);

    // An API edit of the original replaces its file (a later birth than the copy's): the id stays.
    const cur = await inst.api('GET', `/api/v1/notes/${id}`, { token });
    const put1 = await inst.api('PUT', `/api/v1/notes/${id}`, { token, body: { body: 'original, edited\n' }, headers: { 'if-match': cur.body.etag } });
    expect(put1.status).toBe(200);
    expect(put1.body.id).toBe(id);
    expect((await inst.api('GET', `/api/v1/notes/${id}`, { token })).body.path).toBe('Notes/Wombat.md');

    // Restart on the same data folder: the owner is still the original.
    await inst.server.close();
    const again = await startServer({ dataDir: inst.dataDir, host: '127.0.0.1', port: 0, log: () => undefined });
    servers.push(again);
    const api = async (method: string, route: string, body?: unknown, headers: Record<string, string> = {}) => {
      const res = await fetch(again.url + route, {
        method,
        headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}), ...headers },
        body: body ? JSON.stringify(body) : undefined,
      });
      return { status: res.status, body: (await res.json()) as any };
    };
    expect((await api('GET', `/api/v1/notes/${id}`)).body.path).toBe('Notes/Wombat.md');
    expect((await api('GET', `/api/v1/notes/${copyId}`)).body.path).toBe('Notes/Wombat copy.md');

    // The copy's next write gives it the id it answers under, in its own frontmatter.
    const copy = await api('GET', `/api/v1/notes/${copyId}`);
    const put2 = await api('PUT', `/api/v1/notes/${copyId}`, { body: 'the copy\n' }, { 'if-match': copy.body.etag });
    expect(put2.status).toBe(200);
    expect(put2.body.id).toBe(copyId);
    expect(fs.readFileSync(path.join(home, 'Notes/Wombat copy.md'), 'utf8')).toContain(`id: ${copyId}`);
    const after = (await api('GET', '/api/v1/notes')).body.items.map((n: { id: string; path: string }) => [n.path, n.id]);
    expect(after.sort()).toEqual([
      ['Notes/Wombat copy.md', copyId],
      ['Notes/Wombat.md', id],
    ]);
  });
});
