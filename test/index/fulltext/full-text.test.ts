import MiniSearch, { type SearchResult } from 'minisearch';
import { describe, expect, it } from 'vitest';
import { fieldsOf } from '../../../src/index/fulltext/document.js';
import { FullTextIndex, type PartialIndex } from '../../../src/index/fulltext/full-text.js';
import { decodeFullText, encodeFullText, FullTextFileError } from '../../../src/index/fulltext/persist.js';
import { TermPostings, type FieldTexts } from '../../../src/index/fulltext/postings.js';
import type { ExecutedHit } from '../../../src/index/fulltext/query.js';
import { TOKEN_SEPARATORS } from '../../../src/index/fulltext/tokenize.js';
import { extractFacts } from '../../../src/markdown/extract.js';
import { generateVault } from '../../helpers/generate-vault.js';

/**
 * MiniSearch is the reference: the full-text index must answer what
 * `MiniSearch#search` answers with the same tokenizer and query options —
 * the same documents with the same scores, terms and matched fields. Only
 * the order of documents whose scores tie may differ.
 */
interface Doc {
  path: string;
  title: string;
  body: string;
  tags: string;
  aliases: string;
}

const reference = (docs: Iterable<Doc>) => {
  const ms = new MiniSearch<Doc>({
    idField: 'path',
    fields: ['title', 'body', 'tags', 'aliases'],
    storeFields: [],
    tokenize: (text) => text.split(TOKEN_SEPARATORS),
    processTerm: (term) => term.toLowerCase(),
  });
  ms.addAll([...docs]);
  return ms;
};

const referenceSearch = (ms: MiniSearch<Doc>, q: string, combineWith: 'AND' | 'OR', accept?: (p: string) => boolean): SearchResult[] =>
  ms.search(q, {
    prefix: (_t, i, terms) => i === terms.length - 1,
    fuzzy: (t) => (t.length >= 5 ? 0.2 : false),
    boost: { title: 3, aliases: 2, tags: 1.5 },
    combineWith,
    ...(accept ? { filter: (r: SearchResult) => accept(r.id as string) } : {}),
  });

const docOf = (path: string, text: string): Doc => {
  const [title, body, tags, aliases, bodyFrom] = fieldsOf(path, extractFacts(text, path), text);
  return { path, title, body: body.slice(bodyFrom), tags, aliases };
};
const fieldsOfDoc = (d: Doc): FieldTexts => [d.title, d.body, d.tags, d.aliases];

/** What a scan worker sends for `part`: its documents tokenized apart from any index, numbered from 0. */
const scanned = (part: Doc[], etag = 'scan'): PartialIndex => {
  const postings = new TermPostings(false);
  const lengths: number[] = [];
  part.forEach((d, i) => postings.add(i, fieldsOfDoc(d), lengths, i * 4));
  return { paths: part.map((d) => d.path), etags: part.map(() => etag), lengths: Int32Array.from(lengths), segment: postings.toSegment() };
};

const close = (a: number, b: number) => Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(b));
const sortedMatch = (m: Record<string, string[]>) => Object.fromEntries(Object.entries(m).sort(([a], [b]) => (a < b ? -1 : 1)));

/** `ours` (at `limit`) against the reference's full result list. */
function expectSameHits(ours: ExecutedHit[], ref: SearchResult[], limit: number, label: string) {
  expect(ours.length, label).toBe(Math.min(limit, ref.length));
  const byPath = new Map(ref.map((r) => [r.id as string, r]));
  ours.forEach((hit, i) => {
    // Same score at each rank (so the same documents up to the order of ties)...
    expect(close(hit.score, ref[i]!.score), `${label} rank ${i}: ${hit.score} vs ${ref[i]!.score}`).toBe(true);
    // ...and each document described as the reference describes it.
    const r = byPath.get(hit.path);
    expect(r, `${label}: ${hit.path} not in the reference`).toBeDefined();
    expect(close(hit.score, r!.score), `${label}: score of ${hit.path}`).toBe(true);
    expect([...hit.terms].sort(), label).toEqual([...r!.terms].sort());
    expect([...hit.queryTerms].sort(), label).toEqual([...r!.queryTerms].sort());
    expect(sortedMatch(hit.match), label).toEqual(sortedMatch(r!.match));
  });
}

