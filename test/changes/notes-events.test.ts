/** `notes_events`: note changes over a real EventSource, replay after Last-Event-ID with nothing twice, reset outside the window. */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInstance, type TestInstance } from '../helpers/instance.js';
import { eventually } from '../helpers/wait.js';
import { openStream } from './sse-client.js';

let inst: TestInstance;
let owner: { id: string; token: string };
let home: string;

beforeAll(async () => {
  inst = await startInstance();
  owner = await inst.user('nina', 'member');
  home = path.join(inst.dataDir, 'homes', 'nina');
  expect((await inst.api('GET', '/api/v1/notes', { token: owner.token })).status).toBe(200);
});
afterAll(async () => {
  await inst?.close();
});

const create = async (title: string) => {
  const r = await inst.api('POST', '/api/v1/notes', { token: owner.token, body: { title } });
  expect(r.status).toBe(201);
  return r.body as { id: string; path: string };
};

describe('notes_events', () => {
  it('delivers API writes and desktop edits; a reconnect with Last-Event-ID replays the missed ones and nothing twice', async () => {
    const url = `${inst.url}/api/v1/notes/events`;
    const first = openStream(url, owner.token, { types: ['note', 'reset'] });
    await first.opened;
    const a = await create('Alpha');
    await first.waitFor((e) => e.data.path === a.path);
    fs.mkdirSync(path.join(home, 'Notes'), { recursive: true });
    fs.writeFileSync(path.join(home, 'Notes', 'Desk.md'), 'typed by hand\n');
    // Not a note: no note event.
    fs.writeFileSync(path.join(home, 'picture.png'), Buffer.from([1, 2, 3]));
    const desk = await first.waitFor((e) => e.data.path === 'Notes/Desk.md', 10_000);
    expect(desk.data).toMatchObject({ kind: 'upsert', source: 'external' });
    first.close();
    const lastId = first.events.at(-1)!.id;
    expect(lastId).toMatch(/\.\d+$/);

    // Missed while disconnected.
    const b = await create('Beta');
    const c = await create('Gamma');

    const second = openStream(url, owner.token, { types: ['note', 'reset'], lastEventId: lastId });
    await second.waitFor((e) => e.data.path === c.path);
    const d = await create('Delta');
    await second.waitFor((e) => e.data.path === d.path);
    second.close();

    const ids = [...first.events, ...second.events].map((e) => e.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(second.events.map((e) => e.data.path)).toEqual([b.path, c.path, d.path]);
    expect(second.events.some((e) => e.type === 'reset')).toBe(false);
    expect([...first.events, ...second.events].some((e) => e.data.path === 'picture.png')).toBe(false);
    expect(second.events[0]!.data.note_id).toBe(b.id);
  });

  it('sends one reset event for a Last-Event-ID it cannot replay', async () => {
    const s = openStream(`${inst.url}/api/v1/notes/events`, owner.token, { types: ['note', 'reset'], lastEventId: 'old-epoch.5' });
    try {
      const reset = await s.waitFor((e) => e.type === 'reset');
      expect(reset.data.reason).toBe('unknown_event_id');
      // Its id is a fresh point to resume from.
      expect(reset.id).toMatch(/\.\d+$/);
    } finally {
      s.close();
    }
  });

  it('an App Password limited to a prefix sees only notes under it', async () => {
    const r = await inst.api('POST', '/api/v1/auth/app-passwords', {
      token: owner.token,
      body: { name: 'work', home_prefix: 'Work/', scopes: [{ scope: 'data', access: 'read' }] },
    });
    const s = openStream(`${inst.url}/api/v1/notes/events`, r.body.password, { types: ['note'] });
    const cursor = (await inst.api('GET', '/api/v1/changes', { token: owner.token })).body.cursor as string;
    try {
      await s.opened;
      fs.mkdirSync(path.join(home, 'Work'), { recursive: true });
      fs.writeFileSync(path.join(home, 'Private.md'), 'secret\n');
      fs.writeFileSync(path.join(home, 'Work', 'Plan.md'), 'plan\n');
      await s.waitFor((e) => e.data.path === 'Work/Plan.md', 10_000);
      // The owner's journal has recorded the private note too: the stream left it out on purpose.
      await eventually(async () => {
        const d = await inst.api('GET', `/api/v1/changes?cursor=${encodeURIComponent(cursor)}`, { token: owner.token });
        return d.body.records.some((x: any) => x.path === 'Private.md');
      }, 10_000);
      expect(s.events.some((e) => e.data.path === 'Private.md')).toBe(false);
    } finally {
      s.close();
    }
  });

  it('answers a one-shot client (no Accept: text/event-stream) with a bounded snapshot of what it missed', async () => {
    const base = await inst.api('GET', '/api/v1/notes/events', { token: owner.token });
    expect(base.status).toBe(200);
    const since = base.body.last_event_id as string;
    const n = await create('Snapshot');
    const snap = await inst.api('GET', '/api/v1/notes/events', { token: owner.token, headers: { 'last-event-id': since } });
    expect(snap.body.reset).toBe(false);
    expect(snap.body.events.map((e: any) => e.data.path)).toEqual([n.path]);
  });
});
