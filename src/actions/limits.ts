/**
 * The input limits every action gets (docs/reliability.md, "Limits"). Declarations say what a
 * field is; this module says how big it may be, so no area can forget a bound: every string gets
 * a `maxLength`, every array a `maxItems`, every object a `maxProperties`, every value of open
 * shape a size, every input a depth, and every route a body size. A declaration's own bound wins.
 * These are the generic bounds of the request layer; an area's own rules (the notes area's title,
 * tag and frontmatter limits) may be tighter and then decide.
 *
 * Limits go by the field's name (a `title` is a name, a `path` a Home path, `body` and
 * `content` the bytes of a note or file) because the same words mean the same things in every
 * area; the few actions that carry whole files get larger bodies.
 */
import { CloneType, Kind, type TSchema } from '@sinclair/typebox';
import type { Ajv } from 'ajv';
import type { ActionDef, InputSchemas } from './types.js';

const KiB = 1024;
const MiB = 1024 * KiB;

/** The figures, in one place for docs/reliability.md and the tests. */
export const LIMITS = {
  /** Any string the table below does not name (characters). */
  string: 4 * KiB,
  /** Names (display names, usernames, passkey and calendar names): what one file name holds. */
  name: 255,
  /**
   * Note titles: a backstop above the notes area's own rule (1,000 characters, the file name
   * takes a prefix of the title: docs/notes-api.md, "Limits").
   */
  title: 1 * KiB,
  /** Home paths and folders: PATH_MAX. */
  path: 4 * KiB,
  /** One tag, nested parts included. */
  tag: 1 * KiB,
  /** Free text that is not a whole note: task and log text, descriptions, selections. */
  text: 64 * KiB,
  /** Items of any array. */
  array: 10_000,
  /** Tags sent with one note (the notes area's own rule allows as many, each at most 200 characters). */
  tagsPerNote: 1_000,
  /** Keys of any object (frontmatter sent with a note included: the notes area counts its values). */
  objectKeys: 10_000,
  /** Nesting of a whole JSON body, checked on the raw text before it is parsed, and of any input. */
  bodyDepth: 64,
  /** Size as JSON text of one value whose shape the schema leaves open (a frontmatter value, a canvas element, a WebAuthn credential). */
  unknownSize: 1 * MiB,
  /** Request body of an action that carries no whole file. */
  body: 1 * MiB,
  /** Request body of an action that carries a whole note or file. */
  contentBody: 32 * MiB,
} as const;

/** Actions that carry a whole note, file or drawing, and their body size. */
const LARGE_BODIES: Record<string, number> = {
  create: LIMITS.contentBody,
  notes_update: LIMITS.contentBody,
  files_write: LIMITS.contentBody,
  public_upload_create: LIMITS.contentBody,
  public_upload_patch: LIMITS.contentBody,
  canvas_elements_event: 8 * MiB,
};

/** Field names whose strings may fill the action's whole body. */
const CONTENT_FIELDS = new Set(['body', 'content', 'content_base64', 'icalendar']);
const NAME_FIELDS = new Set(['name', 'display_name', 'username', 'installation_name']);
const PATH_FIELDS = new Set(['path', 'folder', 'home_prefix']);
const TAG_FIELDS = new Set(['tag', 'tags', 'new_tag', 'old_tag']);
const TEXT_FIELDS = new Set(['text', 'description', 'selected_text', 'highlights']);

/**
 * How a breach is reported: a name or path over its length is `name_too_long`, as the vault
 * reports names it cannot store; anything else is `bad_request`.
 */
export type LimitClass = 'name' | 'path' | 'other';
export const LIMIT_CLASS = 'x-quire-limit';

/** The body size Fastify enforces on the action's route (413 above it). */
export function bodyLimitOf(action: Pick<ActionDef<any>, 'name'>): number {
  return LARGE_BODIES[action.name] ?? LIMITS.body;
}

type Mutable = Record<string, unknown> & { [Kind]?: string };

/** A string's bound from the property name it sits under (`tags` for `body.tags[]`, the part for a bare body). */
function stringLimit(field: string, bodyLimit: number): { max: number; cls: LimitClass } {
  if (CONTENT_FIELDS.has(field)) return { max: bodyLimit, cls: 'other' };
  if (NAME_FIELDS.has(field)) return { max: LIMITS.name, cls: 'name' };
  if (field === 'title') return { max: LIMITS.title, cls: 'other' };
  if (PATH_FIELDS.has(field)) return { max: LIMITS.path, cls: 'path' };
  if (TAG_FIELDS.has(field)) return { max: LIMITS.tag, cls: 'other' };
  if (TEXT_FIELDS.has(field)) return { max: LIMITS.text, cls: 'other' };
  return { max: LIMITS.string, cls: 'other' };
}