const vault = generateVault(7, 600);
const docs = vault.map(({ path, text }) => docOf(path, text));

// Words of the generated vault, common and rare, plus typos and prefixes of them.
const words = (() => {
  const counts = new Map<string, number>();
  for (const { text } of vault) for (const w of text.toLowerCase().match(/[a-z]{3,}/g) ?? []) counts.set(w, (counts.get(w) ?? 0) + 1);
  const sorted = [...counts.keys()].sort((a, b) => counts.get(b)! - counts.get(a)! || (a < b ? -1 : 1));
  const picked = [...sorted.slice(0, 12), ...sorted.filter((_, i) => i % 37 === 5).slice(0, 12)];
  return [...picked, ...picked.filter((w) => w.length >= 5).map((w) => w.slice(0, -1) + 'x'), ...picked.map((w) => w.slice(0, 3))];
})();
const queries: string[] = [
  ...words,
  ...words.slice(0, 20).map((w, i) => `${w} ${words[(i * 7 + 3) % words.length]}`),
  ...words.slice(0, 8).map((w, i) => `${w} ${words[i + 1]} ${words[i + 2]}`),
  `${words[0]} ${words[0]}`,
  'zzzzunmatched',
  `${words[1]} zzzzunmatched`,
  'Ünïcode Straße',
];

function compareAll(idx: FullTextIndex, ms: MiniSearch<Doc>, limits = [1, 7, 1000], accept?: (p: string) => boolean): number {
  let compared = 0;
  for (const combineWith of ['AND', 'OR'] as const) {
    for (const q of queries) {
      const ref = referenceSearch(ms, q, combineWith, accept);
      for (const limit of limits) {
        expectSameHits(idx.search(q, { combineWith, limit, ...(accept ? { accept } : {}) }), ref, limit, `${combineWith} ${JSON.stringify(q)} limit ${limit}`);
        compared += Math.min(limit, ref.length);
      }
    }
  }
  return compared;
}

