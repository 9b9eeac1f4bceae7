/**
 * Full-text search over notes with MiniSearch: fields `title`, `body` (the
 * note text after the frontmatter), `tags` and `aliases`; nothing is stored
 * (`storeFields` is empty; titles and ids come from the index at query time).
 *
 * Adding ~30 MB of Markdown to MiniSearch takes seconds, far longer than
 * everything else the index does, so documents go through a pending queue:
 * a change is queued (the newest change per path wins) and applied in short
 * background slices when the index is idle, on demand, or at once,
 * depending on the `IndexingMode`.
 * `search()` always applies everything pending first, so results are never
 * stale. A queued body is the only copy of note text the index holds, and
 * only until it is applied.
 */
import MiniSearch, { type AsPlainObject, type Options, type SearchResult } from 'minisearch';

export interface SearchDoc {
  path: string;
  title: string;
  body: string;
  tags: string;
  aliases: string;
}

export const SEARCH_FIELDS = ['title', 'body', 'tags', 'aliases'] as const;

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

const QUERY_DEFAULTS = {
  prefix: true,
  fuzzy: 0.2,
  boost: { title: 3, aliases: 2, tags: 1.5 },
} as const;

/** The serialization version MiniSearch writes today (checked on load). */
export const MINISEARCH_SERIALIZATION_VERSION: number = new MiniSearch(MINISEARCH_OPTIONS).toJSON().serializationVersion;

/* eslint-disable @typescript-eslint/no-explicit-any */
interface MiniSearchInternals {
  _options: { extractField: any; stringifyField: any; tokenize: any; processTerm: any; fields: string[]; idField: string };
  _idToShortId: Map<unknown, number>;
  _fieldIds: Record<string, number>;
  _documentCount: number;
  _index: { fetch(term: string, initial: () => Map<number, Map<number, number>>): Map<number, Map<number, number>> };
  addDocumentId(id: unknown): number;
  saveStoredFields(shortId: number, doc: unknown): void;
  addFieldLength(shortId: number, fieldId: number, count: number, length: number): void;
}

const createMap = () => new Map<number, Map<number, number>>();

