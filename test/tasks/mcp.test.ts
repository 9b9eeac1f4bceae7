/** Task views and tasks through `quire mcp` (stdio), as an agent would use them. */
import fs from 'node:fs';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QUIRE_BIN } from '../helpers/cli.js';
import { startInstance, type TestInstance } from '../helpers/instance.js';

let inst: TestInstance;
let user: { id: string; token: string };
let client: Client;
let home: string;

beforeAll(async () => {
  inst = await startInstance();
  user = await inst.user('mika', 'member');
  home = path.join(inst.dataDir, 'homes', 'mika');
  fs.mkdirSync(path.join(home, 'Notes'), { recursive: true });
  fs.writeFileSync(path.join(home, 'Notes/Todo.md'), '# Todo\n\n- [ ] Call Ana ^call\n- [x] Pay rent ^rent\n');
  client = new Client({ name: 'quire-test', version: '1.0.0' });
  await client.connect(
    new StdioClientTransport({ command: process.execPath, args: [QUIRE_BIN, 'mcp', '--server', inst.url, '--token', user.token], stderr: 'pipe' }),
  );
});
afterAll(async () => {
  await client?.close();
  await inst.close();
});

const json = (r: any) => JSON.parse((r.content as { text: string }[])[0]!.text);

describe('tasks over MCP', () => {
  it('creates a view, evaluates it and completes a task', async () => {
    const created = await client.callTool({
      name: 'svc_api_notes_task_views_create',
      arguments: { body: { view: { id: 'todo', name: 'Todo', filters: 'task.status == " "' } }, confirm: true },
    });
    expect(created.isError).toBeFalsy();
    expect(json(created)).toMatchObject({ id: 'todo', path: 'Views/Todo.base' });
    const rows = await client.callTool({ name: 'svc_api_notes_task_view_rows', arguments: { path: { id: 'todo' } } });
    expect(json(rows).items.map((t: any) => t.task_id)).toEqual(['call']);
    const done = await client.callTool({ name: 'svc_api_notes_task_status_set', arguments: { body: { task_id: 'call', status: 'x' }, confirm: true } });
    expect(done.isError).toBeFalsy();
    expect(fs.readFileSync(path.join(home, 'Notes/Todo.md'), 'utf8')).toMatch(/^# Todo\n\n- \[x\] Call Ana ✅ \d{4}-\d{2}-\d{2} \^call\n- \[x\] Pay rent \^rent\n$/);
    const list = await client.callTool({ name: 'svc_api_notes_tasks_list', arguments: {} });
    expect(json(list).items.every((t: any) => t.checked)).toBe(true);
  });
});
