/** Block reminders end to end: create/list/delete/restore over HTTP, firing into the inbox, and restarts. */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer } from '../../src/server.js';
import { runCli } from '../helpers/cli.js';
import { startInstance, tempDir, type TestInstance } from '../helpers/instance.js';
import { eventually } from '../helpers/wait.js';

let inst: TestInstance;
let alice: { id: string; token: string };
let bob: { id: string; token: string };

const iso = (ms: number) => new Date(ms).toISOString();

async function noteWithBlock(token: string, title: string) {
  const r = await inst.api('POST', '/api/v1/notes', {
    token,
    body: { title, body: 'Intro line.\n\n- Call the plumber about the sink ^plumb\n\nOther text.\n' },
  });
  expect(r.status).toBe(201);
  const got = await inst.api('GET', `/api/v1/notes/${r.body.id}`, { token });
  return { id: r.body.id as string, path: r.body.path as string, etag: got.headers.get('etag')! };
}

beforeAll(async () => {
  inst = await startInstance();
  alice = await inst.user('alice');
  bob = await inst.user('bob');
});
afterAll(async () => inst.close());

describe('notes_create_block_reminder', () => {
  it('creates a reminder on an existing block and lists it; the note file is untouched', async () => {
    const note = await noteWithBlock(alice.token, 'Chores');
    const file = path.join(inst.dataDir, 'homes', 'alice', note.path);
    const before = fs.readFileSync(file);
    const instant = iso(Date.now() + 3600_000);
    const r = await inst.api('POST', `/api/v1/notes/${note.id}/reminders`, {
      token: alice.token,
      headers: { 'if-match': note.etag },
      body: { block_id: 'plumb', instant },
    });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ note_id: note.id, block_id: 'plumb', instant, audience: 'only_me', revision: 1, fired_ms: null });
    const list = await inst.api('GET', `/api/v1/notes/${note.id}/reminders`, { token: alice.token });
    expect(list.status).toBe(200);
    expect(list.body.items.map((x: any) => x.reminder_id)).toEqual([r.body.reminder_id]);
    expect(fs.readFileSync(file).equals(before)).toBe(true);
    // Another user cannot see Alice's note, so neither its reminders.
    const other = await inst.api('GET', `/api/v1/notes/${note.id}/reminders`, { token: bob.token });
    expect(other.status).toBe(404);
  });

  it('refuses a stale ETag (412), an unknown block (404) and out-of-bounds instants (400)', async () => {
    const note = await noteWithBlock(alice.token, 'Refusals');
    const url = `/api/v1/notes/${note.id}/reminders`;
    const ok = { block_id: 'plumb', instant: iso(Date.now() + 60_000) };
    const stale = await inst.api('POST', url, { token: alice.token, headers: { 'if-match': '"nope"' }, body: ok });
    expect(stale.status).toBe(412);
    const noBlock = await inst.api('POST', url, {
      token: alice.token,
      headers: { 'if-match': note.etag },
      body: { ...ok, block_id: 'missing' },
    });
    expect(noBlock.status).toBe(404);
    expect(noBlock.body.error.details.reason).toBe('block_not_found');
    const past = await inst.api('POST', url, {
      token: alice.token,
      headers: { 'if-match': note.etag },
      body: { ...ok, instant: iso(Date.now() - 5 * 60_000) },
    });
    expect(past.status).toBe(400);
    const far = await inst.api('POST', url, {
      token: alice.token,
      headers: { 'if-match': note.etag },
      body: { ...ok, instant: '2099-01-01T00:00:00Z' },
    });
    expect(far.status).toBe(400);
    const noIfMatch = await inst.api('POST', url, { token: alice.token, body: ok });
    expect(noIfMatch.status).toBeGreaterThanOrEqual(400);
    const list = await inst.api('GET', url, { token: alice.token });
    expect(list.body.items).toEqual([]);
  });
});

