import { describe, expect, it } from 'vitest';
import { toOutcome } from '../../src/actions/reply.js';
import { extractFacts } from '../../src/markdown/extract.js';
import { noteList, noteListReply, noteRecordJson, searchReply } from '../../src/notes/note-list.js';
import { noteRecord } from '../../src/notes/notes.js';
import { homeWith, stat } from '../index/helpers.js';

describe('note lists as JSON text', () => {
  const texts: Array<[string, string]> = [
    ['a.md', '---\nid: shared\ntags: [x]\n---\n# Alpha é\n'],
    ['b.md', '# Beta\n#x #y "quoted" \\ back\n'],
    ['c.md', 'no title\n#x\n'],
  ];

  it('is exactly the JSON (UTF-8) of the list the other surfaces get', () => {
    const idx = homeWith(texts);
    const page = { entries: idx.notesWithTag('x'), next_cursor: 'abc"d' };
    const out = toOutcome(noteListReply(page));
    expect(out.body).toEqual(noteList(page));
    expect(out.json!().toString('utf8')).toBe(JSON.stringify(out.body));
    expect(toOutcome(noteListReply({ entries: [], next_cursor: null })).json!().toString()).toBe('{"items":[],"next_cursor":null}');
  });

  it('search answers too: records with score and terms, exactly as JSON.stringify writes them', async () => {
    const idx = homeWith(texts);
    const hits = (await idx.search('alpha beta quoted', { combineWith: 'OR' })).map((h) => ({ entry: idx.noteByPath(h.path)!, score: h.score, terms: h.terms }));
    expect(hits.length).toBe(2);
    const out = toOutcome(searchReply(hits));
    expect((out.body as { items: Array<{ score: number }> }).items[0]).toMatchObject({ ...noteRecord(hits[0]!.entry), score: hits[0]!.score, terms: hits[0]!.terms });
    expect(out.json!().toString('utf8')).toBe(JSON.stringify(out.body));
    expect(toOutcome(searchReply([])).json!().toString()).toBe('{"items":[],"next_cursor":null}');
  });

  it('follows a record through a re-stamp and an id handed to another note', () => {
    const idx = homeWith(texts);
    const a = () => idx.noteByPath('a.md')!;
    expect(noteRecordJson(a()).toString()).toBe(JSON.stringify(noteRecord(a())));
    // Same facts, new stat: the entry is updated in place.
    idx.upsertNote('a.md', a().facts, { ...stat(texts[0]![1]), mtimeMs: 1_800_000_000_000, etag: 'e-new' }, null);
    expect(JSON.parse(noteRecordJson(a()).toString())).toMatchObject({ etag: 'e-new', updated: 1_800_000_000_000 });
    // A note earlier in path order claims the same frontmatter id: a.md's id changes in place.
    const text = '---\nid: shared\n---\n# Zero\n';
    idx.upsertNote('0.md', extractFacts(text, '0.md'), stat(text), text);
    expect(a().id).not.toBe('shared');
    expect(noteRecordJson(a()).toString()).toBe(JSON.stringify(noteRecord(a())));
  });
});
