/** notes_bookmarks_create over MCP (`quire mcp`, the SDK's client over stdio). */
import fs from 'node:fs';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QUIRE_BIN } from '../helpers/cli.js';
import { startInstance, type TestInstance } from '../helpers/instance.js';

let inst: TestInstance;
let client: Client;
let home: string;

beforeAll(async () => {
  inst = await startInstance();
  const u = await inst.user('mia', 'member');
  home = path.join(inst.dataDir, 'homes', 'mia');
  client = new Client({ name: 'quire-test', version: '1.0.0' });
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [QUIRE_BIN, 'mcp', '--server', inst.url, '--token', u.token],
      stderr: 'pipe',
    }),
  );
});
afterAll(async () => {
  await client?.close();
  await inst.close();
});

const textOf = (r: any) => (r.content as { type: string; text: string }[])[0]!.text;

describe('svc_api_notes_bookmarks_create over MCP', () => {
  it('saves a bookmark', async () => {
    const r = await client.callTool({
      name: 'svc_api_notes_bookmarks_create',
      arguments: { body: { url: 'https://example.org/read/this', highlights: ['A line.'] }, confirm: true },
    });
    expect(r.isError).toBeFalsy();
    const note = JSON.parse(textOf(r));
    expect(note.path).toBe('Notes/example.org.md');
    const text = fs.readFileSync(path.join(home, note.path), 'utf8');
    expect(text).toContain('source: bookmark');
    expect(text.endsWith('[example.org](<https://example.org/read/this>)\n\n> A line.\n')).toBe(true);
  });

  it('reports a refused clip as the error envelope', async () => {
    const r = await client.callTool({
      name: 'svc_api_notes_bookmarks_create',
      arguments: { body: { url: 'http://169.254.169.254/latest/meta-data/', kind: 'clip' }, confirm: true },
    });
    expect(r.isError).toBe(true);
    expect(JSON.parse(textOf(r)).error).toMatchObject({ code: 'bad_request', details: { reason: 'address_not_allowed' } });
  });
});
