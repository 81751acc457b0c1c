/**
 * The extraction path reads pages written by strangers (DESIGN rule 8): the sanitising pre-pass, the
 * CDATA pass and the whole pipeline (DOM, selector chain, Readability, turndown's Markdown) must run
 * in time linear in the page, and so must charset sniffing and decoding before them. fast-check
 * generates pathological pages (openers with no `>`, unclosed elements, stray end tags, long
 * attribute values, entities, long words) and each is timed at a size and at eight times that size
 * (testbed/linear-time.ts): the ratio must stay near 8, far from quadratic's 64.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeBody, sniffMetaCharset } from '../../activities/http/charset';
import { dropHtmlCdata, extractPage } from '../../extract/extract-page';
import { headingAnchors, normalizeMarkdown } from '../../extract/normalize-markdown';
import { sanitizeHtml } from '../../extract/sanitize';
import { expectLinear, repeatTo } from '../../testbed/linear-time';

const HTML_PIECES = [
  '<a',
  '<a ',
  '<script',
  '<script>',
  '<SCRIPT type=application/ld+json',
  '<style',
  '<style>',
  '<template',
  '<noscript',
  '</noscript',
  '<!--',
  '<![CDATA[',
  '</script',
  '</style ',
  '<div>',
  '<div id=root>',
  '</span>',
  '<p>',
  '<li>',
  '<x-y:z-',
  '<a href="',
  '&amp;',
  '&#x41;',
  'word ',
  ' ',
  '>',
  '</',
];
/** The openers the review suspected, always included besides the generated shapes. */
const NAMED = ['<a', '<script', '<style', '<noscript', '<![CDATA[', '<template', '<x-y'];
/** `/>` on an HTML element closes nothing: these nest as deep as they repeat. */
const SELF_CLOSED_DIVS = '<div/>';
const shape = fc.oneof(
  fc.constantFrom(...NAMED),
  fc.array(fc.constantFrom(...HTML_PIECES), { minLength: 1, maxLength: 3 }).map((pieces) => pieces.join('')),
);
const sanitize = (html: string) => sanitizeHtml(html, 5_000_000, 200);

describe('sanitizeHtml runs in linear time', () => {
  it('on openers repeated without > (40,000 <script took 80 s before)', () => {
    for (const unit of NAMED)
      expectLinear(`sanitizeHtml ${JSON.stringify(unit)}`, sanitize, (chars) => repeatTo(chars, unit), {
        bytes: 32_000,
        maxMsPerKb: 1,
      });
  });

  it('on generated pathological pages', () => {
    fc.assert(
      fc.property(shape, fc.constantFrom('', '<p>text</p>', '<div>'.repeat(300)), (unit, prefix) => {
        expectLinear(
          `sanitizeHtml ${JSON.stringify([prefix, unit])}`,
          sanitize,
          (chars) => repeatTo(chars, unit, prefix),
          {
            bytes: 32_000,
            maxMsPerKb: 1,
          },
        );
      }),
      { numRuns: 25 },
    );
  });

  it('still cuts scripts and styles, keeps JSON-LD and text', () => {
    const result = sanitize(
      '<p>a<script type="application/ld+json">{"x":1}</script >b<style>c</STYLE>d<noscript>e</noscript><script>f',
    );
    expect(result.html).toBe('<p>abde');
    expect(result.jsonLd).toEqual(['{"x":1}']);
  });

  it('drops bogus CDATA in linear time', () => {
    expectLinear('dropHtmlCdata', dropHtmlCdata, (chars) => repeatTo(chars, '<![CDATA['), {
      bytes: 32_000,
      maxMsPerKb: 1,
    });
    expect(dropHtmlCdata('a<![CDATA[x>b<![CDATA[')).toBe('ab<![CDATA[');
  });
});

/**
 * The pipeline's time per KB is far higher than the pre-pass's: a page of 12,000 `<li>` costs about
 * 40 ms/KB, and chains of 200 nested `<div>`s (the depth cap) several hundred, nearly all in
 * Readability. Growth is what is asserted here; the ceiling only catches the catastrophic, and the
 * analysis pool's per-page deadline bounds the rest.
 */
const EXTRACT_GROWTH = { bytes: 4_000, runs: 2, maxMsPerKb: 100 };