describe('full-text index against MiniSearch', () => {
  it('answers what MiniSearch answers, AND and OR, at every limit', () => {
    const idx = new FullTextIndex();
    for (const d of docs) idx.set(d.path, fieldsOfDoc(d), 'e');
    expect(idx.documents).toBe(docs.length);
    expect(compareAll(idx, reference(docs))).toBeGreaterThan(5000);
  });

  it('applies a path filter before the limit', () => {
    const idx = new FullTextIndex();
    for (const d of docs) idx.set(d.path, fieldsOfDoc(d), 'e');
    const prefix = docs[0]!.path.split('/')[0] + '/';
    const only = new Set(docs.filter((_, i) => i % 3 === 0).map((d) => d.path));
    expect(compareAll(idx, reference(docs), [10], (p) => p.startsWith(prefix))).toBeGreaterThan(0);
    expect(compareAll(idx, reference(docs), [10], (p) => only.has(p))).toBeGreaterThan(0);
  });

  it('after edits, removals and merges, answers what a fresh MiniSearch of the final notes answers', () => {
    const idx = new FullTextIndex();
    const current = new Map(docs.map((d) => [d.path, d]));
    for (const d of docs) idx.set(d.path, fieldsOfDoc(d), 'e');
    // 600 changes: well past the point where the delta is merged into the segment.
    for (let i = 0; i < 600; i++) {
      const d = docs[(i * 7) % docs.length]!;
      if (i % 5 === 0) {
        idx.delete(d.path);
        current.delete(d.path);
      } else {
        const edited = { ...d, body: `${d.body}\nedited ${i} ${docs[(i * 13) % docs.length]!.body.slice(0, 200)}`, title: i % 3 ? d.title : 'Retitled Ünïcode' };
        idx.set(d.path, fieldsOfDoc(edited), `e${i}`);
        current.set(d.path, edited);
      }
    }
    expect(idx.documents).toBe(current.size);
    expect(compareAll(idx, reference(current.values()), [5, 1000])).toBeGreaterThan(1000);
    expect(idx.indexed().size).toBe(current.size);
  });

  it('merges what scan workers tokenized when it arrives, replacing earlier documents of the same paths', async () => {
    const idx = new FullTextIndex();
    for (const d of docs.slice(0, 100)) idx.set(d.path, [d.title, 'stale text only', d.tags, d.aliases], 'old');
    idx.expectPartials(Promise.resolve([scanned(docs.slice(0, 300), 'new'), scanned(docs.slice(300), 'new')]));
    await idx.whenComplete();
    expect(idx.documents).toBe(docs.length);
    expect(idx.etagOf(docs[0]!.path)).toBe('new');
    expect(idx.search('stale', { combineWith: 'OR', limit: 10 })).toEqual([]);
    expect(compareAll(idx, reference(docs), [5, 1000])).toBeGreaterThan(1000);
  });

  it('after scan documents arrive, edits are ordinary ones, and a save holds the scanned postings', async () => {
    const idx = new FullTextIndex();
    idx.expectPartials(Promise.resolve([scanned(docs.slice(0, 250)), scanned(docs.slice(250))]));
    await idx.whenComplete();
    expect(idx.indexed().size).toBe(docs.length);
    expect(idx.etagOf(docs[7]!.path)).toBe('scan');
    // Edits after the scan documents came: one deleted, one replaced, one added.
    const current = new Map(docs.map((d) => [d.path, d]));
    idx.delete(docs[3]!.path);
    current.delete(docs[3]!.path);
    const replaced = { ...docs[300]!, body: 'pelicans replaced this body' };
    idx.set(replaced.path, fieldsOfDoc(replaced), 'edited');
    current.set(replaced.path, replaced);
    const added = { path: 'added.md', title: 'Added', body: 'pelicans arrived', tags: '', aliases: '' };
    idx.set(added.path, fieldsOfDoc(added), 'a');
    current.set(added.path, added);
    expect(idx.documents).toBe(current.size);
    // What a fresh MiniSearch of the final notes answers.
    expect(compareAll(idx, reference(current.values()), [5, 1000])).toBeGreaterThan(1000);
    expect(idx.search('pelicans', { combineWith: 'AND', limit: 10 }).map((h) => h.path).sort()).toEqual([added.path, replaced.path].sort());
    expect(compareAll(FullTextIndex.fromState(idx.state()), reference(current.values()), [5])).toBeGreaterThan(100);
  });

  it('takes scan documents that arrive later, except those edited or deleted before they came, and waits for them', async () => {
    const idx = new FullTextIndex();
    let arrive!: (parts: PartialIndex[]) => void;
    idx.expectPartials(new Promise((resolve) => (arrive = resolve)));
    let complete = false;
    const waiting = idx.whenComplete().then(() => (complete = true));
    // Edits after the scan read the notes, before its full text arrives: a replaced note, a deleted one.
    const current = new Map(docs.map((d) => [d.path, d]));
    const replaced = { ...docs[5]!, body: 'pelicans replaced this body' };
    idx.set(replaced.path, fieldsOfDoc(replaced), 'edited');
    current.set(replaced.path, replaced);
    idx.delete(docs[6]!.path);
    current.delete(docs[6]!.path);
    await new Promise((r) => setTimeout(r, 10));
    expect(complete).toBe(false);
    arrive([scanned(docs.slice(0, 250)), scanned(docs.slice(250))]);
    await waiting;
    expect(idx.documents).toBe(current.size);
    expect(idx.etagOf(replaced.path)).toBe('edited');
    expect(idx.etagOf(docs[6]!.path)).toBeUndefined();
    expect(compareAll(idx, reference(current.values()), [5, 1000])).toBeGreaterThan(1000);
    // Later edits are ordinary ones again.
    idx.delete(docs[7]!.path);
    expect(idx.etagOf(docs[7]!.path)).toBeUndefined();
  });
});

