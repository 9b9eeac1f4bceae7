/**
 * The YAML reader's budget: frontmatter written by hand can nest thousands of
 * levels deep, chain thousands of aliases or run to megabytes; reading it
 * gives a frontmatter error at once, never a stack overflow, a process abort
 * or a frozen server. Within budget the result is exactly the `yaml` package's.
 */
import { describe, expect, it } from 'vitest';
import { parseDocument } from 'yaml';
import { parseFrontmatterYaml } from '../../src/markdown/common.js';
import { extractFacts } from '../../src/markdown/extract.js';
import { parseYamlDocument, YAML_MAX_CHARS } from '../../src/markdown/yaml-limits.js';

const blockNest = (n: number) => {
  let s = 'a:\n';
  for (let i = 0; i < n; i++) s += ' '.repeat(i + 1) + '- \n';
  return s;
};
const aliasChain = (n: number) => {
  let s = 'a0: &a0 [x]\n';
  for (let i = 1; i < n; i++) s += `a${i}: &a${i} [*a${i - 1}]\n`;
  return s;
};

describe('parseYamlDocument', () => {
  it.each([
    ['a flat mapping', 'a: 1\nb: [x, y]\n'],
    ['nested mappings', 'a:\n  b:\n    c: [1, {d: 2}]\n'],
    ['a few aliases', 'base: &b {x: 1}\nc: *b\nd: *b\n'],
    ['nesting 90 deep', `a: ${'['.repeat(90)}${']'.repeat(90)}\n`],
    ['brackets inside strings', `title: "${'['.repeat(300)}"\n`],
    ['a block scalar', 'text: |\n  line one\n  line two\n'],
    ['invalid YAML', 'a: [\n'],
    ['two documents', 'a: 1\n---\nb: 2\n'],
  ])('gives what the yaml package gives for %s', (_, src) => {
    const ours = parseYamlDocument(src);
    const theirs = parseDocument(src, { prettyErrors: false });
    expect(ours.errors.length).toBe(theirs.errors.length);
    if (theirs.errors.length === 0) expect(ours.toJS()).toEqual(theirs.toJS());
  });

  it.each([
    ['flow nesting 5,000 deep', `a: ${'['.repeat(5000)}${']'.repeat(5000)}\n`, /nested more than 100 levels/],
    ['flow nesting 200 deep', `a: ${'{b: '.repeat(200)}1${'}'.repeat(200)}\n`, /nested more than 100 levels/],
    ['block nesting 150 deep', blockNest(150), /nested more than 100 levels/],
    ['compact sequences 150 deep', `a:\n${'- '.repeat(150)}x\n`, /nested more than 100 levels/],
    ['a chain of 1,000 aliases', aliasChain(1000), /more than 100 aliases/],
    ['a megabyte of YAML', `a: [${'x, '.repeat(350_000)}]\n`, new RegExp(`longer than ${YAML_MAX_CHARS}`)],
  ])('refuses %s with an error, at once', (_, src, message) => {
    const started = Date.now();
    const doc = parseYamlDocument(src);
    expect(doc.errors[0]?.message).toMatch(message);
    expect(doc.contents).toBeNull();
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('reads a hand-written note with deeply nested frontmatter as a frontmatter error, body intact', () => {
    for (const yaml of [`a: ${'['.repeat(20_000)}${']'.repeat(20_000)}\n`, blockNest(3000), aliasChain(20_000)]) {
      const facts = extractFacts(`---\n${yaml}---\n# Still here\n\nBody #tag\n`, 'Notes/Deep.md');
      expect(facts.frontmatterError).toMatch(/nested|aliases|longer/);
      expect(facts.frontmatter).toBeNull();
      expect(facts.title).toBe('Still here');
      expect(facts.tags).toContain('tag');
      expect(parseFrontmatterYaml(yaml).data).toBeNull();
    }
  });
});
