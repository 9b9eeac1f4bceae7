/**
 * A question asked while link work is still deferred (a cold opening's first
 * backlinks call) resolves only the queued links that can name the asked
 * path (link-graph.ts, `settleTarget`), and a tag question adds only the
 * queued notes that carry the tag (tags.ts, `flushFor`). Their answers must
 * be exactly those of a whole flush, for every path of generated Homes full
 * of ambiguous names, aliases, relative links and anchors, in every state
 * the deferred period can leave (nothing resolved, part resolved, edits,
 * renames and removals queued), and every later question and edit must stay
 * exact.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { HomeIndex } from '../../src/index/home-index.js';
import { prng } from '../helpers/generate-vault.js';
import { targetHasKey } from '../../src/index/link-graph.js';
import { keysOfTarget } from '../../src/index/links.js';
import { extractFacts } from '../../src/markdown/extract.js';
import { decodeBatch, WireEncoder } from '../../src/vault/scan-wire.js';
import { addFile, addNote, linkState, stat } from './helpers.js';

/** Note names: same names in several folders and cases, dots, spaces, a final sigma (`ΑΣ`, lowercased `ας`). */
const NAMES = ['Alpha', 'alpha', 'Beta', 'My.Note', 'ΑΣ', 'Café', 'note 1'];
const FOLDERS = ['', 'a/', 'a/b/', 'B/', 'deep/er/'];
const FILES = ['Plan', 'img.png', 'a/IMG.png', 'docs/report.pdf', 'a/b/Beta.canvas', 'Alpha.md.png', 'B/ΑΣ'];
const ALIASES = ['Nick', 'nick', 'Alpha', 'Other Name', 'ασ', 'img.png', 'ΑΣ'];
const TAGS = ['t', 'T/u', 't/u/v', 'w', 'W/x', 'Σ/ΑΣ', 'note'];

const swapCase = (s: string) => [...s].map((c) => (c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase())).join('');
const md = (s: string) => encodeURI(s);

/** Every way a note links to a name: the shapes of links.ts's rules (exact, relative, by name, qualified, anchors). */
const SHAPES: Array<[string, (n: string) => string]> = [
  ['bare name', (n) => `[[${n}]]`],
  ['other case', (n) => `[[${swapCase(n)}]]`],
  ['with .md', (n) => `[[${n}.md]]`],
  ['with .MD', (n) => `[[${n}.MD]]`],
  ['heading', (n) => `[[${n}#Part]]`],
  ['block', (n) => `[[${n}#^b1]]`],
  ['label', (n) => `[[${n}|label]]`],
  ['embed', (n) => `![[${n}]]`],
  ['folder-qualified', (n) => `[[a/${n}]]`],
  ['folder-qualified, other case', (n) => `[[A/B/${swapCase(n)}]]`],
  ['absolute', (n) => `[[/a/b/${n}]]`],
  ['relative wikilink', (n) => `[[../${n}]]`],
  ['./ wikilink', (n) => `[[./${n}]]`],
  ['markdown, relative', (n) => `[x](${md(n)}.md)`],
  ['markdown, ../ with heading', (n) => `[x](../${md(n)}.md#Part)`],
  ['markdown, absolute', (n) => `[x](/${md(n)}.md)`],
  ['markdown, above the root', (n) => `[x](../../../../${md(n)}.md)`],
  ['markdown, through a folder and back', (n) => `[x](b/../${md(n)}.md)`],
  ['markdown embed without .md', (n) => `![x](${md(n)})`],
];
/** Links to aliases, files, folders, the note itself, and nothing. */
const EXTRAS = [
  '[[Nick]]', '[[NICK|n]]', '[[Other Name]]', '[[other name#Part]]', '[[ας]]', '[[ΑΣ]]', '![[img.png]]', '[[IMG.PNG]]',
  '[[a/img.png]]', '[x](img.png)', '[[report.pdf]]', '[[Plan]]', '[[Plan.md]]', '[[Beta.canvas]]', '[[Alpha.md.png]]',
  '[[#Part]]', '[x](#Part)', '[[a/]]', '[[..]]', '[[Nowhere]]', '[[deep/Alpha]]', '[[er/alpha]]',
];

