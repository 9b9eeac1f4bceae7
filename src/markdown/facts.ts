/**
 * The facts Quire extracts from one note's Markdown text. Two implementations
 * produce them and must agree exactly: `extractFacts` (src/markdown/extract.ts,
 * a fast line scanner) and `referenceFacts` (test/markdown/reference-extractor.ts, built
 * on remark's mdast, the source of truth). The rules are written down in
 * docs/vault-format.md.
 *
 * Positions everywhere:
 * - `offset` is a 0-based index into the note text exactly as given (UTF-16
 *   code units; a leading byte-order mark counts as one unit).
 * - `line` is 1-based. Lines end at `\n`, `\r\n` or a lone `\r`.
 * - `column` is 1-based, in UTF-16 code units from the start of the line
 *   (`offset - lineStartOffset + 1`; on line 1 a BOM counts).
 */

/** A half-open range `[start, end)` of offsets into the note text. */
export interface TextRange {
  start: number;
  end: number;
}

/** One inline `#tag` occurrence in the body (never one from frontmatter). */
export interface TagOccurrence {
  /** The tag as written, without the leading `#` (original case). */
  tag: string;
  /** Line of the `#`. */
  line: number;
  /** Column of the `#`. */
  column: number;
  /** Offset of the `#`; the occurrence spans `offset .. offset + 1 + tag.length`. */
  offset: number;
}

/** An ATX (`## Text`) or setext (`Text\n===`) heading. */
export interface Heading {
  /** 1 to 6 (setext: `=` is 1, `-` is 2). */
  level: number;
  /**
   * The heading's raw Markdown content: for ATX without the opening `#`s and
   * without an optional closing `#` sequence; for setext the content lines
   * joined with one space. Each line is trimmed; inline markup is kept as written.
   */
  text: string;
  /** Line of the heading (for setext, its first content line). */
  line: number;
}

/** A block anchor `^block-id` ending a paragraph (or list item paragraph). */
export interface BlockAnchor {
  /** The id, without `^`: `[A-Za-z0-9-]+`. */
  id: string;
  /** Line of the `^`. */
  line: number;
  /** Column of the `^`. */
  column: number;
}

/** A link from this note: a wikilink or a Markdown link/image to a Home file. */
export interface Link {
  /** `wikilink` for `[[...]]` / `![[...]]`; `markdown` for `[text](dest)` / `![alt](dest)`. */
  kind: 'wikilink' | 'markdown';
  /** True for `![[...]]` and for Markdown images `![alt](dest)`. */
  embed: boolean;
  /**
   * The linked note or file, without subpath: for wikilinks as written
   * (trimmed), for Markdown links percent-decoded. Empty for a same-note
   * link such as `[[#Heading]]` or `[x](#Heading)`.
   */
  target: string;
  /** The heading subpath after `#` (may itself contain `#`), or null. */
  heading: string | null;
  /** The block id after `#^`, or null. */
  blockId: string | null;
  /**
   * Wikilinks: the display text after `|` (trimmed), or null. Markdown
   * links and images: the raw source between the brackets (may be empty).
   */
  alias: string | null;
  /** Line of the link's first character (`[` or `!`). */
  line: number;
  /** Column of the link's first character. */
  column: number;
  /** Source range of the whole link, `[[`/`![[` to `]]`, or `[`/`![` to `)`. */
  start: number;
  end: number;
}

/** A task: a list item whose paragraph starts with a `[c]` checkbox. */
export interface Task {
  /** Line of the list item (its marker). */
  line: number;
  /** The single character between the brackets: ' ', 'x', 'X', '/', '-', '>', ... */
  status: string;
  /** True only for status `x` or `X` (done). */
  checked: boolean;
  /** True only for status `-` (cancelled). A cancelled task is not checked. */
  cancelled: boolean;
  /**
   * The rest of the item's first line after the checkbox, trimmed, raw
   * Markdown; without the trailing ` ^id` when that is the item's block id.
   */
  text: string;
  /** The item's block id (a `^id` ending its first paragraph, on its first line), or null. */
  blockId: string | null;
  /** Due date `YYYY-MM-DD` from `📅 date`, `[due:: date]` or `due:date` in `text` (first by position), or null. */
  due: string | null;
  /** Number of list items enclosing this one (0 for a top-level item). */
  depth: number;
  /** Line of the nearest enclosing list item that is itself a task, or null. */
  parentTaskLine: number | null;
}

/** Everything Quire knows about one note from its text alone. */
export interface NoteFacts {
  /** The Home-relative path the facts were extracted for (as given). */
  path: string;
  /**
   * The parsed YAML frontmatter mapping, unknown keys untouched; `{}` for an
   * empty block; null when there is no frontmatter block or it is invalid.
   */
  frontmatter: Record<string, unknown> | null;
  /** Why the frontmatter block could not be used (YAML error, not a mapping), else null. */
  frontmatterError: string | null;
  /**
   * Source range of the whole frontmatter block: from the opening `---`
   * through the closing `---` line including its line ending; null when
   * there is no block. Present even when the YAML is invalid.
   */
  frontmatterRange: TextRange | null;
  /** Frontmatter `title`, else the first non-empty level-1 heading, else the file name without extension. */
  title: string;
  /** Where `title` came from. */
  titleSource: 'frontmatter' | 'heading' | 'filename';
  /** Frontmatter `id` when it is a non-empty string (trimmed), else null. */
  id: string | null;
  /** Frontmatter `aliases` then `alias` (list, or comma-separated string), trimmed, without duplicates. */
  aliases: string[];
  /** Valid tags from frontmatter `tags` then `tag`, as written without `#`, deduplicated case-insensitively. */
  frontmatterTags: string[];
  /** Every inline `#tag` in the body, in document order. */
  tagOccurrences: TagOccurrence[];
  /** All tags: `frontmatterTags` then inline tags, deduplicated case-insensitively keeping the first spelling. */
  tags: string[];
  /** Headings in document order. */
  headings: Heading[];
  /** Block anchors in document order. */
  blocks: BlockAnchor[];
  /** Wikilinks, embeds and Markdown links to Home files, in document order. */
  links: Link[];
  /** Tasks in document order. */
  tasks: Task[];
  /** Word count of the body; see docs/vault-format.md "Word count". */
  wordCount: number;
}
