/** Page extraction: what is cut before a page is read, how page fields are shortened, and the worker that reads it. */
import { describe, expect, it } from 'vitest';
import { extractOffThread } from '../../src/clips/clips.js';
import { PAGE_FIELD_MAX, short, stripInert } from '../../src/clips/extract.js';

describe('stripInert', () => {
  it.each([
    ['a script', 'a<script>var s = "<p>";</script>b', 'ab'],
    ['an upper-case script with attributes and a spaced end tag', 'a<SCRIPT src="x.js"></Script >b', 'ab'],
    ['JSON-LD, which Readability reads', 'a<script type="application/ld+json">{"author":"Ada"}</script>b', 'a<script type="application/ld+json">{"author":"Ada"}</script>b'],
    ['a style and a comment', 'a<!-- <p>hidden</p> -->b<style>p{}</style>c', 'abc'],
    ['a tag that only starts like script', 'a<scripts>b</scripts>', 'a<scripts>b</scripts>'],
    ['an unclosed script (runs to the end, as in a browser)', 'a<script>never closed', 'a'],
    ['an unclosed comment', 'a<!-- never closed', 'a'],
    ['plain markup', '<p>kept <b>as is</b></p>', '<p>kept <b>as is</b></p>'],
  ])('cuts %s', (_, html, expected) => {
    expect(stripInert(html)).toBe(expected);
  });

  it.each([
    ['700,000 unclosed <script', '<script'.repeat(700_000)],
    ['300,000 JSON-LD starts without a >', '<script ld+json '.repeat(300_000)],
    ['1,500,000 tags', '<p>'.repeat(1_500_000)],
  ])('is linear on %s', (_, html) => {
    const started = Date.now();
    stripInert(html);
    expect(Date.now() - started).toBeLessThan(5000);
  });
});

describe('short', () => {
  it.each([
    ['null', null, null],
    ['a short title', 'Moss', 'Moss'],
    ['exactly the limit', 'x'.repeat(PAGE_FIELD_MAX), 'x'.repeat(PAGE_FIELD_MAX)],
    ['one over', 'x'.repeat(PAGE_FIELD_MAX + 1), `${'x'.repeat(PAGE_FIELD_MAX)}…`],
    ['a cut inside a surrogate pair', `${'x'.repeat(PAGE_FIELD_MAX - 1)}😀😀`, `${'x'.repeat(PAGE_FIELD_MAX - 1)}…`],
  ])('%s', (_, input, expected) => {
    expect(short(input)).toBe(expected);
  });
});

describe('extractOffThread', () => {
  const deep = `<html><body>${'<div>'.repeat(1500)}<p>deep</p>${'</div>'.repeat(1500)}</body></html>`;
  const url = new URL('https://example.org/a');

  it('reads a page on a worker thread', async () => {
    const article = await extractOffThread('<html><head><title>Moss</title></head><body><article><p>Moss grows on stones.</p></article></body></html>', url);
    expect(article.title).toBe('Moss');
    expect(article.markdown).toContain('Moss grows on stones.');
  }, 30_000);

  it('ends a reading past its time limit with 400 too_complex, and answers 503 when 2 read and 8 wait', async () => {
    const queued = Array.from({ length: 10 }, () => extractOffThread(deep, url, 200).catch((e: unknown) => e));
    await expect(extractOffThread(deep, url, 200)).rejects.toMatchObject({ status: 503, headers: { 'retry-after': '10' } });
    for (const r of await Promise.all(queued)) expect(r).toMatchObject({ status: 400, details: { reason: 'too_complex' } });
  }, 60_000);
});
