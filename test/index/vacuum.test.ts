/** Rewriting many notes while searching must not trip MiniSearch's vacuum (it used to crash mid-iteration). */
import { describe, expect, it } from 'vitest';
import { HomeIndex } from '../../src/index/home-index.js';
import { extractFacts } from '../../src/markdown/extract.js';

describe('search index under heavy rewrites', () => {
  it('stays consistent while every note is replaced many times', async () => {
    const index = new HomeIndex();
    const words = ['apple', 'banana', 'cherry', 'damson', 'elderberry', 'fig', 'grape'];
    const put = (i: number, round: number) => {
      const path = `Notes/n${i}.md`;
      const unique = Array.from({ length: 8 }, (_, k) => `u${i}x${round}y${k}`).join(' ');
      const text = `# Note ${i}\n${words[round]} ${unique} shared words alpha beta gamma #tag${round % 3}\n`;
      index.upsertNote(path, extractFacts(text, path), { size: text.length, mtimeMs: round, etag: `${i}-${round}` }, text);
    };
    for (let i = 0; i < 300; i++) put(i, 0);
    const errors: unknown[] = [];
    const onRejection = (e: unknown) => errors.push(e);
    process.on('unhandledRejection', onRejection);
    try {
      for (let round = 1; round <= 6; round++) {
        for (let i = 0; i < 300; i++) {
          put(i, round);
          if (i % 50 === 0) await index.search('alpha');
          if (i % 10 === 0) await new Promise((r) => setTimeout(r, 2));
        }
      }
      await new Promise((r) => setTimeout(r, 50));
    } finally {
      process.off('unhandledRejection', onRejection);
    }
    expect(errors).toEqual([]);
    expect((await index.search('grape', { limit: 500 }))).toHaveLength(300);
    expect((await index.search('fig', { limit: 500 }))).toHaveLength(0);
  });
});
