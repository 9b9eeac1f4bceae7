/** The notification inbox end to end: items made by reminders firing, read state, delete, done, snooze, receipts and undo. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { startInstance, type TestInstance } from '../helpers/instance.js';
import { eventually } from '../helpers/wait.js';

let inst: TestInstance;
let dana: { id: string; token: string };
let erin: { id: string; token: string };
let noteId: string;
let etag: string;

/** Sets a reminder 150 ms ahead on the shared note and waits for its inbox item. */
async function fireOne(token = dana.token): Promise<any> {
  const r = await inst.api('POST', `/api/v1/notes/${noteId}/reminders`, {
    token,
    headers: { 'if-match': etag },
    body: { block_id: 'b1', instant: new Date(Date.now() + 150).toISOString() },
  });
  expect(r.status).toBe(201);
  return eventually(async () => {
    const l = await inst.api('GET', '/api/v1/notifications/inbox?limit=200', { token });
    return l.body.items.find((i: any) => i.reminder_id === r.body.reminder_id);
  }, 5000);
}

const inbox = async (token = dana.token) => (await inst.api('GET', '/api/v1/notifications/inbox?limit=200', { token })).body.items;

beforeAll(async () => {
  inst = await startInstance();
  dana = await inst.user('dana');
  erin = await inst.user('erin');
  const n = await inst.api('POST', '/api/v1/notes', { token: dana.token, body: { title: 'Inbox source', body: 'Water the plants ^b1\n' } });
  noteId = n.body.id;
  etag = (await inst.api('GET', `/api/v1/notes/${noteId}`, { token: dana.token })).headers.get('etag')!;
});
afterAll(async () => inst.close());

describe('list, get, read', () => {
  it('lists newest first in pages with an opaque cursor, and reads one item', async () => {
    const a = await fireOne();
    const b = await fireOne();
    const c = await fireOne();
    const p1 = await inst.api('GET', '/api/v1/notifications/inbox?limit=2', { token: dana.token });
    expect(p1.status).toBe(200);
    expect(p1.body.items.map((i: any) => i.id)).toEqual([c.id, b.id]);
    expect(typeof p1.body.next_cursor).toBe('string');
    const p2 = await inst.api('GET', `/api/v1/notifications/inbox?limit=2&cursor=${encodeURIComponent(p1.body.next_cursor)}`, { token: dana.token });
    expect(p2.body.items[0].id).toBe(a.id);
    const bad = await inst.api('GET', '/api/v1/notifications/inbox?cursor=garbage', { token: dana.token });
    expect(bad.status).toBe(400);
    const got = await inst.api('GET', `/api/v1/notifications/inbox/${a.id}`, { token: dana.token });
    expect(got.status).toBe(200);
    expect(got.body).toMatchObject({ id: a.id, kind: 'block_reminder', note_id: noteId, block_id: 'b1', excerpt: 'Water the plants' });
    // Another user's item is absent for them.
    expect((await inst.api('GET', `/api/v1/notifications/inbox/${a.id}`, { token: erin.token })).status).toBe(404);
    expect((await inst.api('PUT', `/api/v1/notifications/inbox/${a.id}/read`, { token: erin.token })).status).toBe(404);
  });

  it('marks one read, and all read up to until_ms (204, newer stay unread)', async () => {
    const x = await fireOne();
    const r = await inst.api('PUT', `/api/v1/notifications/inbox/${x.id}/read`, { token: dana.token });
    expect(r.status).toBe(200);
    expect(r.body.read).toBe(true);
    expect((await inst.api('GET', `/api/v1/notifications/inbox/${x.id}`, { token: dana.token })).body.read).toBe(true);

    const older = await fireOne();
    const newer = await fireOne();
    expect(newer.created_ms).toBeGreaterThan(older.created_ms);
    const all = await inst.api('PUT', `/api/v1/notifications/inbox/read?until_ms=${older.created_ms}`, { token: dana.token });
    expect(all.status).toBe(204);
    expect(all.text).toBe('');
    const items = await inbox();
    expect(items.find((i: any) => i.id === older.id).read).toBe(true);
    expect(items.find((i: any) => i.id === newer.id).read).toBe(false);
    const rest = await inst.api('PUT', '/api/v1/notifications/inbox/read', { token: dana.token });
    expect(rest.status).toBe(204);
    expect((await inbox()).every((i: any) => i.read)).toBe(true);
  });
});

