/**
 * A create retried with the same client_id after the server restarted finds
 * its first outcome (the record lives under <data>/state/, not in memory); parallel
 * creates all land; the local vault mode runs the same handlers.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { startServer, type RunningServer } from '../../src/server.js';
import { QUIRE_BIN, runCli } from '../helpers/cli.js';
import { startInstance, tempDir } from '../helpers/instance.js';

const cleanup: Array<() => Promise<void> | void> = [];
afterAll(async () => {
  for (const c of cleanup.reverse()) await c();
});

async function call(url: string, token: string, method: string, route: string, body?: unknown) {
  const res = await fetch(url + route, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as any };
}

describe('client_id across a server restart', () => {
  it('answers the retry with the same entry and writes one line', async () => {
    const inst = await startInstance();
    const user = await inst.user('rhea', 'member');
    const dataDir = inst.dataDir;
    cleanup.push(() => fs.rmSync(dataDir, { recursive: true, force: true }));
    const body = { text: 'survives restarts at 07:45', now: '2026-05-01T08:00', timezone: 'Europe/Berlin', client_id: 'phone-1:42' };
    const first = await call(inst.url, user.token, 'POST', '/api/v1/notes/journal/log', body);
    expect(first.status).toBe(201);
    await inst.server.close();

    const again: RunningServer = await startServer({ dataDir, host: '127.0.0.1', port: 0, log: () => undefined });
    cleanup.push(() => again.close());
    const retry = await call(again.url, user.token, 'POST', '/api/v1/notes/journal/log', body);
    expect(retry.status).toBe(200);
    expect(retry.body).toMatchObject({ block_id: first.body.block_id, replayed: true, start: '07:45' });
    const file = fs.readFileSync(path.join(dataDir, 'homes/rhea/Journal/2026-05-01.md'), 'utf8');
    expect(file).toBe(`---\ntimezone: Europe/Berlin\n---\n## Log\n- 07:45 survives restarts ^${first.body.block_id}\n`);

    // Ten creates at once, no client_id: every one lands, in time order.
    const many = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        call(again.url, user.token, 'POST', '/api/v1/notes/journal/log', { text: `item ${i} at 1${i}:00`, now: '2026-05-01T08:00', timezone: 'Europe/Berlin' }),
      ),
    );
    expect(many.every((r) => r.status === 201)).toBe(true);
    const day = await call(again.url, user.token, 'GET', '/api/v1/notes/journal/2026-05-01');
    expect(day.body.entries.map((e: any) => e.text)).toEqual(['survives restarts', ...Array.from({ length: 10 }, (_, i) => `item ${i}`)]);
  });
});

describe('local vault mode (no server)', () => {
  it('creates and reads log entries in a folder with quire action run --vault', async () => {
    const dir = tempDir('quire-journal-local-');
    cleanup.push(() => fs.rmSync(dir, { recursive: true, force: true }));
    fs.cpSync(path.resolve(__dirname, '../../vault-fixtures/journal'), dir, { recursive: true });
    const input = { body: { text: 'offline entry at 06:00', now: '2026-03-09T06:30', timezone: 'Europe/Berlin' } };
    const c = await runCli(['action', 'run', 'notes_journal_create_log', '--vault', dir, '--input', JSON.stringify(input), '--confirm', '--json'], { timeoutMs: 60_000 });
    expect(c.stderr).toBe('');
    expect(c.code).toBe(0);
    const e = JSON.parse(c.stdout);
    const text = fs.readFileSync(path.join(dir, 'Journal/2026-03-09.md'), 'utf8');
    expect(text).toContain(`## Log\n- 06:00 (Europe/Berlin) offline entry ^${e.block_id}\n- 7:30 Run along the river #health\n`);
    const r = await runCli(['action', 'run', 'notes_journal_get_entry', '--vault', dir, '--input', JSON.stringify({ path: { block_id: e.block_id } }), '--json'], { timeoutMs: 60_000 });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ block_id: e.block_id, date: '2026-03-09', start: '06:00' });
  });
});

describe('MCP', () => {
  it('creates an entry and reads the day through the svc_ tools', async () => {
    const inst = await startInstance();
    cleanup.push(() => inst.close());
    const user = await inst.user('mona', 'member');
    const client = new Client({ name: 'quire-journal-test', version: '1.0.0' });
    await client.connect(
      new StdioClientTransport({ command: process.execPath, args: [QUIRE_BIN, 'mcp', '--server', inst.url, '--token', user.token], stderr: 'pipe' }),
    );
    cleanup.push(() => client.close());
    const text = (r: any) => (r.content as { text: string }[])[0]!.text;
    const refused = await client.callTool({
      name: 'svc_api_notes_journal_create_log',
      arguments: { body: { text: 'from an agent', now: '2026-06-01T10:00', timezone: 'UTC' } },
    });
    expect(refused.isError).toBe(true);
    const c = await client.callTool({
      name: 'svc_api_notes_journal_create_log',
      arguments: { body: { text: 'from an agent', now: '2026-06-01T10:00', timezone: 'UTC' }, confirm: true },
    });
    expect(c.isError).toBeFalsy();
    const e = JSON.parse(text(c));
    const d = await client.callTool({ name: 'svc_notes_get_or_create_daily', arguments: { query: { date: '2026-06-01' } } });
    expect(JSON.parse(text(d)).entries.map((x: any) => [x.block_id, x.start, x.text])).toEqual([[e.block_id, '10:00', 'from an agent']]);
  });
});
