/**
 * Markdown → Markdown, normalised the way extracted HTML is (`normalize-markdown.ts`: one H1, no
 * skipped levels, clean whitespace, raw HTML escaped), with setext headings turned into ATX ones
 * first, front matter parsed into metadata, and link destinations made absolute. The title is the
 * front matter's, else the first `#` heading.
 */
import { headingAnchors, normalizeMarkdown } from '../normalize-markdown';
import { collectLinks, documentMetadata, markdownToText } from './common';
import { frontMatterMetadata, splitFrontMatter } from './front-matter';
import { resolveMarkdownLinks } from './markdown-links';
import { type ConvertedDocument, type ConvertOptions, DEFAULT_CONVERT_OPTIONS } from './types';

const FENCE = /^\s{0,3}(`{3,}|~{3,})/;
const SETEXT_UNDERLINE = /^ {0,3}(=+|-+)[ \t]*$/;
/** Lines that cannot be a one-line setext heading's text (list items, quotes, headings, tables). */
const NOT_SETEXT_TEXT = /^\s{0,3}(?:[-*+>#|]|\d{1,9}[.)])(?:\s|$)|^\s{4,}/;

export function convertMarkdown(
  source: string,
  url: string | undefined,
  options: ConvertOptions = {},
): ConvertedDocument {
  const maxChars = options.maxInputChars ?? DEFAULT_CONVERT_OPTIONS.maxInputChars;
  const cut = source.length > maxChars;
  const input = (cut ? source.slice(0, maxChars) : source).replace(/^\ufeff/, '').replace(/\r\n?/g, '\n');

  const { data, body, error } = splitFrontMatter(input);
  const declared = frontMatterMetadata(data);
  const resolved = resolveMarkdownLinks(atxHeadings(withoutRawHtml(body)), url);
  const markdown = normalizeMarkdown(resolved.markdown, { title: declared.title });
  const title = declared.title ?? firstH1(markdown) ?? '';
  const text = markdownToText(markdown);
  return {
    sourceType: 'markdown',
    title,
    text,
    markdown,
    metadata: documentMetadata({ ...declared, title: title || undefined }, text),
    confidence: text === '' ? 0 : 1,
    strategy: error ? `document:markdown (${error})` : 'document:markdown',
    links: collectLinks(resolved.links, url),
    ...(data ? { frontMatter: data } : {}),
    ...(cut ? { truncated: { reason: 'max-input-chars', detail: `first ${maxChars} characters kept` } } : {}),
  };
}

/**
 * Calls `visit` for each line outside fenced code (not the fence lines themselves), in order;
 * `visit` may rewrite `lines` at or before its index.
 */
function forEachLineOutsideFences(lines: string[], visit: (line: string, index: number) => void): void {
  let fence: string | undefined;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as string;
    const opener = FENCE.exec(line);
    if (fence !== undefined) {
      if (opener && (opener[1] as string)[0] === fence[0] && (opener[1] as string).length >= fence.length)
        fence = undefined;
      continue;
    }
    if (opener) {
      fence = opener[1];
      continue;
    }
    visit(line, i);
  }
}

/**
 * `Title\n=====` → `# Title` and `Title\n-----` → `## Title`, for one-line paragraphs outside code
 * (the chunker and the normaliser read ATX headings only). Longer paragraphs over a `---` keep it.
 */
function atxHeadings(markdown: string): string {
  const lines = markdown.split('\n');
  forEachLineOutsideFences(lines, (line, i) => {
    const underline = SETEXT_UNDERLINE.exec(line);
    if (!underline || i === 0) return;
    const text = lines[i - 1] as string;
    const before = i >= 2 ? (lines[i - 2] as string) : '';
    if (text.trim() === '' || before.trim() !== '' || NOT_SETEXT_TEXT.test(text)) return;
    lines[i - 1] = `${(underline[1] as string)[0] === '=' ? '#' : '##'} ${text.trim()}`;
    lines[i] = '';
  });
  return lines.join('\n');
}

/** An HTML tag or comment as Markdown allows it inline: a name, attributes, no `<` or `>` inside. */
const RAW_TAG = /<!--[^<>]*-->|<\/?([a-zA-Z][a-zA-Z0-9-]*)(?:\s[^<>]*)?\/?>/g;
/** Inline elements: their tags go without a trace (`<b>C</b>ode` stays one word); others leave a space. */
const INLINE_TAGS = new Set(
  'a abbr b bdi bdo cite code data del dfn em i ins kbd mark q s samp small span strong sub sup time u var'.split(
    ' ',
  ),
);

/**
 * Raw HTML in Markdown (`<div class="note">`, `<b>`, `<br>`, comments) is markup, not text: its tags
 * are removed and the words inside kept, so chunks, search and summaries read "Do not overfeed"
 * instead of the normaliser's escaped `\<b>not\</b>`. Comments, scripts and styles are no words at
 * all: dropped whole, over as many lines as they run. Code (fences, indented blocks, code spans)
 * keeps every character; autolinks (`<https://…>`) are no tags.
 */
function withoutRawHtml(markdown: string): string {
  if (!markdown.includes('<')) return markdown;
  const lines = markdown.split('\n');
  let closer: RegExp | undefined;
  forEachLineOutsideFences(lines, (line, i) => {
    let rest = line;
    if (closer) {
      const end = closer.exec(rest);
      if (!end) {
        lines[i] = '';
        return;
      }
      closer = undefined;
      rest = rest.slice(end.index + end[0].length);
      if (rest.trim() === '') {
        lines[i] = '';
        return;
      }
    }
    if (!rest.includes('<') || /^(?: {4}|\t)/.test(rest)) {
      lines[i] = rest;
      return;
    }
    const hidden = withoutHiddenSpans(rest);
    closer = hidden.closer;
    const stripped = hidden.text
      .split(/(`+[^`]*?`+)/)
      .map((part, index) =>
        index % 2 === 1
          ? part
          : part.replace(RAW_TAG, (_tag, name: string | undefined) =>
              name !== undefined && INLINE_TAGS.has(name.toLowerCase()) ? '' : ' ',
            ),
      )
      .join('');
    // A line that opened with a block tag must not open with the space it left (an indent is code).
    lines[i] = /^\s/.test(rest) ? stripped : stripped.trimStart();
  });
  return lines.join('\n');
}

/** Where a comment, script or style starts, outside code spans. */
const HIDDEN_OPENER = /`+[^`]*?`+|<!--|<(script|style)(?=[\s>])/gi;

/**
 * The line without its comments, scripts and styles; `closer` finds the end of one left open, which
 * runs on over the next lines.
 */
function withoutHiddenSpans(line: string): { text: string; closer?: RegExp } {
  let text = '';
  let copied = 0;
  HIDDEN_OPENER.lastIndex = 0;
  for (let match = HIDDEN_OPENER.exec(line); match; match = HIDDEN_OPENER.exec(line)) {
    if (match[0].startsWith('`')) continue; // a code span
    const closer = match[1] ? new RegExp(`</${match[1]}\\s*>`, 'gi') : /-->/g;
    closer.lastIndex = match.index + match[0].length;
    const end = closer.exec(line);
    text += `${line.slice(copied, match.index)} `;
    if (!end) return { text, closer: new RegExp(closer.source, 'i') };
    copied = end.index + end[0].length;
    HIDDEN_OPENER.lastIndex = copied;
  }
  return { text: text + line.slice(copied) };
}

function firstH1(markdown: string): string | undefined {
  return headingAnchors(markdown).find((heading) => heading.level === 1)?.text || undefined;
}
