import { describe, expect, it } from 'vitest';
import { detachStrings } from '../../src/index/detach.js';
import { extractFacts } from '../../src/markdown/extract.js';
import { generateNote } from '../helpers/generate-vault.js';

describe('detachStrings', () => {
  it('leaves every value of the facts unchanged', () => {
    const texts = [
      '---\ntitle: A rather long frontmatter title\naliases: [Some long alias name, short]\nshared: &anchor {deep: a long string value here, list: [another long string value]}\nagain: *anchor\ntags: [project/very-long-tag-name]\n---\n# Heading that is long enough\n[[A long link target name#A long heading subpath|A long display label]]\n[md label text here](folder/another%20long%20target.md)\n- [ ] a task with a long text 📅 2024-01-01 ^a-long-block-id-here\n#another/long/tag-name\n',
      ...Array.from({ length: 20 }, (_, i) => generateNote(11, i)),
    ];
    for (const [i, text] of texts.entries()) {
      const facts = extractFacts(text, `n${i}.md`);
      const before = structuredClone(facts);
      detachStrings(facts);
      expect(facts).toEqual(before);
      detachStrings(facts); // idempotent
      expect(facts).toEqual(before);
    }
  });
});
