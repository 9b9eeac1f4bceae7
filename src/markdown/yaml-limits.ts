/**
 * `parseDocument` of the `yaml` package with a nesting and alias budget
 * checked first. The package composes nodes recursively: YAML nested about a
 * thousand levels deep overflows the stack, and near the stack's end V8 can
 * abort the whole process while compiling a regular expression (not an
 * exception anyone can catch). Its alias-count check is quadratic in a chain
 * of aliases (20,000 aliases: 25 s). And it is slow per item (about 25 µs:
 * a 400 KB list takes seconds on the main thread). So the text is measured
 * first, then the package's own parser (text to CST, iterative) runs and the
 * budget is counted on the CST in one pass, before composing. Over budget,
 * the document comes back empty with one error, the shape every caller
 * already handles as "not valid YAML". Most frontmatter never gets here: the
 * linear fast path (simple-yaml.ts) reads flat mappings of any size.
 */
import type { CST, Document } from 'yaml';
import { yaml } from '../core/yaml.js';

/** Deepest nesting read from a file (the writer's limit, FRONTMATTER_MAX_DEPTH, is well below it). */
export const YAML_MAX_DEPTH = 100;
/** Most aliases (`*name`) read from a file. */
export const YAML_MAX_ALIASES = 100;
/** Longest YAML given to the package, in UTF-16 code units (32 Ki: a few hundred ms in the worst case found). */
export const YAML_MAX_CHARS = 32_768;
/**
 * Longest flat YAML (what `parseSimpleYaml` reads) the frontmatter editor
 * gives the package: 1,000 tags of 200 characters, the most one request may
 * set, fit. Flat YAML costs about 25 µs per item (256 Ki: well under a second).
 */
export const YAML_MAX_FLAT_CHARS = 262_144;

/**
 * The deepest run of unclosed `[` / `{` in the text, quotes ignored: an upper
 * bound on flow nesting, counted without the package (whose parser slows
 * down with depth: 50,000 levels take a second).
 */
function bracketDepth(src: string): number {
  let depth = 0;
  let max = 0;
  for (let i = 0; i < src.length; i++) {
    const c = src.charCodeAt(i);
    if (c === 91 || c === 123) max = Math.max(max, ++depth);
    else if ((c === 93 || c === 125) && depth > 0) depth--;
  }
  return max;
}

/** Why `tokens` exceed the budget, or null. */
function overBudget(tokens: readonly CST.Token[]): { at: number; message: string } | null {
  const stack: Array<{ token: CST.Token; depth: number }> = tokens.map((token) => ({ token, depth: 0 }));
  let aliases = 0;
  while (stack.length > 0) {
    const { token, depth } = stack.pop()!;
    switch (token.type) {
      case 'document':
        if (token.value) stack.push({ token: token.value, depth });
        break;
      case 'alias':
        if (++aliases > YAML_MAX_ALIASES) return { at: token.offset, message: `more than ${YAML_MAX_ALIASES} aliases` };
        break;
      case 'block-map':
      case 'block-seq':
      case 'flow-collection': {
        if (depth >= YAML_MAX_DEPTH) return { at: token.offset, message: `nested more than ${YAML_MAX_DEPTH} levels deep` };
        for (const item of token.items) {
          if ('key' in item && item.key) stack.push({ token: item.key, depth: depth + 1 });
          if (item.value) stack.push({ token: item.value, depth: depth + 1 });
        }
        break;
      }
      default:
        break;
    }
  }
  return null;
}

/** Why `src` is refused before it is parsed (too long, too deeply bracketed), or null. */
export function textOverBudget(src: string, maxChars = YAML_MAX_CHARS): { at: number; message: string } | null {
  if (src.length > maxChars) return { at: maxChars, message: `longer than ${maxChars} characters` };
  // Brackets inside scalars count too, hence the margin: only absurd text is refused unparsed.
  if (bracketDepth(src) > 4 * YAML_MAX_DEPTH) return { at: 0, message: `nested more than ${YAML_MAX_DEPTH} levels deep` };
  return null;
}

/** One YAML document, as `parseDocument(src, { prettyErrors: false })` gives it, or an empty one with an error when over budget. */
export function parseYamlDocument(src: string, maxChars = YAML_MAX_CHARS): Document.Parsed {
  let tokens: CST.Token[] = [];
  const over = textOverBudget(src, maxChars) ?? overBudget((tokens = [...new (yaml().Parser)().parse(src)]));
  if (over) {
    const doc = new (yaml().Document)() as Document.Parsed;
    doc.errors.push(new (yaml().YAMLParseError)([over.at, over.at + 1], 'RESOURCE_EXHAUSTION', `YAML ${over.message}`));
    return doc;
  }
  let doc: Document.Parsed | null = null;
  for (const d of new (yaml().Composer)().compose(tokens, true, src.length)) {
    if (!doc) doc = d;
    else {
      doc.errors.push(new (yaml().YAMLParseError)(d.range.slice(0, 2) as [number, number], 'MULTIPLE_DOCS', 'Source contains multiple documents'));
      break;
    }
  }
  return doc!;
}
