/** `quire action help NAME`: one action of the catalog explained from its declaration (summary, facts, input schema). */
import type { CatalogEntry } from './catalog.js';
import { lookupAction } from './run-action.js';
import { SHORTCUTS, schemaFlags } from './shortcuts.js';
import type { Io } from './usage.js';

type Schema = Record<string, any>;

/** A schema's type for a person: `string`, `integer 1..200`, `one of event|task|note`, `array of object`, `string | null`. */
export function describeType(s: Schema): string {
  if (Array.isArray(s.anyOf)) {
    const consts = s.anyOf.filter((x: Schema) => 'const' in x);
    if (consts.length === s.anyOf.length) return `one of ${consts.map((x: Schema) => String(x.const)).join('|')}`;
    return s.anyOf.map(describeType).join(' | ');
  }
  if ('const' in s) return JSON.stringify(s.const);
  if (Array.isArray(s.enum)) return `one of ${s.enum.join('|')}`;
  if (s.type === 'array') return `array of ${s.items ? describeType(s.items) : 'any'}`;
  return s.type ?? 'any';
}

/** Limits a schema states: length, range, pattern, item count. */
export function describeLimits(s: Schema): string[] {
  const out: string[] = [];
  const range = (lo: unknown, hi: unknown, what: string) => {
    if (lo !== undefined && hi !== undefined) out.push(`${what} ${lo}..${hi}`);
    else if (lo !== undefined) out.push(`${what} >= ${lo}`);
    else if (hi !== undefined) out.push(`${what} <= ${hi}`);
  };
  range(s.minimum, s.maximum, 'value');
  range(s.minLength, s.maxLength, 'length');
  range(s.minItems, s.maxItems, 'items');
  if (s.pattern) out.push(`pattern ${s.pattern}`);
  if (s.format) out.push(`format ${s.format}`);
  return out;
}

/** A placeholder value of a schema's type, for the example. */
function sample(name: string, s: Schema): unknown {
  if (Array.isArray(s.anyOf)) return sample(name, s.anyOf.find((x: Schema) => x.type !== 'null') ?? {});
  if ('const' in s) return s.const;
  if (s.type === 'integer' || s.type === 'number') return s.minimum ?? 1;
  if (s.type === 'boolean') return true;
  if (s.type === 'array') return [];
  if (s.type === 'object') return {};
  if (/path/.test(name)) return 'Notes/Example.md';
  if (/date/.test(name)) return '2025-01-31';
  if (s.pattern && /T/.test(s.pattern)) return '2025-01-31T09:30';
  return `<${name}>`;
}

export function actionHelp(catalog: readonly CatalogEntry[], name: string): string[] {
  const a = lookupAction(catalog, name);
  const lines = [`${a.name}: ${a.summary}`, '', `  ${a.method} ${a.route}`, `  effect: ${a.effect}${a.effect === 'destructive' ? ' (add --confirm)' : ''}; scopes: ${a.scopes.join(', ')}; surfaces: ${a.surfaces.join(', ') || 'browser only'}`];
  if (!a.implemented) lines.push('  not implemented yet: answers 501 not_implemented');
  const example: Record<string, Record<string, unknown>> = {};
  const input = (a.input ?? {}) as Record<string, Schema>;
  const parts = ['path', 'query', 'headers', 'body'].filter((p) => input[p]?.properties && Object.keys(input[p]!.properties).length);
  lines.push('', parts.length ? 'Inputs:' : 'Inputs: none');
  for (const part of parts) {
    const schema = input[part]!;
    const required = new Set<string>(schema.required ?? []);
    for (const [field, prop] of Object.entries<Schema>(schema.properties)) {
      const limits = describeLimits(prop);
      lines.push(`  ${part}.${field}${required.has(field) ? '' : '?'}  ${describeType(prop)}${limits.length ? ` (${limits.join(', ')})` : ''}${prop.description ? ` — ${prop.description}` : ''}`);
      if (required.has(field)) (example[part] ??= {})[field] = sample(field, prop);
    }
  }
  lines.push('', 'Example:', `  quire action run ${a.name} ${Object.keys(example).length ? `--input '${JSON.stringify(example)}' ` : ''}${a.effect === 'destructive' ? '--confirm ' : ''}--vault DIR   (or --server URL)`);
  const short = SHORTCUTS.find((s) => s.action === a.name);
  if (short) {
    const flags = schemaFlags(a, short.bound).map((f) => `--${f.flag}`);
    lines.push(`  quire ${short.command}${short.args ? ' ' + short.args : ''}${flags.length ? ` [${flags.join('] [')}]` : ''} [--json]`);
  }
  return lines;
}

export function printActionHelp(catalog: readonly CatalogEntry[], name: string, io: Io): void {
  for (const line of actionHelp(catalog, name)) io.out(line);
}
