/**
 * How a scan thread's facts cross to the main thread (scan-worker.ts →
 * scan-pool.ts): per batch of notes, one JSON text and three typed arrays.
 *
 * - The JSON text is `[strings, rows]`: `strings` are the strings the
 *   batch refers to by number (its link targets and extras, tags), and each
 *   row is `[path, etag, facts | null]`.
 * - A note's facts are one flat array (`FACTS_WIDTH`): id, aliases, tags (as
 *   string numbers), frontmatter tags, the links' row (`LinkColumnsWriter`:
 *   their integers go to `linkNums`, their targets' and extras' string
 *   numbers to `linkStrings`; the main thread's link tables keep views of
 *   them), frontmatter, its error and range, title and its source, then
 *   headings, blocks and tasks flattened, and the word count.
 *
 * The links are written straight from the extractor's `Link` objects into
 * the batch's arrays: through `LinkTable.of` and `toColumns`, each note made
 * a table and four typed arrays (each a separately allocated buffer) only to
 * copy them into the batch's. The string table is the batch's: one table
 * for all of a thread's batches sent a third as many strings, but its
 * lookups (550,000 link targets on the 10k bench vault) cost more in a
 * table of 40,000 strings than in one of a few hundred, and the scan
 * threads came out slower (docs/performance.md, "Facts crossing threads").
 *
 * This is the threads' own format: a snapshot (index/snapshot.ts) is
 * written and read by other rules, and either can change without the other.
 */
import { LinkColumnsWriter, LinkTable, type StringColumns } from '../index/link-table.js';
import type { IndexedFacts } from '../index/types.js';
import type { BlockAnchor, Heading, NoteFacts, Task } from '../markdown/facts.js';

/** One batch as it crosses threads; the typed arrays are transferred, not copied. */
export interface WireBatch {
  json: string;
  linkNums: Int32Array;
  linkStrings: StringColumns;
}

/** A decoded row: the path, its ETag (null: unreadable) and its facts (null: unreadable or unchanged). */
export type WireRow = [path: string, etag: string | null, facts: IndexedFacts | null];

const FACTS_WIDTH = 14;
const TASK_WIDTH = 7;

/** A scan thread's side: `add` each note of a batch, then `take` the batch. */
export class WireEncoder {
  private numbers = new Map<string, number>();
  private strings: string[] = [];
  private rows: unknown[] = [];
  private readonly links = new LinkColumnsWriter();
  private readonly refFn = (s: string): number => this.ref(s);

  private ref(s: string): number {
    let n = this.numbers.get(s);
    if (n === undefined) {
      n = this.strings.length;
      this.numbers.set(s, n);
      this.strings.push(s);
    }
    return n;
  }

  private refs(xs: readonly string[]): number[] {
    const out = new Array<number>(xs.length);
    for (let i = 0; i < xs.length; i++) out[i] = this.ref(xs[i]!);
    return out;
  }

  /** A note of the batch; `facts` null when it was unreadable (`etag` null) or unchanged. Tag positions are not sent (the index keeps none). */
  add(path: string, etag: string | null, facts: NoteFacts | null): void {
    if (facts === null) {
      this.rows.push([path, etag, null]);
      return;
    }
    const range = facts.frontmatterRange === null ? null : [facts.frontmatterRange.start, facts.frontmatterRange.end];
    const headings: unknown[] = [];
    for (const h of facts.headings) headings.push(h.level, h.text, h.line);
    const blocks: unknown[] = [];
    for (const b of facts.blocks) blocks.push(b.id, b.line, b.column);
    const tasks: unknown[] = [];
    for (const t of facts.tasks) tasks.push(t.line, t.status, t.text, t.blockId, t.due, t.depth, t.parentTaskLine);
    const row: unknown[] = [
      facts.id,
      facts.aliases,
      this.refs(facts.tags),
      facts.frontmatterTags,
      this.links.write(facts.links, this.refFn),
      facts.frontmatter,
      facts.frontmatterError,
      range,
      facts.title,
      facts.titleSource,
      headings,
      blocks,
      tasks,
      facts.wordCount,
    ];
    this.rows.push([path, etag, row]);
  }

