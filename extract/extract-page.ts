/**
 * One page's HTML → title, plain text, GitHub-flavoured Markdown and metadata, with the strategy that
 * won and a confidence. Pure computation (no I/O), synchronous, and bounded: the input is capped and
 * pre-cleaned by {@link sanitizeHtml}, so empty, binary, huge and absurdly nested pages return a result
 * instead of hanging or throwing.
 *
 * Strategy (seed 004 §6.1): the selector priority chain (`<main>`, `<article>`, documentation
 * containers) with chrome removed, then Readability, then the whole body with chrome removed.
 * Readability wins over the chain only when the chain's pick is mostly links.
 */
import { Readability } from '@mozilla/readability';
import {
  blockText,
  type Candidate,
  type ChromeOptions,
  countWords,
  measure,
  removeChrome,
  selectByChain,
} from './content';
import { type DomKind, parseDocument } from './dom';
import { normalizeContent, toMarkdown } from './markdown';
import { extractMetadata, type PageMetadata, readingTimeMinutes } from './metadata';
import { sanitizeHtml } from './sanitize';

/** Seed 004's chain: landmarks first, then containers of common documentation and blog generators. */
export const DEFAULT_CONTENT_SELECTORS: readonly string[] = [
  'main',
  '[role="main"]',
  'article',
  '.rst-content',
  '.document',
  '.markdown-body',
  '.theme-doc-markdown',
  '.md-content',
  '#main-content',
  '.main-content',
  '#content',
  '.post-content',
  '.entry-content',
  '.article-content',
];

export interface ExtractOptions {
  /** DOM implementation. @default 'linkedom' */
  dom?: DomKind;
  /** Selector priority chain, tried in order. @default DEFAULT_CONTENT_SELECTORS */
  selectors?: readonly string[];
  /** `auto` is the pipeline; the others force one stage, for measurement. @default 'auto' */
  strategy?: 'auto' | 'chain' | 'readability';
  /** Characters of HTML parsed; the rest is dropped. @default 5_000_000 */
  maxInputChars?: number;
  /** Element nesting kept; deeper tags are dropped, their text kept. @default 200 */
  maxDepth?: number;
  /** Words a chain candidate needs to count. @default 50 */
  minChainWords?: number;
}

export const DEFAULT_EXTRACT_OPTIONS: Required<ExtractOptions> = Object.freeze({
  dom: 'linkedom',
  selectors: DEFAULT_CONTENT_SELECTORS,
  strategy: 'auto',
  maxInputChars: 5_000_000,
  maxDepth: 200,
  minChainWords: 50,
});

export interface ExtractedPage {
  title: string;
  text: string;
  markdown: string;
  metadata: PageMetadata;
  /** 0–1: how likely `text` is the page's main content (words found, share not in links, strategy). */
  confidence: number;
  /** What produced the content: `selector:<css>`, `readability`, `body`, `empty`, or `failed: <reason>`. */
  strategy: string;
  /** Set when the input was longer than `maxInputChars` and cut. */
  truncated?: true;
}

/** schema.org / og types whose comments are the content (threads, Q&A), so comment containers stay. */
const DISCUSSION_TYPES = /discussion|forum|qapage|question|answer|comment|socialmedia/i;

/** Above this link density a chain candidate is treated as navigation and Readability is preferred. */
const MAX_CHAIN_LINK_DENSITY = 0.5;

export function extractPage(html: string, url?: string, options: ExtractOptions = {}): ExtractedPage {
  try {
    return extractUnguarded(html, url, options);
  } catch (error) {
    // A DOM or library bug on one odd page must not kill a worker: report it as an empty extraction.
    return {
      title: '',
      text: '',
      markdown: '',
      metadata: { contentType: 'webpage', wordCount: 0, readingTimeMinutes: 0 },
      confidence: 0,
      strategy: `failed: ${(error as Error).message ?? String(error)}`.slice(0, 300),
    };
  }
}

function extractUnguarded(html: string, url: string | undefined, options: ExtractOptions): ExtractedPage {
  const opts = { ...DEFAULT_EXTRACT_OPTIONS, ...options };
  const clean = sanitizeHtml(html, opts.maxInputChars, opts.maxDepth);
  const doc = parseDocument(clean.html, url, opts.dom);
  const baseUrl = resolveBase(doc, url);

  // Metadata reads the untouched <head> first; Readability mutates the document afterwards.
  const metaProbe = extractMetadata(doc, clean.jsonLd, baseUrl, 0);
  const chrome = { dropComments: !DISCUSSION_TYPES.test(metaProbe.contentType) };
  const chosen = chooseContent(doc, opts, chrome, () => parseDocument(clean.html, url, opts.dom));
  const text = chosen ? blockText(chosen.root) : '';
  const wordCount = countWords(text);
  const metadata = { ...metaProbe, wordCount, readingTimeMinutes: readingTimeMinutes(wordCount) };
  const title = metadata.title ?? '';
  let markdown = '';
  if (chosen && wordCount > 0) {
    normalizeContent(chosen.root, baseUrl, title || undefined);
    markdown = toMarkdown(chosen.root);
  }
  return {
    title,
    text,
    markdown,
    metadata,
    confidence: chosen ? confidenceOf(chosen) : 0,
    strategy: chosen ? chosen.strategy : 'empty',
    ...(clean.truncated ? { truncated: true as const } : {}),
  };
}

/** `reparse` gives a fresh document for the body fallback: Readability leaves the first one mutated. */
function chooseContent(
  doc: Document,
  opts: Required<ExtractOptions>,
  chrome: ChromeOptions,
  reparse: () => Document,
): Candidate | undefined {
  const chain =
    opts.strategy === 'readability'
      ? undefined
      : selectByChain(doc, opts.selectors, opts.minChainWords, chrome);
  if (chain && (opts.strategy === 'chain' || chain.linkDensity <= MAX_CHAIN_LINK_DENSITY)) return chain;
  const readable = opts.strategy === 'chain' ? undefined : runReadability(doc);
  if (readable && readable.words > 0) return readable;
  if (chain) return chain;
  const body = reparse().body;
  if (!body) return undefined;
  removeChrome(body);
  const candidate = measure(body, 'body');
  return candidate.words > 0 ? candidate : undefined;
}

function runReadability(doc: Document): Candidate | undefined {
  try {
    const article = new Readability<Node>(doc, { keepClasses: true, serializer: (node) => node }).parse();
    const root = article?.content as Element | null | undefined;
    if (!root) return undefined;
    removeChrome(root);
    return measure(root, 'readability');
  } catch {
    // Readability throws on some malformed documents; the body fallback still answers.
    return undefined;
  }
}

function confidenceOf(candidate: Candidate): number {
  const amount = Math.min(1, candidate.words / 300);
  const base = candidate.strategy === 'body' ? 0.4 : candidate.strategy === 'readability' ? 0.8 : 0.9;
  return Math.round(base * amount * (1 - candidate.linkDensity) * 100) / 100;
}

function resolveBase(doc: Document, url: string | undefined): string | undefined {
  const href = doc.querySelector('base[href]')?.getAttribute('href');
  if (href) {
    try {
      return new URL(href, url).href;
    } catch {
      // fall through to the page URL
    }
  }
  return url;
}
