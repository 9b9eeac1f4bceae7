/** The search thread's protocol: ordering, feeds from other threads, persistence, one engine per Home. */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SearchWorker } from '../../src/index/search-client.js';
import type { FeedMessage } from '../../src/index/search-feed.js';
import type { SearchDoc, SearchQuery } from '../../src/index/search.js';
import { etagOf } from '../../src/vault/etag.js';
import { tempDir } from '../helpers/instance.js';

const doc = (p: string, body: string): SearchDoc => ({ path: p, title: p.replace(/\.md$/, ''), body, tags: '', aliases: '' });
const q = (text: string): SearchQuery => ({ q: text, combineWith: 'AND', limit: 50 });
const paths = async (w: SearchWorker, text: string) => (await w.query(q(text))).map((h) => h.path).sort();

/** What a scan worker sends for notes: their documents without body, and where their files are (written here). */
function fed(...notes: Array<[p: string, text: string, etag: string, bodyStart?: number]>): FeedMessage {
  const dir = tempDir();
  return {
    t: 'set',
    docs: notes.map(([p, text, etag, bodyStart]) => {
      const file = path.join(dir, p);
      fs.writeFileSync(file, text);
      return { doc: doc(p, ''), file, bodyStart: bodyStart ?? 0, etag: etag === '*' ? etagOf(Buffer.from(text)) : etag };
    }),
  };
}

const open: SearchWorker[] = [];
function worker(): SearchWorker {
  const w = new SearchWorker();
  open.push(w);
  return w;
}
afterEach(async () => {
  await Promise.all(open.splice(0).map((w) => w.close()));
});

describe('search thread', () => {
  it('answers each query after every change sent before it', async () => {
    const w = worker();
    w.set(doc('a.md', 'heron and egret'), 'e1');
    expect(await paths(w, 'heron')).toEqual(['a.md']);
    w.set(doc('a.md', 'only egret now'), 'e2');
    w.set(doc('b.md', 'a heron elsewhere'), 'e3');
    expect(await paths(w, 'heron')).toEqual(['b.md']);
    w.delete('b.md');
    expect(await paths(w, 'heron')).toEqual([]);
    expect([...(await w.indexed())]).toEqual([['a.md', 'e2']]);
  });

  it('keeps one engine per Home', async () => {
    const a = worker();
    const b = worker();
    a.set(doc('x.md', 'kestrel'), '1');
    b.set(doc('y.md', 'kestrel'), '2');
    expect(await paths(a, 'kestrel')).toEqual(['x.md']);
    expect(await paths(b, 'kestrel')).toEqual(['y.md']);
  });

  it('holds this thread\'s later messages until every feed has ended, then sees all that was fed', async () => {
    const w = worker();
    const feed = w.openFeed();
    feed.postMessage(fed(['f1.md', 'plover on the shore', '*']));
    let answered = false;
    const pending = w.query(q('plover')).then((hits) => {
      answered = true;
      return hits.map((h) => h.path);
    });
    await new Promise((r) => setTimeout(r, 100));
    expect(answered).toBe(false);
    feed.postMessage(fed(['f2.md', 'another plover', '*'], ['f3.md', 'ruff, and a plover é', '*'], ['f4.md', 'turnstone', '*']));
    feed.postMessage({ t: 'end' } satisfies FeedMessage);
    expect((await pending).sort()).toEqual(['f1.md', 'f2.md', 'f3.md']);
    expect(await paths(w, 'turnstone')).toEqual(['f4.md']);
    expect(await paths(w, 'ruff')).toEqual(['f3.md']);
    const e = (t: string) => etagOf(Buffer.from(t));
    expect(new Map(await w.indexed())).toEqual(
      new Map([['f1.md', e('plover on the shore')], ['f2.md', e('another plover')], ['f3.md', e('ruff, and a plover é')], ['f4.md', e('turnstone')]]),
    );
    feed.close();
  });

  it('releases held messages when the feeds are abandoned (their sender failed)', async () => {
    const w = worker();
    const feed = w.openFeed();
    const pending = w.query(q('godwit'));
    w.abandonFeeds();
    // Answered (it would wait forever otherwise); what the failed sender had in flight may be lost.
    expect(await pending).toEqual([]);
    w.set(doc('g.md', 'godwit'), 'g1');
    expect(await paths(w, 'godwit')).toEqual(['g.md']);
    feed.close();
  });

  it('reads fed notes from their files, decoded as the scan decodes them (byte-order mark included), body from bodyStart', async () => {
    const w = worker();
    const feed = w.openFeed();
    const text = '\uFEFF---\ntitle: T\n---\nsanderling body';
    feed.postMessage(fed(['first.md', 'dunlin é', '*'], ['bom.md', text, '*', text.indexOf('sanderling')]));
    feed.postMessage({ t: 'end' } satisfies FeedMessage);
    expect(await paths(w, 'sanderling')).toEqual(['bom.md']);
    expect(await paths(w, 'title')).toEqual([]);
    expect(await paths(w, 'dunlin')).toEqual(['first.md']);
    feed.close();
  });

  it('saves and loads an engine with the ETag of each document; an unusable file loads as empty', async () => {
    const dir = tempDir();
    const file = path.join(dir, 'index.search');
    const w = worker();
    w.set(doc('s.md', 'stint and knot'), 'k1');
    await w.save(file);
    const back = worker();
    expect(await back.load(file)).toBe(true);
    expect([...(await back.indexed())]).toEqual([['s.md', 'k1']]);
    expect(await paths(back, 'knot')).toEqual(['s.md']);
    fs.writeFileSync(file, '{"format":"quire-search","version":999}');
    expect(await back.load(file)).toBe(false);
    expect(await paths(back, 'knot')).toEqual([]);
    expect(await back.load(path.join(dir, 'missing'))).toBe(false);
  });

  it('stops with its last Home and starts again for the next', async () => {
    const w = new SearchWorker();
    w.set(doc('z.md', 'dunlin'), '1');
    expect(await paths(w, 'dunlin')).toEqual(['z.md']);
    await w.close();
    await expect(w.query(q('dunlin'))).rejects.toMatchObject({ code: 'service_unavailable' });
    const again = worker();
    again.set(doc('z.md', 'dunlin'), '1');
    expect(await paths(again, 'dunlin')).toEqual(['z.md']);
  });
});
