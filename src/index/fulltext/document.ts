/**
 * What of a note the full-text index searches: its title (plus the file
 * name when the title differs), the text after the frontmatter, its tags
 * and its aliases.
 */
import type { NoteFacts } from '../../markdown/facts.js';
import type { PartialIndex } from './full-text.js';
import { TermPostings, type FieldTexts } from './postings.js';

export function fieldsOf(path: string, facts: Pick<NoteFacts, 'title' | 'frontmatterRange' | 'tags' | 'aliases'>, text: string): FieldTexts {
  const slash = path.lastIndexOf('/');
  const dot = path.lastIndexOf('.');
  const name = dot > slash + 1 ? path.slice(slash + 1, dot) : path.slice(slash + 1);
  const title = facts.title === name ? facts.title : `${facts.title} ${name}`;
  // The body is the text after the frontmatter, given as an offset rather than a slice (see tokenize.ts).
  const bodyFrom = facts.frontmatterRange !== null ? Math.min(facts.frontmatterRange.end, text.length) : 0;
  return [title, text, facts.tags.join(' '), facts.aliases.join(' '), bodyFrom];
}

/** The full text of notes tokenized apart from a live index (a scan worker's), numbered in the order added. */
export class PartialBuilder {
  private readonly postings = new TermPostings(false);
  private readonly paths: string[] = [];
  private readonly etags: string[] = [];
  private readonly lengths: number[] = [];

  add(path: string, etag: string, fields: FieldTexts): void {
    const doc = this.paths.length;
    this.paths.push(path);
    this.etags.push(etag);
    this.postings.add(doc, fields, this.lengths, this.lengths.length);
  }

  build(): PartialIndex {
    return { paths: this.paths, etags: this.etags, lengths: Int32Array.from(this.lengths), segment: this.postings.toSegment() };
  }
}