describe('delete and restore', () => {
  it('removes a reminder with a revision, restores only at that revision and matching ETag', async () => {
    const note = await noteWithBlock(alice.token, 'Delete restore');
    const url = `/api/v1/notes/${note.id}/reminders`;
    const created = await inst.api('POST', url, {
      token: alice.token,
      headers: { 'if-match': note.etag },
      body: { block_id: 'plumb', instant: iso(Date.now() + 3600_000), audience: 'everyone' },
    });
    const rid = created.body.reminder_id;
    const staleDel = await inst.api('DELETE', `${url}/${rid}`, { token: alice.token, headers: { 'if-match': '"x"' } });
    expect(staleDel.status).toBe(412);
    const del = await inst.api('DELETE', `${url}/${rid}`, { token: alice.token, headers: { 'if-match': note.etag } });
    expect(del.status).toBe(200);
    expect(del.body).toEqual({ reminder_id: rid, revision: 2 });
    expect((await inst.api('GET', url, { token: alice.token })).body.items).toEqual([]);

    const wrongRev = await inst.api('POST', `${url}/${rid}/restore`, {
      token: alice.token,
      headers: { 'if-match': note.etag },
      body: { expected_revision: 1 },
    });
    expect(wrongRev.status).toBe(409);
    const staleEtag = await inst.api('POST', `${url}/${rid}/restore`, {
      token: alice.token,
      headers: { 'if-match': '"old"' },
      body: { expected_revision: 2 },
    });
    expect(staleEtag.status).toBe(412);
    const restored = await inst.api('POST', `${url}/${rid}/restore`, {
      token: alice.token,
      headers: { 'if-match': note.etag },
      body: { expected_revision: 2 },
    });
    expect(restored.status).toBe(200);
    expect(restored.body).toMatchObject({ reminder_id: rid, revision: 3, audience: 'everyone' });
    expect((await inst.api('GET', url, { token: alice.token })).body.items.map((x: any) => x.reminder_id)).toEqual([rid]);
    const again = await inst.api('POST', `${url}/${rid}/restore`, {
      token: alice.token,
      headers: { 'if-match': note.etag },
      body: { expected_revision: 2 },
    });
    expect(again.status).toBe(409);
  });
});

describe('firing', () => {
  it('fires once at its instant into the setter inbox, not into another user inbox', async () => {
    const note = await noteWithBlock(alice.token, 'Soon');
    const r = await inst.api('POST', `/api/v1/notes/${note.id}/reminders`, {
      token: alice.token,
      headers: { 'if-match': note.etag },
      body: { block_id: 'plumb', instant: iso(Date.now() + 1200) },
    });
    expect(r.status).toBe(201);
    const early = await inst.api('GET', '/api/v1/notifications/inbox', { token: alice.token });
    expect(early.body.items.filter((i: any) => i.reminder_id === r.body.reminder_id)).toEqual([]);
    const item = await eventually(async () => {
      const l = await inst.api('GET', '/api/v1/notifications/inbox', { token: alice.token });
      return l.body.items.find((i: any) => i.reminder_id === r.body.reminder_id);
    }, 6000);
    expect(item).toMatchObject({
      kind: 'block_reminder',
      note_id: note.id,
      block_id: 'plumb',
      title: 'Soon',
      excerpt: 'Call the plumber about the sink',
      read: false,
      state: 'pending',
    });
    const listed = await inst.api('GET', `/api/v1/notes/${note.id}/reminders`, { token: alice.token });
    expect(listed.body.items[0].fired_ms).toBeGreaterThan(0);
    await new Promise((res) => setTimeout(res, 300));
    const after = await inst.api('GET', '/api/v1/notifications/inbox', { token: alice.token });
    expect(after.body.items.filter((i: any) => i.reminder_id === r.body.reminder_id)).toHaveLength(1);
    const bobInbox = await inst.api('GET', '/api/v1/notifications/inbox', { token: bob.token });
    expect(bobInbox.body.items).toEqual([]);
  });

  it('a deleted reminder does not fire', async () => {
    const note = await noteWithBlock(alice.token, 'Cancelled');
    const url = `/api/v1/notes/${note.id}/reminders`;
    const r = await inst.api('POST', url, {
      token: alice.token,
      headers: { 'if-match': note.etag },
      body: { block_id: 'plumb', instant: iso(Date.now() + 800) },
    });
    await inst.api('DELETE', `${url}/${r.body.reminder_id}`, { token: alice.token, headers: { 'if-match': note.etag } });
    await new Promise((res) => setTimeout(res, 1500));
    const l = await inst.api('GET', '/api/v1/notifications/inbox', { token: alice.token });
    expect(l.body.items.filter((i: any) => i.reminder_id === r.body.reminder_id)).toEqual([]);
  });
});

