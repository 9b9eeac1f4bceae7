/**
 * MCP tools derived from the registry: one per action whose surfaces include
 * `mcp`, named by its tool name, with a JSON input schema of the parts the
 * action takes, plus `confirm` for destructive ones.
 */
import { TypeGuard, type TSchema } from '@sinclair/typebox';
import type { ActionDef } from '../../actions/types.js';

export interface ToolDefinition {
  name: string;
  description: string;
  inputSchema: { type: 'object'; properties: Record<string, unknown>; required: string[]; additionalProperties: false };
  annotations: { title: string; readOnlyHint: boolean; destructiveHint: boolean; openWorldHint: boolean };
}

/** A plain JSON Schema copy (TypeBox adds symbol keys that JSON drops). */
const plain = (schema: TSchema): Record<string, unknown> => JSON.parse(JSON.stringify(schema)) as Record<string, unknown>;

const hasRequired = (schema: TSchema | undefined): boolean =>
  ((schema as { required?: unknown[] } | undefined)?.required ?? []).length > 0;

export function mcpActions(actions: ReadonlyArray<ActionDef<any>>): ActionDef<any>[] {
  return actions.filter((a) => a.surfaces.includes('mcp'));
}

export function toolFor(action: ActionDef<any>): ToolDefinition {
  const properties: Record<string, unknown> = {};
  const required: string[] = [];
  for (const part of ['path', 'query', 'headers'] as const) {
    const schema = action.input[part];
    if (!schema) continue;
    properties[part] = { ...plain(schema), description: `${part === 'headers' ? 'HTTP headers (lower-case names)' : part === 'path' ? 'Path parameters' : 'Query parameters'}` };
    if (hasRequired(schema)) required.push(part);
  }
  if (action.input.body) {
    properties.body = { ...plain(action.input.body), description: 'Request body' };
    if (!TypeGuard.IsOptional(action.input.body)) required.push('body');
  }
  if (action.effect === 'destructive') {
    properties.confirm = {
      type: 'boolean',
      description: 'Must be true: this action changes data and runs only when confirmed.',
    };
  }
  const rc = action.recentConfirmation ? ' Needs a recent account confirmation.' : '';
  return {
    name: action.tool,
    description: `${action.summary}${rc} (${action.method} ${action.route})`,
    inputSchema: { type: 'object', properties, required, additionalProperties: false },
    annotations: {
      title: action.name,
      readOnlyHint: action.effect === 'read',
      destructiveHint: action.effect === 'destructive',
      openWorldHint: false,
    },
  };
}
