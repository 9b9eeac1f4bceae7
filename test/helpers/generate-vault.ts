/**
 * A deterministic generator of realistic vault notes, for the equivalence
 * tests and the benchmark: frontmatter, headings, paragraphs with wikilinks,
 * tags, Markdown links and block ids, nested lists and tasks, code blocks,
 * tables, callouts, math and comments. `generateNote(seed, i)` always returns
 * the same text for the same arguments.
 */

/** mulberry32: a small, fast, seeded PRNG returning floats in [0, 1). */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = (
  'the of and to in is that for it as with was on be by this are from or an at which but not have ' +
  'note vault idea project meeting summary draft review plan research reading book chapter quote ' +
  'garden system process weekly daily journal insight question answer example detail context ' +
  'markdown obsidian link graph backlink heading block reference task deadline priority status ' +
  'café naïve résumé über straße año 日本語 中文 Ελληνικά русский عربى emoji 🚀 data-driven e-mail ' +
  'v2.0 2024 42 50% x/y a.k.a. e.g. i.e. well-known self-hosted'
).split(' ');
/** The notes generated links point at (exported so benchmarks can create them). */
export const NOTES = [
  'Home',
  'Project Alpha',
  'Reading List',
  'Meeting Notes 2024-03-01',
  'Ideas/Inbox',
  'People/Ada Lovelace',
  'Books/Gödel, Escher, Bach',
  'Daily/2024-05-17',
  'Ψ Notes',
  'a',
];
const TAGS = ['project', 'todo', 'idea/later', 'area/health', 'Reading', 'y2024', 'status/in-progress', 'café', '日本', 'emoji🚀', 'a_b', 'x-1'];
const HEADINGS = ['Overview', 'Notes', 'Next steps', 'Open questions', 'Log', 'References', 'Details #meta', 'Ideas'];
const LANGS = ['', 'js', 'ts', 'python', 'bash', 'md', 'yaml'];
const STATUSES = [' ', ' ', ' ', 'x', 'x', 'X', '/', '-', '>', '<', '?', '!', '*'];

export interface GenerateOptions {
  /** Approximate number of body sections (default: random 2–8). */
  sections?: number;
}

