/**
 * How a scan thread's facts cross to the main thread (scan-worker.ts →
 * scan-pool.ts): per batch of notes, one JSON text, three typed arrays and
 * the notes' rests as bytes.
 *
 * - The JSON text is `[strings, rows]`: `strings` are the strings the
 *   batch refers to by number (its link targets and extras, tags), and each
 *   row is `[path, etag, head | null]`.
 * - A note's head is what the index's maps need at once (`HEAD_WIDTH`): id,
 *   aliases, tags (as string numbers), the links' row (`LinkColumnsWriter`:
 *   their integers go to `linkNums`, their targets' and extras' string
 *   numbers to `linkStrings`; the main thread's link tables keep views of
 *   them), the ids of its block anchors and of its tasks that carry one,
 *   and where its rest is in `rests`.
 * - A note's rest (frontmatter, title, headings, blocks, tasks, word count…)
 *   is a snapshot's rest, byte for byte (snapshot.ts `restText`), in
 *   `rests` (UTF-8, transferred). The main thread does not parse it: the
 *   index takes the note as it takes one restored from a snapshot
 *   (HomeIndex.upsertScanned, records.ts `restoredEntry`), parses the rest
 *   the first time something reads it, and a snapshot saved before that
 *   writes those very bytes. Parsing every rest, and collecting the
 *   objects it made, was most of the main thread's work before a cold
 *   `index ready` (docs/performance.md, "Scanned notes' rests").
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
 * The heads are the threads' own format; the rests are the snapshot's, so
 * that a note never read is saved as the bytes its thread sent.
 */
import { LinkColumnsWriter, LinkTable, type StringColumns } from '../index/link-table.js';
import { blockIdsOf, restText, StringTable, taskBlockIdsOf, type SnapshotNote } from '../index/snapshot.js';
import type { NoteFacts } from '../markdown/facts.js';

/** One batch as it crosses threads; the typed arrays are transferred, not copied. */
export interface WireBatch {
  json: string;
  linkNums: Int32Array;
  linkStrings: StringColumns;
  /** The notes' rests, UTF-8 JSON back to back (each row's head says where). */
  rests: Uint8Array;
}

/** A decoded row: the path, its ETag (null: unreadable) and its head with its rest's bytes (null: unreadable or unchanged). */
export type WireRow = [path: string, etag: string | null, note: SnapshotNote | null];

const HEAD_WIDTH = 8;

/** A scan thread's side: `add` each note of a batch, then `take` the batch. */
export class WireEncoder {
  /** The batch's strings: a table per batch (take starts a new one). */
  private table = new StringTable();
  private rows: unknown[] = [];
  private readonly links = new LinkColumnsWriter();
  private readonly refFn = (s: string): number => this.table.ref(s)!;

  private refs(xs: readonly string[]): number[] {
    const out = new Array<number>(xs.length);
    for (let i = 0; i < xs.length; i++) out[i] = this.refFn(xs[i]!);
    return out;
  }

  /** The rests of the batch's notes so far: `restsN` bytes of `restBytes`. */
  private restBytes = Buffer.allocUnsafeSlow(1 << 16);
  private restsN = 0;

  /** A note of the batch; `facts` null when it was unreadable (`etag` null) or unchanged. Tag positions are not sent (the index keeps none). */
  add(path: string, etag: string | null, facts: NoteFacts | null): void {
    if (facts === null) {
      this.rows.push([path, etag, null]);
      return;
    }
    const rest = restText(facts);
    const start = this.restsN;
    // At most 3 UTF-8 bytes per UTF-16 unit.
    if (start + rest.length * 3 > this.restBytes.length) {
      const bigger = Buffer.allocUnsafeSlow(Math.max(this.restBytes.length * 2, start + rest.length * 3));
      this.restBytes.copy(bigger, 0, 0, start);
      this.restBytes = bigger;
    }
    this.restsN = start + this.restBytes.write(rest, start, 'utf8');
    const head: unknown[] = [
      facts.id,
      facts.aliases,
      this.refs(facts.tags),
      this.links.write(facts.links, this.refFn),
      blockIdsOf(facts.blocks),
      taskBlockIdsOf(facts.tasks),
      start,
      this.restsN,
    ];
    this.rows.push([path, etag, head]);
  }

  /** The batch of the notes added since the last take. */
  take(): WireBatch {
    const json = JSON.stringify([this.table.takeStrings(), this.rows]);
    this.table = new StringTable();
    this.rows = [];
    const { nums, strings } = this.links.take();
    // A copy of the bytes written, in a buffer of its own (it is transferred).
    const rests = new Uint8Array(this.restsN);
    rests.set(this.restBytes.subarray(0, this.restsN));
    this.restsN = 0;
    return { json, linkNums: nums, linkStrings: strings, rests };
  }
}

/** The rows of a batch (the main thread's side); throws a TypeError on a malformed one. */
export function decodeBatch(b: WireBatch): WireRow[] {
  const parsed: unknown = JSON.parse(b.json);
  if (!Array.isArray(parsed) || parsed.length !== 2 || !Array.isArray(parsed[0]) || !Array.isArray(parsed[1])) throw malformed();
  const strings = parsed[0] as unknown[];
  for (const s of strings) if (typeof s !== 'string') throw malformed();
  const bytes = Buffer.from(b.rests.buffer, b.rests.byteOffset, b.rests.byteLength);
  const out: WireRow[] = [];
  for (const r of parsed[1] as unknown[]) {
    if (!Array.isArray(r) || r.length !== 3 || typeof r[0] !== 'string') throw malformed();
    const [path, etag, x] = r as [string, string | null, unknown];
    out.push([path, etag, x === null ? null : noteOf(x, strings as string[], b, bytes)]);
  }
  return out;
}

/** A note's head, with its rest's place in `bytes` (checked: within them, bracketed). */
function noteOf(x: unknown, strings: readonly string[], b: WireBatch, bytes: Buffer): SnapshotNote {
  if (!Array.isArray(x) || x.length !== HEAD_WIDTH) throw malformed();
  const [id, aliases, tagRefs, ls, blockIds, taskBlockIds, start, end] = x as [string | null, string[], unknown[], unknown, string[], string[], number, number];
  if (!Array.isArray(aliases) || !Array.isArray(tagRefs) || !Array.isArray(blockIds) || !Array.isArray(taskBlockIds)) throw malformed();
  if (!(start >= 0 && end - start >= 2 && end <= bytes.length && bytes[start] === 91 && bytes[end - 1] === 93)) throw malformed();
  const tags = new Array<string>(tagRefs.length);
  for (let i = 0; i < tags.length; i++) {
    const t = strings[tagRefs[i] as number];
    if (t === undefined) throw malformed();
    tags[i] = t;
  }
  return {
    id,
    aliases,
    tags,
    blockIds: blockIds.length === 0 ? NONE : blockIds,
    taskBlockIds: taskBlockIds.length === 0 ? NONE : taskBlockIds,
    links: LinkTable.fromColumns(ls, b.linkNums, strings, b.linkStrings),
    bytes,
    start,
    end,
  };
}

const NONE: readonly string[] = Object.freeze([]);

function malformed(): TypeError {
  return new TypeError('scan thread batch: malformed');
}