/** A seeded generator (generate-vault's mulberry32): the same Home for the same seed. */
function rng(seed: number) {
  const next = prng(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)]!;
  return { next, pick };
}

function noteText(r: ReturnType<typeof rng>, self: string): string {
  const aliases = ALIASES.filter(() => r.next() < 0.12);
  const tags = TAGS.filter(() => r.next() < 0.2);
  const links: string[] = [];
  const n = 2 + Math.floor(r.next() * 7);
  for (let i = 0; i < n; i++) {
    if (r.next() < 0.3) links.push(r.pick(EXTRAS));
    else if (r.next() < 0.05) links.push(`[[${self}]]`);
    else links.push(r.pick(SHAPES)[1](r.pick(NAMES)));
  }
  const fm = aliases.length + tags.length > 0 ? `---\naliases: [${aliases.map((a) => JSON.stringify(a)).join(', ')}]\ntags: [${tags.join(', ')}]\n---\n` : '';
  return `${fm}# Part\n${links.join(' and\n')}\npara ^b1\n`;
}

/** A change to the Home; replayed on each fresh index of a scenario. */
type Step = (idx: HomeIndex) => void;

/**
 * Notes as a cold opening adds them: through a scan thread's batch, whose
 * notes' link tables share one strings array (what `settleTarget` tests
 * each target string of once).
 */
function addScanned(idx: HomeIndex, notes: Array<[string, string]>): void {
  const enc = new WireEncoder();
  notes.forEach(([path, text], i) => enc.add(path, `e${i}`, extractFacts(text, path)));
  decodeBatch(enc.take()).forEach(([path, , note], i) => idx.upsertScanned(path, note!, stat(notes[i]![1])));
}

/** The generated Home: every name in every folder, the files; its notes added one by one, or `batch` at a time as scanned. */
function home(seed: number, batch = 0): { steps: Step[]; paths: Set<string> } {
  const r = rng(seed);
  const steps: Step[] = [];
  const paths = new Set<string>();
  const notes: Array<[string, string]> = [];
  for (const folder of FOLDERS) {
    for (const name of NAMES) {
      if (r.next() < 0.25) continue;
      const path = `${folder}${name}.md`;
      const text = noteText(r, name);
      notes.push([path, text]);
      paths.add(path);
    }
  }
  if (batch === 0) for (const [path, text] of notes) steps.push((idx) => addNote(idx, path, text));
  for (let i = 0; batch > 0 && i < notes.length; i += batch) {
    const some = notes.slice(i, i + batch);
    steps.push((idx) => addScanned(idx, some));
  }
  for (const f of FILES) {
    steps.push((idx) => addFile(idx, f));
    paths.add(f);
  }
  return { steps, paths };
}

/** Edits made while links wait: renames, edited links and aliases, removals, new names that win a match, notes becoming files. */
function edits(seed: number, paths: Set<string>, count: number): Step[] {
  const r = rng(seed * 7919 + 1);
  const steps: Step[] = [];
  const notes = () => [...paths].filter((p) => p.endsWith('.md')).sort();
  for (let k = 0; k < count; k++) {
    const kind = r.next();
    const some = notes();
    if (kind < 0.2 && some.length > 0) {
      // Rename (remove, then the same text at a new path, often a shorter one that wins name matches).
      const from = r.pick(some);
      const to = `${r.pick(['', 'c/', 'a/b/c/'])}${r.pick([...NAMES, 'Gamma'])}${r.next() < 0.5 ? '' : k}.md`;
      if (paths.has(to)) continue;
      const text = noteText(rng(seed + k), 'x');
      steps.push((idx) => {
        idx.remove(from);
        addNote(idx, to, text);
      });
      paths.delete(from);
      paths.add(to);
    } else if (kind < 0.5 && some.length > 0) {
      const p = r.pick(some);
      const text = noteText(rng(seed * 31 + k), p);
      steps.push((idx) => addNote(idx, p, text));
    } else if (kind < 0.65) {
      const p = r.pick([...paths].sort());
      steps.push((idx) => idx.remove(p));
      paths.delete(p);
    } else if (kind < 0.8) {
      const p = `${r.pick(FOLDERS)}${r.pick(NAMES)}.md`;
      const text = noteText(rng(seed * 17 + k), p);
      steps.push((idx) => addNote(idx, p, text));
      paths.add(p);
    } else if (kind < 0.9) {
      const p = r.pick(['Alpha', 'c/img.png', 'IMG.png', 'a/Plan', 'Beta.canvas', 'Nick', 'x/Other Name']);
      steps.push((idx) => addFile(idx, p));
      paths.add(p);
    } else if (some.length > 0) {
      const p = r.pick(some);
      steps.push((idx) => addFile(idx, p)); // a note replaced by a file of the same path
    }
  }
  return steps;
}

