/**
 * Main-content isolation (seed 004 §6): site chrome removal, the selector priority chain, and the
 * measures used to choose between candidates. DOM-only, no I/O; works on jsdom and linkedom alike.
 */
import { articleChromeKind, COMMENT_HEADING, COMMENTS_ON_POST, isCaption } from './article-chrome';
import { PRICE } from './product';

/** Tags that are never document content. */
const CHROME_TAGS = new Set([
  'nav',
  'aside',
  'footer',
  'button',
  'select',
  'input',
  'textarea',
  'svg',
  'iframe',
  'canvas',
  'dialog',
]);
const CHROME_ROLES = new Set(['navigation', 'banner', 'contentinfo', 'complementary', 'search', 'dialog']);
/** Classes of text meant for screen readers or heading permalinks, never for the page's reader. */
const HIDDEN_CLASS = /(?:^|\s)(?:headerlink|visually-hidden|sr-only|screen-reader-text)(?:$|\s)/;

/** class/id words that mark chrome: menus, sidebars, cookie banners, breadcrumbs, sharing, version switchers. */
const CHROME_NAME =
  /(?:^|[\s_-])(?:nav|navbar|navigation|menu|menubar|breadcrumbs?|sidebar|sidenav|side-bar|cookies?|consent|gdpr|cc-banner|share|sharing|social|newsletter|subscribe|subscription|related|recommended|advert|advertisement|ads|sponsor|promo|popup|modal|skip-link|skiplink|edit-?this-?page|edit-?link|edit-?on-?github|version-?switcher|versions|toc|toctree-wrapper|on-?this-?page|pagination|pager|prev-?next|footer|site-header|masthead|announcement|byline|author-?(?:bio|box|info|card)|about-?(?:the-)?author|(?:post|entry|article)-?meta)(?:$|[\s_-])/i;
const CONTENT_NAME = /\b(?:content|article|post|entry|body|main)\b/i;
/**
 * Class words of the parts of a forum post that are not what its author wrote: the signature under
 * it and the poster's card beside it (name, title, join date, post count, reputation).
 */
const POST_CHROME_NAME =
  /(?:^|[\s_-])(?:(?:post|message|user|forum)?-?signature|signaturecontainer|postprofile|(?:user|poster|member)-?(?:info|details|card|hover|title|banner|extras|stats|pane))(?:$|[\s_-])/i;

/** Whole-element texts that are chrome wherever they appear. */
const CHROME_TEXT =
  /^(?:edit (?:on github|this page|page)|improve this (?:page|doc)|view (?:page )?source|show source|skip to (?:main )?content|table of contents|on this page|contents|back to top|copy(?: code)?|print|share|expand(?: all| description)?|collapse(?: all)?|show (?:more|less))$/i;
/**
 * Whole-element texts of a forum thread's controls and counters: post actions, collapsed-quote
 * toggles, Q&A sort and ask prompts. Never what a poster wrote, and short enough to be all of it.
 */
const POST_CHROME_TEXT =
  /^(?:reply|quote|reply with quote|multi-?quote|report|report post|permalink|share link|upvote|downvote|click to expand\.*|add a comment|show \d+ more comments?|\(edited\)|thread starter|start date|jump to latest|go to topic listing|create an account or sign in to comment|ask question|reset to default|explore related questions|start asking to get answers|see similar questions with these tags\.?|\d[\d.,]*k? (?:likes?|answers?|replies|views|posts)|(?:likes?|answers?|replies|views|followers|posters|participants)|posts: [\d,]+|locked|pinned|scheduled|print view|jump to post)$/i;
/**
 * A poster's picture drawn as their initials when they uploaded none: one or two letters that are
 * not part of anything written.
 */
const AVATAR_NAME = /avatar/i;
const MAX_AVATAR_CHARS = 2;

function isLetterAvatar(el: Element, chars: number): boolean {
  if (chars === 0 || chars > MAX_AVATAR_CHARS) return false;
  for (let a: Element | null = el, up = 0; a !== null && up < 2; a = a.parentElement, up++) {
    if (AVATAR_NAME.test(nameOf(a))) return true;
  }
  return false;
}

/** `summary`: a `<details>` toggle's own label ("Expand description") is a control, not content. */
const CHROME_TEXT_TAGS = new Set(['a', 'p', 'li', 'div', 'span', 'summary']);
const CHROME_TEXT_MAX_CHARS = 40;