/** Generate note number `i` of the vault seeded with `seed`. */
export function generateNote(seed: number, i: number, opts: GenerateOptions = {}): string {
  const r = prng((seed * 1_000_003 + i * 7919 + 17) >>> 0);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  const chance = (p: number) => r() < p;
  const int = (lo: number, hi: number) => lo + Math.floor(r() * (hi - lo + 1));
  const date = () => `20${int(20, 29)}-${String(int(1, 12)).padStart(2, '0')}-${String(int(1, 28)).padStart(2, '0')}`;
  const blockId = () => Math.floor(r() * 0xffffff).toString(36) + (chance(0.3) ? '-x' : '');

  const inline = (): string => {
    const k = r();
    if (k < 0.22) {
      const t = pick(NOTES);
      const f = r();
      if (f < 0.4) return `[[${t}]]`;
      if (f < 0.6) return `[[${t}|${pick(WORDS)} ${pick(WORDS)}]]`;
      if (f < 0.75) return `[[${t}#${pick(HEADINGS).replace(' #meta', '')}]]`;
      if (f < 0.85) return `[[${t}#^${blockId()}]]`;
      if (f < 0.92) return `[[#${pick(HEADINGS).replace(' #meta', '')}]]`;
      return `![[${t}]]`;
    }
    if (k < 0.36) return `#${pick(TAGS)}`;
    if (k < 0.42) return `[${pick(WORDS)}](${encodeURI(pick(NOTES))}.md)`;
    if (k < 0.45) return `[site](https://example.com/${pick(WORDS)}#frag)`;
    if (k < 0.52) return '`' + pick(['[[not a link]]', '#notatag', 'x = y', 'a`b'.replace('`', "'"), 'npm i']) + '`';
    if (k < 0.58) return `**${pick(WORDS)} ${pick(WORDS)}**`;
    if (k < 0.62) return `*${pick(WORDS)}*`;
    if (k < 0.64) return `http://x.org/page#${pick(WORDS)}`;
    if (k < 0.66) return `#${int(1, 999)}`;
    if (k < 0.67) return `<!-- #hidden [[Hidden]] -->`;
    if (k < 0.68) return `\\#escaped`;
    if (k < 0.69) return `![img](assets/${pick(WORDS)}.png)`;
    return pick(WORDS);
  };
  const sentence = (n: number): string => {
    const out: string[] = [];
    for (let j = 0; j < n; j++) out.push(inline());
    let s = out.join(' ');
    s = s.charAt(0).toUpperCase() + s.slice(1);
    return s + (chance(0.8) ? '.' : chance(0.5) ? '!' : ':');
  };
  const paragraph = (): string => {
    const lines: string[] = [];
    const nl = int(1, 4);
    for (let j = 0; j < nl; j++) lines.push(sentence(int(4, 16)));
    let p = lines.join(chance(0.5) ? '\n' : ' ');
    if (chance(0.15)) p += ` ^${blockId()}`;
    return p;
  };
  const task = (indent: string): string => {
    let t = `${indent}${pick(['-', '-', '*', '+', '1.'])} [${pick(STATUSES)}] ${sentence(int(2, 8)).slice(0, -1)}`;
    const d = r();
    if (d < 0.25) t += ` 📅 ${date()}`;
    else if (d < 0.35) t += ` [due:: ${date()}]`;
    else if (d < 0.4) t += ` due:${date()}`;
    if (chance(0.15)) t += ` ^${blockId()}`;
    return t;
  };
  const list = (): string => {
    const lines: string[] = [];
    const n = int(2, 7);
    const tab = chance(0.3);
    for (let j = 0; j < n; j++) {
      const depth = j === 0 ? 0 : int(0, 2);
      const indent = tab ? '\t'.repeat(depth) : '  '.repeat(depth);
      if (chance(0.5)) lines.push(task(indent));
      else lines.push(`${indent}- ${sentence(int(2, 10))}${chance(0.1) ? ` ^${blockId()}` : ''}`);
    }
    return lines.join('\n');
  };
  const code = (): string => {
    const fence = pick(['```', '```', '~~~', '````']);
    const body: string[] = [];
    for (let j = int(1, 6); j > 0; j--) {
      body.push(
        pick([
          'const x = 1; // #notatag',
          '- [ ] not a task',
          '[[Not A Link]]',
          '# not a heading',
          '```',
          '    indented line',
          'print("hello #world")',
          '',
        ]),
      );
    }
    // An inner ``` inside ```` is content; an inner ``` in ``` closes the block, so avoid it there.
    const safe = fence === '````' ? body : body.map((l) => (l === '```' && fence !== '~~~' ? '// end' : l));
    return `${fence}${pick(LANGS)}\n${safe.join('\n')}\n${fence}`;
  };
  const table = (): string => {
    const cols = int(2, 4);
    const row = () =>
      '| ' +
      Array.from({ length: cols }, () =>
        pick([pick(WORDS), `[[${pick(NOTES)}\\|${pick(WORDS)}]]`, `#${pick(TAGS)}`, '`a|b`'.replace('|', '-'), String(int(1, 99))]),
      ).join(' | ') +
      ' |';
    const lines = [row(), '|' + Array.from({ length: cols }, () => pick([' --- ', ':---', '---:', ':-:'])).join('|') + '|'];
    for (let j = int(1, 5); j > 0; j--) lines.push(row());
    let t = lines.join('\n');
    if (chance(0.3)) t += `\n\n^${blockId()}`;
    return t;
  };
  const callout = (): string => {
    const kind = pick(['note', 'tip', 'warning', 'quote', 'todo']);
    const lines = [`> [!${kind}]${chance(0.5) ? '-' : ''} ${pick(WORDS)} ${pick(WORDS)}`];
    for (let j = int(1, 3); j > 0; j--) lines.push(`> ${sentence(int(3, 10))}`);
    if (chance(0.3)) lines.push(`> - [ ] ${sentence(3).slice(0, -1)}`);
    return lines.join('\n');
  };
  const math = () => (chance(0.5) ? `$$\nE = mc^2 #notatag\n$$` : `Inline $$a^2 + b^2 #x$$ math.`);
  const indentedCode = () => `    indented code #notatag [[NotALink]]\n    more code`;

  const parts: string[] = [];
  if (chance(0.8)) {
    const fm: string[] = ['---'];
    if (chance(0.3)) fm.push(`title: ${pick(WORDS)} ${pick(WORDS)}`);
    if (chance(0.3)) fm.push(`id: ${blockId()}`);
    if (chance(0.3)) fm.push(chance(0.5) ? `aliases: [${pick(WORDS)}, "${pick(NOTES)}"]` : `alias: ${pick(WORDS)}`);
    const tr = r();
    if (tr < 0.3) fm.push(`tags: [${pick(TAGS)}, ${pick(TAGS)}]`);
    else if (tr < 0.5) fm.push(`tags: ${pick(TAGS)}, #${pick(TAGS)}`);
    else if (tr < 0.7) fm.push(`tags:\n  - ${pick(TAGS)}\n  - ${pick(TAGS)}`);
    if (chance(0.5)) fm.push(`created: ${date()}`);
    if (chance(0.2)) fm.push(`rating: ${int(1, 5)}`);
    if (chance(0.03)) fm.push(`broken: [unclosed`);
    fm.push('---');
    parts.push(fm.join('\n'));
  }
  if (chance(0.5)) parts.push(`# ${pick(WORDS)} ${pick(WORDS)}${chance(0.2) ? ` #${pick(TAGS)}` : ''}`);
  const sections = opts.sections ?? int(2, 8);
  for (let s = 0; s < sections; s++) {
    if (chance(0.8)) parts.push(`${'#'.repeat(int(2, 4))} ${pick(HEADINGS)}`);
    for (let b = int(1, 4); b > 0; b--) {
      const k = r();
      if (k < 0.45) parts.push(paragraph());
      else if (k < 0.65) parts.push(list());
      else if (k < 0.75) parts.push(code());
      else if (k < 0.82) parts.push(table());
      else if (k < 0.89) parts.push(callout());
      else if (k < 0.92) parts.push(math());
      else if (k < 0.94) parts.push(indentedCode());
      else if (k < 0.96) parts.push('---');
      else parts.push(`<!--\n#hidden [[Hidden]]\n-->`);
    }
  }
  let text = parts.join('\n\n');
  if (chance(0.9)) text += '\n';
  if (chance(0.05)) text = text.replace(/\n/g, '\r\n');
  return text;
}

/** A whole generated vault: `count` notes with Home-relative paths. */
export function generateVault(seed: number, count: number): Array<{ path: string; text: string }> {
  const out: Array<{ path: string; text: string }> = [];
  for (let i = 0; i < count; i++) out.push({ path: `gen/note-${i}.md`, text: generateNote(seed, i) });
  return out;
}