/** How much link work is done before the edits. */
type Before = 'nothing resolved' | 'part resolved' | 'all resolved';

function build(steps: Step[], before: Before, later: Step[], asked: string[]): HomeIndex {
  const idx = new HomeIndex({ mode: 'lazy' });
  for (const s of steps) s(idx);
  if (before === 'all resolved') idx.flush();
  if (before === 'part resolved') for (const p of asked) idx.backlinks(p);
  for (const s of later) s(idx);
  return idx;
}

/** Every path worth asking about: notes, files, paths that are gone or never were. */
function questions(paths: Set<string>): string[] {
  return [...paths, 'Nowhere.md', 'a/Nick.md', 'Gamma.md', 'a/Alpha.md', 'ΑΣ.md', 'img.png'].filter((p, i, all) => all.indexOf(p) === i).sort();
}

const SEEDS = [1, 2, 3, 4, 5, 6];
const SCENARIOS: Array<[Before, number]> = [
  ['nothing resolved', 0],
  ['nothing resolved', 12],
  ['part resolved', 12],
  ['all resolved', 12],
];

describe('a question during deferred link work answers as a whole flush would', () => {
  const CASES = [
    ...SCENARIOS.flatMap(([before, n]) => SEEDS.map((seed) => [before, n, seed, 0] as const)),
    // Scanned in batches of 9 notes (4 strings arrays), as a cold opening adds them.
    ...SCENARIOS.flatMap(([before, n]) => SEEDS.slice(0, 3).map((seed) => [before, n, seed, 9] as const)),
  ];
  it.each(CASES)('%s, %i edits after, seed %i, batches of %i (0: one by one)', (state, n, seed, batch) => {
    const { steps, paths } = home(seed, batch);
    const asked = ['a/Alpha.md', 'img.png', 'B/ΑΣ.md'];
    const before = new Set(paths);
    const later = edits(seed, paths, n);
    const full = build(steps, state, later, asked);
    full.flush();
    let targeted = 0;
    for (const p of questions(new Set([...before, ...paths]))) {
      const idx = build(steps, state, later, asked);
      const pendingBefore = idx.pendingWork().notes;
      expect(idx.backlinks(p), `backlinks(${p})`).toEqual(full.backlinks(p));
      if (idx.pendingWork().notes > 0) targeted++;
      expect(idx.backlinkCount(p)).toBe(full.backlinkCount(p));
      expect(idx.outgoing(p), `outgoing(${p})`).toEqual(full.outgoing(p));
      // A second question, about a path the first one did not settle, on the now partly resolved graph.
      const other = `${p === 'Beta.md' ? 'a/' : ''}Beta.md`;
      expect(idx.backlinks(other)).toEqual(full.backlinks(other));
      if (pendingBefore > 0) expect(idx.pendingWork().notes).toBeLessThanOrEqual(pendingBefore);
      // Then all of it: the same graph as resolving everything at once.
      expect(linkState(idx)).toEqual(linkState(full));
    }
    // The point of it: most questions leave notes queued (the Home's other links were not resolved).
    if (state !== 'all resolved' || n > 0) expect(targeted).toBeGreaterThan(0);
  });

  it('a first question after a cold load resolves only the notes that may link to the path', () => {
    const idx = new HomeIndex({ mode: 'lazy' });
    for (let i = 0; i < 200; i++) addNote(idx, `n/${i}.md`, `[[n/${(i + 1) % 200}]] [[Hub]]${i % 10 === 0 ? ' [[Target]] [x](../Target.md)' : ''}\n`);
    addNote(idx, 'Target.md', '---\naliases: [Bullseye]\n---\n');
    addNote(idx, 'late.md', '[[bullseye#x]]');
    expect(idx.backlinks('Target.md').map((b) => b.from)).toEqual(['late.md', ...Array.from({ length: 20 }, (_, k) => `n/${k * 10}.md`).sort()]);
    // 21 notes attached of 202; the other 181 are still queued for the background.
    expect(idx.pendingWork().notes).toBe(181);
    expect(idx.backlinkCount('Target.md')).toBe(21);
    expect(idx.outgoing('n/5.md').map((l) => l.resolved)).toEqual(['n/6.md', null]);
    expect(idx.pendingWork().notes).toBe(180);
  });
});