  /** The batch of the notes added since the last take. */
  take(): WireBatch {
    const json = JSON.stringify([this.strings, this.rows]);
    this.numbers = new Map();
    this.strings = [];
    this.rows = [];
    const { nums, strings } = this.links.take();
    return { json, linkNums: nums, linkStrings: strings };
  }
}

/** The rows of a batch (the main thread's side); throws a TypeError on a malformed one. */
export function decodeBatch(b: WireBatch): WireRow[] {
  const parsed: unknown = JSON.parse(b.json);
  if (!Array.isArray(parsed) || parsed.length !== 2 || !Array.isArray(parsed[0]) || !Array.isArray(parsed[1])) throw malformed();
  const strings = parsed[0] as unknown[];
  for (const s of strings) if (typeof s !== 'string') throw malformed();
  const out: WireRow[] = [];
  for (const r of parsed[1] as unknown[]) {
    if (!Array.isArray(r) || r.length !== 3 || typeof r[0] !== 'string') throw malformed();
    const [path, etag, x] = r as [string, string | null, unknown];
    out.push([path, etag, x === null ? null : factsOf(path, x, strings as string[], b)]);
  }
  return out;
}

/** Facts equal, key order included, to the ones encoded (with no tag positions, links as a LinkTable). */
function factsOf(path: string, x: unknown, strings: readonly string[], b: WireBatch): IndexedFacts {
  if (!Array.isArray(x) || x.length !== FACTS_WIDTH) throw malformed();
  const [id, aliases, tagRefs, frontmatterTags, ls, frontmatter, frontmatterError, range, title, titleSource, hs, bs, ts, wordCount] = x as [
    string | null,
    string[],
    unknown[],
    string[],
    unknown,
    NoteFacts['frontmatter'],
    string | null,
    [number, number] | null,
    string,
    NoteFacts['titleSource'],
    unknown[],
    unknown[],
    unknown[],
    number,
  ];
  if (!Array.isArray(tagRefs) || !Array.isArray(frontmatterTags) || !Array.isArray(hs) || !Array.isArray(bs) || !Array.isArray(ts)) throw malformed();
  const tags = new Array<string>(tagRefs.length);
  for (let i = 0; i < tags.length; i++) {
    const t = strings[tagRefs[i] as number];
    if (t === undefined) throw malformed();
    tags[i] = t;
  }
  const links = LinkTable.fromColumns(ls, b.linkNums, strings, b.linkStrings);
  const headings: Heading[] = [];
  for (let i = 0; i < hs.length; i += 3) headings.push({ level: hs[i] as number, text: hs[i + 1] as string, line: hs[i + 2] as number });
  const blocks: BlockAnchor[] = [];
  for (let i = 0; i < bs.length; i += 3) blocks.push({ id: bs[i] as string, line: bs[i + 1] as number, column: bs[i + 2] as number });
  const tasks: Task[] = [];
  for (let i = 0; i < ts.length; i += TASK_WIDTH) {
    const status = ts[i + 1] as string;
    tasks.push({
      line: ts[i] as number,
      status,
      checked: status === 'x' || status === 'X',
      cancelled: status === '-',
      text: ts[i + 2] as string,
      blockId: ts[i + 3] as string | null,
      due: ts[i + 4] as string | null,
      depth: ts[i + 5] as number,
      parentTaskLine: ts[i + 6] as number | null,
    });
  }
  return {
    path,
    frontmatter,
    frontmatterError,
    frontmatterRange: range === null ? null : { start: range[0], end: range[1] },
    title,
    titleSource,
    id,
    aliases,
    frontmatterTags,
    tagOccurrences: [],
    tags,
    headings,
    blocks,
    links,
    tasks,
    wordCount,
  };
}

function malformed(): TypeError {
  return new TypeError('scan thread batch: malformed');
}
