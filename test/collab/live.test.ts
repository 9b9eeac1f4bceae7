/**
 * Live collaboration through a real server and real HocuspocusProvider clients: sharing, the
 * file as the document, outside edits, read-only shares and refused connections.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hubOf } from '../../src/collab/hub.js';
import type { TestInstance } from '../helpers/instance.js';
import { connect, settled, textOf, waitFor } from './helpers.js';
import { startTrio, type Member } from './trio.js';

let inst: TestInstance;
let ann: Member, bob: Member, cat: Member;
let home: string;

const file = (rel: string) => fs.readFileSync(path.join(home, rel), 'utf8');
const writeFile = (rel: string, text: string) => {
  fs.mkdirSync(path.dirname(path.join(home, rel)), { recursive: true });
  fs.writeFileSync(path.join(home, rel), text);
};

beforeAll(async () => {
  ({ inst, ann, bob, cat, home } = await startTrio());
  writeFile('Notes/Plan.md', '---\nid: plan\n---\n# Plan\n\nFirst line.\n');
  writeFile('Notes/Quiet.md', '---\nid: quiet\n---\nquiet\n');
  writeFile('Notes/Many.md', '---\nid: many\n---\n');
  expect((await inst.api('GET', '/api/v1/notes/plan', { token: ann.token })).status).toBe(200);
});
afterAll(() => inst.close());

describe('sharing', () => {
  it('shares, lists, shows the note to the other user and unshares', async () => {
    const r = await inst.api('POST', '/api/v1/notes/plan/shares', { token: ann.token, body: { username: 'bob', access: 'edit' } });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ note_id: 'plan', username: 'bob', access: 'edit', created: true });
    const list = await inst.api('GET', '/api/v1/notes/plan/shares', { token: ann.token });
    expect(list.body.shares).toEqual([expect.objectContaining({ username: 'bob', access: 'edit' })]);
    const mine = await inst.api('GET', '/api/v1/notes/shared', { token: bob.token });
    expect(mine.body.notes).toEqual([{ owner: 'ann', id: 'plan', access: 'edit', title: 'Plan', canvas: false }]);
    // The note is not in bob's Home.
    expect((await inst.api('GET', '/api/v1/notes/plan', { token: bob.token })).status).toBe(404);
  });

  it('refuses sharing with oneself, with nobody, and notes that are not the caller\'s', async () => {
    expect((await inst.api('POST', '/api/v1/notes/plan/shares', { token: ann.token, body: { username: 'ann', access: 'view' } })).status).toBe(400);
    expect((await inst.api('POST', '/api/v1/notes/plan/shares', { token: ann.token, body: { username: 'zed', access: 'view' } })).status).toBe(404);
    expect((await inst.api('POST', '/api/v1/notes/plan/shares', { token: bob.token, body: { username: 'cat', access: 'view' } })).status).toBe(404);
    expect((await inst.api('POST', '/api/v1/notes/plan/shares', { token: ann.token, body: { username: 'cat', access: 'owner' } })).status).toBe(400);
    expect((await inst.api('DELETE', '/api/v1/notes/plan/shares/cat', { token: ann.token })).status).toBe(404);
  });
});

describe('sessions', () => {
  it('refuses a user the note is not shared with, at the session and at connect time', async () => {
    expect((await inst.api('GET', '/api/v1/collab/shared/ann/notes/plan', { token: cat.token })).status).toBe(404);
    // Bob's ticket is his: cat cannot use it for himself, and a forged one is refused.
    const own = await inst.api('GET', '/api/v1/collab/notes/plan', { token: ann.token });
    await expect(connect({ ...own.body, token: own.body.token.slice(0, -2) + 'xx' })).rejects.toThrow(/refused/);
    await expect(connect({ ...own.body, name: 'note/x/plan' })).rejects.toThrow(/refused/);
  });

  it('edits from two users reach each other and the file', async () => {
    const a = await connect((await inst.api('GET', '/api/v1/collab/notes/plan', { token: ann.token })).body);
    const sb = await inst.api('GET', '/api/v1/collab/shared/ann/notes/plan', { token: bob.token });
    expect(sb.status).toBe(200);
    expect(sb.body).toMatchObject({ name: 'note/' + ann.id + '/plan', access: 'edit' });
    expect(sb.body.url).toMatch(/^ws:\/\/127\.0\.0\.1:\d+\/api\/v1\/collab\/ws$/);
    const b = await connect(sb.body);
    expect(textOf(b).toString()).toBe(file('Notes/Plan.md'));
    textOf(a).insert(textOf(a).length, 'From ann.\n');
    textOf(b).insert(0, '');
    await waitFor('bob to see ann', () => textOf(b).toString().includes('From ann.'));
    textOf(b).insert(textOf(b).toString().indexOf('First'), 'Bob was here. ');
    await waitFor('the file to have both', () => file('Notes/Plan.md') === textOf(a).toString() && file('Notes/Plan.md').includes('Bob was here.'));
    a.destroy();
    b.destroy();
  });

  it('merges an outside edit into the open document while someone types; nobody\'s text is lost', async () => {
    const a = await connect((await inst.api('GET', '/api/v1/collab/notes/plan', { token: ann.token })).body);
    await waitFor('the file to match', () => file('Notes/Plan.md') === textOf(a).toString());
    const typed: string[] = [];
    const typing = (async () => {
      for (let i = 0; i < 20; i++) {
        const word = `w${i} `;
        typed.push(word);
        textOf(a).insert(textOf(a).length, word);
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
    await new Promise((r) => setTimeout(r, 150));
    // An editor rewrites the file: a line added at the top, below the frontmatter.
    const onDisk = file('Notes/Plan.md');
    writeFile('Notes/Plan.md', onDisk.replace('# Plan\n', '# Plan\nAdded in vim.\n'));
    await typing;
    await waitFor('the editor to see the outside edit', () => textOf(a).toString().includes('Added in vim.'), 5000);
    await settled(a);
    await waitFor('the file to hold everything', () => {
      const f = file('Notes/Plan.md');
      return f === textOf(a).toString() && typed.every((w) => f.includes(w)) && f.includes('Added in vim.');
    });
    a.destroy();
  });

  it('a view share gets a read-only connection that cannot change the file', async () => {
    await inst.api('POST', '/api/v1/notes/quiet/shares', { token: ann.token, body: { username: 'cat', access: 'view' } });
    const s = await inst.api('GET', '/api/v1/collab/shared/ann/notes/quiet', { token: cat.token });
    expect(s.body.access).toBe('view');
    const c = await connect(s.body);
    const a = await connect((await inst.api('GET', '/api/v1/collab/notes/quiet', { token: ann.token })).body);
    textOf(c).insert(0, 'VANDAL ');
    textOf(a).insert(textOf(a).length, 'owner\n');
    await waitFor('cat to see the owner', () => textOf(c).toString().includes('owner'));
    await waitFor('the file to be written', () => file('Notes/Quiet.md').includes('owner'));
    await new Promise((r) => setTimeout(r, 600));
    expect(file('Notes/Quiet.md')).toBe('---\nid: quiet\n---\nquiet\nowner\n');
    expect(textOf(a).toString()).not.toContain('VANDAL');
    a.destroy();
    c.destroy();
  });

  it('unsharing cuts the open session at once and refuses the next connect', async () => {
    await inst.api('POST', '/api/v1/notes/quiet/shares', { token: ann.token, body: { username: 'bob', access: 'edit' } });
    const s = (await inst.api('GET', '/api/v1/collab/shared/ann/notes/quiet', { token: bob.token })).body;
    const b = await connect(s);
    let closed = false;
    b.on('close', () => (closed = true));
    expect((await inst.api('DELETE', '/api/v1/notes/quiet/shares/bob', { token: ann.token })).status).toBe(200);
    await waitFor('the session to be cut', () => closed, 5000);
    b.destroy();
    await expect(connect(s)).rejects.toThrow(/refused: not-shared/);
  });

  it('a file deleted on disk lets its editors go and is not brought back by them', async () => {
    writeFile('Notes/Gone.md', '---\nid: gone\n---\nbye\n');
    await waitFor('the note to be indexed', async () => (await inst.api('GET', '/api/v1/notes/gone', { token: ann.token })).status === 200);
    const p = await connect((await inst.api('GET', '/api/v1/collab/notes/gone', { token: ann.token })).body);
    let closed = false;
    p.on('close', () => (closed = true));
    fs.rmSync(path.join(home, 'Notes/Gone.md'));
    await waitFor('the editor to be let go', () => closed, 5000);
    textOf(p).insert(0, 'typed after the delete ');
    await new Promise((r) => setTimeout(r, 1500));
    expect(fs.existsSync(path.join(home, 'Notes/Gone.md'))).toBe(false);
    p.destroy();
  });

  it('N=8 clients typing at random converge, and the file at rest equals the document', async () => {
    const clients: Awaited<ReturnType<typeof connect>>[] = [];
    for (let i = 0; i < 8; i++) clients.push(await connect((await inst.api('GET', '/api/v1/collab/notes/many', { token: ann.token })).body));
    let seed = 42;
    const rnd = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2147483648), seed % n);
    await Promise.all(
      clients.map(async (p, i) => {
        for (let k = 0; k < 40; k++) {
          const t = textOf(p);
          if (t.length > 20 && rnd(4) === 0) t.delete(rnd(t.length - 5), 1 + rnd(4));
          else t.insert(rnd(t.length + 1), `${i}${'abcdefg'[rnd(7)]}`);
          await new Promise((r) => setTimeout(r, rnd(15)));
        }
      }),
    );
    await Promise.all(clients.map(settled));
    await waitFor('the clients to converge', () => clients.every((p) => textOf(p).toString() === textOf(clients[0]!).toString()));
    await waitFor('the file to equal the document', () => file('Notes/Many.md') === textOf(clients[0]!).toString());
    const final = textOf(clients[0]!).toString();
    for (const p of clients) p.destroy();
    // At rest: everyone gone, the document written back and unloaded.
    await waitFor('the document to unload', () => hubOf(inst.server.services).hp.getDocumentsCount() === 0);
    expect(file('Notes/Many.md')).toBe(final);
  });
});
