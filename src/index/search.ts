/**
 * Full-text search over notes with MiniSearch: fields `title`, `body` (the
 * note text after the frontmatter), `tags` and `aliases`; nothing is stored
 * (`storeFields` is empty; titles and ids come from the index at query time).
 *
 * Adding ~30 MB of Markdown to MiniSearch takes seconds and its index is
 * the largest thing Quire keeps in memory, so a live vault runs it in a
 * worker thread (search-worker.ts); tests and small tools run it in-thread,
 * where changes can wait in a pending queue for idle time. Either way a
 * query first applies everything sent before it, so results are never stale.
 */
import fs from 'node:fs';
import MiniSearch, { type Options, type SearchResult } from 'minisearch';
import type { NoteFacts } from '../markdown/facts.js';
import { etagOf } from '../vault/etag.js';
import { internalsOf, type TermData } from './minisearch-internals.js';
import { loadEngine, persistEngine, type PersistedSearch } from './search-persist.js';
import { QueryExecutor, type QueryRules } from './search-query.js';

export interface SearchDoc {
  path: string;
  title: string;
  body: string;
  tags: string;
  aliases: string;
}

export const SEARCH_FIELDS = ['title', 'body', 'tags', 'aliases'] as const;

/** The search document of a note: its title and file name, the text after the frontmatter, tags and aliases. */
export function searchDocOf(path: string, facts: Pick<NoteFacts, 'title' | 'frontmatterRange' | 'tags' | 'aliases'>, text: string): SearchDoc {
  const slash = path.lastIndexOf('/');
  const dot = path.lastIndexOf('.');
  const name = dot > slash + 1 ? path.slice(slash + 1, dot) : path.slice(slash + 1);
  const title = facts.title === name ? facts.title : `${facts.title} ${name}`;
  const body = facts.frontmatterRange !== null ? text.slice(facts.frontmatterRange.end) : text;
  return { path, title, body, tags: facts.tags.join(' '), aliases: facts.aliases.join(' ') };
}

/**
 * Words split at spaces and punctuation (MiniSearch's default) and also at
 * the ASCII symbols Markdown uses as syntax (`|` of wikilink aliases and
 * tables, `^` block ids, `~~`, `==`, backticks, `<>`, `+`, `$`), so that
 * `[[Note|label]]` yields `note` and `label` rather than `note|label`.
 */
