/**
 * The one declaration of an action (architecture rule 5). Every surface —
 * HTTP routes, `quire action run`, MCP tools, `quire actions list`, docs — is
 * derived from these records; nothing else names a route or a scope.
 */
import type { Static, TObject, TOptional, TSchema } from '@sinclair/typebox';
import type { Effect, Scope } from '../core/access.js';
import type { ActionContext } from './context.js';

export type { Effect, Scope } from '../core/access.js';
export type Surface = 'cli' | 'mcp' | 'webmcp';
export type Encoding = 'none' | 'json' | 'text' | 'base64' | 'sse';
export type HttpMethod = 'GET' | 'HEAD' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/**
 * Input schemas per part of a request. `path`, `query` and `headers` are
 * objects of named values; `body` is any schema (a few actions take a bare
 * JSON boolean). Header names are lower-case, as Node delivers them.
 */
export interface InputSchemas {
  path?: TObject;
  query?: TObject;
  headers?: TObject;
  body?: TSchema;
}

type Part<S> = S extends TSchema ? Static<S> : undefined;

/** The validated input a handler receives, typed from its schemas. */
export interface ActionInput<S extends InputSchemas = InputSchemas> {
  path: S['path'] extends TObject ? Static<S['path']> : Record<string, never>;
  query: S['query'] extends TObject ? Static<S['query']> : Record<string, never>;
  headers: S['headers'] extends TObject ? Static<S['headers']> : Record<string, never>;
  body: S['body'] extends TOptional<infer T> ? Static<T> | undefined : Part<S['body']>;
}

export type ActionHandler<S extends InputSchemas = InputSchemas> = (
  ctx: ActionContext,
  input: ActionInput<S>,
) => Promise<unknown> | unknown;

export interface ActionDef<S extends InputSchemas = InputSchemas> {
  /** The spec's action name, e.g. `current_user`. */
  name: string;
  method: HttpMethod;
  /** The spec's route, with `{param}` placeholders, e.g. `/api/v1/auth/users/{id}/role`. */
  route: string;
  /** MCP tool name: `svc_api_<name>` unless the spec names another. */
  tool: string;
  /** Empty for browser-only routes (surface code B). */
  surfaces: Surface[];
  scopes: Scope[];
  effect: Effect;
  /** null only where the spec leaves the encoding unstated. */
  requestEncoding: Encoding | null;
  responseEncoding: Encoding | null;
  /** RC: needs a recent account confirmation. */
  recentConfirmation: boolean;
  /** The spec section the action belongs to, as in spec/actions.json `area`. */
  area: string;
  /** One or two sentences for help texts and MCP tool descriptions. */
  summary: string;
  input: S;
  /** True for actions this project adds beyond the spec's table (documented in docs/). */
  extension?: boolean;
  /** Absent until built: dispatch then answers 501 `not_implemented`. */
  handler?: ActionHandler<S>;
}

/** Identity helper that keeps the input schemas' types flowing into the handler. */
export function defineAction<S extends InputSchemas>(def: ActionDef<S>): ActionDef<S> {
  return def;
}
