/**
 * One page's HTML → title, plain text, GitHub-flavoured Markdown and metadata, with the strategy that
 * won and a confidence. Pure computation (no I/O), synchronous, and bounded: the input is capped and
 * pre-cleaned by {@link sanitizeHtml}, so empty, binary, huge and absurdly nested pages return a result
 * instead of hanging or throwing.
 *
 * Strategy (seed 004 §6.1): the selector priority chain (`<main>`, `<article>`, documentation
 * containers) with chrome removed, then Readability, then the whole body with chrome removed.
 * Readability wins over the chain only when the chain's pick is mostly links; when the chain answers,
 * Readability run on its pick alone may trim it ({@link refineWithReadability}).
 */
import { Readability } from '@mozilla/readability';
import { blockText, type Candidate, countWords, measure } from './candidate';
import { type DomKind, parseDocument } from './dom';
import { normalizeContent, toMarkdown } from './markdown';
import { extractMetadata, type PageMetadata, readingTimeMinutes } from './metadata';
import { isProductPage, sellsOneThing } from './product';
import { refineWithReadability } from './refine';
import { type ChromeOptions, removeChrome } from './remove-chrome';
import { findRepeatedGroup, type RepeatedGroup } from './repeated-blocks';
import { replaceTags, sanitizeHtml } from './sanitize';
import { selectByChain } from './selector-chain';
import { keepStreamPlaceholders, mayHaveStreamedSegments, revealStreamedSegments } from './streamed-segments';
import { noteSoleHeading, restoreSoleHeading } from './title-heading';

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
  /**
   * What produced the content: `selector:<css>`, `selector:<css>+readability` (the selector's pick
   * trimmed by Readability), `readability`, `repeated:<tag.class>` (many alike
   * posts, cards or sections), `body`, `empty`, or
   * `failed: <reason>`.
   */
  strategy: string;
  /** Set when the input was longer than `maxInputChars` and cut. */
  truncated?: true;
}

/** schema.org / og types whose comments are the content (threads, Q&A), so comment containers stay. */
const DISCUSSION_TYPES = /discussion|forum|qapage|question|answer|comment|socialmedia/i;

/**
 * A group of repeated blocks replaces Readability's pick when it holds this many times its words:
 * Readability then kept one post or card of many.
 */
const GROUP_OVER_READABILITY = 1.5;
/** Without a Readability pick, the group must hold this share of the words left in the body. */
const GROUP_SHARE_OF_BODY = 0.5;
/** Levels above the group searched for Readability's pick. */
const MAX_CLIMB = 3;
/** A group that does not hold Readability's pick needs this many times its words. */
const GROUP_OVER_UNRELATED_READABILITY = 3;

/**
 * Below this many words Readability's pick loses to the selector chain's link-heavy pick (measured on
 * wcxb-dev: 150 gained listings; 300 also took some documentation and collection pages from it).
 */
const MIN_READABILITY_WORDS_OVER_CHAIN = 150;
/**
 * A link-heavy chain pick with this many times the words of Readability's pick is kept (measured on
 * wcxb-dev listings: news front pages, lists of links, category pages).
 */
const LISTING_OVER_READABILITY = 2;
/** Below this many words the cleaned body may answer instead of Readability's pick. */
const MIN_READABILITY_WORDS = 300;
/** The cleaned body replaces a tiny Readability pick when its non-link words are this many times more. */
const BODY_OVER_TINY_READABILITY = 2;

/** Above this link density a chain candidate is treated as navigation and Readability is preferred. */
const MAX_CHAIN_LINK_DENSITY = 0.5;
/**
 * A short chain pick with less than this share of the body's text is a box that happens to carry the
 * selector (an author card named `#content`): Readability gets a say.
 */
const MIN_CHAIN_SHARE_OF_BODY = 0.1;

