/**
 * The FAST fact extractor. Three modules do the parsing, each with one entry
 * point: block-syntax.ts (`scanBlocks`: the CommonMark block structure,
 * frontmatter, list items and tasks, tables), inline-syntax.ts
 * (`PhrasingScanner`: code spans, autolinks, raw HTML, then wikilinks and tags
 * in the visible text) and link-syntax.ts (pure: inline link tails, reference
 * labels and definitions). It must produce exactly what `referenceFacts`
 * (test/markdown/reference-extractor.ts, built on remark) produces;
 * test/markdown/equivalence.test.ts checks that.
 */
import type { NoteFacts } from './facts.js';
import { assembleFacts } from './common.js';
import { scanBlocks } from './block-syntax.js';

/** Extract a note's facts with the fast line scanner. `path` is Home-relative. */
export function extractFacts(text: string, path: string): NoteFacts {
  let scan = scanBlocks(text, null);
  if (scan.definedLabels.size > 0) {
    // Reference links need the note's definitions, which may come after
    // their use: run again knowing them (rare: few notes have definitions).
    scan = scanBlocks(text, scan.definedLabels);
  }
  return assembleFacts(path, scan.facts);
}