/**
 * Headings that open a block of other pages' teasers: recommendation carousels under a product,
 * related posts under an article. The block goes with its heading.
 */
const TEASER_HEADING =
  /^(?:(?:\w+ ){0,3}(?:people|customers|shoppers|buyers) (?:\w+ ){0,4}(?:viewed|bought|purchased|liked|searched|watched)|(?:explore|see|shop|browse|discover|view) (?:more |all )?(?:related|similar) (?:\w+ ){0,2}(?:items|products)|(?:products|items) related to this (?:item|product)|compare (?:with )?similar (?:items|products)|(?:\w+ )?also (?:viewed|bought|liked)|frequently bought together|you (?:may|might|will|'ll) (?:also )?(?:like|love|enjoy|be interested)|(?:related|recommended|similar|popular|trending|latest|recent|more|other|featured|suggested) (?:\w+ ){0,2}(?:posts?|articles?|stories|products?|items?|reads?|news|videos?|guides?|blogs?|resources|content)|more (?:from|like this|to (?:explore|read|discover))|(?:read|up) next|keep reading|recommended for you|related|recommended|sponsored(?: content)?|seller's other items|most (?:popular|read|viewed|shared)|popular|trending(?: now)?|editor'?s'? (?:picks|choice)|don'?t miss|you may have missed)\b/i;
/** The same for a forum's other threads, listed under or beside the one shown. */
const THREAD_TEASER_HEADING =
  /^(?:similar|related|suggested|more|other|latest|recent|popular|trending|hot) (?:\w+ ){0,2}(?:threads|topics|discussions|questions)\s*:?$/i;
const HEADING_TAGS = new Set(['h2', 'h3', 'h4', 'h5', 'h6']);
const TEASER_LABEL = new RegExp(`${TEASER_HEADING.source.replace(/\\b$/, '')}\\s*:?$`, 'i');
const LABEL_TAGS = new Set(['p', 'div', 'span', 'strong', 'b', 'header']);
/** A teaser block holds at most this share of the content: a page made of teasers is a listing. */
const MAX_TEASER_SHARE = 0.4;
/** Below this share of their text in links, siblings after a bare teaser heading are not teasers. */
const MIN_TEASER_LINK_SHARE = 0.5;

/**
 * Containers of reader comments under an article. Removed whatever their share of the text (a post with
 * 100 comments is still the post), unless removing them would leave almost nothing: then the comments
 * are the page. Only container names: a single `.comment` can be a forum's post.
 */
const COMMENTS_NAME =
  /(?:^|\s)(?:comments|comment-?list|commentlist|comments-?(?:area|section|wrapper|container|block)|comment-?respond|respond|disqus_thread|js-comments-container)(?:$|\s)/i;
/**
 * Text that must remain outside comment containers for them to be dropped: this share of it, or for
 * a thread that names its post this many characters (a post of 100 words under 1,000 words of
 * comments is still the post).
 */
const MIN_SHARE_OUTSIDE_COMMENTS = 0.2;
const MIN_CHARS_OUTSIDE_COMMENTS = 500;

/**
 * Characters of `total` that comments may take and leave the rest standing. A thread that names the
 * post it answers ("10 Responses to “…”") may leave just the post, however short.
 */
function commentBudget(total: number, namesThePost = false): number {
  const keep = MIN_SHARE_OUTSIDE_COMMENTS * total;
  return Math.max(0, total - (namesThePost ? Math.min(keep, MIN_CHARS_OUTSIDE_COMMENTS) : keep));
}

/** Chrome matched by class or id is kept if it holds more than this share of the candidate's text. */
const MAX_CHROME_SHARE = 0.4;

export interface ChromeOptions {
  /** Drop reader-comment containers; off for discussion pages, whose comments are the content. */
  dropComments?: boolean;
  /**
   * Drop comment threads opened by a heading ("12 Responses"). @default the value of `dropComments`
   */
  dropCommentThreads?: boolean;
  /** The page shows one product: groups of other products' priced cards around it are chrome. */
  productPage?: boolean;
  /** The page sells something: its customer reviews and ratings are chrome. */
  dropReviews?: boolean;
}

/**
 * Removes site chrome inside `root` (in place). One walk drops chrome by tag, role and hidden state
 * and records every kept element with its text size, so the name and text rules after it need no
 * selector matching and no repeated `textContent` (which made this quadratic on deep pages).
 */
export function removeChrome(root: Element, options: ChromeOptions = {}): void {
  const tree = walkKeptElements(root);
  const { els, last, chars, inCode } = tree;
  const removed = new Uint8Array(els.length);
  const drop = (i: number) => {
    removed[i] = 1;
    els[i]?.remove();
  };
  let total = tree.rootChars;
  if (options.dropComments) total -= removeComments(tree, drop);
  if (options.dropReviews) total -= removeReviews(tree, drop);
  total = Math.max(1, total);
  for (let i = 0; i < els.length; i++) {
    if (removed[i]) {
      i = last[i] ?? i;
      continue;
    }
    const el = els[i] as Element;
    const name = nameOf(el);
    // A form inside content is a sign-up or enquiry box; a page wrapped in one form is kept by its share.
    const isForm = el.localName === 'form';
    if (
      !isForm &&
      (name.length < 2 || name.length > 300 || !(CHROME_NAME.test(name) || POST_CHROME_NAME.test(name)))
    )
      continue;
    const size = chars[i] ?? 0;
    if (!isForm && CONTENT_NAME.test(name) && size > 0.1 * total) continue;
    if (size <= MAX_CHROME_SHARE * total) {
      drop(i);
      i = last[i] ?? i;
    }
  }
  if (options.dropCommentThreads ?? options.dropComments)
    total -= removeCommentThreads(root, tree, removed, drop, total);
  removeTeaserBlocks(root, tree, removed, drop, total);
  removeLinkLists(tree, removed, drop, total);
  if (options.productPage) removeProductCards(tree, removed, drop, total);
  const bylines: number[] = [];
  for (let i = 0; i < els.length; i++) {
    if (removed[i]) {
      i = last[i] ?? i;
      continue;
    }
    const el = els[i] as Element;
    if (inCode[i]) continue;
    const kind = articleChrome(el, chars[i] ?? 0, tree.linkChars[i] ?? 0);
    if (kind === 'byline') {
      bylines.push(i);
      i = last[i] ?? i;
      continue;
    }
    if (kind === 'chrome') {
      drop(i);
      i = last[i] ?? i;
      continue;
    }
    if ((chars[i] ?? 0) > CHROME_TEXT_MAX_CHARS || !CHROME_TEXT_TAGS.has(el.localName)) continue;
    const text = el.textContent ?? '';
    const trimmed = text.trim();
    // Post controls are often indented markup: their length is judged without the whitespace.
    if (
      (text.length < CHROME_TEXT_MAX_CHARS && CHROME_TEXT.test(trimmed)) ||
      POST_CHROME_TEXT.test(trimmed.replace(/\s+/g, ' ')) ||
      isLetterAvatar(el, chars[i] ?? 0)
    ) {
      drop(i);
      i = last[i] ?? i;
    }
  }
  if (bylines.length <= MAX_BYLINES) for (const i of bylines) drop(i);
}

/** Elements that can be a caption, credit, byline, dateline or share control as a whole. */
const ARTICLE_CHROME_TAGS = new Set([
  'a',
  'p',
  'div',
  'span',
  'li',
  'time',
  'small',
  'cite',
  'em',
  'figcaption',
]);
const ARTICLE_CHROME_MAX_CHARS = 120;

/** More bylines or datelines than this in one region are a listing's cards, each with its own. */
const MAX_BYLINES = 4;

function articleChrome(el: Element, chars: number, linkChars: number): 'chrome' | 'byline' | undefined {
  if (chars === 0) return undefined;
  if (isCaption(el, nameOf(el), chars, linkChars)) {
    keepCaptionAsAlt(el);
    return 'chrome';
  }
  if (chars > ARTICLE_CHROME_MAX_CHARS || !ARTICLE_CHROME_TAGS.has(el.localName)) return undefined;
  return articleChromeKind(el, (el.textContent ?? '').replace(/\s+/g, ' ').trim());
}

/** A figure's picture without alt text keeps its caption there: the Markdown still says what it shows. */
function keepCaptionAsAlt(caption: Element): void {
  if (caption.localName !== 'figcaption') return;
  const img = caption.parentElement?.querySelector('img');
  if (!img || (img.getAttribute('alt') ?? '').trim() !== '') return;
  img.setAttribute('alt', (caption.textContent ?? '').replace(/\s+/g, ' ').trim());
}

/**
 * Readers' comments opened by a heading ("12 Responses to …", "Leave a Reply") in containers whose
 * names say nothing: the heading's nearest ancestor that starts with it, else the siblings after it
 * up to the next heading of its rank. Like named comment containers they go whatever their share,
 * unless too little would be left outside them. Returns the characters removed.
 */
function removeCommentThreads(
  root: Element,
  tree: KeptElements,
  removed: Uint8Array,
  drop: (i: number) => void,
  total: number,
): number {
  const { els, last, chars } = tree;
  let index: Map<Element, number> | undefined;
  let gone = 0;
  for (let i = 0; i < els.length; i++) {
    if (removed[i]) {
      i = last[i] ?? i;
      continue;
    }
    const el = els[i] as Element;
    const size = chars[i] ?? 0;
    if (size === 0 || size > 240 || !/^h[2-6]$/.test(el.localName)) continue;
    const heading = (el.textContent ?? '').replace(/\s+/g, ' ').trim();
    if (!COMMENT_HEADING.test(heading)) continue;
    if (index === undefined) {
      index = new Map();
      for (let j = 0; j < els.length; j++) index.set(els[j] as Element, j);
    }
    const budget = commentBudget(total, COMMENTS_ON_POST.test(heading)) - gone;
    let box = i;
    for (let parent = el.parentElement; parent !== null && parent !== root; parent = parent.parentElement) {
      const p = index.get(parent);
      if (p === undefined || removed[p] || (chars[p] ?? 0) > budget) break;
      if (!(parent.textContent ?? '').trimStart().startsWith(heading.slice(0, 20))) break;
      box = p;
    }
    const group = [box];
    if (box === i) {
      const rank = Number(el.localName[1]);
      for (let sibling = el.nextElementSibling; sibling !== null; sibling = sibling.nextElementSibling) {
        if (/^h[1-6]$/.test(sibling.localName) && Number(sibling.localName[1]) <= rank) break;
        const s = index.get(sibling);
        if (s !== undefined && !removed[s]) group.push(s);
      }
    }
    const size_ = group.reduce((n, j) => n + (chars[j] ?? 0), 0);
    if (size_ > budget) continue;
    for (const j of group) drop(j);
    gone += size_;
    i = Math.max(i, last[box] ?? i);
  }
  return gone;
}

/**
 * A heading such as "Customers also viewed" or "Related posts" with the block it opens: its nearest
 * ancestor that starts with it and is not too large of the content, else (a bare heading) the
 * link-heavy siblings that follow it up to the next heading.
 */
function removeTeaserBlocks(
  root: Element,
  tree: KeptElements,
  removed: Uint8Array,
  drop: (i: number) => void,
  total: number,
): void {
  const { els, last, chars, linkChars } = tree;
  const index = new Map<Element, number>();
  for (let i = 0; i < els.length; i++) {
    if (removed[i]) {
      i = last[i] ?? i;
      continue;
    }
    const el = els[i] as Element;
    const size = chars[i] ?? 0;
    if (size > 60 || size === 0) continue;
    const isHeading = HEADING_TAGS.has(el.localName);
    // Outside headings, only a whole short text that is nothing but the teaser phrase counts.
    if (!isHeading && (size > 40 || !LABEL_TAGS.has(el.localName))) continue;
    const heading = (el.textContent ?? '').replace(/\s+/g, ' ').trim();
    if (!((isHeading ? TEASER_HEADING : TEASER_LABEL).test(heading) || THREAD_TEASER_HEADING.test(heading)))
      continue;
    if (index.size === 0) {
      for (let j = 0; j < els.length; j++) index.set(els[j] as Element, j);
    }
    let box = el;
    let boxIndex = i;
    for (;;) {
      const parent = box.parentElement;
      const p = parent ? index.get(parent) : undefined;
      if (parent === null || parent === root || p === undefined || removed[p]) break;
      if ((chars[p] ?? 0) > MAX_TEASER_SHARE * total) break;
      if (!(parent.textContent ?? '').trimStart().startsWith(heading.slice(0, 20))) break;
      box = parent;
      boxIndex = p;
    }
    if (box === el) {
      for (let sibling = el.nextElementSibling; sibling !== null; ) {
        const s = index.get(sibling);
        if (s === undefined || /^h[1-6]$/.test(sibling.localName)) break;
        const size = chars[s] ?? 0;
        if (size > 0 && (linkChars[s] ?? 0) < MIN_TEASER_LINK_SHARE * size) break;
        const next = sibling.nextElementSibling;
        if (!removed[s]) drop(s);
        sibling = next;
      }
    }
    drop(boxIndex);
    i = Math.max(i, last[boxIndex] ?? i);
  }
}

/** Blocks that can be a list of links: menus, tag clouds, category lists, link rails, in-page tables of contents. */
const LINK_LIST_TAGS = new Set(['ul', 'ol', 'dl', 'div', 'section', 'table', 'p']);
/** A block with at least this share of its text in links is a list of links. */
const MIN_LINK_LIST_SHARE = 0.7;
/** Shorter blocks are a single short link, judged with its sentence by the enclosing block. */
const MIN_LINK_LIST_CHARS = 20;
/** Above this share of links in the whole candidate the page is made of links (a listing): they stay. */
const MAX_PAGE_LINK_SHARE = 0.4;
/** A list of links holding more than this share of the content is the content. */
const MAX_LINK_LIST_SHARE = 0.25;

/**
 * On a page of prose, a block that is mostly links (related posts, tags, categories, a table of
 * contents, "more from" rails) points elsewhere; WCXB's ground truth leaves them out (measured on
 * wcxb-dev: overall +5.7 page-points, article +4.0, product +1.3, forum +1.2, documentation −0.16,
 * service −0.3, collection −0.4). On a page made of links (a listing, a
 * catalogue) nothing is removed.
 */
function removeLinkLists(
  tree: KeptElements,
  removed: Uint8Array,
  drop: (i: number) => void,
  total: number,
): void {
  const { els, last, chars, linkChars } = tree;
  if (tree.rootLinkChars > MAX_PAGE_LINK_SHARE * total) return;
  for (let i = 0; i < els.length; i++) {
    if (removed[i]) {
      i = last[i] ?? i;
      continue;
    }
    const size = chars[i] ?? 0;
    if (size < MIN_LINK_LIST_CHARS || size > MAX_LINK_LIST_SHARE * total || tree.inCode[i]) continue;
    if (!LINK_LIST_TAGS.has((els[i] as Element).localName)) continue;
    if ((linkChars[i] ?? 0) < MIN_LINK_LIST_SHARE * size) continue;
    const el = els[i] as Element;
    // A documentation "See also" box is mostly links, and is content the author wrote; a gallery of
    // linked thumbnails shows pictures, not a menu, and keeps its alt text.
    if (!isInAdmonition(el) && el.getElementsByTagName('img').length === 0) {
      drop(i);
      i = last[i] ?? i;
    }
  }
}

/** Class words of callout boxes (notes, warnings, 'See also'): content their authors set apart. */
export const ADMONITION = /(?:^|[\s_-])(?:admonition|seealso|see-also|callout)(?:$|[\s_-])/i;

function isInAdmonition(el: Element): boolean {
  for (let cur: Element | null = el; cur !== null; cur = cur.parentElement) {
    const cls = cur.getAttribute('class');
    if (cls !== null && ADMONITION.test(cls)) return true;
  }
  return false;
}

/** Tags a product card is built from. */
const CARD_TAGS = new Set(['div', 'li', 'article', 'section', 'a', 'figure', 'tr']);
const MIN_CARDS = 3;
/** A card is short: a title, a price, a rating. Longer units are sections of the product itself. */
const MAX_CARD_CHARS = 600;
/** Share of a group's units that must show a price and hold a link. */
const MIN_CARD_SHARE = 0.6;
/** One card group holds at most this share of the content: a page of cards is a catalogue. */
const MAX_CARD_GROUP_SHARE = 0.5;

/**
 * On a product page, groups of at least three alike siblings (same tag and first class) that are each
 * short, priced and linked: variants, bundles, "also bought" carousels. The product's own price is one
 * block, not a group of them.
 */
function removeProductCards(
  tree: KeptElements,
  removed: Uint8Array,
  drop: (i: number) => void,
  total: number,
): void {
  const { els, last, chars, linkChars } = tree;
  for (let i = 0; i < els.length; i++) {
    if (removed[i]) {
      i = last[i] ?? i;
      continue;
    }
    const end = last[i] ?? i;
    if (end - i < MIN_CARDS) continue;
    const groups = new Map<string, number[]>();
    for (let j = i + 1; j <= end; j = (last[j] ?? j) + 1) {
      const child = els[j] as Element;
      if (removed[j] || !CARD_TAGS.has(child.localName)) continue;
      const size = chars[j] ?? 0;
      if (size === 0 || size > MAX_CARD_CHARS) continue;
      const key = `${child.localName}.${firstClassOf(child)}`;
      const group = groups.get(key);
      if (group) group.push(j);
      else groups.set(key, [j]);
    }
    for (const units of groups.values()) {
      if (units.length < MIN_CARDS) continue;
      let size = 0;
      let priced = 0;
      let linked = 0;
      for (const j of units) {
        size += chars[j] ?? 0;
        const el = els[j] as Element;
        if ((linkChars[j] ?? 0) > 0 || el.localName === 'a' || el.querySelector('a[href]') !== null) linked++;
        if (PRICE.test(el.textContent ?? '')) priced++;
      }
      const need = MIN_CARD_SHARE * units.length;
      if (priced < need || linked < need || size > MAX_CARD_GROUP_SHARE * total) continue;
      for (const j of units) drop(j);
    }
  }
}

function firstClassOf(el: Element): string {
  const cls = el.getAttribute('class');
  return cls ? (cls.trim().split(/\s+/)[0] ?? '').replace(/\d+/g, '#') : '';
}

interface KeptElements {
  /** Elements under the root, in document order. */
  els: Element[];
  /** Index in `els` of the last descendant of each element (itself when it has none). */
  last: number[];
  /** Non-space characters of text under each element. */
  chars: number[];
  /** Non-space characters of text inside links under each element. */
  linkChars: number[];
  /** Whether each element is inside `pre` or `code`. */
  inCode: boolean[];
  rootChars: number;
  /** Characters of text inside links under the root. */
  rootLinkChars: number;
}

/**
 * A `<header>` without the page's h1 is a site or section header, unless it holds most of the text:
 * some site builders wrap a whole post in one.
 */
const MAX_HEADER_SHARE = 0.5;

function isStructuralChrome(el: Element, rootTextLength: () => number): boolean {
  const tag = el.localName;
  if (CHROME_TAGS.has(tag)) return true;
  if (tag === 'header' && el.querySelector('h1') === null) {
    return (el.textContent ?? '').length <= MAX_HEADER_SHARE * rootTextLength();
  }
  const role = el.getAttribute('role');
  // An inactive tab (the same example in another language, another OS's install steps) is hidden
  // only until clicked: its text is content.
  if ((el.hasAttribute('hidden') || el.getAttribute('aria-hidden') === 'true') && role !== 'tabpanel')
    return true;
  if (role !== null && CHROME_ROLES.has(role)) return true;
  const cls = el.getAttribute('class');
  return cls !== null && HIDDEN_CLASS.test(cls);
}

/** Depth-first over `root` by sibling links (no stack to overflow), removing structural chrome on the way. */
function walkKeptElements(root: Element): KeptElements {
  const els: Element[] = [];
  const last: number[] = [];
  const chars: number[] = [];
  const linkChars: number[] = [];
  const inCode: boolean[] = [];
  let rootChars = 0;
  let rootLinkChars = 0;
  const open: number[] = [];
  let codeDepth = 0;
  let linkDepth = 0;
  const addChars = (n: number, inLink: number) => {
    const parent = open[open.length - 1];
    if (parent === undefined) {
      rootChars += n;
      rootLinkChars += inLink;
      return;
    }
    chars[parent] = (chars[parent] ?? 0) + n;
    linkChars[parent] = (linkChars[parent] ?? 0) + inLink;
  };
  const close = () => {
    const i = open.pop() as number;
    last[i] = els.length - 1;
    const name = (els[i] as Element).localName;
    if (name === 'pre' || name === 'code') codeDepth--;
    else if (name === 'a') linkDepth--;
    addChars(chars[i] ?? 0, linkChars[i] ?? 0);
  };
  /** The next node once `node`'s subtree is done, closing the elements that ends. */
  const after = (node: Node): Node | null => {
    let cur: Node = node;
    for (;;) {
      const sibling = cur.nextSibling;
      if (sibling !== null) return sibling;
      const parent = cur.parentNode;
      if (parent === null || parent === root) return null;
      close();
      cur = parent;
    }
  };
  let rootText = -1;
  const rootTextLength = () => {
    if (rootText < 0) rootText = (root.textContent ?? '').length;
    return rootText;
  };
  let node: Node | null = root.firstChild;
  while (node !== null) {
    if (node.nodeType === 1) {
      const el = node as Element;
      if (isStructuralChrome(el, rootTextLength)) {
        const next = after(el);
        el.remove();
        node = next;
        continue;
      }
      open.push(els.length);
      els.push(el);
      last.push(els.length - 1);
      chars.push(0);
      linkChars.push(0);
      inCode.push(codeDepth > 0);
      if (el.localName === 'pre' || el.localName === 'code') codeDepth++;
      else if (el.localName === 'a') linkDepth++;
      const first = el.firstChild;
      if (first !== null) {
        node = first;
        continue;
      }
      close();
    } else if (node.nodeType === 3) {
      const n = nonSpaceChars(node.nodeValue ?? '');
      addChars(n, linkDepth > 0 ? n : 0);
    }
    node = after(node);
  }
  while (open.length > 0) close();
  return { els, last, chars, linkChars, inCode, rootChars, rootLinkChars };
}

function nonSpaceChars(text: string): number {
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c > 32 && c !== 160) n++;
  }
  return n;
}

