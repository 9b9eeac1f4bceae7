/** `quire mcp` driven by the MCP SDK's own client over stdio. */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registry } from '../../src/actions/registry.js';
import { QUIRE_BIN } from '../helpers/cli.js';
import { startInstance, type TestInstance } from '../helpers/instance.js';

let inst: TestInstance;
let owner: { id: string; token: string };
let client: Client;

beforeAll(async () => {
  inst = await startInstance();
  owner = await inst.user('olivia', 'owner');
  client = new Client({ name: 'quire-test', version: '1.0.0' });
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [QUIRE_BIN, 'mcp', '--server', inst.url, '--token', owner.token],
      stderr: 'pipe',
    }),
  );
});
afterAll(async () => {
  await client?.close();
  await inst.close();
});

const textOf = (r: any) => (r.content as { type: string; text: string }[])[0]!.text;

describe('quire mcp', () => {
  it('lists one tool per action whose surfaces include mcp', async () => {
    const { tools } = await client.listTools();
    const expected = registry.filter((a) => a.surfaces.includes('mcp')).map((a) => a.tool).sort();
    expect(tools.map((t) => t.name).sort()).toEqual(expected);
    const signOut = tools.find((t) => t.name === 'svc_api_sign_out')!;
    expect(signOut.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true });
    expect((signOut.inputSchema.properties as any).confirm.type).toBe('boolean');
    const me = tools.find((t) => t.name === 'svc_api_current_user')!;
    expect(me.annotations).toMatchObject({ readOnlyHint: true, destructiveHint: false });
    expect(me.description!.length).toBeGreaterThan(10);
    const role = tools.find((t) => t.name === 'svc_api_update_role')!;
    expect(role.inputSchema.required).toEqual(expect.arrayContaining(['path', 'body']));
    expect((role.inputSchema.properties as any).body.properties.role).toBeDefined();
  });

  it('calls a read tool', async () => {
    const r = await client.callTool({ name: 'svc_api_current_user', arguments: {} });
    expect(r.isError).toBeFalsy();
    expect(JSON.parse(textOf(r))).toMatchObject({ username: 'olivia' });
  });

  it('refuses a destructive tool without confirm: true', async () => {
    const r = await client.callTool({ name: 'svc_api_sign_out', arguments: {} });
    expect(r.isError).toBe(true);
    expect(textOf(r)).toContain('confirm');
    // The session still works: nothing was sent.
    expect((await inst.api('GET', '/api/v1/auth/me', { token: owner.token })).status).toBe(200);
  });

  it('runs a destructive tool with confirm and reports errors as the envelope', async () => {
    const m = await inst.user('max', 'member');
    const ok = await client.callTool({ name: 'svc_api_update_role', arguments: { path: { id: m.id }, body: { role: 'guest' }, confirm: true } });
    expect(ok.isError).toBeFalsy();
    expect(JSON.parse(textOf(ok)).role).toBe('guest');
    const bad = await client.callTool({ name: 'svc_api_update_role', arguments: { path: { id: m.id }, body: { role: 'king' }, confirm: true } });
    expect(bad.isError).toBe(true);
    expect(JSON.parse(textOf(bad)).error).toMatchObject({ code: 'bad_request' });
    const missing = await client.callTool({ name: 'svc_api_appearance_get', arguments: {} });
    expect(missing.isError).toBe(true);
    expect(JSON.parse(textOf(missing)).error.details.reason).toBe('not_implemented');
  });
});
