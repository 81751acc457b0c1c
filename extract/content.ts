/**
 * Main-content isolation (seed 004 §6): site chrome removal, the selector priority chain, and the
 * measures used to choose between candidates. DOM-only, no I/O; works on jsdom and linkedom alike.
 */

/** Elements that are never document content. */
const CHROME_SELECTORS = [
  'nav',
  'aside',
  'footer',
  'form[role="search"]',
  'button',
  'select',
  'input',
  'textarea',
  'svg',
  'iframe',
  'canvas',
  'dialog',
  '[role="navigation"]',
  '[role="banner"]',
  '[role="contentinfo"]',
  '[role="complementary"]',
  '[role="search"]',
  '[role="dialog"]',
  '[hidden]',
  '[aria-hidden="true"]',
  '.headerlink',
  '.visually-hidden',
  '.sr-only',
  '.screen-reader-text',
].join(',');

/** class/id words that mark chrome: menus, sidebars, cookie banners, breadcrumbs, sharing, version switchers. */
const CHROME_NAME =
  /(?:^|[\s_-])(?:nav|navbar|navigation|menu|menubar|breadcrumbs?|sidebar|sidenav|side-bar|cookies?|consent|gdpr|cc-banner|share|sharing|social|newsletter|subscribe|subscription|related|recommended|advert|advertisement|ads|sponsor|promo|popup|modal|skip-link|skiplink|edit-?this-?page|edit-?link|edit-?on-?github|version-?switcher|versions|toc|toctree-wrapper|on-?this-?page|pagination|pager|prev-?next|footer|site-header|masthead|announcement)(?:$|[\s_-])/i;

/** Whole-element texts that are chrome wherever they appear. */
const CHROME_TEXT =
  /^(?:edit (?:on github|this page|page)|improve this (?:page|doc)|view (?:page )?source|show source|skip to (?:main )?content|table of contents|on this page|contents|back to top|copy(?: code)?|print|share)$/i;

/**
 * Containers of reader comments under an article. Removed whatever their share of the text (a post with
 * 100 comments is still the post), unless removing them would leave almost nothing: then the comments
 * are the page. Only container names: a single `.comment` can be a forum's post.
 */
const COMMENTS_NAME =
  /(?:^|\s)(?:comments|comment-?list|commentlist|comments-?(?:area|section|wrapper|container|block)|comment-?respond|respond|disqus_thread|js-comments-container)(?:$|\s)/i;
/** Text that must remain outside comment containers for them to be dropped. */
const MIN_SHARE_OUTSIDE_COMMENTS = 0.2;

/** Chrome matched by class or id is kept if it holds more than this share of the candidate's text. */
const MAX_CHROME_SHARE = 0.4;

export interface ChromeOptions {
  /** Drop reader-comment containers; off for discussion pages, whose comments are the content. */
  dropComments?: boolean;
}

/** Removes site chrome inside `root` (in place). */
export function removeChrome(root: Element, options: ChromeOptions = {}): void {
  for (const el of Array.from(root.querySelectorAll(CHROME_SELECTORS))) el.remove();
  for (const el of Array.from(root.querySelectorAll('header'))) {
    if (el.querySelector('h1') === null) el.remove();
  }
  if (options.dropComments) removeComments(root);
  const total = Math.max(1, textLength(root));
  for (const el of Array.from(root.querySelectorAll('[class], [id]'))) {
    if (!el.isConnected && el.parentNode === null) continue;
    const name = `${el.getAttribute('class') ?? ''} ${el.getAttribute('id') ?? ''}`;
    if (name.length > 300 || !CHROME_NAME.test(name)) continue;
    if (/\b(?:content|article|post|entry|body|main)\b/i.test(name) && textLength(el) > 0.1 * total) continue;
    if (textLength(el) <= MAX_CHROME_SHARE * total) el.remove();
  }
  for (const el of Array.from(root.querySelectorAll('a, p, li, div, span'))) {
    if (el.closest('pre, code') !== null) continue;
    const text = el.textContent;
    if (text !== null && text.length < 40 && CHROME_TEXT.test(text.trim())) el.remove();
  }
}