function nameOf(el: Element): string {
  const cls = el.getAttribute('class');
  const id = el.getAttribute('id');
  if (cls === null) return id ?? '';
  return id === null ? cls : `${cls} ${id}`;
}

/** Returns the characters removed. Outermost containers only: nested matches go with their container. */
function removeComments(tree: KeptElements, drop: (i: number) => void): number {
  return removeOuterContainers(tree, drop, (name) =>
    name.length > 1 && COMMENTS_NAME.test(name) ? 'drop' : undefined,
  );
}

/**
 * Drops the outermost elements `judge` marks 'drop' (a 'keep' shields its subtree), unless together
 * they hold nearly all the text: then they are the page. Returns the characters removed.
 */
function removeOuterContainers(
  tree: KeptElements,
  drop: (i: number) => void,
  judge: (name: string) => 'drop' | 'keep' | undefined,
): number {
  const { els, last, chars } = tree;
  const outer: number[] = [];
  for (let i = 0; i < els.length; i++) {
    const verdict = judge(nameOf(els[i] as Element));
    if (verdict === 'drop') outer.push(i);
    if (verdict !== undefined) i = last[i] ?? i;
  }
  if (outer.length === 0) return 0;
  const total = tree.rootChars;
  const inside = outer.reduce((n, i) => n + (chars[i] ?? 0), 0);
  if (inside > commentBudget(total)) return 0;
  for (const i of outer) drop(i);
  return inside;
}