const TOKEN_SEPARATORS = /[\n\r\p{Z}\p{P}|^~=+<>`$]+/u;

/** The MiniSearch options; a snapshot is only loadable with the same ones. */
export const MINISEARCH_OPTIONS: Options<SearchDoc> = {
  idField: 'path',
  fields: [...SEARCH_FIELDS],
  storeFields: [],
  tokenize: (text) => text.split(TOKEN_SEPARATORS),
  // Lowercase like MiniSearch's default; long tokens are copied because a
  // token of 13+ characters is a V8 slice that would keep the whole note
  // text alive from inside the index (see detach.ts).
  processTerm: (term) => {
    const t = term.toLowerCase();
    return t.length < 13 ? t : (' ' + t).slice(1);
  },
  // MiniSearch vacuums in batches with a timer between them; documents added or
  // discarded in between change the tree under its iterator (a crash seen when
  // 1,000 notes were rewritten). One batch as large as the index makes each
  // vacuum a single synchronous sweep, run when a tenth of the entries are stale.
  autoVacuum: { minDirtCount: 20, minDirtFactor: 0.1, batchSize: Number.MAX_SAFE_INTEGER, batchWait: 0 },
};

/**
 * Prefix matching only for the last query term (the word being typed) and
 * typo tolerance (one edit per five characters) only for terms of five or
 * more characters: expanding every term is what made a query slow (15 ms
 * against 8 ms on the 10k bench vault), and short words have too many
 * near neighbours to be useful fuzzy.
 */
const BOOST: Record<string, number> = { title: 3, aliases: 2, tags: 1.5 };
const QUERY_DEFAULTS = {
  prefix: (_term: string, i: number, terms: string[]) => i === terms.length - 1,
  fuzzy: (term: string): number | false => (term.length >= 5 ? 0.2 : false),
  boost: BOOST,
};
export const QUERY_RULES: QueryRules = {
  fields: SEARCH_FIELDS.map((f) => [f, BOOST[f] ?? 1] as const),
  prefix: QUERY_DEFAULTS.prefix,
  fuzzy: QUERY_DEFAULTS.fuzzy,
};

const createMap = (): TermData => new Map();

/**
 * `MiniSearch#add` with the same result, faster: MiniSearch walks its radix
 * tree (a linear scan of each node's children) once per token; this counts
 * the document's terms first and reaches each term's postings through
 * `termCache` (term → the tree's own postings map), so the tree is walked
 * once per new term. The index built is identical (tested against
 * `MiniSearch#add`, including `toJSON()` output). `termCache` must be empty
 * whenever terms may have been removed from the tree: callers clear it on
 * every discard and pass null while MiniSearch has discarded documents or
 * is vacuuming.
 */
export function addDocument(
  ms: MiniSearch<SearchDoc>,
  doc: SearchDoc,
  termCache: Map<string, TermData> | null,
): void {
  const m = internalsOf(ms);
  if (m === null) {
    ms.add(doc);
    return;
  }
  const { extractField, stringifyField, tokenize, processTerm, fields, idField } = m._options;
  const id = extractField(doc, idField);
  if (id == null) throw new Error(`MiniSearch: document does not have ID field "${idField}"`);
  if (m._idToShortId.has(id)) throw new Error(`MiniSearch: duplicate ID ${String(id)}`);
  const shortId = m.addDocumentId(id);
  m.saveStoredFields(shortId, doc);
  for (const field of fields) {
    const value = extractField(doc, field);
    if (value == null) continue;
    const tokens: string[] = tokenize(stringifyField(value, field), field);
    const fieldId = m._fieldIds[field]!;
    m.addFieldLength(shortId, fieldId, m._documentCount - 1, new Set(tokens).size);
    const counts = new Map<string, number>();
    for (const token of tokens) {
      const t: unknown = processTerm(token, field);
      if (Array.isArray(t)) {
        for (const x of t as string[]) counts.set(x, (counts.get(x) ?? 0) + 1);
      } else if (t) counts.set(t as string, (counts.get(t as string) ?? 0) + 1);
    }
    for (const [term, n] of counts) {
      let data = termCache?.get(term);
      if (data === undefined) {
        data = m._index.fetch(term, createMap);
        termCache?.set(term, data);
      }
      const postings = data.get(fieldId);
      if (postings === undefined) data.set(fieldId, new Map([[shortId, n]]));
      else postings.set(shortId, (postings.get(shortId) ?? 0) + n);
    }
  }
}

export interface SearchStatus {
  /** Changes not yet applied to MiniSearch. */
  pending: number;
  /** Documents indexed. */
  documents: number;
}

/** One query, with its filters already resolved to paths. */
export interface SearchQuery {
  q: string;
  combineWith: 'AND' | 'OR';
  /** Only paths starting with this string. */
  pathPrefix?: string;
  /** Only these paths (a tag filter, resolved by the caller). */
  paths?: string[];
  limit: number;
}

/** A hit as the engine knows it: titles and ids are looked up by the caller at query time. */
export interface RawHit {
  path: string;
  score: number;
  terms: string[];
  queryTerms: string[];
  match: Record<string, string[]>;
}

/**
 * Where a HomeIndex sends its search documents and asks its queries: the
 * engine in this thread (`SearchIndex`) or in a worker thread
 * (`SearchWorker`, search-client.ts), so that building and saving ~100 MB
 * of MiniSearch never stalls the thread that answers requests.
 */
export interface SearchBackend {
  /** Index `doc` as the document of `doc.path` at `etag` ('' when its text is not known yet). */
  set(doc: SearchDoc, etag: string): void;
  delete(path: string): void;
  query(q: SearchQuery): Promise<RawHit[]>;
  status(): Promise<SearchStatus>;
  /** path → ETag of every indexed document, after every change sent before. */
  indexed(): Promise<Map<string, string>>;
}

/**
 * MiniSearch plus a queue of pending changes, in this thread. With
 * `immediate` every change applies at once; otherwise changes wait in the
 * queue until `step()` (the HomeIndex's idle-time scheduler) or a read
 * applies them, so reads are never stale.
 */
export class SearchIndex implements SearchBackend {
  private ms: MiniSearch<SearchDoc>;
  /** Null when MiniSearch's internals are not the expected ones: queries then go through `MiniSearch#search`. */
  private readonly executor: QueryExecutor | null;
  private readonly pending = new Map<string, Change>();
  private readonly etags = new Map<string, string>();
  /** See `addDocument`. */
  private readonly termCache = new Map<string, TermData>();

  constructor(
    private immediate: boolean,
    persisted?: PersistedSearch,
  ) {
    const loaded = persisted ? loadEngine(persisted, MINISEARCH_OPTIONS) : null;
    this.ms = loaded ?? new MiniSearch(MINISEARCH_OPTIONS);
    if (loaded !== null) for (const [p, e] of persisted!.etags) this.etags.set(p, e);
    const internals = internalsOf(this.ms);
    this.executor = internals !== null ? new QueryExecutor(internals, QUERY_RULES) : null;
  }

  set(doc: SearchDoc, etag: string): void {
    this.etags.set(doc.path, etag);
    this.change(doc.path, doc);
  }

  /**
   * `set` with the body still in the note's file: read when the change is
   * applied, from `bodyStart` (a string index) of the decoded text. A whole
   * Home's documents wait in the queue while it is scanned; as text (a
   * two-byte string for nearly every note, which holds some non-ASCII
   * character) they would take twice the Home's size. Should the file have
   * changed by then, the ETag recorded is that of the bytes indexed, so a
   * later comparison with the index sees the difference; should it be gone,
   * the document is dropped.
   */
  setFile(doc: SearchDoc, file: string, bodyStart: number, etag: string): void {
    this.etags.set(doc.path, etag);
    this.change(doc.path, { doc, file, bodyStart });
  }

  delete(path: string): void {
    this.etags.delete(path);
    this.change(path, null);
  }

  private change(path: string, change: Change): void {
    if (this.immediate && this.pending.size === 0) this.apply(path, change);
    else this.pending.set(path, change);
  }

  private apply(path: string, change: Change): void {
    const doc = change === null || !('file' in change) ? change : this.read(change);
    const ms = this.ms;
    if (ms.has(path)) {
      this.termCache.clear();
      ms.discard(path);
    }
    if (doc !== null) addDocument(ms, doc, ms.dirtCount === 0 && !ms.isVacuuming ? this.termCache : null);
    this.executor?.changed();
  }

  /** The document of a `setFile` change with its body; null (and no ETag) when the file is gone. */
  private read(f: FileDoc): SearchDoc | null {
    let bytes: Buffer;
    try {
      bytes = fs.readFileSync(f.file);
    } catch {
      this.etags.delete(f.doc.path);
      return null;
    }
    this.etags.set(f.doc.path, etagOf(bytes));
    // Decoded exactly as the scan decodes a note (Buffer keeps a byte-order mark, unlike TextDecoder).
    return { ...f.doc, body: bytes.toString('utf8').slice(f.bodyStart) };
  }

  /**
   * Switch between applying changes at once and queueing them (a search
   * thread queues while the Home is being scanned, so the scan has the
   * cores); switching back applies the queue.
   */
  setImmediate(immediate: boolean): void {
    this.immediate = immediate;
    if (immediate) this.flush();
  }

  /** Whether `flush()` has anything to do. */
  get busy(): boolean {
    return this.pending.size > 0;
  }

  /** Apply pending changes for up to `budgetMs`; true when nothing is left pending. */
  flush(budgetMs = Infinity): boolean {
    if (this.pending.size === 0) return true;
    const deadline = budgetMs === Infinity ? Infinity : performance.now() + budgetMs;
    let n = 0;
    for (const [path, doc] of this.pending) {
      this.pending.delete(path);
      this.apply(path, doc);
      if ((++n & 7) === 0 && performance.now() > deadline) break;
    }
    return this.pending.size === 0;
  }

  statusNow(): SearchStatus {
    return { pending: this.pending.size, documents: this.ms.documentCount };
  }

  async status(): Promise<SearchStatus> {
    return this.statusNow();
  }

  async indexed(): Promise<Map<string, string>> {
    return new Map(this.etags);
  }

  async query(q: SearchQuery): Promise<RawHit[]> {
    return this.queryNow(q);
  }

  /** Run a query (after applying everything pending). */
  queryNow(q: SearchQuery): RawHit[] {
    this.flush();
    if (q.q.trim() === '') return [];
    const accept = acceptOf(q);
    const hits = this.executor?.execute(this.executor.queryTerms(q.q), { combineWith: q.combineWith, limit: q.limit, ...(accept ? { accept } : {}) });
    return hits ?? this.queryWithMiniSearch(q);
  }

  /** The same query through `MiniSearch#search`: the reference the executor is tested against, and the path for very long queries. */
  queryWithMiniSearch(q: SearchQuery): RawHit[] {
    this.flush();
    if (q.q.trim() === '') return [];
    const accept = acceptOf(q);
    const filter = accept ? (r: SearchResult) => accept(r.id as string) : undefined;
    const results = this.ms.search(q.q, { ...QUERY_DEFAULTS, combineWith: q.combineWith, ...(filter ? { filter } : {}) });
    const out: RawHit[] = [];
    for (const r of results) {
      if (out.length >= q.limit) break;
      out.push({ path: r.id as string, score: r.score, terms: r.terms, queryTerms: r.queryTerms, match: r.match });
    }
    return out;
  }

  /** Everything needed to load this index again (after applying everything pending); null if this MiniSearch cannot be saved (see search-persist.ts). */
  toPersisted(): PersistedSearch | null {
    this.flush();
    return persistEngine(this.ms, [...this.etags]);
  }
}

/** A queued change: a document, one whose body is still in its file (see `setFile`), or a removal. */
type Change = SearchDoc | FileDoc | null;

interface FileDoc {
  doc: SearchDoc;
  file: string;
  bodyStart: number;
}

/** The path filter of a query, if it has one. */
function acceptOf(q: SearchQuery): ((path: string) => boolean) | undefined {
  const prefix = q.pathPrefix;
  const only = q.paths !== undefined ? new Set(q.paths) : undefined;
  if (prefix === undefined && only === undefined) return undefined;
  return (p) => (prefix === undefined || p.startsWith(prefix)) && (only === undefined || only.has(p));
}