describe('delete, receipts and undo', () => {
  it('deletes without a receipt', async () => {
    const x = await fireOne();
    const d = await inst.api('DELETE', `/api/v1/notifications/inbox/${x.id}`, { token: dana.token });
    expect(d.status).toBe(200);
    expect((await inst.api('GET', `/api/v1/notifications/inbox/${x.id}`, { token: dana.token })).status).toBe(404);
    expect((await inst.api('DELETE', `/api/v1/notifications/inbox/${x.id}`, { token: dana.token })).status).toBe(404);
  });

  it('deletes with an operation_id, reads the receipt, undoes once; a second undo reports who consumed it', async () => {
    const x = await fireOne();
    const d = await inst.api('DELETE', `/api/v1/notifications/inbox/${x.id}?operation_id=op-del-1`, { token: dana.token });
    expect(d.status).toBe(200);
    expect((await inst.api('GET', `/api/v1/notifications/inbox/${x.id}`, { token: dana.token })).status).toBe(404);
    const rc = await inst.api('GET', '/api/v1/notifications/inbox/mutations/op-del-1', { token: dana.token });
    expect(rc.status).toBe(200);
    expect(rc.body).toMatchObject({ operation_id: 'op-del-1', kind: 'inbox_delete', undone_by: null });
    expect(rc.body.expires_ms).toBeGreaterThan(Date.now());
    expect(rc.body).not.toHaveProperty('inverse');
    expect((await inst.api('GET', '/api/v1/notifications/inbox/mutations/op-del-1', { token: erin.token })).status).toBe(404);

    const u = await inst.api('POST', '/api/v1/notifications/inbox/mutations/op-del-1/undo', {
      token: dana.token,
      body: { operation_id: 'op-undo-1' },
    });
    expect(u.status).toBe(200);
    expect(u.body).toMatchObject({ operation_id: 'op-del-1', undone_by: 'op-undo-1' });
    const back = await inst.api('GET', `/api/v1/notifications/inbox/${x.id}`, { token: dana.token });
    expect(back.status).toBe(200);
    expect(back.body).toEqual(x);

    const again = await inst.api('POST', '/api/v1/notifications/inbox/mutations/op-del-1/undo', {
      token: dana.token,
      body: { operation_id: 'op-undo-2' },
    });
    expect(again.status).toBe(409);
    expect(again.body.error.details).toMatchObject({ reason: 'already_undone', undone_by: 'op-undo-1' });
    expect((await inbox()).filter((i: any) => i.id === x.id)).toHaveLength(1);
  });

  it('refuses a reused undo operation_id and an expired receipt (410)', async () => {
    const x = await fireOne();
    await inst.api('DELETE', `/api/v1/notifications/inbox/${x.id}?operation_id=op-del-2`, { token: dana.token });
    const reused = await inst.api('POST', '/api/v1/notifications/inbox/mutations/op-del-2/undo', {
      token: dana.token,
      body: { operation_id: 'op-del-2' },
    });
    expect(reused.status).toBe(409);
    // Age the receipt past its deadline in the store, as time passing would.
    await inst.server.services.store.transact((data) => {
      const r = data.inbox_receipts!.find((y) => y.operation_id === 'op-del-2')!;
      r.expires_ms = Date.now() - 1;
    });
    const late = await inst.api('POST', '/api/v1/notifications/inbox/mutations/op-del-2/undo', {
      token: dana.token,
      body: { operation_id: 'op-undo-late' },
    });
    expect(late.status).toBe(410);
    expect(late.body.error.details.reason).toBe('receipt_expired');
    expect((await inst.api('GET', `/api/v1/notifications/inbox/${x.id}`, { token: dana.token })).status).toBe(404);
  });
});

