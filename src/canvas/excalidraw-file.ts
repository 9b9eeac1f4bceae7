/**
 * Canvas Notes on disk: the Obsidian Excalidraw plugin's `.excalidraw.md`
 * layout, so a vault opened in Obsidian shows the same drawing.
 *
 * ```text
 * ---
 * excalidraw-plugin: parsed
 * tags: [excalidraw]
 * id: …
 * title: …
 * ---
 * ==⚠  Switch to EXCALIDRAW VIEW in the MORE OPTIONS menu of this document. ⚠==
 *
 *
 * # Excalidraw Data
 * ## Text Elements
 * Hello ^abcd1234
 *
 * %%
 * ## Drawing
 * ```json
 * { "type": "excalidraw", "version": 2, "source": …, "elements": […], "appState": {…}, "files": {} }
 * ```
 * %%
 * ```
 *
 * We write plain `json` (tab-indented, as the plugin does) and read plain
 * `json` and the plugin's legacy unfenced block. `compressed-json` (LZ-string,
 * no library for it in the project) is refused with CanvasNoteError
 * `compressed_unsupported`. See docs/canvas.md.
 */
import { yaml } from '../core/yaml.js';
import { parseFrontmatterYaml } from '../markdown/common.js';
import { CanvasInputError, CanvasNoteError, type ExcalidrawElement, type ExcalidrawScene } from './types.js';
import { checkDepth, validateElements } from './merge.js';

export const EXCALIDRAW_PLUGIN_KEY = 'excalidraw-plugin';
/**
 * Longest drawing JSON read or written, in UTF-16 code units. Element count
 * and points are bounded one by one; this bounds their product, and the
 * main thread's JSON.parse and stringify of a merge with it (16 Mi: about
 * 0.4 s to parse).
 */
export const DRAWING_MAX_CHARS = 16 * 1024 * 1024;
export const DEFAULT_SCENE_SOURCE = 'quire';
/** The line the plugin writes under the frontmatter of a new drawing. */
export const SWITCH_VIEW_NOTICE = '==⚠  Switch to EXCALIDRAW VIEW in the MORE OPTIONS menu of this document. ⚠==';

/**
 * Text elements whose id can be an Obsidian block reference (`^abcd1234`) are
 * listed under `## Text Elements`. The plugin reads that list with
 * `/\s\^(.{8})\n+/`, so only 8-character ids are safe to write there.
 */
const BLOCK_ID_RE = /^[A-Za-z0-9-]{8}$/;

export interface CanvasTextEntry {
  id: string;
  text: string;
}

export interface ParsedCanvasNote {
  scene: ExcalidrawScene;
  /** The frontmatter mapping (always has `excalidraw-plugin`). */
  frontmatter: Record<string, unknown>;
  /**
   * The `## Text Elements` list as written (`text ^id`). Informational: Quire
   * treats the JSON scene as the source of truth.
   */
  textElements: CanvasTextEntry[];
}

// ---------------------------------------------------------------------------
// scene normalisation

/** An empty scene with the plugin's default app state. */
export function blankScene(): ExcalidrawScene {
  return {
    type: 'excalidraw',
    version: 2,
    source: DEFAULT_SCENE_SOURCE,
    elements: [],
    appState: { gridSize: null, viewBackgroundColor: '#ffffff' },
    files: {},
  };
}

/**
 * Checks a scene a caller hands in and fills the top-level fields the file
 * format needs (`type`, `version`, `source`, `appState`, `files`).
 */
