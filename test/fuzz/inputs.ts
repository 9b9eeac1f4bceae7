/**
 * Requests built from the catalog's declarations: a minimal valid input per
 * action (so a hostile value in one field reaches the handler instead of
 * failing on a missing neighbour), the path-taking inputs ("slots") of every
 * built action, and the encoding of a request with one slot set to a value
 * exactly as given.
 */
import type { AnyAction } from '../../src/actions/registry.js';
import { toFastifyRoute } from '../../src/surfaces/http/routes.js';
import type { RawRequest } from './harness.js';

type Json = any;

/** Body and query fields that name a file or folder of the Home. Route parameters are all slots. */
export const PATH_FIELDS = new Set(['path', 'folder', 'from', 'to', 'target', 'template_id']);

export interface Slot {
  action: AnyAction;
  part: 'path' | 'query' | 'body';
  name: string;
  /** For `attachments`-style arrays of objects: the key inside each item. */
  item?: string;
}

const props = (s: Json): Record<string, Json> => (s && s.properties) || {};

/** Every path-taking input of the given actions. */
export function pathSlots(actions: AnyAction[]): Slot[] {
  const out: Slot[] = [];
  for (const action of actions) {
    for (const name of Object.keys(props(action.input.path))) out.push({ action, part: 'path', name });
    for (const name of Object.keys(props(action.input.query))) if (PATH_FIELDS.has(name)) out.push({ action, part: 'query', name });
    for (const [name, s] of Object.entries(props(action.input.body))) {
      if (PATH_FIELDS.has(name)) out.push({ action, part: 'body', name });
      else if (name === 'attachments' && (s as Json).type === 'array') out.push({ action, part: 'body', name, item: 'path' });
    }
  }
  return out;
}

const NAMED: Record<string, Json> = {
  tags: ['fuzz'],
  text: 'hello',
  content: 'hello',
  title: 'Fuzz',
  body: 'body',
  date: '2026-01-02',
  tz: 'UTC',
  timezone: 'UTC',
  instant: '2030-01-01T00:00:00Z',
  url: 'http://127.0.0.1:9/',
  old_tag: 'fuzz',
  new_tag: 'fuzzed',
  name: 'fuzz',
  username: 'fuzzy',
  display_name: 'Fuzzy',
};

/** A plausible value for a schema: what a careful client would send. */
export function sample(s: Json, name = ''): Json {
  if (!s || typeof s !== 'object') return null;
  if (s.const !== undefined) return s.const;
  if (s.default !== undefined) return s.default;
  if (name in NAMED && (s.type === 'string' || s.type === 'array' || s.anyOf)) {
    const v = NAMED[name];
    if (s.type === undefined || (Array.isArray(v) ? s.type === 'array' : s.type === 'string') || s.anyOf) return v;
  }
  if (s.anyOf) {
    const branch = s.anyOf.find((b: Json) => b.type !== 'null') ?? s.anyOf[0];
    return sample(branch, name);
  }
  if (s.enum) return s.enum[0];
  switch (s.type) {
    case 'string':
      if (s.format === 'uuid') return '00000000-0000-4000-8000-000000000000';
      if (s.format === 'date-time') return '2030-01-01T00:00:00Z';
      if (s.format === 'date') return '2026-01-02';
      return 'x'.repeat(Math.max(1, s.minLength ?? 1));
    case 'integer':
    case 'number':
      return s.minimum ?? (s.exclusiveMinimum !== undefined ? s.exclusiveMinimum + 1 : 1);
    case 'boolean':
      return false;
    case 'null':
      return null;
    case 'array':
      return Array.from({ length: s.minItems ?? 0 }, () => sample(s.items));
    case 'object': {
      const o: Record<string, Json> = {};
      for (const k of s.required ?? []) o[k] = sample(s.properties?.[k], k);
      return o;
    }
    default:
      return null;
  }
}

