/**
 * The search worker thread: one MiniSearch engine (SearchIndex) per open
 * Home, by key, and their persisted files. Messages from the main thread
 * are handled strictly in order, so a query sees every change sent before
 * it. Scan workers may also feed documents straight in through "feed"
 * ports (the note text then never passes through the main thread); while a
 * Home has open feeds, the main thread's messages for it wait, so they
 * still come after every document fed. Protocol: search-client.ts.
 */
import fs from 'node:fs';
import { parentPort, type MessagePort } from 'node:worker_threads';
import { writeFileAtomic } from '../vault/atomic.js';
import { isLoadablePersistedSearch } from './search-persist.js';
import { SearchIndex } from './search.js';
import type { SearchRequest } from './search-client.js';
import type { FeedMessage } from './search-feed.js';

const port = parentPort!;
const engines = new Map<number, SearchIndex>();
/** Saves run one after another, so two saves of one file never race. */
let saving: Promise<void> = Promise.resolve();
/** Open feed ports per Home, and the main thread's messages waiting for them to end. */
const feeds = new Map<number, Set<MessagePort>>();
const held = new Map<number, SearchRequest[]>();

function engineOf(key: number): SearchIndex {
  let e = engines.get(key);
  if (e === undefined) engines.set(key, (e = new SearchIndex(true)));
  return e;
}

/** Load the persisted index when there is one this build can read; otherwise start empty. */
function load(key: number, file: string): { loaded: boolean; reason: string | null } {
  engines.set(key, new SearchIndex(true));
  let raw: string;
  try {
    raw = fs.readFileSync(file, 'utf8');
  } catch {
    return { loaded: false, reason: 'absent' };
  }
  try {
    const persisted: unknown = JSON.parse(raw);
    if (!isLoadablePersistedSearch(persisted)) return { loaded: false, reason: 'version' };
    engines.set(key, new SearchIndex(true, persisted));
    return { loaded: true, reason: null };
  } catch (e) {
    return { loaded: false, reason: e instanceof Error ? e.message : String(e) };
  }
}

async function handle(m: SearchRequest): Promise<unknown> {
  if (m.t === 'drop') {
    engines.delete(m.key);
    return undefined;
  }
  const engine = engineOf(m.key);
  switch (m.t) {
    case 'set':
      engine.set(m.doc, m.etag);
      return undefined;
    case 'delete':
      engine.delete(m.path);
      return undefined;
    case 'defer':
      engine.setImmediate(!m.on);
      return undefined;
    case 'load':
      return load(m.key, m.file);
    case 'query':
      return engine.queryNow(m.query);
    case 'status':
      return engine.statusNow();
    case 'indexed':
      return [...(await engine.indexed())];
    case 'save': {
      const persisted = engine.toPersisted();
      if (persisted === null) return undefined;
      const json = JSON.stringify(persisted);
      saving = saving.catch(() => undefined).then(() => writeFileAtomic(m.file, json, { label: 'search index cache' }));
      await saving;
      return undefined;
    }
  }
}

function run(m: SearchRequest): void {
  handle(m).then(
    (value) => {
      if (m.id !== undefined) port.postMessage({ id: m.id, value });
    },
    (e: unknown) => {
      if (m.id !== undefined) port.postMessage({ id: m.id, error: e instanceof Error ? e.message : String(e) });
    },
  );
}

function openFeed(key: number, feed: MessagePort): void {
  let open = feeds.get(key);
  if (open === undefined) feeds.set(key, (open = new Set()));
  open.add(feed);
  feed.on('message', (f: FeedMessage) => {
    if (f.t === 'set') {
      for (const d of f.docs) engineOf(key).setFile(d.doc, d.file, d.bodyStart, d.etag);
    }
    else closeFeed(key, feed);
  });
}

/** A feed ended (or was given up): once a Home has none left, its held messages run in order. */
function closeFeed(key: number, feed: MessagePort | null): void {
  const open = feeds.get(key);
  if (open === undefined) return;
  for (const f of feed === null ? [...open] : [feed]) {
    f.close();
    open.delete(f);
  }
  if (open.size > 0) return;
  feeds.delete(key);
  const waiting = held.get(key) ?? [];
  held.delete(key);
  for (let i = 0; i < waiting.length; i++) {
    receive(waiting[i]!);
    if (feeds.has(key)) {
      held.set(key, [...(held.get(key) ?? []), ...waiting.slice(i + 1)]);
      return;
    }
  }
}

function receive(m: SearchRequest): void {
  if (m.t === 'unfeed') return closeFeed(m.key, null);
  if (feeds.has(m.key)) {
    let waiting = held.get(m.key);
    if (waiting === undefined) held.set(m.key, (waiting = []));
    waiting.push(m);
    return;
  }
  if (m.t === 'feed') openFeed(m.key, m.port);
  else run(m);
}

port.on('message', receive);