describe('preview', () => {
  it('names who would be notified and when, creating nothing', async () => {
    const note = await noteWithBlock(alice.token, 'Preview me');
    const instant = iso(Date.now() + 7200_000);
    const p = await inst.api('POST', '/api/v1/notifications/reminders/preview', {
      token: alice.token,
      body: { note_id: note.id, instant, audience: 'everyone' },
    });
    expect(p.status).toBe(200);
    expect(p.body).toMatchObject({ note_id: note.id, audience: 'everyone', instant, instant_ms: Date.parse(instant) });
    expect(p.body.recipients).toEqual([expect.objectContaining({ user_id: alice.id, username: 'alice' })]);
    expect((await inst.api('GET', `/api/v1/notes/${note.id}/reminders`, { token: alice.token })).body.items).toEqual([]);
    const notMine = await inst.api('POST', '/api/v1/notifications/reminders/preview', {
      token: bob.token,
      body: { note_id: note.id, instant, audience: 'only_me' },
    });
    expect(notMine.status).toBe(404);
  });
});

describe('command line', () => {
  it('lists block reminders through quire action run', async () => {
    const note = await noteWithBlock(alice.token, 'Cli reminders');
    const created = await inst.api('POST', `/api/v1/notes/${note.id}/reminders`, {
      token: alice.token,
      headers: { 'if-match': note.etag },
      body: { block_id: 'plumb', instant: iso(Date.now() + 3600_000) },
    });
    const r = await runCli([
      'action', 'run', 'notes_list_block_reminders', '--input', JSON.stringify({ path: { id: note.id } }),
      '--json', '--server', inst.url, '--token', alice.token,
    ]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).items.map((x: any) => x.reminder_id)).toEqual([created.body.reminder_id]);
  });
});

describe('restart', () => {
  it('fires a reminder that fell due while the server was down exactly once', async () => {
    const dataDir = tempDir();
    const opts = { dataDir, host: '127.0.0.1', port: 0, log: () => undefined };
    let server = await startServer(opts);
    const { addUser } = await import('../../src/surfaces/cli/admin.js');
    const { token } = await addUser(server.services, { username: 'carol', role: 'member' });
    const call = async (method: string, route: string, body?: unknown, headers: Record<string, string> = {}) => {
      const res = await fetch(server.url + route, {
        method,
        headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}), ...headers },
        body: body ? JSON.stringify(body) : undefined,
      });
      return { status: res.status, headers: res.headers, body: (await res.json().catch(() => undefined)) as any };
    };
    try {
      const created = await call('POST', '/api/v1/notes', { title: 'Restart', body: 'Do it ^blk\n' });
      const got = await call('GET', `/api/v1/notes/${created.body.id}`);
      const rem = await call(
        'POST',
        `/api/v1/notes/${created.body.id}/reminders`,
        { block_id: 'blk', instant: iso(Date.now() + 1500) },
        { 'if-match': got.headers.get('etag')! },
      );
      expect(rem.status).toBe(201);
      await server.close();
      await new Promise((res) => setTimeout(res, 1800));
      server = await startServer(opts);
      const first = await call('GET', '/api/v1/notifications/inbox');
      expect(first.body.items.filter((i: any) => i.reminder_id === rem.body.reminder_id)).toHaveLength(1);
      await server.close();
      server = await startServer(opts);
      await new Promise((res) => setTimeout(res, 200));
      const second = await call('GET', '/api/v1/notifications/inbox');
      expect(second.body.items.filter((i: any) => i.reminder_id === rem.body.reminder_id)).toHaveLength(1);
    } finally {
      await server.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
