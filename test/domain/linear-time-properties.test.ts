/**
 * Pages, robots.txt files and sitemaps are written by strangers (DESIGN rule 8): every parser in
 * domain/ that reads them must run in time linear in their size. fast-check generates pathological
 * inputs — a few hostile pieces (unclosed tags, openers without `>`, app roots, stray end tags, runs
 * of blanks, pipes and `#`s, wildcards) repeated to a size — and each is timed at a size and at eight
 * times that size (testbed/linear-time.ts): the ratio must stay near 8, far from quadratic's 64.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { chunkMarkdown, isTableSeparator, parseHeading } from '../../domain/chunking';
import { extractLinks } from '../../domain/links';
import { assessHtml } from '../../domain/render-decision';
import { evaluate, parseRobots } from '../../domain/robots';
import { createSitemapParser } from '../../domain/sitemap';
import { expectLinear, repeatTo } from '../../testbed/linear-time';

/** Pieces of hostile HTML; a generated page repeats a few of them. */
const HTML_PIECES = [
  '<div id=root>',
  '<div id="app">',
  '<div>',
  '<div>x',
  '</span>',
  '</p>',
  '<p>',
  '<li>',
  '<td>',
  '<a href=x>',
  '<a',
  '<script',
  '<script>',
  '<style',
  '<noscript',
  '<noscript>',
  '<!--',
  '<![CDATA[',
  '<svg>',
  '<math><mi>',
  '<form>',
  '<template>',
  '<div/>',
  '&amp;',
  '&#x41;',
  '&',
  ' ',
  'word ',
  '<a href="',
  '>',
];
const htmlShape = fc
  .array(fc.constantFrom(...HTML_PIECES), { minLength: 1, maxLength: 3 })
  .map((pieces) => pieces.join(''));

/** The shapes the review named, always included besides the generated ones. */
const NAMED_HTML = ['<div id=root>', '<div>x', '<div>', '<a', '<script', '<![CDATA[', '<!--', '</span>'];
const namedOrGenerated = fc.oneof(fc.constantFrom(...NAMED_HTML), htmlShape);

describe('assessHtml runs in linear time', () => {
  it('on 20,000 and 40,000 unclosed <div id=root> (quadratic before: 1.3 s and 6.7 s)', () => {
    expectLinear('unclosed app roots', assessHtml, (chars) => repeatTo(chars, '<div id=root>'), {
      bytes: 40_000,
      maxMsPerKb: 2,
    });
    // Stray end tags under deep nesting: htmlparser2's Parser scans its whole stack for each one.
    expectLinear(
      'stray end tags',
      assessHtml,
      (chars) => `${repeatTo(chars / 2, '<div>')}${repeatTo(chars / 2, '</span>')}`,
      {
        bytes: 40_000,
        maxMsPerKb: 2,
      },
    );
  });

  it('on generated pathological pages', () => {
    fc.assert(
      fc.property(namedOrGenerated, (unit) => {
        expectLinear(`assessHtml ${JSON.stringify(unit)}`, assessHtml, (chars) => repeatTo(chars, unit), {
          bytes: 24_000,
          maxMsPerKb: 2,
        });
      }),
      { numRuns: 12 },
    );
  });

  it('still finds an empty app root and a filled one', () => {
    expect(assessHtml('<div id=root></div>').reasons).toContain('empty app root #root');
    expect(assessHtml('<div id=root><p>hello</p></div>').reasons).toEqual([]);
    expect(assessHtml(repeatTo(1000, '<div id=root>')).reasons).toEqual(['empty app root #root']);
  });
});

describe('extractLinks runs in linear time', () => {
  it('on generated pathological pages', () => {
    fc.assert(
      fc.property(namedOrGenerated, (unit) => {
        expectLinear(
          `extractLinks ${JSON.stringify(unit)}`,
          (html: string) => extractLinks(html, 'https://example.com/'),
          (chars) => repeatTo(chars, unit),
          { bytes: 24_000, maxMsPerKb: 2 },
        );
      }),
      { numRuns: 10 },
    );
  });
});

/** Pieces of hostile Markdown: blanks, pipes, `#`s, list and quote markers, fences, emphasis, links. */
const MARKDOWN_PIECES = [
  '#',
  ' ',
  '\t',
  '|',
  '-',
  ':',
  '>',
  '- ',
  '  ',
  '1. ',
  '`',
  '```',
  '~~~',
  '*',
  '_a ',
  '[',
  '](',
  '\n',
  'x',
  '. ',
  '!',
  'word ',
];
const NAMED_MARKDOWN: Array<[string, string, string]> = [
  // [prefix, repeated unit, suffix]
  ['# ', ' ', 'x'], // a heading line with a long run of blanks: the heading regex was quadratic
  ['| a |\n|-', ' ', 'x'], // a table delimiter row with a long run of blanks
  ['', 'x', ''], // a long line without whitespace: each cut searched back to the start for a space
  ['', '&amp;', ''],
  ['', '> ', 'x'], // deeply nested quote
  ['', '- ', 'x'],
  ['', '  - x\n', ''], // a long list
  ['', '| a | b |\n', ''],
  ['# ', '_a ', ''],
  ['# ', '[', ''],
];
const countTokens = (text: string): number => (text.match(/[\p{L}\p{N}_]+|[^\p{L}\p{N}_\s]/gu) ?? []).length;
const chunk = (markdown: string) => chunkMarkdown(markdown, { countTokens });

