/**
 * The change journal end to end: API writes and desktop edits reach the
 * delta feed and a connected EventSource client; cursors drain at a fixed
 * head and answer 410 when they cannot be served.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer } from '../../src/server.js';
import { runCli } from '../helpers/cli.js';
import { startInstance, type TestInstance } from '../helpers/instance.js';
import { eventually } from '../helpers/wait.js';
import { openStream } from './sse-client.js';

let inst: TestInstance;
let owner: { id: string; token: string };
let home: string;

beforeAll(async () => {
  inst = await startInstance();
  owner = await inst.user('olivia', 'owner');
  home = path.join(inst.dataDir, 'homes', 'olivia');
  // Opens the vault (and its journal) and waits for the index.
  expect((await inst.api('GET', '/api/v1/notes', { token: owner.token })).status).toBe(200);
});
afterAll(async () => {
  await inst?.close();
});

/** Drains the journal from `cursor` to its end; returns the records and the final cursor. */
async function drain(token: string, cursor: string) {
  const records: any[] = [];
  for (let i = 0; i < 1000; i++) {
    const r = await inst.api('GET', `/api/v1/changes?cursor=${encodeURIComponent(cursor)}`, { token });
    expect(r.status).toBe(200);
    records.push(...r.body.records);
    cursor = r.body.cursor;
    if (!r.body.has_more) break;
  }
  return { records, cursor };
}

const baseline = async (token = owner.token) => {
  const r = await inst.api('GET', '/api/v1/changes', { token });
  expect(r.status).toBe(200);
  expect(r.body).toMatchObject({ records: [], has_more: false });
  return r.body.cursor as string;
};

