/**
 * What of a note the full-text index searches: its title (plus the file
 * name when the title differs), the text after the frontmatter, its tags
 * and its aliases.
 */
import type { NoteFacts } from '../../markdown/facts.js';
import type { FieldTexts } from './postings.js';

export function fieldsOf(path: string, facts: Pick<NoteFacts, 'title' | 'frontmatterRange' | 'tags' | 'aliases'>, text: string): FieldTexts {
  const slash = path.lastIndexOf('/');
  const dot = path.lastIndexOf('.');
  const name = dot > slash + 1 ? path.slice(slash + 1, dot) : path.slice(slash + 1);
  const title = facts.title === name ? facts.title : `${facts.title} ${name}`;
  const body = facts.frontmatterRange !== null ? text.slice(facts.frontmatterRange.end) : text;
  return [title, body, facts.tags.join(' '), facts.aliases.join(' ')];
}
