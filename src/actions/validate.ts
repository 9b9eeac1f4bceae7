/**
 * Input validation for every surface, compiled once per action from its
 * TypeBox schemas. Path, query and header values arrive as strings over HTTP,
 * so those parts are coerced to the schema's types; bodies are taken as sent.
 */
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { TypeGuard, type TSchema } from '@sinclair/typebox';
import { AppError, errors, type ErrorCode } from '../core/errors.js';
import { addLimitKeywords, depthExceeds, LIMIT_CLASS, LIMITS } from './limits.js';
import type { ActionDef, ActionInput } from './types.js';

// ajv-formats is CommonJS; under NodeNext its callable export sits on `default`.
type AddFormats = (ajv: Ajv) => Ajv;
const addFormats: AddFormats =
  (addFormatsModule as unknown as { default?: AddFormats }).default ?? (addFormatsModule as unknown as AddFormats);

// No meta-schema (validateSchema and meta off): checking each schema against the JSON Schema meta-schema meant
// compiling the meta-schema's own validator at the first request, and adding it to each instance cost more (together
// 25-40 ms of a start, docs/performance.md "Start-up"). The schemas are code, not input: test/catalog.test.ts compiles
// every one with the check on. Each instance is made at its first use (a GET needs no body validator).
function makeAjv(coerce: boolean): Ajv {
  const ajv = new Ajv({ allErrors: true, verbose: true, coerceTypes: coerce ? 'array' : false, useDefaults: true, strict: false, validateSchema: false, meta: false });
  addFormats(ajv);
  addLimitKeywords(ajv);
  return ajv;
}
let coercing: Ajv | undefined;
let exact: Ajv | undefined;

/** Makes both instances now: the server's and daemon's preload (surfaces/deferred-modules.ts) calls it at a quiet moment, so the first call does not. */
export function prepareValidators(): void {
  coercing ??= makeAjv(true);
  exact ??= makeAjv(false);
}

export type Part = 'path' | 'query' | 'headers' | 'body';
const PARTS: Part[] = ['path', 'query', 'headers', 'body'];

/** The raw input of a call: what the command line's `--input` object holds, or what HTTP delivered. */
export interface RawInput {
  path?: Record<string, unknown>;
  query?: Record<string, unknown>;
  headers?: Record<string, unknown>;
  body?: unknown;
}

const compiled = new WeakMap<ActionDef<any>, Partial<Record<Part, ValidateFunction>>>();

function validatorsOf(action: ActionDef<any>): Partial<Record<Part, ValidateFunction>> {
  let v = compiled.get(action);
  if (!v) {
    v = {};
    for (const part of PARTS) {
      const schema = action.input[part] as TSchema | undefined;
      if (schema) v[part] = (part === 'body' ? (exact ??= makeAjv(false)) : (coercing ??= makeAjv(true))).compile(schema);
    }
    compiled.set(action, v);
  }
  return v;
}

function lowerKeys(obj: Record<string, unknown> | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, val] of Object.entries(obj ?? {})) out[k.toLowerCase()] = Array.isArray(val) ? val[0] : val;
  return out;
}

const LIMIT_KEYWORDS = new Set(['maxLength', 'maxItems', 'maxProperties', 'maxSize']);
const VALUE_RULES = new Set(['minLength', 'pattern', 'format', 'minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf']);

/** A limit breach, said with the size sent and the limit (docs/reliability.md, "Limits"). */
function describeLimit(field: string, e: ErrorObject): { field: string; message: string; code: ErrorCode; limit: string } {
  const limit = String((e.params as { limit: number }).limit);
  const data = e.data as unknown;
  const cls = (e.parentSchema as Record<string, unknown> | undefined)?.[LIMIT_CLASS];
  let message: string;
  switch (e.keyword) {
    case 'maxLength':
      message = `${field} is ${(data as string).length} characters long; the limit is ${limit}`;
      break;
    case 'maxItems':
      message = `${field} has ${(data as unknown[]).length} items; the limit is ${limit}`;
      break;
    case 'maxProperties':
      message = `${field} has ${Object.keys(data as object).length} keys; the limit is ${limit}`;
      break;
    default:
      message = `${field} ${e.message ?? 'is too large'}`;
  }
  return { field, message, code: cls === 'name' || cls === 'path' ? 'name_too_long' : 'bad_request', limit };
}