export function normalizeScene(scene: unknown): ExcalidrawScene {
  if (typeof scene !== 'object' || scene === null || Array.isArray(scene)) {
    throw new CanvasInputError('scene', 'scene must be an object { type, version, source, elements, appState, files }');
  }
  const s = scene as Record<string, unknown>;
  if (s['type'] !== undefined && s['type'] !== 'excalidraw') {
    throw new CanvasInputError('scene.type', `scene.type must be "excalidraw", got ${JSON.stringify(s['type'])}`);
  }
  if (!Array.isArray(s['elements'])) throw new CanvasInputError('scene.elements', 'scene.elements must be an array');
  validateElements(s['elements'], 'scene.elements');
  const appState = s['appState'] ?? {};
  const files = s['files'] ?? {};
  if (typeof appState !== 'object' || appState === null || Array.isArray(appState)) {
    throw new CanvasInputError('scene.appState', 'scene.appState must be an object');
  }
  if (typeof files !== 'object' || files === null || Array.isArray(files)) {
    throw new CanvasInputError('scene.files', 'scene.files must be an object');
  }
  const { type: _t, version, source, elements, appState: _a, files: _f, ...rest } = s;
  checkDepth(appState, 'scene.appState');
  checkDepth(files, 'scene.files');
  checkDepth(rest, 'scene');
  return {
    type: 'excalidraw',
    version: typeof version === 'number' ? version : 2,
    source: typeof source === 'string' ? source : DEFAULT_SCENE_SOURCE,
    elements: elements as ExcalidrawElement[],
    appState: appState as Record<string, unknown>,
    files: files as Record<string, unknown>,
    ...rest,
  };
}

/** The drawing block's JSON, keys in the plugin's order, tab-indented. */
export function sceneJson(scene: ExcalidrawScene): string {
  const { type, version, source, elements, appState, files, ...rest } = scene;
  return JSON.stringify({ type, version, source, elements, appState, files, ...rest }, null, '\t');
}

function textElementsBody(scene: ExcalidrawScene, eol: string): string {
  let out = '';
  for (const el of scene.elements) {
    if (el.type !== 'text' || el.isDeleted === true || !BLOCK_ID_RE.test(el.id)) continue;
    const raw = [el['rawText'], el['originalText'], el['text']].find((v) => typeof v === 'string' && v !== '');
    const text = typeof raw === 'string' ? raw.replace(/\r?\n/g, eol) : '';
    out += `${text} ^${el.id}${eol}${eol}`;
  }
  return out;
}

// ---------------------------------------------------------------------------
// render

function yamlScalar(value: string): string {
  const out = yaml().stringify(value, { lineWidth: 0 }).replace(/\n$/, '');
  return out.includes('\n') ? JSON.stringify(value) : out;
}

export interface RenderCanvasNoteInput {
  title: string;
  id: string;
  /** Omitted → a blank scene. */
  scene?: unknown;
  /** Extra tags after `excalidraw`. */
  tags?: string[];
}