function isSliverOf(chain: Candidate, body: HTMLElement | null): boolean {
  if (body === null || chain.words >= MIN_READABILITY_WORDS_OVER_CHAIN) return false;
  return chain.text.length < MIN_CHAIN_SHARE_OF_BODY * (body.textContent ?? '').length;
}

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
  const streamed = mayHaveStreamedSegments(html);
  const clean = sanitizeHtml(
    streamed ? keepStreamPlaceholders(html) : html,
    opts.maxInputChars,
    opts.maxDepth,
  );
  clean.html = dropHtmlCdata(clean.html);
  const parse = () => {
    const parsed = parseDocument(clean.html, url, opts.dom);
    if (streamed) revealStreamedSegments(parsed);
    return parsed;
  };
  const doc = parse();
  const baseUrl = resolveBase(doc, url);

  // Metadata reads the untouched <head> first; Readability mutates the document afterwards.
  const metaProbe = extractMetadata(doc, clean.jsonLd, baseUrl, 0);
  const productPage = isProductPage(clean.jsonLd, metaProbe.contentType);
  const chrome: ChromeOptions = {
    dropComments: !DISCUSSION_TYPES.test(metaProbe.contentType),
    productPage,
    dropReviews: productPage || sellsOneThing(doc),
  };
  const chosen = chooseContent(doc, opts, chrome, parse, url);
  const text = chosen ? chosen.text : '';
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

/**
 * `reparse` gives a second document: the selector chain cleans its pick in place and Readability
 * rewrites what it is given, and the repeated-group search needs the page whole. Pages the chain
 * answers are parsed once.
 */
function chooseContent(
  doc: Document,
  opts: Required<ExtractOptions>,
  chrome: ChromeOptions,
  reparse: () => Document,
  url: string | undefined,
): Candidate | undefined {
  const {
    candidate: chain,
    mutated,
    short,
  } = opts.strategy === 'readability'
    ? { candidate: undefined, mutated: false, short: undefined }
    : selectByChain(doc, opts.selectors, opts.minChainWords, chrome);
  if (
    chain &&
    (opts.strategy === 'chain' ||
      (chain.linkDensity <= MAX_CHAIN_LINK_DENSITY && !isSliverOf(chain, doc.body)))
  )
    return opts.strategy === 'auto'
      ? (refineWithReadability(chain, doc, url, opts.dom, chrome) ?? chain)
      : chain;
  if (opts.strategy === 'chain') return undefined;
  // The chain's rejected pick was cleaned in place: Readability reads a fresh copy, the group search
  // the cleaned one (it removes chrome itself).
  const second = reparse();
  const readable = runReadability(mutated ? second : doc, {
    productPage: chrome.productPage,
    dropReviews: chrome.dropReviews,
    dropCommentThreads: chrome.dropComments,
  });
  const body = (mutated ? doc : second).body;
  if (body) removeChrome(body, chrome);
  const group =
    opts.strategy === 'auto' && body
      ? findRepeatedGroup(body, { skipComments: chrome.dropComments })
      : undefined;
  const container = group ? groupContainer(group, readable, body) : undefined;
  if (group && container) return measure(container, `repeated:${group.signature}`);
  // A short page's content is short: its landmark beats a pick from the site's chrome (the footer's
  // blurb), so the quality gate sees the stub or not-found text alone. A pick from elsewhere outside
  // the landmark is kept (measured on wcxb-dev: a product's `<article>` box, a `role=main` banner).
  if (
    !chain &&
    short?.root.isConnected &&
    readable &&
    readable.words > 0 &&
    !liesWithin(readable, short.root) &&
    liesInChrome(readable, reparse())
  ) {
    const landmark = measure(short.root, short.strategy);
    if (landmark.words > 0) return landmark;
  }
  // A link-heavy landmark with far more words than Readability's pick is a listing of linked cards;
  // Readability kept a fragment of it.
  if (chain && readable && chain.words >= LISTING_OVER_READABILITY * readable.words) return chain;
  if (
    readable &&
    readable.words >= MIN_READABILITY_WORDS_OVER_CHAIN &&
    (chain || readable.words >= MIN_READABILITY_WORDS)
  )
    return readable;
  if (chain) return chain;
  const whole = body ? measure(body, 'body') : undefined;
  // A few words from Readability on a page with text is a caption or a teaser, not the page.
  if (readable && readable.words > 0 && !(whole && whole.score > BODY_OVER_TINY_READABILITY * readable.words))
    return readable;
  return whole && whole.words > 0 ? whole : undefined;
}

/**
 * Where the repeated group beats Readability, the element to extract; else undefined. When the group
 * is much larger than Readability's pick and the pick lies in or near it, Readability kept one post or
 * card of many: the answer is the nearest ancestor of the group that also holds the pick (a thread's
 * first post often sits beside the replies' list). A larger group that does not hold the pick must be
 * far larger to win (a related-items rail next to a real article is not). With no pick, the group
 * must hold a fair share of the page.
 */