/**
 * Class and id words of a product page's customer reviews and ratings (widgets by their generic or
 * vendor name), split at camelCase: `customerReviews`, `product-reviews__list`, `bv_main_container`.
 */
const REVIEW_WORDS = new Set([
  'review',
  'reviews',
  'rating',
  'ratings',
  'bv',
  'bazaarvoice',
  'yotpo',
  'okendo',
  'stamped',
  'jdgm',
  'judgeme',
  'trustpilot',
  'feefo',
  'reevoo',
  'powerreviews',
]);

/** Testimonials are the seller's chosen quotes, part of what a service page says about itself. */
const TESTIMONIAL_WORD = /testimonial/i;

function reviewKind(name: string): 'review' | 'testimonial' | undefined {
  if (name.length < 2) return undefined;
  if (TESTIMONIAL_WORD.test(name)) return 'testimonial';
  for (const word of name
    .replace(/([a-z])(?=[A-Z])/g, '$1 ')
    .toLowerCase()
    .split(/[^a-z0-9]+/)) {
    if (REVIEW_WORDS.has(word)) return 'review';
  }
  return undefined;
}

/**
 * A product page's customer reviews are other people's words about the product, not its description
 * (WCXB's ground truth leaves them out). Outermost containers, unless they hold nearly all the text.
 * Returns the characters removed.
 */
