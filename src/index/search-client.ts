/**
 * A SearchBackend whose MiniSearch lives in a worker thread
 * (search-worker.ts): indexing and saving it use another core and never
 * stall the thread answering requests. One worker thread serves every open
 * Home of the process (each Home is an engine there, by key); it starts
 * with the first Home and stops with the last. Changes are posted without
 * waiting; requests carry an id and are answered in order, so a query sees
 * every change sent before it.
 */
import { MessageChannel, type MessagePort, type Worker } from 'node:worker_threads';
import { AppError } from '../core/errors.js';
import { startTsWorker } from '../core/ts-worker.js';
import type { RawHit, SearchBackend, SearchDoc, SearchQuery, SearchStatus } from './search.js';

export type SearchRequest = { id?: number; key: number } & (
  | { t: 'set'; doc: SearchDoc; etag: string }
  | { t: 'delete'; path: string }
  | { t: 'defer'; on: boolean }
  | { t: 'load'; file: string }
  | { t: 'query'; query: SearchQuery }
  | { t: 'status' }
  | { t: 'indexed' }
  | { t: 'save'; file: string }
  | { t: 'drop' }
  | { t: 'feed'; port: MessagePort }
  | { t: 'unfeed' }
);

type Reply = { id: number; value?: unknown; error?: string };

/** The worker thread and its pending requests. */
class SearchThread {
  private readonly worker: Worker;
  private nextId = 1;
  private readonly waiting = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  failure: Error | null = null;
  users = 0;
  stopping = false;
  private readonly onFailure = new Set<(e: Error) => void>();

  constructor() {
    this.worker = startTsWorker(new URL('./search-worker.ts', import.meta.url), null, 'quire-search');
    this.worker.unref();
    this.worker.on('message', (r: Reply) => {
      const w = this.waiting.get(r.id);
      if (!w) return;
      this.waiting.delete(r.id);
      if (r.error !== undefined) w.reject(new Error(r.error));
      else w.resolve(r.value);
    });
    this.worker.on('error', (e) => this.fail(e));
    this.worker.on('exit', (code) => this.fail(new Error(`search worker exited (code ${code})`)));
  }

  private fail(e: Error) {
    if (this.stopping || this.failure !== null) return;
    this.failure = e;
    if (thread === this) thread = null;
    for (const w of this.waiting.values()) w.reject(e);
    this.waiting.clear();
    for (const cb of this.onFailure) cb(e);
  }

  watch(cb: (e: Error) => void): () => void {
    this.onFailure.add(cb);
    return () => this.onFailure.delete(cb);
  }

  post(m: SearchRequest, transfer: MessagePort[] = []): void {
    if (this.failure === null) this.worker.postMessage(m, transfer);
  }

  request<T>(m: SearchRequest): Promise<T> {
    if (this.failure !== null || this.stopping) return Promise.reject(unavailable('its worker thread stopped'));
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      this.waiting.set(id, { resolve: resolve as (v: unknown) => void, reject });
      this.worker.postMessage({ ...m, id });
    });
  }

  async stop(): Promise<void> {
    this.stopping = true;
    if (thread === this) thread = null;
    await this.worker.terminate();
  }
}

function unavailable(why: string): AppError {
  return new AppError('service_unavailable', `Full-text search is unavailable: ${why}`, { details: { reason: 'search_worker' } });
}

let thread: SearchThread | null = null;
let nextKey = 1;

/** One Home's engine in the shared search thread. */
export class SearchWorker implements SearchBackend {
  private readonly thread: SearchThread;
  private readonly key = nextKey++;
  /** Queries wait for this (the Vault holds them until the engine has caught up with the Home). */
  private gate: Promise<void> = Promise.resolve();
  private closed = false;
  private readonly unwatch: () => void;

  constructor(onError: (e: unknown) => void = () => undefined) {
    this.thread = thread ??= new SearchThread();
    this.thread.users++;
    this.unwatch = this.thread.watch(onError);
  }

  /** Make queries wait for `p` too. */
  hold(p: Promise<unknown>): void {
    const before = this.gate;
    this.gate = Promise.all([before, p.catch(() => undefined)]).then(() => undefined);
  }

  set(doc: SearchDoc, etag: string): void {
    if (!this.closed) this.thread.post({ key: this.key, t: 'set', doc, etag });
  }

  delete(path: string): void {
    if (!this.closed) this.thread.post({ key: this.key, t: 'delete', path });
  }

  /**
   * A port through which another thread (a scan worker) sends documents
   * straight to this Home's engine, ending with `{ t: 'end' }`. Until every
   * open feed has ended, messages from this thread wait behind them.
   */
  openFeed(): MessagePort {
    const { port1, port2 } = new MessageChannel();
    this.thread.post({ key: this.key, t: 'feed', port: port1 }, [port1]);
    return port2;
  }

  /** Give up every open feed (its sender failed and will not send `end`). */
  abandonFeeds(): void {
    if (!this.closed) this.thread.post({ key: this.key, t: 'unfeed' });
  }

  /** While on, the engine queues documents instead of indexing them (see `SearchIndex.setImmediate`). */
  defer(on: boolean): void {
    if (!this.closed) this.thread.post({ key: this.key, t: 'defer', on });
  }

  /** A request about this Home's engine; refused once this handle is closed (its engine is gone). */
  private ask<T>(m: SearchRequest): Promise<T> {
    if (this.closed) return Promise.reject(unavailable('this Home was closed'));
    return this.thread.request<T>(m);
  }

  async query(query: SearchQuery): Promise<RawHit[]> {
    await this.gate;
    return this.ask<RawHit[]>({ key: this.key, t: 'query', query });
  }

  status(): Promise<SearchStatus> {
    return this.ask<SearchStatus>({ key: this.key, t: 'status' });
  }

  async indexed(): Promise<Map<string, string>> {
    return new Map(await this.ask<Array<[string, string]>>({ key: this.key, t: 'indexed' }));
  }

  /** Replace the engine by the one persisted in `file`; false (engine left empty) when there is none this build can use. */
  async load(file: string): Promise<boolean> {
    const r = await this.ask<{ loaded: boolean }>({ key: this.key, t: 'load', file });
    return r.loaded;
  }

  /** Persist the engine to `file`, atomically; the worker thread does all the work. */
  save(file: string): Promise<void> {
    return this.ask<void>({ key: this.key, t: 'save', file });
  }

  /** Forget this Home's engine; the thread stops with its last Home. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.unwatch();
    this.thread.post({ key: this.key, t: 'drop' });
    if (--this.thread.users === 0) await this.thread.stop();
  }
}
