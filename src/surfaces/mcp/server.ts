/** `quire mcp`: the action catalog as MCP tools over stdio. */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { checkConfirmation } from '../../actions/confirmation.js';
import type { ActionDef } from '../../actions/types.js';
import type { RawInput } from '../../actions/validate.js';
import { VERSION } from '../../core/config.js';
import { toAppError } from '../../core/errors.js';
import { outcomeAsJson, type Transport } from '../client/transport.js';
import { mcpActions, toolFor } from './tools.js';

export function createMcpServer(actions: ReadonlyArray<ActionDef<any>>, transport: Transport): Server {
  const exposed = mcpActions(actions);
  const byTool = new Map(exposed.map((a) => [a.tool, a]));
  const tools = exposed.map(toolFor);
  const server = new Server({ name: 'quire', version: VERSION }, { capabilities: { tools: {} } });

  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools }));
  server.setRequestHandler(CallToolRequestSchema, async (req) => {
    const action = byTool.get(req.params.name);
    const fail = (text: string) => ({ isError: true, content: [{ type: 'text' as const, text }] });
    if (!action) return fail(JSON.stringify({ error: { code: 'not_found', message: `Unknown tool ${req.params.name}` } }));
    const { confirm, path, query, headers, body } = (req.params.arguments ?? {}) as RawInput & { confirm?: unknown };
    try {
      checkConfirmation(action, confirm === true, 'mcp');
      const outcome = await transport.call(action, { path, query, headers, body } as RawInput);
      return { content: [{ type: 'text' as const, text: JSON.stringify(outcomeAsJson(outcome)) }] };
    } catch (e) {
      return fail(JSON.stringify(toAppError(e).toEnvelope()));
    }
  });
  return server;
}

export async function serveMcpStdio(actions: ReadonlyArray<ActionDef<any>>, transport: Transport): Promise<void> {
  const server = createMcpServer(actions, transport);
  await server.connect(new StdioServerTransport());
}