describe('done and snooze', () => {
  it('marks a reminder notice done, and undoes it back to pending', async () => {
    const x = await fireOne();
    const d = await inst.api('POST', `/api/v1/notifications/inbox/${x.id}/reminder/done?operation_id=op-done-1`, { token: dana.token });
    expect(d.status).toBe(200);
    expect(d.body).toMatchObject({ id: x.id, state: 'done' });
    const replay = await inst.api('POST', `/api/v1/notifications/inbox/${x.id}/reminder/done?operation_id=op-done-1`, { token: dana.token });
    expect(replay.status).toBe(200);
    expect((await inst.api('GET', '/api/v1/notifications/inbox/mutations/op-done-1', { token: dana.token })).body.kind).toBe('reminder_done');
    const u = await inst.api('POST', '/api/v1/notifications/inbox/mutations/op-done-1/undo', {
      token: dana.token,
      body: { operation_id: 'op-undo-done' },
    });
    expect(u.status).toBe(200);
    expect((await inst.api('GET', `/api/v1/notifications/inbox/${x.id}`, { token: dana.token })).body.state).toBe('pending');
  });

  it('snoozes a notice: it fires again (unread, pending) after the minutes', async () => {
    const x = await fireOne();
    const bad = await inst.api('POST', `/api/v1/notifications/inbox/${x.id}/reminder/snooze`, { token: dana.token, body: { minutes: 0 } });
    expect(bad.status).toBe(400);
    const s = await inst.api('POST', `/api/v1/notifications/inbox/${x.id}/reminder/snooze`, { token: dana.token, body: { minutes: 1 } });
    expect(s.status).toBe(200);
    expect(s.body.state).toBe('snoozed');
    expect(s.body.snoozed_until_ms).toBeGreaterThan(Date.now() + 55_000);
    // Bring the snooze deadline close instead of waiting a minute, then nudge the scheduler as any change does.
    await inst.server.services.store.transact((data) => {
      data.inbox!.find((i) => i.id === x.id)!.snoozed_until_ms = Date.now() + 300;
    });
    inst.server.services.reminders!.rearm();
    const again = await eventually(async () => {
      const g = await inst.api('GET', `/api/v1/notifications/inbox/${x.id}`, { token: dana.token });
      return g.body.state === 'pending' ? g.body : null;
    }, 5000);
    expect(again).toMatchObject({ read: false, snoozed_until_ms: null });
  });
});

describe('command line', () => {
  it('reads the inbox through quire action run', async () => {
    const x = await fireOne();
    const r = await runCli([
      'action', 'run', 'notifications_inbox_get', '--input', JSON.stringify({ path: { id: x.id } }),
      '--json', '--server', inst.url, '--token', dana.token,
    ]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ id: x.id, kind: 'block_reminder' });
  });
});

describe('audience', () => {
  it('a reminder whose owner is disabled at fire time reaches nobody, and is still marked fired', async () => {
    const r = await inst.api('POST', `/api/v1/notes/${noteId}/reminders`, {
      token: dana.token,
      headers: { 'if-match': etag },
      body: { block_id: 'b1', instant: new Date(Date.now() + 400).toISOString(), audience: 'everyone' },
    });
    expect(r.status).toBe(201);
    await inst.server.services.store.transact((d) => {
      d.users.find((u) => u.id === dana.id)!.disabled = true;
    });
    try {
      await eventually(() => inst.server.services.store.snapshot().reminders!.find((x) => x.id === r.body.reminder_id)!.fired_ms !== null);
      expect(inst.server.services.store.snapshot().inbox!.filter((i) => i.reminder_id === r.body.reminder_id)).toEqual([]);
    } finally {
      await inst.server.services.store.transact((d) => {
        d.users.find((u) => u.id === dana.id)!.disabled = false;
      });
    }
  });
});

describe('mcp', () => {
  it('lists the inbox through quire mcp', async () => {
    const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
    const { StdioClientTransport } = await import('@modelcontextprotocol/sdk/client/stdio.js');
    const { QUIRE_BIN } = await import('../helpers/cli.js');
    const x = await fireOne();
    const client = new Client({ name: 'quire-test', version: '1.0.0' });
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [QUIRE_BIN, 'mcp', '--server', inst.url, '--token', dana.token],
        stderr: 'pipe',
      }),
    );
    try {
      const r = await client.callTool({ name: 'svc_api_notifications_inbox_list', arguments: { query: { limit: 1 } } });
      expect(r.isError).toBeFalsy();
      const page = JSON.parse((r.content as { text: string }[])[0]!.text);
      expect(page.items.map((i: any) => i.id)).toEqual([x.id]);
    } finally {
      await client.close();
    }
  });
});