describe('extractPage (the whole pipeline, Markdown included) runs in linear time', () => {
  const extract = (html: string) => extractPage(html, 'https://example.com/');
  const wrapped = fc.constantFrom(
    ['', ''],
    ['<html><body><main><p>', '</p></main></body></html>'],
    ['<article><h1>t</h1><p>', ''],
    ['<table><tr><td>', ''],
    ['<ul><li>', ''],
    ['<blockquote>', ''],
  );
  it('on generated pathological pages', () => {
    fc.assert(
      fc.property(shape, wrapped, (unit, [prefix, suffix]) => {
        expectLinear(
          `extractPage ${JSON.stringify([prefix, unit, suffix])}`,
          extract,
          (chars) => repeatTo(chars, unit, prefix, suffix),
          EXTRACT_GROWTH,
        );
      }),
      { numRuns: 8 },
    );
  });

  it('on Markdown-hostile text: long words, quote markers, list markers, emphasis, tables, nested lists', () => {
    const pages: Array<[string, string, string]> = [
      ['<p>', 'x', '</p>'],
      ['<p>', '> ', '</p>'],
      ['<p>', '- ', '</p>'],
      ['<p>', '*_`[', '</p>'],
      ['<p>', '\\', '</p>'],
      ['<table>', '<tr><td>a</td><td>b</td></tr>', '</table>'],
      ['<div>', '<ul><li>a</li></ul>', '</div>'],
      ['<div>', '<blockquote><p>q</p></blockquote>', '</div>'],
      ['<p>', '<a href="/x">link</a> ', '</p>'],
      ['<pre><code>', 'line\n', '</code></pre>'],
      // No-break spaces become blanks after turndown: a trailing-blank regex rescanned each inner run.
      ['<p>a', '&nbsp;', 'x</p>'],
      ['<p>x</p>', SELF_CLOSED_DIVS, ''],
      ['<svg>', '<path/>', '</svg><p>x</p>'],
      ['<h2>', '&nbsp;', 'x</h2>'],
      // Readability's image-list check read linkedom's `children` (built afresh on every read) twice
      // per list item: 8,000 empty <li> took 14 s (patches/@mozilla+readability+0.6.0.patch).
      ['<ul><li>', '<li>', ''],
      ['<ol>', '<li><img src=x.png>', '</ol>'],
    ];
    for (const [prefix, unit, suffix] of pages)
      expectLinear(
        `extractPage ${JSON.stringify([prefix, unit])}`,
        extract,
        (chars) => repeatTo(chars, unit, prefix, suffix),
        EXTRACT_GROWTH,
      );
  });
});

describe('normalizeMarkdown runs in linear time', () => {
  it('on long runs of blanks inside heading and text lines', () => {
    const normalize = (markdown: string) => [normalizeMarkdown(markdown), headingAnchors(markdown)];
    const piece = fc.constantFrom(' ', '\t', '\u00a0', '#', 'x', '`', '&amp;', '<', '|');
    fc.assert(
      fc.property(
        fc.constantFrom('## ', 'a', '# x ', ''),
        fc.array(piece, { minLength: 1, maxLength: 2 }),
        (prefix, pieces) => {
          expectLinear(
            `normalizeMarkdown ${JSON.stringify([prefix, ...pieces])}`,
            normalize,
            (chars) => repeatTo(chars, pieces.join(''), prefix, 'x'),
            { bytes: 16_000, maxMsPerKb: 2 },
          );
        },
      ),
      { numRuns: 10 },
    );
    expect(headingAnchors('## Hello   world  ##\n# Hello world')).toMatchObject([
      { level: 2, text: 'Hello   world', anchor: 'hello---world' },
      { level: 1, text: 'Hello world', anchor: 'hello-world' },
    ]);
  });
});

describe('charset sniffing and decoding run in linear time', () => {
  const piece = fc.constantFrom(
    '<meta',
    '<meta charset=',
    '<!--',
    ' ',
    '"',
    "'",
    'content=',
    '=',
    'x',
    '\u00e9',
    '<',
  );
  it('on generated heads', () => {
    fc.assert(
      fc.property(
        fc.array(piece, { minLength: 1, maxLength: 3 }),
        fc.constantFrom(undefined, 'text/html; charset=windows-1252'),
        (pieces, header) => {
          const unit = pieces.join('');
          expectLinear(
            `decodeBody ${JSON.stringify(unit)}`,
            (bytes: Buffer) => {
              sniffMetaCharset(bytes);
              return decodeBody(bytes, header);
            },
            (chars) => Buffer.from(repeatTo(chars, unit), 'latin1'),
            { bytes: 64_000, maxMsPerKb: 1 },
            (bytes) => bytes.length,
          );
        },
      ),
      { numRuns: 10 },
    );
  });
});