export interface Parts {
  path: Record<string, string>;
  query: Record<string, string>;
  headers: Record<string, string>;
  body: Json;
}

/** The minimal valid input of an action: required fields only, headers that let writes through. */
export function baseParts(action: AnyAction): Parts {
  const parts: Parts = { path: {}, query: {}, headers: {}, body: undefined };
  for (const [k, s] of Object.entries(props(action.input.path))) parts.path[k] = String(sample(s, k));
  for (const k of action.input.query?.required ?? []) parts.query[k] = String(sample(props(action.input.query)[k], k));
  const hp = props(action.input.headers);
  for (const k of action.input.headers?.required ?? []) parts.headers[k] = String(sample(hp[k], k));
  if ('if-none-match' in hp) parts.headers['if-none-match'] = '*';
  else if ('if-match' in hp && !parts.headers['if-match']) parts.headers['if-match'] = '*';
  if (action.input.body) parts.body = sample(action.input.body);
  return parts;
}

/** Percent-encodes only what Node refuses on a request line (outside `!`..`~`); everything else goes as given. */
export function rawSafe(s: string): string {
  return s.replace(/[^\u0021-\u007e]/gu, (ch) => {
    try {
      return encodeURIComponent(ch);
    } catch {
      return '%EF%BF%BD'; // a lone surrogate has no UTF-8 form
    }
  });
}

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/** encodeURIComponent, with lone surrogates (which have no UTF-8 form) sent as U+FFFD. */
function enc(v: string): string {
  return encodeURIComponent(v.replace(LONE_SURROGATE, '\ufffd'));
}

function queryString(q: Record<string, string>, raw: Set<string>): string {
  const pairs = Object.entries(q).map(([k, v]) => `${enc(k)}=${raw.has(k) ? rawSafe(v) : enc(v)}`);
  return pairs.length ? `?${pairs.join('&')}` : '';
}

/**
 * The HTTP request for an action and its parts. Values named in `raw` go on
 * the request line as given (a traversal variant is already encoded the way
 * it means to be); others are encoded as a client would.
 */
export function toRequest(action: AnyAction, parts: Parts, token: string | null, raw: Set<string> = new Set()): RawRequest {
  const { wildcard } = toFastifyRoute(action.route);
  const target =
    action.route.replace(/\{([a-z_]+)\}/g, (_, name: string) => {
      const v = parts.path[name] ?? 'x';
      if (raw.has(`path.${name}`)) return rawSafe(v);
      return name === wildcard ? v.split('/').map(enc).join('/') : enc(v);
    }) + queryString(parts.query, new Set([...raw].filter((r) => r.startsWith('query.')).map((r) => r.slice(6))));
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(parts.headers)) if (/^[\t\u0020-\u007e\u0080-\u00ff]*$/.test(v)) headers[k] = v;
  if (token) headers.authorization = `Bearer ${token}`;
  let body: string | undefined;
  if (parts.body !== undefined && action.input.body) {
    body = typeof parts.body === 'string' && action.requestEncoding !== 'json' ? parts.body : JSON.stringify(parts.body);
    headers['content-type'] = action.requestEncoding === 'json' || typeof parts.body !== 'string' ? 'application/json' : 'text/plain';
  }
  return { method: action.method, target, headers, body };
}

/** An action's minimal request with one slot set to `value`. */
export function slotRequest(slot: Slot, value: string, token: string | null): RawRequest {
  const parts = baseParts(slot.action);
  const raw = new Set<string>();
  if (slot.part === 'path') {
    parts.path[slot.name] = value;
    raw.add(`path.${slot.name}`);
  } else if (slot.part === 'query') {
    parts.query[slot.name] = value;
    raw.add(`query.${slot.name}`);
  } else {
    const body = parts.body && typeof parts.body === 'object' ? { ...parts.body } : {};
    body[slot.name] = slot.item ? [{ [slot.item]: value }] : value;
    parts.body = body;
  }
  return toRequest(slot.action, parts, token, raw);
}