/** A readable sentence for the most relevant schema error, and the field it names. */
function describe(part: Part, errs: ErrorObject[]): { field: string; message: string; code?: ErrorCode; limit?: string } {
  const fieldOf = (e: ErrorObject) => {
    const extra =
      e.keyword === 'required'
        ? `/${(e.params as { missingProperty: string }).missingProperty}`
        : e.keyword === 'additionalProperties'
          ? `/${(e.params as { additionalProperty: string }).additionalProperty}`
          : '';
    // Array items as `[i]`, as the domain names them: body.entries[2].text.
    return (e.instancePath + extra)
      .split('/')
      .filter(Boolean)
      .reduce((out, seg) => (/^\d+$/.test(seg) ? `${out}[${seg}]` : `${out}.${seg.replace(/~1/g, '/').replace(/~0/g, '~')}`), part);
  };
  // Prefer an `anyOf` failure at the shallowest path: it lists the allowed forms.
  // A limit breach comes first: the other errors of an oversized value say nothing useful.
  const overLimit = errs.find((e) => LIMIT_KEYWORDS.has(e.keyword));
  if (overLimit) return describeLimit(fieldOf(overLimit), overLimit);
  const anyOf = errs.find((e) => e.keyword === 'anyOf');
  // A value of an allowed type that breaks a rule of its branch (an empty string where the form is
  // "string or null"): that rule says more than the list of forms.
  const broken = anyOf && errs.find((e) => e.instancePath === anyOf.instancePath && VALUE_RULES.has(e.keyword));
  const best = broken ?? anyOf ?? errs.find((e) => e.keyword !== 'if') ?? errs[0]!;
  const field = fieldOf(best);
  let message: string;
  switch (best.keyword) {
    case 'required':
      message = `${field} is required`;
      break;
    case 'additionalProperties':
      message = `${field} is not a known ${part === 'body' ? 'body field' : `${part} parameter`}`;
      break;
    case 'anyOf': {
      const branches = (best.schema ?? []) as Array<{ const?: unknown; type?: unknown; properties?: object }>;
      // An object form is named by its members, e.g. `{ after }` or `{ index }`.
      const forms = branches.map((b) =>
        b.const !== undefined
          ? JSON.stringify(b.const)
          : b.type === 'object' && b.properties
            ? `{ ${Object.keys(b.properties).join(', ')} }`
            : String(b.type ?? 'value'),
      );
      message = branches.every((b) => b.const !== undefined)
        ? `${field} must be one of ${forms.join(', ')}`
        : `${field} must be ${forms.join(' or ')}`;
      break;
    }
    case 'minItems':
    case 'minLength': {
      const min = (best.params as { limit: number }).limit;
      const unit = best.keyword === 'minItems' ? 'items' : 'characters';
      message = min === 1 ? `${field} must not be empty` : `${field} must have at least ${min} ${unit}`;
      break;
    }
    default:
      message = `${field} ${best.message ?? 'is invalid'}`;
  }
  if (field === part && best.keyword === 'type' && part === 'body') {
    message = `request body ${best.message ?? 'is invalid'}`;
  }
  return { field, message };
}

/**
 * Validates and normalises raw input against the action's schemas. A missing
 * `If-Match` (or other conditional header) is 428; anything else is 400 with
 * `details.field` naming what was wrong.
 */
export function validateInput(action: ActionDef<any>, raw: RawInput): ActionInput {
  const v = validatorsOf(action);
  const input: Record<Part, unknown> = {
    path: { ...(raw.path ?? {}) },
    query: { ...(raw.query ?? {}) },
    headers: lowerKeys(raw.headers as Record<string, unknown> | undefined),
    body: raw.body,
  };
  // Before validation, whose recursion follows the value's nesting.
  if (depthExceeds(input.body, LIMITS.bodyDepth)) {
    throw new AppError('bad_request', `request body nests deeper than ${LIMITS.bodyDepth} levels`, {
      details: { field: 'body', limit: String(LIMITS.bodyDepth) },
    });
  }
  for (const part of PARTS) {
    const check = v[part];
    if (!check) continue;
    if (part === 'body' && input.body === undefined && TypeGuard.IsOptional(action.input.body)) continue;
    if (check(input[part])) continue;
    const errs = check.errors ?? [];
    const missingHeader = errs.find(
      (e) => part === 'headers' && e.keyword === 'required' &&
        /^if-(none-)?match$/.test((e.params as { missingProperty: string }).missingProperty),
    );
    if (missingHeader) {
      const name = (missingHeader.params as { missingProperty: string }).missingProperty;
      throw errors.preconditionRequired(name === 'if-match' ? 'If-Match' : 'If-None-Match');
    }
    const { field, message, code, limit } = describe(part, errs);
    throw new AppError(code ?? 'bad_request', message, { details: limit ? { field, limit } : { field } });
  }
  if (!action.input.body && raw.body !== undefined && raw.body !== null && raw.body !== '') {
    throw new AppError('bad_request', `${action.name} takes no request body`, { details: { field: 'body' } });
  }
  return input as unknown as ActionInput;
}