/** The Markdown text of a new canvas Note. */
export function renderCanvasNote(input: RenderCanvasNoteInput): string {
  const { title, id, tags = [] } = input;
  if (typeof title !== 'string') throw new CanvasInputError('title', 'title must be a string');
  if (typeof id !== 'string' || id.trim() === '') throw new CanvasInputError('id', 'id must be a non-empty string');
  if (!Array.isArray(tags) || tags.some((t) => typeof t !== 'string' || t.trim() === '')) {
    throw new CanvasInputError('tags', 'tags must be an array of non-empty strings');
  }
  const scene = input.scene === undefined ? blankScene() : normalizeScene(input.scene);
  const allTags = ['excalidraw', ...tags.filter((t) => t !== 'excalidraw')];
  const tagList = allTags.map((t) => yamlScalar(t.replace(/^#/, ''))).join(', ');
  return [
    '---',
    `${EXCALIDRAW_PLUGIN_KEY}: parsed`,
    `tags: [${tagList}]`,
    `id: ${yamlScalar(id)}`,
    `title: ${yamlScalar(title)}`,
    '---',
    SWITCH_VIEW_NOTICE,
    '',
    '',
    '# Excalidraw Data',
    '## Text Elements',
    textElementsBody(scene, '\n') + '%%',
    '## Drawing',
    '```json',
    sceneJson(scene),
    '```',
    '%%',
    '',
  ].join('\n');
}

// ---------------------------------------------------------------------------
// locate the parts of an existing note

const FRONTMATTER_RE = /^\uFEFF?---[ \t]*\r?\n(?:([\s\S]*?)\r?\n)?---[ \t]*(?:\r?\n|$)/;
const DRAWING_HEADING_RE = /(^|\n)##? Drawing[ \t]*\r?\n/g;
const TEXT_HEADING_RE = /(^|\n)##? Text Elements[ \t]*(\r?\n|$)/;
const TEXT_SECTION_END_RE = /(^|\n)(?:##? Element Links|##? Embedded Files|# Embedded files)[ \t]*\r?\n/;

interface Located {
  frontmatter: Record<string, unknown>;
  kind: 'json' | 'bare';
  /** The JSON text: `text.slice(jsonStart, jsonEnd)`. */
  jsonStart: number;
  jsonEnd: number;
  /** The `## Text Elements` entries: `text.slice(textStart, textEnd)`; null when the note has no such section. */
  textStart: number | null;
  textEnd: number | null;
  eol: string;
}

function readFrontmatter(text: string): Record<string, unknown> {
  const m = FRONTMATTER_RE.exec(text);
  if (!m) throw new CanvasNoteError('not_canvas', 'This note is not a canvas: it has no frontmatter with excalidraw-plugin');
  // The index's own reader: bounded (nesting, aliases, size), so a hand-written frontmatter cannot stall or crash the server.
  const { data, error } = parseFrontmatterYaml(m[1] ?? '');
  if (error !== null || data === null) {
    throw new CanvasNoteError(
      'not_canvas',
      `This note is not a canvas: its frontmatter is not valid YAML (${(error ?? 'not a mapping').split('\n')[0]})`,
    );
  }
  if (!(EXCALIDRAW_PLUGIN_KEY in data)) {
    throw new CanvasNoteError('not_canvas', `This note is not a canvas: its frontmatter has no ${EXCALIDRAW_PLUGIN_KEY} key`);
  }
  return data;
}

function locate(text: string): Located {
  if (typeof text !== 'string') throw new CanvasNoteError('not_canvas', 'note text must be a string');
  const frontmatter = readFrontmatter(text);
  const eol = text.includes('\r\n') ? '\r\n' : '\n';

  // The drawing is the last `## Drawing` heading: JSON escapes line breaks, so none can hide inside it.
  let heading: RegExpExecArray | null = null;
  for (const m of text.matchAll(DRAWING_HEADING_RE)) heading = m as RegExpExecArray;
  if (!heading) throw new CanvasNoteError('no_drawing', 'This canvas note has no "## Drawing" section');
  const headingStart = heading.index + heading[1]!.length;
  const afterHeading = heading.index + heading[0].length;

  const rest = text.slice(afterHeading);
  const fence = /^[^`]*?```([\w-]*)[ \t]*\r?\n/.exec(rest);
  let kind: Located['kind'];
  let jsonStart: number;
  let jsonEnd: number;
  if (fence) {
    const lang = fence[1]!;
    if (lang === 'compressed-json') {
      throw new CanvasNoteError(
        'compressed_unsupported',
        'This canvas note stores its drawing as compressed-json, which Quire cannot read. In Obsidian, run "Excalidraw: Decompress current Excalidraw file" (or turn off "Compress Excalidraw JSON in Markdown" in the plugin\'s Saving settings) and save the drawing again.',
      );
    }
    if (lang !== 'json') {
      throw new CanvasNoteError('no_drawing', `The "## Drawing" block is fenced as ${JSON.stringify(lang)}; expected json`);
    }
    jsonStart = afterHeading + fence[0].length;
    const close = /\r?\n```/.exec(text.slice(jsonStart));
    if (!close) throw new CanvasNoteError('no_drawing', 'The ```json block under "## Drawing" is not closed');
    jsonEnd = jsonStart + close.index;
    kind = 'json';
  } else {
    // Legacy (plugin before 1.2): the JSON on one line, no fence, maybe followed by %%.
    const lead = /^\s*/.exec(rest)![0].length;
    const last = rest.lastIndexOf('}');
    if (last < lead) throw new CanvasNoteError('no_drawing', 'The "## Drawing" section holds no JSON block');
    jsonStart = afterHeading + lead;
    jsonEnd = afterHeading + last + 1;
    kind = 'bare';
  }

  // `## Text Elements`: from its heading to Element Links / Embedded Files / the `%%` before the drawing.
  let textStart: number | null = null;
  let textEnd: number | null = null;
  const th = TEXT_HEADING_RE.exec(text.slice(0, headingStart));
  if (th) {
    textStart = th.index + th[0].length;
    let end = headingStart;
    const before = text.slice(0, headingStart);
    if (before.endsWith('%%\r\n')) end -= 4;
    else if (before.endsWith('%%\n')) end -= 3;
    if (end < textStart) end = textStart;
    const stop = TEXT_SECTION_END_RE.exec(text.slice(textStart, end));
    if (stop) end = textStart + stop.index + stop[1]!.length;
    textEnd = end;
  }
  return { frontmatter, kind, jsonStart, jsonEnd, textStart, textEnd, eol };
}

function parseSceneJson(json: string): ExcalidrawScene {
  if (json.length > DRAWING_MAX_CHARS) {
    throw new CanvasNoteError('invalid_scene', `The drawing JSON of this canvas note is ${json.length} characters long; the most Quire reads is ${DRAWING_MAX_CHARS}`);
  }
  let data: unknown;
  try {
    data = JSON.parse(json);
  } catch (e) {
    throw new CanvasNoteError(
      'invalid_json',
      `The drawing JSON of this canvas note is broken: ${e instanceof Error ? e.message : String(e)}`,
    );
  }
  try {
    return normalizeScene(data);
  } catch (e) {
    throw new CanvasNoteError('invalid_scene', `The drawing of this canvas note is not an Excalidraw scene: ${(e as Error).message}`);
  }
}

// ---------------------------------------------------------------------------
// parse / replace

/** Reads a canvas Note. Throws CanvasNoteError when `text` is not a readable canvas. */
export function parseCanvasNote(text: string): ParsedCanvasNote {
  const loc = locate(text);
  const scene = parseSceneJson(text.slice(loc.jsonStart, loc.jsonEnd));
  const textElements: CanvasTextEntry[] = [];
  if (loc.textStart !== null && loc.textEnd !== null) {
    const body = text.slice(loc.textStart, loc.textEnd).replace(/\r\n/g, '\n');
    let pos = 0;
    for (const m of body.matchAll(/\s\^(.{8})\n+/g)) {
      textElements.push({ id: m[1]!, text: body.slice(pos, m.index).replace(/^\n+/, '') });
      pos = m.index + m[0].length;
    }
  }
  return { scene, frontmatter: loc.frontmatter, textElements };
}

/** `text` with `eol` line ends. split/join: a global regex replace took 0.3 s on 10 MB even with nothing to change. */
const withEol = (text: string, eol: string): string => (eol === '\n' ? text : text.split('\n').join(eol));

/**
 * Writes `scene` into an existing canvas Note: only the drawing JSON and the
 * `## Text Elements` entries change; every other byte (frontmatter, the text
 * above `# Excalidraw Data`, Element Links, Embedded Files, the `%%` markers,
 * line endings) stays as it was.
 */
export function replaceScene(text: string, scene: unknown): string {
  const loc = locate(text);
  const normalized = normalizeScene(scene);
  const json =
    loc.kind === 'json' ? withEol(sceneJson(normalized), loc.eol) : JSON.stringify(JSON.parse(sceneJson(normalized)));
  if (json.length > DRAWING_MAX_CHARS) {
    throw new CanvasInputError('scene', `The drawing would be ${json.length} characters of JSON; the most a canvas may hold is ${DRAWING_MAX_CHARS}`, undefined, {
      reason: 'too_large',
      max: DRAWING_MAX_CHARS,
    });
  }
  const edits: Array<[number, number, string]> = [[loc.jsonStart, loc.jsonEnd, json]];
  if (loc.textStart !== null && loc.textEnd !== null) {
    edits.push([loc.textStart, loc.textEnd, textElementsBody(normalized, loc.eol)]);
  }
  edits.sort((a, b) => b[0] - a[0]);
  let out = text;
  for (const [s, e, value] of edits) out = out.slice(0, s) + value + out.slice(e);
  return out;
}

/** True when `text` has frontmatter with `excalidraw-plugin` (does not check the drawing). */
export function isCanvasNote(text: string): boolean {
  try {
    readFrontmatter(text);
    return true;
  } catch {
    return false;
  }
}