describe('changes_delta and changes_events', () => {
  it('an API write and a desktop edit each reach a connected EventSource client and the delta feed', async () => {
    const cursor = await baseline();
    const s = openStream(`${inst.url}/api/v1/changes/events`, owner.token, { types: ['ready', 'change'] });
    try {
      const ready = await s.waitFor((e) => e.type === 'ready');

      const created = await inst.api('POST', '/api/v1/notes', { token: owner.token, body: { title: 'From the API', body: 'hello' } });
      expect(created.status).toBe(201);
      const apiHint = await s.waitFor((e) => e.type === 'change' && e.data.seq > ready.data.seq);

      fs.mkdirSync(path.join(home, 'Notes'), { recursive: true });
      fs.writeFileSync(path.join(home, 'Notes', 'desktop.md'), '# Typed in a desktop editor\n');
      await s.waitFor((e) => e.type === 'change' && e.data.seq > apiHint.data.seq, 10_000);

      const { records } = await drain(owner.token, cursor);
      const api = records.find((r) => r.source === 'api' && r.path === created.body.path);
      expect(api).toMatchObject({ kind: 'upsert', note_id: created.body.id });
      const external = records.find((r) => r.path === 'Notes/desktop.md');
      expect(external).toMatchObject({ kind: 'upsert', source: 'external' });
      expect(typeof external.note_id).toBe('string');
      // Sequence numbers increase by one, with time and kind on every record.
      for (let i = 1; i < records.length; i++) expect(records[i].seq).toBe(records[i - 1].seq + 1);
      expect(records.every((r) => typeof r.time === 'number')).toBe(true);
    } finally {
      s.close();
    }
  });

  it('a reminder firing reaches a connected EventSource client and the delta feed', async () => {
    const note = await inst.api('POST', '/api/v1/notes', { token: owner.token, body: { title: 'Remind me', body: 'Water the plants ^water\n' } });
    expect(note.status).toBe(201);
    const cursor = await baseline();
    const s = openStream(`${inst.url}/api/v1/changes/events`, owner.token, { types: ['ready', 'change'] });
    try {
      const ready = await s.waitFor((e) => e.type === 'ready');
      const set = await inst.api('POST', `/api/v1/notes/${note.body.id}/reminders`, {
        token: owner.token,
        headers: { 'if-match': note.body.etag },
        body: { block_id: 'water', instant: new Date(Date.now() + 1200).toISOString(), audience: 'only_me' },
      });
      expect(set.status).toBeLessThan(300);
      await s.waitFor((e) => e.type === 'change' && e.data.seq > ready.data.seq, 10_000);
      const { records } = await drain(owner.token, cursor);
      const inbox = records.find((r) => r.kind === 'inbox');
      expect(inbox).toMatchObject({ kind: 'inbox', source: 'reminder', note_id: note.body.id });
      const item = await inst.api('GET', `/api/v1/notifications/inbox/${inbox.inbox_id}`, { token: owner.token });
      expect(item.status).toBe(200);
      expect(records.filter((r) => r.kind === 'inbox')).toHaveLength(1);
    } finally {
      s.close();
    }
  });

  it('a delete names the note it removed', async () => {
    const cursor = await baseline();
    fs.writeFileSync(path.join(home, 'Notes', 'gone.md'), '---\nid: gone-1\n---\nbye\n');
    await eventually(async () => (await drain(owner.token, cursor)).records.some((r) => r.path === 'Notes/gone.md'), 10_000);
    fs.rmSync(path.join(home, 'Notes', 'gone.md'));
    const del = await eventually(async () => (await drain(owner.token, cursor)).records.find((r) => r.kind === 'delete' && r.path === 'Notes/gone.md'), 10_000);
    expect(del).toMatchObject({ note_id: 'gone-1', source: 'external' });
  });

  it('drains at most 100 records per page at a head fixed when the drain began', async () => {
    const start = await baseline();
    for (let i = 0; i < 150; i++) {
      const r = await inst.api('POST', '/api/v1/notes', { token: owner.token, body: { title: `Batch ${i}` } });
      expect(r.status).toBe(201);
    }
    const first = await inst.api('GET', `/api/v1/changes?cursor=${encodeURIComponent(start)}`, { token: owner.token });
    expect(first.body.records).toHaveLength(100);
    expect(first.body.has_more).toBe(true);
    expect(Buffer.byteLength(JSON.stringify(first.body.records))).toBeLessThanOrEqual(64 * 1024);
    const headAtStart = first.body.records[0].seq + 149;
    // Writes during the drain are not part of it: the drain ends at its fixed head.
    for (let i = 0; i < 3; i++) await inst.api('POST', '/api/v1/notes', { token: owner.token, body: { title: `Late ${i}` } });
    const second = await inst.api('GET', `/api/v1/changes?cursor=${encodeURIComponent(first.body.cursor)}`, { token: owner.token });
    expect(second.body.records).toHaveLength(50);
    expect(second.body.records.at(-1).seq).toBe(headAtStart);
    expect(second.body.has_more).toBe(false);
    // The next drain picks up what came later, once.
    const third = await inst.api('GET', `/api/v1/changes?cursor=${encodeURIComponent(second.body.cursor)}`, { token: owner.token });
    expect(third.body.records.map((r: any) => r.seq)).toEqual([headAtStart + 1, headAtStart + 2, headAtStart + 3]);
    const fourth = await inst.api('GET', `/api/v1/changes?cursor=${encodeURIComponent(third.body.cursor)}`, { token: owner.token });
    expect(fourth.body).toMatchObject({ records: [], has_more: false });
  });

  it('answers 410 cursor_expired for a forged cursor or one issued to another user', async () => {
    const cursor = await baseline();
    const [body, mac] = cursor.split('.');
    const forged = Buffer.from(JSON.stringify([JSON.parse(Buffer.from(body!, 'base64url').toString())[0], 0, 0])).toString('base64url') + '.' + mac;
    for (const c of [forged, 'garbage', cursor + 'x']) {
      const r = await inst.api('GET', `/api/v1/changes?cursor=${encodeURIComponent(c)}`, { token: owner.token });
      expect(r.status).toBe(410);
      expect(r.body.error).toMatchObject({ code: 'not_found', details: { reason: 'cursor_expired' } });
    }
    const other = await inst.user('oscar', 'member');
    const r = await inst.api('GET', `/api/v1/changes?cursor=${encodeURIComponent(cursor)}`, { token: other.token });
    expect(r.status).toBe(410);
  });

  it('refuses App Passwords limited to a Home prefix (403) and serves unrestricted ones', async () => {
    const mk = async (home_prefix: string | null) => {
      const r = await inst.api('POST', '/api/v1/auth/app-passwords', {
        token: owner.token,
        body: { name: `p-${home_prefix}`, home_prefix, scopes: [{ scope: 'account', access: 'read' }, { scope: 'data', access: 'read' }] },
      });
      expect(r.status).toBe(201);
      return r.body.password as string;
    };
    const limited = await mk('Notes/Work/');
    const d = await inst.api('GET', '/api/v1/changes', { token: limited });
    expect(d.status).toBe(403);
    expect(d.body.error.details.reason).toBe('home_prefix_restricted');
    const ev = await fetch(`${inst.url}/api/v1/changes/events`, { headers: { authorization: `Bearer ${limited}`, accept: 'text/event-stream' } });
    expect(ev.status).toBe(403);
    const full = await mk(null);
    expect((await inst.api('GET', '/api/v1/changes', { token: full })).status).toBe(200);
  });

  it('allows one change stream per user and IP: a second one gets 429 with Retry-After', async () => {
    const s = openStream(`${inst.url}/api/v1/changes/events`, owner.token, { types: ['ready'] });
    try {
      await s.waitFor((e) => e.type === 'ready');
      const second = await fetch(`${inst.url}/api/v1/changes/events`, { headers: { authorization: `Bearer ${owner.token}`, accept: 'text/event-stream' } });
      expect(second.status).toBe(429);
      expect(second.headers.get('retry-after')).toBeTruthy();
      expect((await second.json()).error.code).toBe('too_many_requests');
    } finally {
      s.close();
    }
    // Closing the first frees the permit.
    await eventually(async () => {
      const ctrl = new AbortController();
      const r = await fetch(`${inst.url}/api/v1/changes/events`, { headers: { authorization: `Bearer ${owner.token}`, accept: 'text/event-stream' }, signal: ctrl.signal });
      ctrl.abort();
      return r.status === 200;
    });
  });

  it('ends the stream within about a second when the credential is revoked', async () => {
    const created = await inst.api('POST', '/api/v1/auth/app-passwords', {
      token: owner.token,
      body: { name: 'watcher', scopes: [{ scope: 'account', access: 'read' }, { scope: 'data', access: 'read' }] },
    });
    const s = openStream(`${inst.url}/api/v1/changes/events`, created.body.password, { types: ['ready', 'revoked'] });
    try {
      await s.waitFor((e) => e.type === 'ready');
      const del = await inst.api('DELETE', `/api/v1/auth/app-passwords/${created.body.app_password.id}`, { token: owner.token });
      expect(del.status).toBeLessThan(300);
      await s.waitFor((e) => e.type === 'revoked', 5000);
    } finally {
      s.close();
    }
  });

  it('sends heartbeat comments and answers one-shot clients with a snapshot instead of hanging', async () => {
    const snap = await inst.api('GET', '/api/v1/changes/events', { token: owner.token });
    expect(snap.status).toBe(200);
    expect(typeof snap.body.seq).toBe('number');

    const cli = await runCli(['action', 'run', 'changes_delta', '--input', '{}', '--json', '--server', inst.url, '--token', owner.token]);
    expect(cli.code).toBe(0);
    const out = JSON.parse(cli.stdout);
    expect(out).toMatchObject({ records: [], has_more: false });
    const ev = await runCli(['action', 'run', 'changes_events', '--input', '{}', '--json', '--server', inst.url, '--token', owner.token]);
    expect(ev.code).toBe(0);
    expect(JSON.parse(ev.stdout).seq).toBeTypeOf('number');
  });
});

