/**
 * The fast extractor must produce exactly the reference's facts: on the
 * hand-made fixtures, on the real Obsidian Help vault (when the shared
 * corpora are present), on a generated vault and on random combinations of
 * tricky snippets.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { extractFacts } from '../../src/markdown/extract.js';
import { referenceFacts } from './reference-extractor.js';
import { generateNote } from '../helpers/generate-vault.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const fixtures = join(root, 'vault-fixtures/markdown');
const corpus = join(root, '../shared/corpora/obsidian-help-en');

function markdownFiles(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) markdownFiles(p, out);
    else if (name.endsWith('.md')) out.push(p);
  }
  return out;
}

function same(text: string, path: string): void {
  expect(extractFacts(text, path), path).toEqual(referenceFacts(text, path));
}

/**
 * These tests are long and synchronous. Without a timer turn now and then the
 * worker never reads vitest's replies, and its RPC timeout fires
 * ("Timeout calling onTaskUpdate") although every test passes.
 */
const breathe = () => new Promise((resolve) => setTimeout(resolve, 0));
afterEach(breathe);

describe('fast extractor = remark reference', () => {
  it('on every hand-made fixture in vault-fixtures/markdown', () => {
    const files = markdownFiles(fixtures);
    expect(files.length).toBeGreaterThanOrEqual(25);
    for (const f of files) same(readFileSync(f, 'utf8'), relative(fixtures, f));
  });

  const hasCorpus = existsSync(corpus);
  (hasCorpus ? it : it.skip)(
    hasCorpus
      ? 'on every Markdown file of the Obsidian Help vault (shared corpora)'
      : 'on the Obsidian Help vault — skipped: the shared corpora (../shared/corpora/obsidian-help-en) are absent',
    async () => {
      const files = markdownFiles(corpus);
      expect(files.length).toBeGreaterThan(100);
      for (const [n, f] of files.entries()) {
        same(readFileSync(f, 'utf8'), relative(corpus, f));
        if (n % 20 === 19) await breathe();
      }
    },
    300_000,
  );

  for (let part = 0; part < 4; part++) {
    it(`on generated notes ${part * 500}–${part * 500 + 499} (2,000 in all)`, async () => {
      for (let i = part * 500; i < (part + 1) * 500; i++) {
        same(generateNote(2024, i, { sections: 1 + (i % 4) }), `gen/note-${i}.md`);
        if (i % 50 === 49) await breathe();
      }
    }, 300_000);
  }

  // Snippets chosen for the corners: code, escapes, containers, tables, tasks.
  const SNIPPETS = [
    '#tag', '#a/b/c', '#123', '#1a', '#日本', '#🚀x', 'a#b', 'http://x/#frag ', '\\#esc', '(#paren)', '#tag.', '#tag,#t2',
    '[[Note]]', '[[Note|Alias]]', '[[Note#Head]]', '[[Note#^blk]]', '[[#Local]]', '![[img.png]]', '\\[[esc]]', '[[a\\|b]]',
    '[[]]', '[[ ]]', '[[a]](x.md)', '`[[code]]`', '``a ` #b``', '`unclosed', '```inline```', '`a\nb #c`',
    '[t](rel/p%20a.md)', '[t](<a b.md>)', '[t](https://x.y/z.md)', '[t](mailto:a@b.c)', '![i](p.png "T")', '[t](#Head)',
    '[a [b](c.md)](d.md)', '[![i](i.png)](l.md)', '[t](a\\(b\\).md)', '[t]( x.md )', "[t](x.md 't')",
    '<http://a.b/#c>', '<span #x>', '<!-- #c [[d]] -->', '<!--\n#c\n-->', '<div>\n#x\n</div>', '<b>#bold</b>',
    '$$x #m$$', '$$\n#m\n$$', '$5 #t $6', '^abc', 'para ^id-1', 'x ^bad_id', '^a ^b',
    '- [ ] t', '- [x] done ^tid', '* [X] D', '+ [/] half', '1. [-] can', '2) [>] fwd', '- [?] q 📅 2024-02-29',
    '- [!] due:2024-13-01', '- [ ] [due:: 2024-01-31] x', '- [ ]', '- [x]', '-\t[ ] tab', '- [ ]  two', '- [[link]]', '- [x](a.md)',
    '  - nested', '    - deep', '\t- tabbed', '\t\t- [ ] tt', '      code?',
    '> quote #q', '> [!note] Title', '> - [ ] qt', '>> deep', '> ```\n> #c\n> ```', 'lazy #l',
    '```\n#c\n```', '~~~\n```\n#c\n~~~', '````\n```\n#c\n```\n````', '```js\n[[x]]', '    indented #i', '\tindent tab #i',
    '# H1 #ht', '## H2 ##', '#NoSpace', '# ', 'Setext\n===', 'Set #t\n---', '***', '- - -', '---',
    '| a | b |\n| - | - |\n| #t | [[x\\|y]] |', 'a | b\n-|-', '|x|\n|:-|\n|`a|b`|', '| h |\n| --- |\nrow #r',
    '[^1]: foot #f', '[^1]', '[d]: /url "t"', '[d]', 'word', 'two words', '**bold #b**', '*em*#t', '~~del~~',
    '\\', '\\\\[[x]]', '&amp; #t', 'www.ex.com/#q ', 'x@y.com ', '  \n', '', '\t', '1.', '-', '>',
    '<script>\n#s\n</script>', '<pre>', '<custom-tag attr="1">', '</div>', '<?php #x ?>', '<![CDATA[ #x ]]>', '<!DOCTYPE html>',
    '[^n]: a\n\n    b #fb', 'a  \n#brk', 'a\\\n#brk2', '[x](a.md\n"t")', '[x](\na.md)', '[d]: /url\n"title #t"', '[x]: <a b>',
    '***bold*** _#u_ __x__', '~~#s~~', '&#35;notag', '&nbsp;#t', '[t](a%ZZ.md)', '[t](%E2%82%AC.md)', '[t](a&#41;.md)',
    '- a\n\n  b #li', '1. x\n   ```\n   #c\n   ```', '- > q #lq', '> - a\n> b', '-\n  foo #f', '* * *', '_ _ _',
    '\t\t#deep', ' #sp', '   #sp3', '    #sp4', '[[a|b|c]]', '[[a#b|c]]', '![[a#^b|c]]', '[[ a # b ]]', '[x][d]', '[d][]',
  ];
  const SEPARATORS = ['\n', '\n\n', ' ', '', '\n  ', '\n> ', '\n- ', '\n\t', '\r\n'];

  it('on random combinations of tricky snippets (fast-check)', async () => {
    const piece = fc.tuple(fc.constantFrom(...SEPARATORS), fc.constantFrom(...SNIPPETS));
    let runs = 0;
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...SNIPPETS), fc.array(piece, { maxLength: 8 }), async (first, rest) => {
        const text = first + rest.map(([sep, s]) => sep + s).join('');
        expect(extractFacts(text, 'p.md')).toEqual(referenceFacts(text, 'p.md'));
        if (++runs % 100 === 0) await breathe();
      }),
      { numRuns: 4000, seed: 20241122 },
    );
  }, 300_000);

  // Lines with random container prefixes, contents and line endings (lone CR too).
  const PREFIXES = ['', '', '> ', '>', '  ', '    ', '\t', '- ', '1. ', '2) ', '* ', '> - ', '   ', ' ', '>  ', '- [ ] ', '  - ', '\t- ', '> > ', '[^1]: ', '    - '];
  const CONTENTS = [
    'text #tag', '[[Link]] and [md](a b.md)', '`code #x`', '```', '~~~', '#', '# Head #h', '---', '===', '***', '| a | b |',
    '|---|---|', '- x', '', '<div>', '<!--', '-->', '<b>', '[d]: /u', '^id', 'para ^blk', '$$', 'x $$ #m $$', 'a\\', 'foo  ',
    '[x] y', '[ ] z', '`multi', 'line`', '#t1 #2 #t/3', '![[E]]', '[a](<b c.md>)', 'www.x.com ', '[^1]', '* * *', '- | -',
  ];
  it('on random container/line-ending structures (fast-check)', async () => {
    const line = fc.tuple(fc.constantFrom(...PREFIXES), fc.constantFrom(...CONTENTS));
    let runs = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(line, { minLength: 1, maxLength: 10 }),
        fc.constantFrom('\n', '\r\n', '\r'),
        fc.boolean(),
        async (lines, eol, final) => {
          const text = lines.map(([p, c]) => p + c).join(eol) + (final ? eol : '');
          expect(extractFacts(text, 's.md')).toEqual(referenceFacts(text, 's.md'));
          if (++runs % 100 === 0) await breathe();
        },
      ),
      { numRuns: 3000, seed: 7 },
    );
  }, 300_000);
});