describe('full-text file', () => {
  const built = () => {
    const idx = new FullTextIndex();
    for (const d of docs) idx.set(d.path, fieldsOfDoc(d), `etag-${d.path}`);
    // A delta and removed documents, both kept in the file as they are.
    idx.delete(docs[3]!.path);
    idx.set(docs[4]!.path, [docs[4]!.title, 'a fresh body about pelicans', '', ''], 'edited');
    return idx;
  };
  const bytesOf = (idx: FullTextIndex) => Buffer.concat([...encodeFullText(idx.state())].map((c) => (typeof c === 'string' ? Buffer.from(c) : c)));

  it('loads exactly what was saved', () => {
    const idx = built();
    const loaded = FullTextIndex.fromState(decodeFullText(bytesOf(idx)));
    expect(loaded.documents).toBe(idx.documents);
    expect(loaded.indexed()).toEqual(idx.indexed());
    for (const combineWith of ['AND', 'OR'] as const) {
      for (const q of [...queries, 'pelicans']) expect(loaded.search(q, { combineWith, limit: 50 }), q).toEqual(idx.search(q, { combineWith, limit: 50 }));
    }
    // And it goes on from there like the original.
    loaded.set('new.md', ['New', 'pelicans again', '', ''], 'n');
    expect(loaded.search('pelicans', { combineWith: 'AND', limit: 5 }).map((h) => h.path).sort()).toEqual([docs[4]!.path, 'new.md'].sort());
  });

  it('saves a state as it was when taken, whatever changes come after', () => {
    const idx = built();
    const state = idx.state();
    const before = idx.search('pelicans', { combineWith: 'OR', limit: 50 });
    idx.delete(docs[4]!.path);
    idx.set('later.md', ['Later', 'pelicans later', '', ''], 'l');
    const loaded = FullTextIndex.fromState(decodeFullText(Buffer.concat([...encodeFullText(state)].map((c) => (typeof c === 'string' ? Buffer.from(c) : c)))));
    expect(loaded.search('pelicans', { combineWith: 'OR', limit: 50 })).toEqual(before);
    expect(loaded.etagOf('later.md')).toBeUndefined();
  });

  it('writes large indexes in many lines and reads them back', () => {
    const idx = new FullTextIndex();
    for (let i = 0; i < 20000; i++) idx.set(`n/${i}.md`, [`Note ${i}`, `word${i} common`, `t${i}`, ``], `e${i}`);
    for (let i = 0; i < 9000; i += 2) idx.set(`n/${i}.md`, [`Note ${i}`, `changed${i} common`, '', ''], `f${i}`);
    const bytes = bytesOf(idx);
    const header = JSON.parse(bytes.subarray(0, bytes.indexOf(0x0a)).toString()) as { docs: number; terms: number; deltaTerms: number };
    // Several lines of each kind.
    expect(header.docs).toBeGreaterThan(8192);
    expect(header.terms).toBeGreaterThan(8192);
    expect(header.deltaTerms).toBeGreaterThan(0);
    const loaded = FullTextIndex.fromState(decodeFullText(bytes));
    expect(loaded.indexed()).toEqual(idx.indexed());
    for (const q of ['word19999', 'changed8998', 'common', 'note 17', 'word8998', 't12345']) {
      expect(loaded.search(q, { combineWith: 'AND', limit: 20 }), q).toEqual(idx.search(q, { combineWith: 'AND', limit: 20 }));
    }
  });

  it('loads from a buffer at any offset (views need aligned memory)', () => {
    const bytes = bytesOf(built());
    const shifted = Buffer.alloc(bytes.length + 3);
    bytes.copy(shifted, 3);
    expect(FullTextIndex.fromState(decodeFullText(shifted.subarray(3))).documents).toBe(docs.length - 1);
  });

  it('refuses other versions, truncated and garbled files', () => {
    const bytes = bytesOf(built());
    const header = bytes.subarray(0, bytes.indexOf(0x0a)).toString();
    const otherVersion = Buffer.concat([Buffer.from(header.replace(/"version":\d+/, '"version":99')), bytes.subarray(bytes.indexOf(0x0a))]);
    expect(() => decodeFullText(otherVersion)).toThrow(FullTextFileError);
    expect(() => decodeFullText(bytes.subarray(0, bytes.length - 16))).toThrow(FullTextFileError);
    expect(() => decodeFullText(Buffer.from('not a file'))).toThrow(FullTextFileError);
    expect(() => decodeFullText(Buffer.from('{"format":"quire-fulltext"\n'))).toThrow(FullTextFileError);
  });
});