describe('chunkMarkdown runs in linear time', () => {
  it('on the named shapes', () => {
    for (const [prefix, unit, suffix] of NAMED_MARKDOWN)
      expectLinear(
        `chunkMarkdown ${JSON.stringify([prefix, unit, suffix])}`,
        chunk,
        (chars) => repeatTo(chars, unit, prefix, suffix),
        {
          bytes: 16_000,
          maxMsPerKb: 3,
        },
      );
  });

  it('on generated Markdown', () => {
    const shape = fc
      .array(fc.constantFrom(...MARKDOWN_PIECES), { minLength: 1, maxLength: 6 })
      .map((p) => p.join(''));
    fc.assert(
      fc.property(shape, fc.constantFrom('', '# ', '| a |\n'), (unit, prefix) => {
        expectLinear(
          `chunkMarkdown ${JSON.stringify([prefix, unit])}`,
          chunk,
          (chars) => repeatTo(chars, unit, prefix),
          {
            bytes: 16_000,
            maxMsPerKb: 3,
          },
        );
      }),
      { numRuns: 12 },
    );
  });

  it('reads headings and table delimiter rows as the regexes they replace did', () => {
    const HEADING = /^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$/;
    const SEPARATOR = /^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$/;
    const line = (chars: string[]) =>
      fc.array(fc.constantFrom(...chars), { maxLength: 14 }).map((a) => a.join(''));
    fc.assert(
      fc.property(line([' ', '\t', '#', 'a', '\r', '#']), (text) => {
        const m = HEADING.exec(text);
        expect(parseHeading(text)).toEqual(m ? { level: (m[1] as string).length, text: m[2] ?? '' } : null);
      }),
      { numRuns: 5000 },
    );
    fc.assert(
      fc.property(line([' ', '\t', '|', '-', ':', 'a', '\u00a0']), (text) => {
        expect(isTableSeparator(text)).toBe(SEPARATOR.test(text));
      }),
      { numRuns: 5000 },
    );
  });
});

describe('robots.txt parsing and matching run in linear time', () => {
  const longUrl = `https://example.com/${'a'.repeat(4000)}?q=${'b'.repeat(1000)}`;
  const rulePiece = fc.constantFrom('*', '*a', 'a*', '*$', '%2A*', '/*', '?*', '$', 'a');
  it('with thousands of wildcards matched against a long URL', () => {
    fc.assert(
      fc.property(
        fc.array(rulePiece, { minLength: 1, maxLength: 3 }),
        fc.constantFrom('b', '$', 'a$', ''),
        (pieces, end) => {
          const unit = pieces.join('');
          expectLinear(
            `robots ${JSON.stringify(unit)}`,
            (text: string) => evaluate(parseRobots(text), longUrl, 'gleaner'),
            (chars) =>
              `User-agent: *\nDisallow: /${repeatTo(chars, unit)}${end}\nAllow: /${repeatTo(chars / 4, unit)}\n`,
            { bytes: 16_000, maxMsPerKb: 3 },
          );
        },
      ),
      { numRuns: 10 },
    );
  });

  it('with many rules, long lines and garbage', () => {
    const line = fc.constantFrom(
      'Disallow: /*a*b*c\n',
      'User-agent: x\n',
      'a '.repeat(50),
      'Disallow /x\n',
      '\r',
      '#',
      ' ',
      ':',
      'Sitemap: https://e.com/s\n',
    );
    fc.assert(
      fc.property(fc.array(line, { minLength: 1, maxLength: 3 }), (pieces) => {
        const unit = pieces.join('');
        expectLinear(
          `robots ${JSON.stringify(unit)}`,
          (text: string) => evaluate(parseRobots(text), longUrl, 'gleaner'),
          (chars) => `User-agent: *\n${repeatTo(chars, unit)}`,
          { bytes: 16_000, maxMsPerKb: 3 },
        );
      }),
      { numRuns: 8 },
    );
  });
});

describe('the sitemap parser runs in linear time', () => {
  const piece = fc.constantFrom(
    '<url>',
    '<loc>',
    'https://example.com/x',
    '<![CDATA[',
    '<!--',
    '&amp;',
    '</url>',
    '<sitemap>',
    '</loc>',
    '<image:image><image:loc>',
    '<',
    '<lastmod>2024-01-01',
  );
  const parse = (xml: string) => {
    const parser = createSitemapParser(() => true);
    parser.write(xml);
    return parser.end();
  };
  it('on huge documents with unclosed tags', () => {
    expectLinear(
      'unclosed <url><loc>',
      parse,
      (chars) => repeatTo(chars, '<url><loc>https://example.com/x', '<urlset>'),
      {
        bytes: 40_000,
        maxMsPerKb: 2,
      },
    );
    fc.assert(
      fc.property(
        fc.array(piece, { minLength: 1, maxLength: 4 }),
        fc.constantFrom('<urlset>', '<sitemapindex>'),
        (pieces, root) => {
          expectLinear(
            `sitemap ${JSON.stringify([root, ...pieces])}`,
            parse,
            (chars) => repeatTo(chars, pieces.join(''), root),
            {
              bytes: 40_000,
              maxMsPerKb: 2,
            },
          );
        },
      ),
      { numRuns: 10 },
    );
  });
});
