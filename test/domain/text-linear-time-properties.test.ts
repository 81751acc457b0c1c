/**
 * The text steps after extraction read page Markdown written by strangers (issue 28): the offline
 * summary and tags (key-phrases.ts), the searchable text of each chunk (search-text.ts) and what
 * the embedding model sees (embedding-text.ts) must run in time linear in their input. fast-check
 * generates pathological texts — openers without their closers (`![`, `[x](`, `<`, `<https:`),
 * runs of blanks, pipes, dashes, `#`s and underscores — repeated to a size; each is timed at a
 * size and at eight times that size (testbed/linear-time.ts): the ratio must stay near 8.
 * The old figures in the names were measured on 0851200 at 5,000 and 40,000 characters.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { embeddingInput } from '../../domain/embedding-text';
import {
  keyPhraseCandidates,
  lexicalCentrality,
  pageTermWeights,
  proseOf,
  proseSentences,
} from '../../domain/key-phrases';
import {
  removeAutolinks,
  replaceAngleTags,
  replaceImages,
  replaceLinksWithText,
} from '../../domain/markdown-inline-scan';
import { searchableText } from '../../domain/search-text';
import { withoutTableRules } from '../../domain/table-rule';
import { normalizeTag, parseTagAnswer, siteNameTags } from '../../domain/tags';
import { expectLinear, repeatTo } from '../../testbed/linear-time';

const PIECES = [
  '![',
  '![a]x',
  '[',
  '[x](',
  '[a](b',
  '[a](b "',
  '<',
  '<a',
  '<https:',
  '<https:a ',
  '`',
  '``a',
  '#',
  '#a',
  '¶',
  '_',
  '__',
  '*',
  '**',
  ' ',
  '\t',
  '\n',
  ' \n',
  '|',
  '-',
  '---|',
  '| --- ',
  ':',
  '\\',
  '. ',
  '> ',
  'word ',
  "'-",
];
const shape = fc
  .array(fc.constantFrom(...PIECES), { minLength: 1, maxLength: 3 })
  .map((pieces) => pieces.join(''));

/** Each function that reads page text, fed one string. */
const READERS: Record<string, (text: string) => unknown> = {
  proseOf: (text) => proseOf(text),
  proseSentences: (text) => proseSentences({ headings: [], blocks: [text], codeNames: [] }, 20),
  keyPhraseCandidates: (text) => keyPhraseCandidates({ headings: [text], blocks: [text], codeNames: [] }, 20),
  pageTermWeights: (text) => pageTermWeights({ headings: [text], blocks: [text], codeNames: [text] }),
  lexicalCentrality: (text) => lexicalCentrality(text, new Map([['word', 3]])),
  searchableText: (text) => searchableText(text),
  embeddingInput: (text) => embeddingInput({ title: text, headingPath: [text], content: text }),
  parseTagAnswer: (text) => parseTagAnswer(text),
  normalizeTag: (text) => normalizeTag(text),
  siteNameTags: (text) => siteNameTags([text]),
};

const OPTIONS = { bytes: 4_000, maxMsPerKb: 2 };

function expectLinearOn(name: string, unit: string): void {
  expectLinear(
    `${name} ${JSON.stringify(unit)}`,
    READERS[name] as (text: string) => unknown,
    (chars) => repeatTo(chars, unit, '', 'x'),
    OPTIONS,
  );
}

describe('page-text heuristics run in linear time', () => {
  it('proseOf on openers without closers (quadratic before: 40,000 "![" 2.9 s, "[" 3.0 s, "<" 1.7 s, "#" 2.4 s)', () => {
    for (const unit of ['![', '[', '[[a](', '<', '<a', '<https:', '#']) expectLinearOn('proseOf', unit);
  });

  it('searchableText on openers and blank runs (before: 40,000 "![" 4.1 s, "[" 3.8 s, blanks 3.1 s, newlines cubic)', () => {
    for (const unit of ['![', '[', '<https:', ' ', '\t', '\n', ' \n', '|---|', '---|\n'])
      expectLinearOn('searchableText', unit);
  });

  it('embeddingInput on tag openers and blank runs (before: 20,000 "<a" 0.3 s, blanks 0.6 s)', () => {
    for (const unit of ['<a', ' ', '\t', '![', '[']) expectLinearOn('embeddingInput', unit);
  });

  it('every reader on generated pathological text', () => {
    fc.assert(
      fc.property(fc.constantFrom(...Object.keys(READERS)), shape, (name, unit) => {
        expectLinearOn(name, unit);
      }),
      { numRuns: 60 },
    );
  });
});

describe('the scans match what the regexes they replace matched', () => {
  const LINK = /\[((?:\\.|[^\]\\])*)\]\((?:[^()\s]|\([^()]*\))*(?:\s+"[^"]*")?\)/g;
  const IMAGE_OR_LINK = /!?\[((?:\\.|[^\]\\])*)\]\((?:[^()\s]|\([^()]*\))*(?:\s+"[^"]*")?\)/g;
  const TABLE_RULE = /^\s*\|?(?:\s*:?-{3,}:?\s*\|)+\s*:?-{0,}:?\s*\|?\s*$/gm;
  const piece = fc.constantFrom(
    ...[
      '!',
      '[',
      ']',
      '(',
      ')',
      '\\',
      '"',
      ' ',
      '\n',
      '\r',
      '\u2028',
      'a',
      '<',
      '>',
      '/',
      'https:',
      'mailto:',
    ],
    ...['[a](b)', '![i](s)', '](', '|', '-', '---', ':', '\t', '| --- |', '|---|', ':--', '\u00a0'],
  );
  const text = fc.array(piece, { maxLength: 40 }).map((pieces) => pieces.join(''));

  it('on short texts of the characters they look at', () => {
    fc.assert(
      fc.property(text, (markdown) => {
        expect(replaceImages(markdown, ' ')).toBe(markdown.replace(/!\[[^\]]*\]\([^)]*\)/g, ' '));
        expect(replaceAngleTags(markdown, ' ')).toBe(markdown.replace(/<[^>]+>/g, ' '));
        expect(replaceLinksWithText(markdown, false)).toBe(markdown.replace(LINK, '$1'));
        expect(replaceLinksWithText(markdown, true)).toBe(markdown.replace(IMAGE_OR_LINK, '$1'));
        expect(removeAutolinks(markdown)).toBe(markdown.replace(/<(?:https?|mailto):[^>\s]*>/g, ''));
        expect(withoutTableRules(markdown)).toBe(markdown.replace(TABLE_RULE, ''));
      }),
      { numRuns: 20_000 },
    );
  });
});
