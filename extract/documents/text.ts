/**
 * Plain text → Markdown: paragraphs split at blank lines, and nothing invented: no headings (a line
 * that starts with `#` or is underlined with `===` is escaped so Markdown does not read it as one),
 * lines kept as written. The title is the first line when it is short.
 */
import { normalizeMarkdown } from '../normalize-markdown';
import { collectLinks, documentMetadata, shortFirstLine } from './common';
import { type ConvertedDocument, type ConvertOptions, DEFAULT_CONVERT_OPTIONS } from './types';

/** Bare http(s) URLs in running text; trailing punctuation is the sentence's, not the URL's. */
const BARE_URL = /\bhttps?:\/\/[^\s<>"'`]+/g;
const TRAILING_PUNCTUATION = new Set(['.', ',', ';', ':', '!', '?', ')', ']', '}', "'", '"']);

/** Line starts Markdown would turn into headings, quotes or rules. */
const BLOCK_SYNTAX = /^( {0,3})(#{1,6}(?=\s|$)|>|[=]+\s*$|-{2,}\s*$|(?:[*_]\s*){3,}$)/;

export function convertText(
  source: string,
  url: string | undefined,
  options: ConvertOptions = {},
): ConvertedDocument {
  const maxChars = options.maxInputChars ?? DEFAULT_CONVERT_OPTIONS.maxInputChars;
  const cut = source.length > maxChars;
  const body = (cut ? source.slice(0, maxChars) : source).replace(/^\ufeff/, '').replace(/\r\n?/g, '\n');

  const paragraphs = splitParagraphs(body);
  const markdown = normalizeMarkdown(
    paragraphs
      .map((lines) => lines.map((line) => line.replace(BLOCK_SYNTAX, '$1\\$2')).join('\n'))
      .join('\n\n'),
  );
  const text = paragraphs.map((lines) => lines.map((line) => line.trim()).join(' ')).join('\n\n');
  const title = shortFirstLine(text);
  const links = collectLinks(bareUrls(body), url);
  return {
    sourceType: 'text',
    title: title ?? '',
    text,
    markdown,
    metadata: documentMetadata({ title }, text),
    confidence: text === '' ? 0 : 1,
    strategy: 'document:text',
    links,
    ...(cut ? { truncated: { reason: 'max-input-chars', detail: `first ${maxChars} characters kept` } } : {}),
  };
}

/** Groups of non-blank lines (trailing blanks trimmed), split at blank lines. */
function splitParagraphs(body: string): string[][] {
  const paragraphs: string[][] = [];
  let current: string[] = [];
  for (const raw of body.split('\n')) {
    const line = raw.trimEnd();
    if (line.trim() === '') {
      if (current.length > 0) paragraphs.push(current);
      current = [];
      continue;
    }
    current.push(line);
  }
  if (current.length > 0) paragraphs.push(current);
  return paragraphs;
}

function* bareUrls(body: string): Generator<{ href: string; text: string }> {
  for (const match of body.matchAll(BARE_URL)) {
    let end = match[0].length;
    while (end > 0 && TRAILING_PUNCTUATION.has(match[0][end - 1] as string)) end--;
    const href = match[0].slice(0, end);
    yield { href, text: href };
  }
}
