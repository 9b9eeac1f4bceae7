/**
 * docs/actions.md, generated from the registry so the documentation cannot
 * drift from the declarations (a test compares the file with this output).
 */
import type { TSchema } from '@sinclair/typebox';
import type { ActionDef } from '../../actions/types.js';
import { bodyLimitOf, LIMITS } from '../../actions/limits.js';

/** Limits other than the defaults of docs/reliability.md, "Limits" (4,096 characters, 10,000 items). */
function bound(x: { maxLength?: number; maxItems?: number }): string {
  if (x.maxLength !== undefined && x.maxLength !== LIMITS.string) return ` ≤${x.maxLength}`;
  if (x.maxItems !== undefined && x.maxItems !== LIMITS.array) return ` ≤${x.maxItems} items`;
  return '';
}

function typeOf(s: TSchema): string {
  const x = s as { type?: string | string[]; anyOf?: TSchema[]; const?: unknown; format?: string; items?: TSchema; maxLength?: number; maxItems?: number };
  if (x.const !== undefined) return JSON.stringify(x.const);
  if (x.anyOf) return x.anyOf.map(typeOf).join(' \\| ');
  if (x.type === 'array') return `array of ${x.items ? typeOf(x.items) : 'any'}${bound(x)}`;
  if (x.format) return `${String(x.type)} (${x.format})${bound(x)}`;
  return x.type ? `${String(x.type)}${bound(x)}` : 'any';
}

function params(a: ActionDef<any>): string {
  const out: string[] = [];
  for (const part of ['path', 'query', 'headers', 'body'] as const) {
    const schema = a.input[part] as (TSchema & { properties?: Record<string, TSchema>; required?: string[] }) | undefined;
    if (!schema) continue;
    if (!schema.properties) {
      out.push(`${part}: ${typeOf(schema)}`);
      continue;
    }
    for (const [name, s] of Object.entries(schema.properties)) {
      const req = schema.required?.includes(name) ? 'req' : 'opt';
      out.push(`${part} \`${name}\` ${typeOf(s)} ${req}`);
    }
  }
  if (a.input.body && bodyLimitOf(a) !== LIMITS.body) out.push(`body ≤${bodyLimitOf(a) / (1024 * 1024)} MiB`);
  return out.join('; ') || 'none';
}

export function renderActionsDoc(actions: ReadonlyArray<ActionDef<any>>): string {
  const lines = [
    '# Actions',
    '',
    'Generated from the declarations in `src/*/actions.ts` by `npm run docs` — do not edit by hand.',
    'Eff: R read only, D destructive (needs `--confirm` on the command line and `confirm: true` over MCP).',
    'Limits (docs/reliability.md, "Limits"): ≤N after a type is a maximum length in characters (or items) other than the defaults, 4,096 characters per string and 10,000 items per array; bodies are at most 1 MiB unless a row says more.',
    'RC: needs a recent confirmation. Surf: A = cli, mcp, webmcp; B = browser flow only. ✔ = implemented; ✘ answers 501 `not_implemented`. Ext = an extension beyond the spec.',
    '',
  ];
  const areas = [...new Set(actions.map((a) => a.area))];
  for (const area of areas) {
    lines.push(`## ${area}`, '', '| | Action | Method and route | Scopes | Eff | Enc | Surf | Tool | Parameters |', '|---|---|---|---|---|---|---|---|---|');
    for (const a of actions.filter((x) => x.area === area)) {
      const eff = (a.effect === 'read' ? 'R' : 'D') + (a.recentConfirmation ? ' RC' : '');
      const enc = `${a.requestEncoding ?? '-'}/${a.responseEncoding ?? '-'}`;
      const surf = a.surfaces.length ? 'A' : 'B';
      const name = a.extension ? `${a.name} (Ext)` : a.name;
      lines.push(
        `| ${a.handler ? '✔' : '✘'} | ${name} | ${a.method} ${a.route} | ${a.scopes.join(', ')} | ${eff} | ${enc} | ${surf} | ${a.tool} | ${params(a).replace(/\|/g, '\\|')} |`,
      );
    }
    lines.push('');
  }
  const done = actions.filter((a) => a.handler).length;
  lines.push(`${actions.length} actions; ${done} implemented.`, '');
  return lines.join('\n');
}