function hasInternals(ms: unknown): boolean {
  const m = ms as Partial<MiniSearchInternals>;
  return (
    typeof m.addDocumentId === 'function' &&
    typeof m.saveStoredFields === 'function' &&
    typeof m.addFieldLength === 'function' &&
    typeof m._index?.fetch === 'function' &&
    m._idToShortId instanceof Map &&
    typeof m._fieldIds === 'object' &&
    typeof m._options?.tokenize === 'function'
  );
}

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
  termCache: Map<string, Map<number, Map<number, number>>> | null,
): void {
  if (!hasInternals(ms)) {
    ms.add(doc);
    return;
  }
  const m = ms as unknown as MiniSearchInternals;
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
/* eslint-enable @typescript-eslint/no-explicit-any */

export interface SearchStatus {
  /** Changes not yet applied to MiniSearch. */
  pending: number;
  /** False while a snapshot's index has not been loaded yet. */
  loaded: boolean;
  /** True when a snapshot's index failed to load in the background; notes indexed from it are missing until re-upserted. */
  lost: boolean;
}

/**
 * MiniSearch plus a queue of pending changes. It never schedules anything
 * itself: `HomeIndex` calls `step()` from its idle-time scheduler, and every
 * read (`search`, `toJSON`, `flush`) first applies what is pending.
 */
export class SearchIndex {
  private ms: MiniSearch<SearchDoc> | null;
  private snapshot: AsPlainObject | null;
  private readonly pending = new Map<string, SearchDoc | null>();
  private asyncLoad: Promise<void> | null = null;
  private lost = false;
  /** See `addDocument`. */
  private readonly termCache = new Map<string, Map<number, Map<number, number>>>();

  /**
   * `immediate`: apply changes at once (mode `sync`), loading a snapshot's
   * index right away. `onLoaded` is called when a background load finishes.
   */
  constructor(
    private readonly immediate: boolean,
    snapshot?: AsPlainObject,
    private readonly onLoaded: () => void = () => undefined,
  ) {
    this.snapshot = snapshot ?? null;
    this.ms = snapshot ? null : new MiniSearch(MINISEARCH_OPTIONS);
    if (snapshot && immediate) this.loadNow();
  }

  /** Queue (or apply) the document for `doc.path`. */
  set(doc: SearchDoc): void {
    this.change(doc.path, doc);
  }

  /** Queue (or apply) the removal of `path`. */
  delete(path: string): void {
    this.change(path, null);
  }

  private change(path: string, doc: SearchDoc | null): void {
    if (this.immediate && this.ms !== null && this.pending.size === 0) this.apply(path, doc);
    else this.pending.set(path, doc);
  }

  private apply(path: string, doc: SearchDoc | null): void {
    const ms = this.ms!;
    if (ms.has(path)) {
      this.termCache.clear();
      ms.discard(path);
    }
    if (doc !== null) addDocument(ms, doc, ms.dirtCount === 0 && !ms.isVacuuming ? this.termCache : null);
  }

  private loadNow(): void {
    if (this.ms !== null) return;
    const js = this.snapshot!;
    this.snapshot = null;
    this.termCache.clear();
    this.ms = MiniSearch.loadJS(js, MINISEARCH_OPTIONS);
  }

  /** Whether `step()` has anything to do. */
  get busy(): boolean {
    return this.pending.size > 0 || (this.ms === null && this.asyncLoad === null);
  }

  /**
   * One background step of at most about `budgetMs`: start loading a
   * snapshot's index asynchronously (MiniSearch.loadJSAsync yields every
   * 1000 terms), or apply pending changes. True when nothing is left to do
   * right now.
   */
  step(budgetMs: number): boolean {
    if (this.ms === null) {
      if (this.asyncLoad === null) {
        const js = this.snapshot!;
        const done = (ms: MiniSearch<SearchDoc> | null) => {
          // A search may have loaded it synchronously in the meantime.
          if (this.snapshot === js) {
            this.snapshot = null;
            this.termCache.clear();
            this.ms = ms ?? new MiniSearch(MINISEARCH_OPTIONS);
            this.lost = ms === null;
          }
          this.asyncLoad = null;
          this.onLoaded();
        };
        this.asyncLoad = MiniSearch.loadJSAsync(js, MINISEARCH_OPTIONS).then(done, () => done(null));
      }
      return true;
    }
    return this.flush(budgetMs);
  }

  /** Apply pending changes for up to `budgetMs`; true when nothing is left pending. */
  flush(budgetMs = Infinity): boolean {
    this.loadNow();
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

  status(): SearchStatus {
    return { pending: this.pending.size, loaded: this.ms !== null, lost: this.lost };
  }

  /** Run a query (after applying everything pending). `filter` gets the path. */
  search(query: string, combineWith: 'AND' | 'OR', filter?: (path: string) => boolean): SearchResult[] {
    this.flush();
    if (query.trim() === '') return [];
    return this.ms!.search(query, {
      ...QUERY_DEFAULTS,
      combineWith,
      ...(filter ? { filter: (r: SearchResult) => filter(r.id as string) } : {}),
    });
  }

  /** MiniSearch's plain-object serialisation (after applying everything pending). */
  toJSON(): AsPlainObject {
    this.flush();
    return this.ms!.toJSON();
  }
}

/** Cheap structural check of a serialised MiniSearch index before trusting it. */
export function isLoadableSearchJson(js: unknown): js is AsPlainObject {
  if (typeof js !== 'object' || js === null) return false;
  const o = js as Record<string, unknown>;
  if (o['serializationVersion'] !== MINISEARCH_SERIALIZATION_VERSION) return false;
  if (typeof o['documentCount'] !== 'number' || typeof o['nextId'] !== 'number') return false;
  if (!Array.isArray(o['index']) || typeof o['documentIds'] !== 'object' || o['documentIds'] === null) return false;
  const fieldIds = o['fieldIds'] as Record<string, unknown> | null;
  if (typeof fieldIds !== 'object' || fieldIds === null) return false;
  return SEARCH_FIELDS.every((f) => typeof fieldIds[f] === 'number');
}