function removeReviews(tree: KeptElements, drop: (i: number) => void): number {
  return removeOuterContainers(tree, drop, (name) => {
    const kind = reviewKind(name);
    return kind === 'review' ? 'drop' : kind === 'testimonial' ? 'keep' : undefined;
  });
}

/**
 * The first selector of the chain that matches exactly one element with enough words after chrome
 * removal. Several matches (a listing's many `<article>` cards) are ambiguous and skipped; the next
 * selector or Readability decides. Chrome is removed in place rather than from a copy: copying the
 * container cost as much as parsing it, and most pages end here. Readability, if it runs next, needs an
 * untouched document (measured: it loses pages whose chrome-like wrappers it would have kept).
 */
export function selectByChain(
  doc: Document,
  selectors: readonly string[],
  minWords: number,
  chrome: ChromeOptions = {},
): ChainResult {
  const simple = matchSimpleSelectors(doc, selectors);
  let mutated = false;
  for (const selector of selectors) {
    let matches = simple?.get(selector);
    if (matches === undefined) {
      try {
        matches = Array.from(doc.querySelectorAll(selector));
      } catch {
        continue;
      }
    }
    const match = matches[0];
    if (matches.length !== 1 || match === undefined || !match.isConnected) continue;
    removeChrome(match, chrome);
    mutated = true;
    const candidate = measure(match, `selector:${selector}`);
    if (candidate.words >= minWords) return { candidate, mutated };
  }
  return { mutated };
}

