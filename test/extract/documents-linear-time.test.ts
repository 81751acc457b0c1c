/**
 * The document converters read files written by strangers (DESIGN rule 8): Markdown (links, front
 * matter, setext headings), plain text and a PDF's text layer must convert in time linear in their
 * size. fast-check builds pathological inputs from pieces (openers with no closer, runs of blanks,
 * one font size per line, a page full of links), each timed at a size and at eight times that size
 * (testbed/linear-time.ts): the ratio must stay near 8, far from quadratic's 64.
 */
import fc from 'fast-check';
import { describe, it } from 'vitest';
import { convertMarkdown } from '../../extract/documents/markdown';
import { blocksOf, layoutOf, linesOf, type TextRun } from '../../extract/documents/pdf-layout';
import { convertText } from '../../extract/documents/text';
import { expectLinear, repeatTo } from '../../testbed/linear-time';

const URL_BASE = 'https://example.com/docs/';

const MARKDOWN_PIECES = [
  '[',
  ']',
  '](',
  '[a](',
  '[a](b',
  ')',
  '![',
  '<http://',
  '<https://x>',
  '[x]: ',
  '---\n',
  '===\n',
  'x\n',
  '\n',
  '```\n',
  '~~~',
  '# ',
  '## x\n',
  ' ',
  '\t',
  '\u00a0',
  '&amp;',
  '<div>',
  '<!--',
  '-->',
  '<script>',
  '</script>',
  '`',
  '*',
];

describe('convertMarkdown runs in linear time', () => {
  const convert = (markdown: string) => convertMarkdown(markdown, URL_BASE);
  it('on generated pathological Markdown', () => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom(...MARKDOWN_PIECES), { minLength: 1, maxLength: 3 }),
        fc.constantFrom('', '---\ntitle: t\n---\n', 'Text\n', '# T\n\n'),
        (pieces, prefix) => {
          expectLinear(
            `convertMarkdown ${JSON.stringify([prefix, ...pieces])}`,
            convert,
            (chars) => repeatTo(chars, pieces.join(''), prefix),
            { bytes: 32_000, maxMsPerKb: 5 },
          );
        },
      ),
      { numRuns: 12 },
    );
  });

  it('on front matter that never closes, and on one that is all keys', () => {
    expectLinear('unclosed front matter', convert, (chars) => repeatTo(chars, 'key: value\n', '---\n'), {
      bytes: 8_000,
      maxMsPerKb: 5,
    });
    // Over MAX_FRONT_MATTER_CHARS it is read as body; under it, YAML parses it.
    expectLinear('long front matter', convert, (chars) => `${repeatTo(chars, 'k: v\n', '---\n')}---\nbody`, {
      bytes: 4_000,
      maxMsPerKb: 10,
    });
  });
});

describe('convertText runs in linear time', () => {
  const convert = (text: string) => convertText(text, URL_BASE);
  it('on generated pathological text', () => {
    const piece = fc.constantFrom(
      ' ',
      '\t',
      '#',
      '=',
      '-',
      '*',
      '_',
      'x',
      '\n',
      '\r\n',
      'http://a',
      '.',
      ')',
      '>',
    );
    fc.assert(
      fc.property(
        fc.array(piece, { minLength: 1, maxLength: 3 }),
        fc.constantFrom('', 'x', '* '),
        (pieces, prefix) => {
          expectLinear(
            `convertText ${JSON.stringify([prefix, ...pieces])}`,
            convert,
            (chars) => repeatTo(chars, pieces.join(''), prefix),
            { bytes: 32_000, maxMsPerKb: 5 },
          );
        },
      ),
      { numRuns: 12 },
    );
  });
});

describe("a PDF's text layer becomes blocks in linear time", () => {
  /** `count` runs on one page, shaped by `kind`; each run is a character of input, for the ratio. */
  const runsOf = (kind: string, count: number): TextRun[] =>
    Array.from({ length: count }, (_, i) => {
      switch (kind) {
        case 'one line':
          return { str: 'word', x: i * 30, y: 700, size: 11, width: 25, hasEOL: false };
        case 'a size per line':
          return { str: 'Heading', x: 20, y: 700 - i, size: 11 + i / 100, width: 50, hasEOL: true };
        case 'one Arabic line':
          return {
            str: ['ﺔ', 'ِ', ' ', '75', 'NPK', '.', 'ﻟ'][i % 7] as string,
            x: i * 5,
            y: 700,
            size: 11,
            width: 4,
            hasEOL: false,
          };
        case 'a letter and its marks':
          return { str: i === 0 ? 'ﺔ' : 'ِ', x: 20 + i / 1000, y: 700, size: 11, width: 0, hasEOL: false };
        case 'table rows':
          return {
            str: 'cell',
            x: i % 2 === 0 ? 20 : 120,
            y: 700 - Math.floor(i / 2) * 0.01,
            size: 11,
            width: 20,
            hasEOL: i % 2 === 1,
          };
        case 'hyphenated lines':
          return { str: 'hyphen-', x: 20, y: 700 - (i % 600), size: 11, width: 50, hasEOL: true };
        default:
          return { str: ' ', x: 20, y: 700, size: 11, width: 3, hasEOL: i % 2 === 0 };
      }
    });
  const links = Array.from({ length: 500 }, (_, i) => ({
    url: `https://example.com/${i}`,
    rect: [i, 0, i + 1, 1],
  }));
  const convert = ([kind, count]: [string, number]) => {
    const lines = linesOf(runsOf(kind, count), links);
    return blocksOf(lines, 1, layoutOf([lines]));
  };
  it.each([
    'one line',
    'one Arabic line',
    'a letter and its marks',
    'table rows',
    'a size per line',
    'hyphenated lines',
    'blank runs',
  ])('%s, 500 link areas', (kind) => {
    expectLinear(
      `pdf layout ${kind}`,
      convert,
      (chars) => [kind, chars] as [string, number],
      { bytes: 2_000, maxMsPerKb: 200 },
      ([, count]) => count,
    );
  });
});