describe('which link targets can name a path (targetHasKey)', () => {
  // Compared with the keys themselves: ASCII targets take a path that makes no key strings.
  const TARGETS = [
    '', 'Alpha', 'alpha', 'ALPHA', 'Alpha.md', 'Alpha.MD', 'Alpha.mD', 'a/Alpha', 'a/b/ALPHA.md', '/Alpha', './Alpha', '../alpha.md', 'Alpha.md.md',
    'Alpha.m', 'Alpha.mdx', 'Alphas', 'Alph', '.md', 'a/.md', 'md', 'a/', 'Alpha/', 'Al pha', 'note 1', 'Note 1.md', 'x/Note%201',
    'Nick', 'NICK', 'a/Nick', 'Nick.md', 'Other Name', 'other name', 'ΑΣ', 'ας', 'ασ', 'ΑΣ.md', 'Λ/ΑΣ', 'Café', 'CAFÉ.md', 'İstanbul', 'img.png', 'IMG.PNG', 'a/img.png', '@[]^`{',
  ];
  const ASKED: Array<[string, string[]]> = [
    ['alpha', []], ['alpha', ['nick', 'other name']], ['ασ', ['ας']], ['ας', []], ['café', []], ['note 1', []], ['img.png', []],
    ['', ['alpha.md']], ['md', []], ['i̇stanbul', []], ['nick', []], ['x', ['img.png', 'a/nick']],
  ];
  it.each(ASKED)('name key %j, alias keys %j', (name, aliases) => {
    for (const t of TARGETS) {
      const k = keysOfTarget(t);
      const want = t !== '' && (k.name === name || aliases.includes(k.alias));
      expect(targetHasKey(t, name, aliases), t).toBe(want);
    }
  });
});

