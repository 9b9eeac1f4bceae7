/**
 * The search worker thread: one MiniSearch engine (SearchIndex) per open
 * Home, by key, and their persisted files. Messages are handled strictly in
 * order, so a query sees every change sent before it. Protocol:
 * search-client.ts.
 */
import fs from 'node:fs';
import { parentPort } from 'node:worker_threads';
import { writeFileAtomic } from '../vault/atomic.js';
import { isLoadablePersistedSearch, SearchIndex } from './search.js';
import type { SearchRequest } from './search-client.js';

const port = parentPort!;
const engines = new Map<number, SearchIndex>();
/** Saves run one after another, so two saves of one file never race. */
let saving: Promise<void> = Promise.resolve();

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
      const json = JSON.stringify(engine.toPersisted());
      saving = saving.catch(() => undefined).then(() => writeFileAtomic(m.file, json, { label: 'search index cache' }));
      await saving;
      return undefined;
    }
  }
}

port.on('message', (m: SearchRequest) => {
  handle(m).then(
    (value) => {
      if (m.id !== undefined) port.postMessage({ id: m.id, value });
    },
    (e: unknown) => {
      if (m.id !== undefined) port.postMessage({ id: m.id, error: e instanceof Error ? e.message : String(e) });
    },
  );
});
