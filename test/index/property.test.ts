/**
 * Incremental maintenance equals a fresh build: any sequence of upserts and
 * removes (with queries in between, so caches are built and then must be
 * invalidated) leaves the same backlinks, outgoing resolutions, unresolved
 * links, tags and ids as indexing the final set of files from scratch.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { HomeIndex, type IndexingMode } from '../../src/index/home-index.js';
import { addFile, addNote, linkState } from './helpers.js';

const NOTE_PATHS = ['A.md', 'B.md', 'x/A.md', 'x/y/B.md', 'C.md', 'x/C.md', 'Dup.md', 'y/Dup.md', 'Nick.md'];
const FILE_PATHS = ['img.png', 'x/img.png', 'A', 'doc.pdf', 'x/y/Doc.PDF', 'x/A.md' /* also a note path: type switches */];
const TARGETS = ['A', 'a', 'B', 'x/A', 'y/B', 'C.md', 'img.png', 'A.md', 'Nick', 'nick', 'Other', '../A', './C', 'x/img.png', 'doc.pdf', 'dup', '/x/C', ''];
const TAGS = ['t', 'T/u', 't/u/v', 'w', 'W/x'];

const link = fc.record({
  target: fc.constantFrom(...TARGETS),
  markdown: fc.boolean(),
  embed: fc.boolean(),
  heading: fc.boolean(),
});
const noteText = fc
  .record({
    id: fc.constantFrom(null, 'id1', 'id2'),
    aliases: fc.subarray(['Nick', 'Other', 'nick', 'A'], { maxLength: 2 }),
    tags: fc.subarray(TAGS, { maxLength: 3 }),
    links: fc.array(link, { maxLength: 5 }),
  })
  .map(({ id, aliases, tags, links }) => {
    const fm: string[] = [];
    if (id !== null) fm.push(`id: ${id}`);
    if (aliases.length > 0) fm.push(`aliases: [${aliases.join(', ')}]`);
    if (tags.length > 0) fm.push(`tags: [${tags.slice(1).join(', ')}]`);
    const lines = links.map((l) => {
      const sub = l.heading ? '#Part' : '';
      if (l.target === '') return l.markdown ? '[here](#Part)' : '[[#Part]]';
      if (l.markdown) return `${l.embed ? '!' : ''}[x](${encodeURI(l.target)}${sub})`;
      return `${l.embed ? '!' : ''}[[${l.target}${sub}]]`;
    });
    if (tags[0] !== undefined) lines.push(`#${tags[0]}`);
    return (fm.length > 0 ? `---\n${fm.join('\n')}\n---\n` : '') + lines.join('\n') + '\n';
  });

type Op =
  | { kind: 'note'; path: string; text: string }
  | { kind: 'file'; path: string }
  | { kind: 'remove'; path: string }
  | { kind: 'query'; path: string };

const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 5, arbitrary: fc.record({ kind: fc.constant('note' as const), path: fc.constantFrom(...NOTE_PATHS), text: noteText }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('file' as const), path: fc.constantFrom(...FILE_PATHS) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('remove' as const), path: fc.constantFrom(...NOTE_PATHS, ...FILE_PATHS) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('query' as const), path: fc.constantFrom(...NOTE_PATHS, ...FILE_PATHS) }) },
);

function replay(ops: Op[], mode: IndexingMode): { idx: HomeIndex; final: Map<string, string | null> } {
  const idx = new HomeIndex({ mode });
  const final = new Map<string, string | null>(); // path → note text, or null for a file
  for (const o of ops) {
    if (o.kind === 'note') {
      addNote(idx, o.path, o.text);
      final.set(o.path, o.text);
    } else if (o.kind === 'file') {
      addFile(idx, o.path);
      final.set(o.path, null);
    } else if (o.kind === 'remove') {
      idx.remove(o.path);
      final.delete(o.path);
    } else {
      idx.backlinks(o.path);
      idx.unresolved();
      idx.tags();
    }
  }
  return { idx, final };
}

function fresh(final: Map<string, string | null>, reverse: boolean): HomeIndex {
  const idx = new HomeIndex({ mode: 'lazy' });
  const entries = [...final].sort((a, b) => (a[0] < b[0] ? -1 : 1));
  if (reverse) entries.reverse();
  for (const [path, text] of entries) {
    if (text === null) addFile(idx, path);
    else addNote(idx, path, text);
  }
  return idx;
}

function fullState(idx: HomeIndex) {
  const state = linkState(idx);
  const byId = state.ids.map(([, id]) => [id, idx.noteById(id!)?.path]);
  const nested = state.tags.map((t) => [t.tag, idx.notesWithTag(t.tag).map((n) => n.path), idx.notesWithTag(t.tag, { nested: false }).map((n) => n.path)]);
  return { ...state, byId, nested };
}

describe('incremental equals fresh', () => {
  it.each(['lazy', 'sync'] as const)('random upsert/remove sequences (%s mode)', (mode) => {
    fc.assert(
      fc.property(fc.array(op, { minLength: 1, maxLength: 40 }), fc.boolean(), (ops, reverse) => {
        const { idx, final } = replay(ops, mode);
        expect(fullState(idx)).toEqual(fullState(fresh(final, reverse)));
      }),
      { numRuns: Number(process.env.INDEX_PROP_RUNS ?? (mode === 'lazy' ? 400 : 150)) },
    );
  });
});

describe('incremental equals fresh, with hub names carried by thousands of links', () => {
  // Past 1,024 links a key's links are kept by source note too (link-refs.ts, BIG).
  it('edits, removals and re-resolutions of links to hubs', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.nat(1599), fc.nat(9)), { minLength: 1, maxLength: 60 }), fc.boolean(), (changes, reverse) => {
        const idx = new HomeIndex({ mode: 'lazy' });
        const final = new Map<string, string | null>();
        const put = (path: string, text: string) => {
          addNote(idx, path, text);
          final.set(path, text);
        };
        put('Hub.md', '# Hub\n');
        put('x/Hub.md', '# The other hub\n');
        for (let i = 0; i < 1600; i++) put(`n/${i}.md`, `[[Hub]] and [[Hub#Part|again]]${i % 3 ? ' [[Nick]]' : ''}\n`);
        idx.backlinks('Hub.md');
        for (const [i, what] of changes) {
          const path = `n/${i}.md`;
          if (what === 0) {
            idx.remove(path);
            final.delete(path);
          } else if (what === 1) {
            put(path, `no links now ${i}\n`);
          } else if (what === 2) {
            // The first hub goes: every [[Hub]] resolves to the other one.
            idx.remove('Hub.md');
            final.delete('Hub.md');
          } else if (what === 3) {
            put('Hub.md', '# Hub again\n');
          } else if (what === 4) {
            put(`n/${i}.md`, `---\naliases: [Nick]\n---\n[[Hub]] [[x/Hub]]\n`);
          } else {
            put(path, `[[Hub]] [[Hub]] [[Nick]] ${what}\n`);
          }
          if (what % 4 === 0) idx.backlinks('x/Hub.md');
        }
        expect(fullState(idx)).toEqual(fullState(fresh(final, reverse)));
      }),
      { numRuns: 12 },
    );
  });
});