export interface ChainResult {
  candidate?: Candidate;
  /** Chrome was removed from the document in place: Readability needs a fresh parse. */
  mutated: boolean;
}

/** `tag`, `.class`, `#id` or `[attr="value"]`: the shapes of the default chain. */
const SIMPLE_SELECTOR = /^(?:([a-z][a-z0-9-]*)|\.([\w-]+)|#([\w-]+)|\[([\w-]+)="([^"\]]*)"\])$/i;

/**
 * Matches of every simple selector in one walk over the document, instead of one CSS-engine walk per
 * selector (linkedom compiles and runs each `querySelectorAll` afresh). Other selectors are left out of
 * the map and queried the usual way.
 */
function matchSimpleSelectors(doc: Document, selectors: readonly string[]): Map<string, Element[]> {
  const byTag = new Map<string, string[]>();
  const byClass = new Map<string, string[]>();
  const byId = new Map<string, string[]>();
  const byAttr: { selector: string; name: string; value: string }[] = [];
  const result = new Map<string, Element[]>();
  const add = (map: Map<string, string[]>, key: string, selector: string) => {
    const list = map.get(key);
    if (list) list.push(selector);
    else map.set(key, [selector]);
  };
  for (const selector of selectors) {
    const m = SIMPLE_SELECTOR.exec(selector.trim());
    if (!m) continue;
    result.set(selector, []);
    if (m[1]) add(byTag, m[1].toLowerCase(), selector);
    else if (m[2]) add(byClass, m[2], selector);
    else if (m[3]) add(byId, m[3], selector);
    else if (m[4]) byAttr.push({ selector, name: m[4], value: m[5] ?? '' });
  }
  if (result.size === 0) return result;
  const hit = (selectorsHit: string[] | undefined, el: Element) => {
    if (!selectorsHit) return;
    for (const s of selectorsHit) {
      const list = result.get(s);
      if (list && list[list.length - 1] !== el) list.push(el);
    }
  };
  for (const el of allElements(doc)) {
    hit(byTag.get(el.localName), el);
    if (byId.size > 0) {
      const id = el.getAttribute('id');
      if (id) hit(byId.get(id), el);
    }
    if (byClass.size > 0) {
      const cls = el.getAttribute('class');
      if (cls) for (const c of cls.split(/\s+/)) hit(byClass.get(c), el);
    }
    for (const a of byAttr) if (el.getAttribute(a.name) === a.value) result.get(a.selector)?.push(el);
  }
  return result;
}

/** Every element in document order, by sibling links (linkedom's `getElementsByTagName('*')` finds none). */
function allElements(doc: Document): Element[] {
  const out: Element[] = [];
  let el: Element | null = doc.documentElement;
  while (el !== null) {
    out.push(el);
    const child: Element | null = el.firstElementChild;
    if (child !== null) {
      el = child;
      continue;
    }
    while (el !== null && el.nextElementSibling === null) el = el.parentElement;
    el = el?.nextElementSibling ?? null;
  }
  return out;
}

export interface Candidate {
  readonly root: Element;
  readonly strategy: string;
  /** {@link blockText} of `root` when measured. */
  readonly text: string;
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
  return { root, strategy, text, words, linkDensity, score: words * (1 - linkDensity) };
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
