/**
 * The spec's catalog (spec/actions.json, the repo's copy of the 197 declared actions) as the
 * source of every fact the spec states about an action: method, route, MCP tool, surfaces,
 * scopes, effect, encodings, recent confirmation and area. An area declares a spec action with
 * `specAction(name, { summary, input, handler })` and writes only what the spec does not say;
 * actions beyond the spec (extensions) still use the full `defineAction` form.
 */
import { readFileSync } from 'node:fs';
import { Type, type ObjectOptions, type SchemaOptions, type TLiteral, type TProperties, type TUnion, type TSchema } from '@sinclair/typebox';
import { installFile } from '../core/install.js';
import type { ActionDef, ActionHandler, Effect, Encoding, HttpMethod, InputSchemas, Scope, Surface } from './types.js';

/** One row of spec/actions.json, as the spec's generator wrote it. */
export interface SpecRow {
  name: string;
  method: HttpMethod;
  route: string;
  scopes: Scope[];
  effect: Effect;
  request_encoding: Encoding | null;
  response_encoding: Encoding | null;
  surfaces: Surface[];
  tool: string;
  recent_confirmation: boolean;
  area: string;
  document: string;
  /** The spec's parameter text, e.g. "body `name` string req; query `limit` int". */
  params: string;
}

// Read once at start-up.
export const specRows: ReadonlyArray<SpecRow> = JSON.parse(
  readFileSync(installFile('spec/actions.json'), 'utf8'),
);

const rowsByName = new Map(specRows.map((row) => [row.name, row] as const));

/** What an area writes for a spec action: everything the spec does not state. */
export interface SpecActionParts<S extends InputSchemas> {
  /** One or two sentences for help texts and MCP tool descriptions. */
  summary: string;
  /** Omitted for an action that takes no input. */
  input?: S;
  /** Absent until built: dispatch then answers 501 `not_implemented`. */
  handler?: ActionHandler<S>;
}

const fromSpec = new WeakSet<ActionDef<any>>();

/**
 * The declaration of spec action `name`, its spec facts read from the catalog. Throws at import
 * time for a name the spec does not declare, so a typo cannot become a silent extension.
 */
export function specAction<S extends InputSchemas = Record<never, never>>(name: string, parts: SpecActionParts<S>): ActionDef<S> {
  const row = rowsByName.get(name);
  if (!row) throw new Error(`specAction("${name}"): spec/actions.json declares no such action; declare an extension with defineAction`);
  const def: ActionDef<S> = {
    name,
    method: row.method,
    route: row.route,
    tool: row.tool,
    surfaces: [...row.surfaces],
    scopes: [...row.scopes],
    effect: row.effect,
    requestEncoding: row.request_encoding,
    responseEncoding: row.response_encoding,
    recentConfirmation: row.recent_confirmation,
    area: row.area,
    ...parts,
    input: parts.input ?? ({} as S),
  };
  fromSpec.add(def);
  return def;
}

/** Whether `def` is a declaration made by specAction, its facts read from the catalog (for the catalog test). */
export function isSpecDeclaration(def: ActionDef<any>): boolean {
  return fromSpec.has(def);
}

/** A closed object: path, query and body objects name every member they accept. */
export const Obj = <P extends TProperties>(properties: P, options: ObjectOptions = {}) =>
  Type.Object(properties, { ...options, additionalProperties: false });

/** Request headers: open, since every request carries more headers than an action reads (names lower-case). */
export const Headers = <P extends TProperties>(properties: P) => Type.Object(properties, { additionalProperties: true });

/** A value or JSON null (the spec's `x/null`). */
export const Nullable = <T extends TSchema>(schema: T, options: SchemaOptions = {}) => Type.Union([schema, Type.Null()], options);

/** A non-empty string path parameter, e.g. `{ id: PathString('ID of the passkey') }`. */
export const PathString = (description?: string) => Type.String({ minLength: 1, ...(description ? { description } : {}) });

/** One of the listed strings (the spec's "one of `a`, `b`"), typed as their union. */
export const OneOf = <const T extends readonly string[]>(values: T, options: SchemaOptions = {}) =>
  Type.Union(values.map((v) => Type.Literal(v)), options) as unknown as TUnion<{ -readonly [K in keyof T]: TLiteral<T[K]> }>;
