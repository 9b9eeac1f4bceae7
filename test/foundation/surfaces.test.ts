/**
 * Every action is reachable on each surface it declares: an HTTP route for
 * all, a command-line action and an MCP tool for those whose surfaces say so.
 * Adding an action that a surface cannot map fails here.
 */
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { registry } from '../../src/actions/registry.js';
import { loadConfig } from '../../src/core/config.js';
import { buildApp } from '../../src/surfaces/http/app.js';
import { toFastifyRoute } from '../../src/surfaces/http/routes.js';
import { mcpActions, toolFor } from '../../src/surfaces/mcp/tools.js';
import { catalogEntries } from '../../src/surfaces/cli/catalog.js';
import { catalogRows, lookupAction } from '../../src/surfaces/cli/run-action.js';
import { renderActionsDoc } from '../../src/surfaces/docs/actions-doc.js';

describe('surfaces derived from the registry', () => {
  const app = buildApp({ services: { config: loadConfig({ dataDir: '/nonexistent' }), store: null as never, vaults: null as never }, actions: registry });

  it('registers an HTTP route for every action', async () => {
    await app.ready();
    const unmapped = registry.filter((a) => !app.hasRoute({ method: a.method, url: toFastifyRoute(a.route).url }));
    expect(unmapped.map((a) => a.name)).toEqual([]);
  });

  it('gives every cli action a command-line entry, and refuses browser-only ones', () => {
    const catalog = catalogEntries(registry);
    expect(catalogRows(catalog)).toHaveLength(registry.length);
    for (const a of registry) expect(lookupAction(catalog, a.name).route).toBe(a.route);
  });

  it('gives every mcp action a tool with a valid object schema and annotations', () => {
    const exposed = mcpActions(registry);
    expect(exposed.length).toBe(registry.filter((a) => a.surfaces.includes('mcp')).length);
    const unmapped: string[] = [];
    for (const a of exposed) {
      const tool = toolFor(a);
      if (tool.name !== a.tool || tool.inputSchema.type !== 'object') unmapped.push(a.name);
      expect(tool.annotations.readOnlyHint).toBe(a.effect === 'read');
      expect(tool.annotations.destructiveHint).toBe(a.effect === 'destructive');
      expect(JSON.parse(JSON.stringify(tool.inputSchema))).toEqual(tool.inputSchema);
      if (a.effect === 'destructive') expect(tool.inputSchema.properties.confirm).toBeDefined();
    }
    expect(unmapped).toEqual([]);
  });

  it('keeps docs/actions.md in step with the declarations (npm run docs)', () => {
    const onDisk = fs.readFileSync(new URL('../../docs/actions.md', import.meta.url), 'utf8');
    expect(onDisk).toBe(renderActionsDoc(registry));
  });
});
