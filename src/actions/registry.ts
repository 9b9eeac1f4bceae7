/**
 * The registry: every area's declarations in one list, sorted by name. Surfaces (HTTP, command
 * line, MCP, WebMCP, the action listing) read actions from here and nowhere else. Importing this
 * module throws when two declarations share a name, a tool name, or a method and route.
 */
import type { ActionDef } from './types.js';
import { withLimits } from './limits.js';
import { actions as accounts } from '../accounts/actions.js';
import { actions as tags } from '../tags/actions.js';
import { actions as system } from '../system/actions.js';
import { actions as appearance } from '../appearance/actions.js';
import { actions as jobs } from '../jobs/actions.js';
import { actions as changes } from '../changes/actions.js';
import { actions as notifications } from '../notifications/actions.js';
import { actions as notes } from '../notes/actions.js';
import { actions as journal } from '../journal/actions.js';
import { actions as tasks } from '../tasks/actions.js';
import { actions as reminders } from '../reminders/actions.js';
import { actions as calendar } from '../calendar/actions.js';
import { actions as publicLinks } from '../public/actions.js';
import { actions as collab } from '../collab/actions.js';

export type AnyAction = ActionDef<any>;

/** The spec's areas in document order, with the source folder that declares each. */
export const AREAS: ReadonlyArray<{ area: string; folder: string; actions: ReadonlyArray<AnyAction> }> = [
  { area: '4.1 Account', folder: 'accounts', actions: accounts },
  { area: '4.2 Tags', folder: 'tags', actions: tags },
  { area: '4.3 System', folder: 'system', actions: system },
  { area: '4.4 Appearance', folder: 'appearance', actions: appearance },
  { area: '4.5 Jobs', folder: 'jobs', actions: jobs },
  { area: '4.6 Changes', folder: 'changes', actions: changes },
  { area: '4.7 Notifications', folder: 'notifications', actions: notifications },
  { area: 'Notes, links and canvas', folder: 'notes', actions: notes },
  { area: 'Daily notes and log entries', folder: 'journal', actions: journal },
  { area: 'Tasks and task views', folder: 'tasks', actions: tasks },
  { area: 'Block reminders', folder: 'reminders', actions: reminders },
  { area: 'Calendar', folder: 'calendar', actions: calendar },
  { area: 'Public links', folder: 'public', actions: publicLinks },
  { area: 'Collaboration', folder: 'collab', actions: collab },
];

/** `{id}` and `{slug}` at the same place are the same route to a router. */
function routeKey(def: AnyAction): string {
  return `${def.method} ${def.route.replace(/\{[^}]*\}/g, '{}')}`;
}

/**
 * Checks a list of declarations and returns it sorted by name. Throws on a duplicate name, tool
 * name or method and route, naming both declarations.
 */
export function buildRegistry(defs: Iterable<AnyAction>): ReadonlyArray<AnyAction> {
  const byName = new Map<string, AnyAction>();
  const byTool = new Map<string, AnyAction>();
  const byRoute = new Map<string, AnyAction>();
  const problems: string[] = [];
  for (const def of defs) {
    const seenName = byName.get(def.name);
    if (seenName) problems.push(`duplicate action name "${def.name}"`);
    else byName.set(def.name, def);
    const seenTool = byTool.get(def.tool);
    if (seenTool) problems.push(`duplicate tool name "${def.tool}" (${seenTool.name} and ${def.name})`);
    else byTool.set(def.tool, def);
    const key = routeKey(def);
    const seenRoute = byRoute.get(key);
    if (seenRoute) {
      problems.push(`duplicate route ${def.method} ${def.route} (${seenRoute.name} and ${def.name})`);
    } else byRoute.set(key, def);
  }
  if (problems.length > 0) throw new Error(`Invalid action registry: ${problems.join('; ')}`);
  return Object.freeze([...byName.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)));
}

/** Every declared action, sorted by name, with the input limits of src/actions/limits.ts in its schemas. */
export const registry: ReadonlyArray<AnyAction> = buildRegistry(AREAS.flatMap((a) => a.actions).map(withLimits));

const byName = new Map(registry.map((def) => [def.name, def] as const));
const byTool = new Map(registry.map((def) => [def.tool, def] as const));

/** The action with this name, or undefined. */
export function findAction(name: string): AnyAction | undefined {
  return byName.get(name);
}

/** The action whose MCP tool has this name, or undefined. */
export function findActionByTool(tool: string): AnyAction | undefined {
  return byTool.get(tool);
}

/**
 * The actions grouped by their `area`, areas in the spec's document order (any area not in
 * AREAS after them), actions sorted by name within each.
 */
export function actionsByArea(): Map<string, AnyAction[]> {
  const groups = new Map<string, AnyAction[]>(AREAS.map((a) => [a.area, []]));
  for (const def of registry) {
    const list = groups.get(def.area);
    if (list) list.push(def);
    else groups.set(def.area, [def]);
  }
  for (const [area, list] of groups) if (list.length === 0) groups.delete(area);
  return groups;
}