function removeComments(root: Element): void {
  const containers = Array.from(root.querySelectorAll('[class], [id]')).filter((el) =>
    COMMENTS_NAME.test(`${el.getAttribute('class') ?? ''} ${el.getAttribute('id') ?? ''}`),
  );
  // Outermost only: nested matches go with their container.
  const outer = containers.filter((el) => !containers.some((other) => other !== el && other.contains(el)));
  if (outer.length === 0) return;
  const total = textLength(root);
  const inComments = outer.reduce((n, el) => n + textLength(el), 0);
  if (total - inComments < MIN_SHARE_OUTSIDE_COMMENTS * total) return;
  for (const el of outer) el.remove();
}

/**
 * The first selector of the chain that matches exactly one element with enough words after chrome
 * removal, as a detached clean copy. Several matches (a listing's many `<article>` cards) are ambiguous
 * and skipped; the next selector or Readability decides.
 */
export function selectByChain(
  doc: Document,
  selectors: readonly string[],
  minWords: number,
  chrome: ChromeOptions = {},
): Candidate | undefined {
  for (const selector of selectors) {
    let matches: Element[];
    try {
      matches = Array.from(doc.querySelectorAll(selector));
    } catch {
      continue;
    }
    if (matches.length !== 1 || matches[0] === undefined) continue;
    const copy = matches[0].cloneNode(true) as Element;
    removeChrome(copy, chrome);
    const candidate = measure(copy, `selector:${selector}`);
    if (candidate.words >= minWords) return candidate;
  }
  return undefined;
}

export interface Candidate {
  readonly root: Element;
  readonly strategy: string;
  readonly words: number;
  /** Share of the text inside links, 0–1. */
  readonly linkDensity: number;
  /** words × (1 − linkDensity): text that is not navigation. */
  readonly score: number;
}

export function measure(root: Element, strategy: string): Candidate {
  const text = blockText(root);
  const words = countWords(text);
  const linkChars = Array.from(root.querySelectorAll('a')).reduce((n, a) => n + textLength(a), 0);
  const linkDensity = Math.min(1, linkChars / Math.max(1, textLength(root)));
  return { root, strategy, words, linkDensity, score: words * (1 - linkDensity) };
}

const BLOCK = new Set([
  'address',
  'article',
  'blockquote',
  'br',
  'dd',
  'div',
  'dl',
  'dt',
  'figcaption',
  'figure',
  'h1',
  'h2',
  'h3',
  'h4',
  'h5',
  'h6',
  'hr',
  'li',
  'main',
  'ol',
  'p',
  'pre',
  'section',
  'table',
  'td',
  'th',
  'tr',
  'ul',
]);

/** Text of `root` with a line break at block boundaries; iterative, so deep trees cannot overflow the stack. */
export function blockText(root: Node): string {
  const parts: string[] = [];
  const stack: { node: Node; exit: boolean }[] = [{ node: root, exit: false }];
  while (stack.length > 0) {
    const item = stack.pop();
    if (item === undefined) break;
    const { node } = item;
    if (node.nodeType === 3) {
      parts.push(node.nodeValue ?? '');
      continue;
    }
    if (node.nodeType !== 1 && node.nodeType !== 9 && node.nodeType !== 11) continue;
    const name = (node as Element).localName ?? '';
    const block = BLOCK.has(name);
    if (item.exit) {
      if (block) parts.push('\n');
      continue;
    }
    if (block) parts.push('\n');
    stack.push({ node, exit: true });
    const children = node.childNodes;
    for (let i = children.length - 1; i >= 0; i--) {
      const child = children[i];
      if (child) stack.push({ node: child, exit: false });
    }
  }
  return parts
    .join('')
    .replace(/[ \t\u00a0]+/g, ' ')
    .replace(/ *\n[\n ]*/g, '\n')
    .replace(/\n{2,}/g, '\n\n')
    .trim();
}

export function countWords(text: string): number {
  return text.match(/[\p{L}\p{N}_]+/gu)?.length ?? 0;
}

function textLength(el: Node): number {
  return el.textContent?.replace(/\s+/g, ' ').trim().length ?? 0;
}