describe('restarts and shutdown', () => {
  it('close() does not hang on open streams, and old cursors answer 410 after a restart', async () => {
    process.env.QUIRE_SSE_HEARTBEAT_MS = '100';
    const dataDir = fs.mkdtempSync(path.join(inst.dataDir, '..', 'quire-restart-'));
    let server = await startServer({ dataDir, host: '127.0.0.1', port: 0, log: () => undefined });
    try {
      const { addUser } = await import('../../src/surfaces/cli/admin.js');
      const { token } = await addUser(server.services, { username: 'rita', role: 'member' });
      const first = await fetch(`${server.url}/api/v1/changes`, { headers: { authorization: `Bearer ${token}` } });
      const { cursor } = (await first.json()) as { cursor: string };

      // A raw stream: heartbeats arrive as comment lines.
      const ctrl = new AbortController();
      const res = await fetch(`${server.url}/api/v1/changes/events`, { headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream' }, signal: ctrl.signal });
      expect(res.headers.get('content-type')).toContain('text/event-stream');
      const reader = res.body!.getReader();
      let text = '';
      while (!text.includes(': heartbeat')) text += new TextDecoder().decode((await reader.read()).value);

      const started = Date.now();
      await server.close();
      expect(Date.now() - started).toBeLessThan(3000);
      // The stream ended cleanly.
      for (;;) {
        const { done } = await reader.read();
        if (done) break;
      }

      server = await startServer({ dataDir, host: '127.0.0.1', port: 0, log: () => undefined });
      const after = await fetch(`${server.url}/api/v1/changes?cursor=${encodeURIComponent(cursor)}`, { headers: { authorization: `Bearer ${token}` } });
      expect(after.status).toBe(410);
      expect(((await after.json()) as any).error.details.reason).toBe('cursor_expired');
    } finally {
      delete process.env.QUIRE_SSE_HEARTBEAT_MS;
      await server.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
