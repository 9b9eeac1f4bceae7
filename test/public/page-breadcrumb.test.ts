/** The trail of a folder link's page, table-style: every folder above links, the current place does not, names are escaped. */
import { describe, expect, it } from 'vitest';
import { breadcrumb } from '../../src/public/render.js';

describe('breadcrumb', () => {
  it.each([
    ['', ''],
    ['sub', '<li><a href="/p/S">Share</a></li><li aria-current="page">sub</li>'],
    ['a/b/c.md', '<li><a href="/p/S">Share</a></li><li><a href="/p/S?path=a">a</a></li><li><a href="/p/S?path=a%2Fb">b</a></li><li aria-current="page">c.md</li>'],
    ['x y/<b>&', '<li><a href="/p/S">Share</a></li><li><a href="/p/S?path=x%20y">x y</a></li><li aria-current="page">&lt;b&gt;&amp;</li>'],
  ])('%j', (rel, items) => {
    const html = breadcrumb('S', 'Share', rel);
    expect(html).toBe(items === '' ? '' : `<nav aria-label="Breadcrumb" id="breadcrumb"><ol>${items}</ol></nav>`);
  });

  it('escapes the root name', () => {
    expect(breadcrumb('S', '"Q"&', 'a')).toContain('<a href="/p/S">&quot;Q&quot;&amp;</a>');
  });
});