function limitNode(node: Mutable, field: string, bodyLimit: number): void {
  const type = node.type;
  if (type === 'string' && node.maxLength === undefined) {
    const { max, cls } = stringLimit(field, bodyLimit);
    node.maxLength = max;
    if (cls !== 'other') node[LIMIT_CLASS] = cls;
  }
  if (type === 'array' && node.maxItems === undefined) node.maxItems = TAG_FIELDS.has(field) ? LIMITS.tagsPerNote : LIMITS.array;
  if (type === 'object' && node.maxProperties === undefined) node.maxProperties = LIMITS.objectKeys;
  if ((node[Kind] === 'Unknown' || node[Kind] === 'Any') && node.maxSize === undefined) node.maxSize = LIMITS.unknownSize;
  const props = node.properties as Record<string, Mutable> | undefined;
  for (const [key, child] of Object.entries(props ?? {})) limitNode(child, key, bodyLimit);
  if (node.items && typeof node.items === 'object') limitNode(node.items as Mutable, field, bodyLimit);
  if (node.additionalProperties && typeof node.additionalProperties === 'object') {
    limitNode(node.additionalProperties as Mutable, `${field}.*`, bodyLimit);
  }
  for (const child of Object.values((node.patternProperties ?? {}) as Record<string, Mutable>)) limitNode(child, `${field}.*`, bodyLimit);
  for (const key of ['anyOf', 'oneOf', 'allOf'] as const) {
    for (const child of (node[key] ?? []) as Mutable[]) limitNode(child, field, bodyLimit);
  }
}

/**
 * The action's input schemas with every limit filled in: copies, so a schema object shared
 * between declarations keeps the bounds of each action.
 */
export function limitedInput(action: ActionDef<any>): InputSchemas {
  const bodyLimit = bodyLimitOf(action);
  const out: InputSchemas = {};
  for (const part of ['path', 'query', 'headers', 'body'] as const) {
    const schema = action.input[part] as TSchema | undefined;
    if (!schema) continue;
    const copy = CloneType(schema) as unknown as Mutable;
    limitNode(copy, part, bodyLimit);
    (out as Record<string, unknown>)[part] = copy;
  }
  return out;
}

/**
 * The declaration as every surface sees it: its schemas with the limits in them, made at the
 * first read of `input` (copying every action's schemas took about 10 ms of each server start,
 * docs/performance.md "Start-up", and a start calls few actions).
 */
export function withLimits<A extends ActionDef<any>>(action: A): A {
  let input: InputSchemas | undefined;
  return Object.defineProperty({ ...action }, 'input', { get: () => (input ??= limitedInput(action)), enumerable: true });
}

/** Nesting of a parsed value; stops counting past `max`, so a hostile value costs at most `max` frames. */
export function depthExceeds(value: unknown, max: number): boolean {
  if (value === null || typeof value !== 'object') return false;
  if (max <= 0) return true;
  for (const child of Array.isArray(value) ? value : Object.values(value)) {
    if (depthExceeds(child, max - 1)) return true;
  }
  return false;
}

/**
 * Nesting of raw JSON text, in one pass without parsing: brackets inside strings do not count.
 * Returns true as soon as the depth passes `max`.
 */
export function jsonTextDepthExceeds(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92 /* \ */) i++;
      else if (c === 34 /* " */) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 91 /* [ */ || c === 123 /* { */) {
      if (++depth > max) return true;
    } else if (c === 93 /* ] */ || c === 125 /* } */) depth--;
  }
  return false;
}

/** Length of a value as JSON text. */
function jsonSizeExceeds(value: unknown, max: number): boolean {
  const text = JSON.stringify(value);
  return text !== undefined && text.length > max;
}

/** The `maxSize` keyword, for values of open shape. */
export function addLimitKeywords(ajv: Ajv): void {
  ajv.addKeyword({
    keyword: 'maxSize',
    schemaType: 'number',
    errors: true,
    validate: function check(max: number, data: unknown) {
      // The whole input's depth is bounded before validation, so stringifying cannot recurse without bound.
      if (!jsonSizeExceeds(data, max)) return true;
      (check as { errors?: unknown[] }).errors = [{ keyword: 'maxSize', message: `must not be larger than ${max} characters as JSON`, params: { limit: max } }];
      return false;
    },
  });
}