function groupContainer(
  group: RepeatedGroup,
  readable: Candidate | undefined,
  body: Element | null,
): Element | undefined {
  if (!readable || readable.words === 0) {
    const bodyWords = body ? countWords(body.textContent ?? '') : 0;
    return group.words >= GROUP_SHARE_OF_BODY * bodyWords ? group.container : undefined;
  }
  const ratio = group.score / readable.words;
  if (ratio <= GROUP_OVER_READABILITY) return undefined;
  const sample = squash(longestLine(blockText(readable.root)));
  let el: Element | null = group.container;
  for (let climb = 0; el !== null && el !== body && climb <= MAX_CLIMB; climb++, el = el.parentElement) {
    if (squash(el.textContent ?? '').includes(sample)) return el;
  }
  return ratio > GROUP_OVER_UNRELATED_READABILITY ? group.container : undefined;
}

/** Readability's pick came from inside `root`: its longest line is part of `root`'s text. */
function liesWithin(readable: Candidate, root: Element): boolean {
  return squash(blockText(root)).includes(squash(longestLine(readable.text)));
}

/** Page chrome a Readability pick must not come from when the page has its own landmark. */
const CHROME_LANDMARKS =
  'footer, header, nav, aside, [role="contentinfo"], [role="banner"], [role="navigation"], [role="complementary"]';

/**
 * Readability's pick came from the page's footer, header, navigation or an aside: one of them in an
 * untouched copy of the page holds the pick's longest line. Readability moved the pick's nodes out of
 * its document, so where they were is read from `fresh`. Only outermost chrome elements are read, so
 * the page's text is read once.
 */
function liesInChrome(readable: Candidate, fresh: Document): boolean {
  const sample = squash(longestLine(readable.text));
  if (sample === '') return false;
  for (const el of Array.from(fresh.querySelectorAll(CHROME_LANDMARKS))) {
    if (el.parentElement?.closest(CHROME_LANDMARKS)) continue;
    if (squash(el.textContent ?? '').includes(sample)) return true;
  }
  return false;
}

/** Longest line of a block text, at most 200 characters of it: a fingerprint of where the text came from. */
function longestLine(text: string): string {
  let best = '';
  for (const line of text.split('\n')) if (line.length > best.length) best = line;
  return best.trim().slice(0, 200);
}

const squash = (text: string) => text.replace(/\s+/g, '');

function runReadability(doc: Document, chrome: ChromeOptions): Candidate | undefined {
  try {
    // Read before Readability rewrites the document, which may drop this heading as its title.
    const heading = noteSoleHeading(doc);
    const article = new Readability<Node>(doc, { keepClasses: true, serializer: (node) => node }).parse();
    const root = article?.content as Element | null | undefined;
    if (!root) return undefined;
    removeChrome(root, chrome);
    if (heading && article?.title) restoreSoleHeading(root, heading, article.title);
    return measure(root, 'readability');
  } catch {
    // Readability throws on some malformed documents; the body fallback still answers.
    return undefined;
  }
}

const STRATEGY_CONFIDENCE: Record<string, number> = {
  body: 0.4,
  readability: 0.8,
  repeated: 0.7,
};

function confidenceOf(candidate: Candidate): number {
  const amount = Math.min(1, candidate.words / 300);
  const kind = candidate.strategy.startsWith('repeated:') ? 'repeated' : candidate.strategy;
  const base = STRATEGY_CONFIDENCE[kind] ?? 0.9;
  return Math.round(base * amount * (1 - candidate.linkDensity) * 100) / 100;
}

/**
 * `<![CDATA[` outside SVG and MathML is a bogus comment that ends at the next `>` (HTML Living
 * Standard, tokenizer "markup declaration open"), but htmlparser2, under linkedom, reads on to a `]]>`
 * that never comes and swallows the page (seen on forum themes that print one before their wrapper).
 * Removed up to that `>`, as a browser would. Belongs in the sanitising pre-pass.
 */
export function dropHtmlCdata(html: string): string {
  return html.includes('<![CDATA[') ? replaceTags(html, /<!\[CDATA\[/g, () => '') : html;
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