describe('later questions and edits stay exact', () => {
  const NOTE_PATHS = ['A.md', 'a/A.md', 'B.md', 'x/y/B.md', 'ΑΣ.md', 'z/ας.md', 'Nick.md', 'c/Dup.md', 'd/dup.md'];
  const FILE_PATHS = ['img.png', 'x/IMG.png', 'A', 'B.md.png', 'x/A.md'];
  const TARGETS = ['A', 'a', 'A.md', 'a/A', '/a/A', './A', '../A', 'B', 'y/B', 'x/y/B.md', 'ΑΣ', 'ας', 'ασ', 'img.png', 'IMG.PNG', 'Nick', 'nick', 'Dup', 'A.md.png', 'B.md.png', ''];
  const link = fc.record({ target: fc.constantFrom(...TARGETS), markdown: fc.boolean(), sub: fc.constantFrom('', '#H', '#^b', '|l') });
  const text = fc
    .record({ aliases: fc.subarray(['Nick', 'A', 'ΑΣ', 'Dup', 'Other'], { maxLength: 2 }), tags: fc.subarray(['t', 'T/u', 't/u/v', 'Σ/ΑΣ'], { maxLength: 2 }), links: fc.array(link, { maxLength: 5 }) })
    .map(({ aliases, tags, links }) => {
      const body = links.map((l) => {
        if (l.target === '') return l.markdown ? '[x](#H)' : '[[#H]]';
        if (l.markdown) return `[x](${encodeURI(l.target)}${l.sub.startsWith('#') ? l.sub : ''})`;
        return `[[${l.target}${l.sub}]]`;
      });
      return `---\naliases: [${aliases.join(', ')}]\ntags: [${tags.join(', ')}]\n---\n${body.join(' ')}\n`;
    });
  type Op =
    | { kind: 'note'; path: string; text: string }
    | { kind: 'file'; path: string }
    | { kind: 'remove'; path: string }
    | { kind: 'ask'; what: 'backlinks' | 'outgoing' | 'count' | 'tag'; path: string };
  const op: fc.Arbitrary<Op> = fc.oneof(
    { weight: 4, arbitrary: fc.record({ kind: fc.constant('note' as const), path: fc.constantFrom(...NOTE_PATHS), text }) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('file' as const), path: fc.constantFrom(...FILE_PATHS) }) },
    { weight: 2, arbitrary: fc.record({ kind: fc.constant('remove' as const), path: fc.constantFrom(...NOTE_PATHS, ...FILE_PATHS) }) },
    {
      weight: 4,
      arbitrary: fc.record({
        kind: fc.constant('ask' as const),
        what: fc.constantFrom('backlinks' as const, 'outgoing' as const, 'count' as const, 'tag' as const),
        path: fc.constantFrom(...NOTE_PATHS, ...FILE_PATHS, 't', 'T/U', '#t/u/v', 'σ/ας', 'Σ'),
      }),
    },
  );

  function fresh(final: Map<string, string | null>): HomeIndex {
    const idx = new HomeIndex({ mode: 'lazy' });
    for (const [p, t] of final) {
      if (t === null) addFile(idx, p);
      else addNote(idx, p, t);
    }
    idx.flush();
    return idx;
  }

  const answer = (idx: HomeIndex, o: Extract<Op, { kind: 'ask' }>) =>
    o.what === 'backlinks'
      ? idx.backlinks(o.path)
      : o.what === 'outgoing'
        ? idx.outgoing(o.path)
        : o.what === 'count'
          ? idx.backlinkCount(o.path)
          : [idx.notesWithTag(o.path).map((n) => n.path), idx.notesWithTag(o.path, { nested: false }).map((n) => n.path)];

  it('each answer equals a fresh, fully resolved index of the Home as it is then; so does the end state', () => {
    fc.assert(
      fc.property(fc.array(op, { minLength: 1, maxLength: 40 }), (ops) => {
        const idx = new HomeIndex({ mode: 'lazy' });
        const final = new Map<string, string | null>();
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
            expect(answer(idx, o)).toEqual(answer(fresh(final), o));
          }
        }
        const want = fresh(final);
        expect(linkState(idx)).toEqual(linkState(want));
        expect(want.tags().map((t) => idx.notesWithTag(t.tag).map((n) => n.path))).toEqual(want.tags().map((t) => want.notesWithTag(t.tag).map((n) => n.path)));
      }),
      { numRuns: Number(process.env.INDEX_PROP_RUNS ?? 300) },
    );
  });
});

describe('a tag question during deferred tag work answers as a whole flush would', () => {
  const ASKED = ['t', 'T', '#t', 'T/U', 't/u/v', 'w', 'W/X', 'σ', 'Σ/ΑΣ', 'σ/ας', 'note', 'missing', 't/u/v/w'];
  it.each(SEEDS)('seed %i: every tag, nested and direct, then the tag list', (seed) => {
    const { steps, paths } = home(seed);
    const later = edits(seed, paths, 10);
    const full = build(steps, 'nothing resolved', later, []);
    full.flush();
    let targeted = 0;
    for (const tag of ASKED) {
      const idx = build(steps, 'nothing resolved', later, []);
      const paths = (i: HomeIndex, nested: boolean) => i.notesWithTag(tag, { nested }).map((n) => n.path);
      expect(paths(idx, true), tag).toEqual(paths(full, true));
      expect(paths(idx, false), tag).toEqual(paths(full, false));
      if (idx.pendingWork().tags > 0) targeted++;
      expect(idx.tags()).toEqual(full.tags());
    }
    expect(targeted).toBeGreaterThan(0);
  });
});
