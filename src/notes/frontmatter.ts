/**
 * Rewrites frontmatter keys while keeping every other byte of the note. The
 * YAML is parsed only to find where each key's text sits; an edit replaces
 * exactly that key's source (or appends a new key, or removes the key's
 * lines), so untouched keys, comments, quoting, the body and the file's line
 * endings stay as they were.
 */
import type * as YAML from 'yaml';
import type { Pair } from 'yaml';
import { yaml } from '../core/yaml.js';
import { AppError } from '../core/errors.js';
import type { TextRange } from '../markdown/facts.js';
import { parseSimpleYaml } from '../markdown/simple-yaml.js';
import { parseYamlDocument, YAML_MAX_CHARS, YAML_MAX_FLAT_CHARS } from '../markdown/yaml-limits.js';

/** `undefined` leaves a key alone; `null` removes it; anything else sets it. */
export type FrontmatterChanges = Record<string, unknown>;

/**
 * How the file writes lists of plain values: inline `[a, b]` (`flow`), or one
 * `- item` per line with the dash `indent` columns in from its key.
 */
export interface ListStyle {
  flow: boolean;
  indent: number;
}
/** The house style, for a file without lists. */
export const HOUSE_LIST_STYLE: ListStyle = { flow: true, indent: 2 };

/** One `key: value`, lists of plain values in `style`; lists of mappings or lists are always block lists. */
export function renderPair(key: string, value: unknown, style: ListStyle = HOUSE_LIST_STYLE): string {
  const doc = new (yaml().Document)({ [key]: value });
  yaml().visit(doc, {
    Seq(_, node) {
      if (style.flow && node.items.every((i) => yaml().isScalar(i))) node.flow = true;
    },
  });
  return doc
    .toString({ flowCollectionPadding: false, lineWidth: 0, indentSeq: style.indent > 0, indent: Math.max(2, style.indent) })
    .replace(/\n$/, '');
}

/** The style of a list value as written in `inner`, or null when the node is not a list. */
function listStyleOf(inner: string, node: YAML.Node | null | undefined): ListStyle | null {
  if (!yaml().isSeq(node) || !node.range) return null;
  if (node.flow) return { flow: true, indent: 2 };
  const at = node.range[0];
  return { flow: false, indent: at - (inner.lastIndexOf('\n', at - 1) + 1) };
}

interface Edit {
  start: number;
  end: number;
  text: string;
}

/** Applies changes to the YAML text between the fences (always `\n` line endings here). */
function editYaml(inner: string, changes: FrontmatterChanges, field: string): string {
  const doc = parseYamlDocument(inner, maxCharsFor(inner));
  if (doc.errors.length > 0) {
    throw new AppError('conflict', `The note's frontmatter is not valid YAML (${doc.errors[0]!.message}); fix it before changing its properties`, {
      details: { reason: 'invalid_frontmatter' },
    });
  }
  const map = doc.contents;
  if (map !== null && !yaml().isMap(map)) {
    throw new AppError('conflict', 'The note\'s frontmatter is not a mapping of keys; fix it before changing its properties', {
      details: { reason: 'invalid_frontmatter' },
    });
  }
  const edits: Edit[] = [];
  let appended = '';
  const pairs = (map?.items ?? []) as Array<Pair<YAML.Node, YAML.Node | null>>;
  // A list keeps the style it is written in; a new list takes the style of the file's first list.
  let fileStyle: ListStyle | null = null;
  for (const p of pairs) if ((fileStyle = listStyleOf(inner, p.value))) break;
  for (const [key, value] of Object.entries(changes)) {
    if (value === undefined) continue;
    const pair = pairs.find((p) => yaml().isScalar(p.key) && String(p.key.value) === key) as Pair<YAML.Scalar, YAML.Node | null> | undefined;
    const style = listStyleOf(inner, pair?.value) ?? fileStyle ?? HOUSE_LIST_STYLE;
    if (!pair) {
      if (value !== null) appended += renderPair(key, value, style) + '\n';
      continue;
    }
    const start = pair.key.range![0];
    let end = pair.value?.range ? pair.value.range[1] : pair.key.range![1];
    // A block value's range runs past its last line break; the break belongs to the line.
    while (end > start && inner[end - 1] === '\n') end--;
    if (value === null) {
      const lineStart = inner.lastIndexOf('\n', start - 1) + 1;
      const nl = inner.indexOf('\n', Math.max(end - 1, start));
      edits.push({ start: lineStart, end: nl < 0 ? inner.length : nl + 1, text: '' });
    } else {
      edits.push({ start, end, text: renderPair(key, value, style) });
    }
  }
  let out = inner;
  for (const e of edits.sort((a, b) => b.start - a.start)) out = out.slice(0, e.start) + e.text + out.slice(e.end);
  if (appended) out = (out === '' || out.endsWith('\n') ? out : out + '\n') + appended;
  // Never write frontmatter the server would refuse to read back (docs/vault-format.md, the YAML budget).
  if (out.length > maxCharsFor(out)) {
    throw new AppError(
      'bad_request',
      `The frontmatter would be ${out.length} characters long; the server reads back at most ${YAML_MAX_CHARS}, or ${YAML_MAX_FLAT_CHARS} when it holds only plain keys and lists of plain values`,
      { details: { field, reason: 'frontmatter_too_large' } },
    );
  }
  return out;
}

/** The editor's budget: flat YAML (what the fast reader takes) may be longer. */
function maxCharsFor(yaml: string): number {
  if (yaml.length <= YAML_MAX_CHARS || yaml.length > YAML_MAX_FLAT_CHARS) return YAML_MAX_CHARS;
  return parseSimpleYaml(yaml) !== undefined ? YAML_MAX_FLAT_CHARS : YAML_MAX_CHARS;
}

export function editFrontmatter(
  text: string,
  range: TextRange | null,
  changes: FrontmatterChanges,
  opts: { frontmatterError?: string | null; field?: string } = {},
): string {
  const field = opts.field ?? 'body.frontmatter';
  if (Object.values(changes).every((v) => v === undefined)) return text;
  const eolOf = (s: string) => (s.includes('\r\n') ? '\r\n' : '\n');
  if (!range) {
    const yaml = editYaml('', changes, field);
    if (yaml === '') return text;
    const eol = eolOf(text);
    const bom = text.startsWith('\uFEFF') ? '\uFEFF' : '';
    return `${bom}---${eol}${yaml.replace(/\n/g, eol)}---${eol}${text.slice(bom.length)}`;
  }
  if (opts.frontmatterError) {
    throw new AppError('conflict', `The note's frontmatter is not valid YAML (${opts.frontmatterError}); fix it before changing its properties`, {
      details: { reason: 'invalid_frontmatter' },
    });
  }
  const block = text.slice(range.start, range.end);
  const eol = eolOf(block);
  const firstEol = block.search(/\r?\n/);
  const innerStart = range.start + firstEol + (block[firstEol] === '\r' ? 2 : 1);
  const closing = /(^|\r?\n)(---|\.\.\.)[ \t]*(\r?\n)?$/.exec(block);
  const innerEnd = closing ? range.start + closing.index + closing[1]!.length : range.end;
  const inner = text.slice(innerStart, innerEnd).replace(/\r\n/g, '\n');
  const edited = editYaml(inner, changes, field);
  return text.slice(0, innerStart) + edited.replace(/\n/g, eol) + text.slice(innerEnd);
}

/** The body of a note: everything after the frontmatter block. */
export function bodyOf(text: string, range: TextRange | null): string {
  return range ? text.slice(range.end) : text.startsWith('\uFEFF') ? text.slice(1) : text;
}
