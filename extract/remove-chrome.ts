/**
 * Site chrome removal inside a content candidate (seed 004 §6): structural chrome, chrome named by
 * class or id, comments and reviews, teaser blocks, link lists, product cards, and short chrome texts
 * (post controls, captions, credits, share labels, bylines). DOM-only, no I/O; works on jsdom and
 * linkedom alike.
 */
import { articleChromeKind, isCaption } from './article-chrome';
import { removeComments, removeCommentThreads, removeReviews } from './comments-and-reviews';
import { nameOf, walkKeptElements } from './kept-elements';
import { removeLinkLists } from './link-lists';
import { removeProductCards } from './product-cards';
import { forEachStanding, startRemoval } from './removal-walk';
import { removeTeaserBlocks } from './teaser-blocks';

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

/**
 * Labels of calls to action: a link or button-like element whose whole text is an order to the
 * reader ("Learn more", "Get a quote", "Sign up"). They point at another page or a form; the text
 * around them says what they are about.
 */
const CALL_TO_ACTION =
  /^(?:learn more|read more|find out more|see more|view more|discover more|see details|view details|more info(?:rmation)?|get (?:started|a (?:free )?quote|a demo|in touch)(?: today| now)?|sign ?up(?: now| today| for free)?|register(?: now)?|subscribe(?: now)?|download(?: now)?|(?:book|request|watch|schedule|get) a (?:free )?demo|watch (?:the )?(?:demo|video)|contact (?:us|sales)|talk to (?:sales|us|an expert)|shop now|buy now|order now|add to (?:cart|bag|basket|wishlist)|try (?:it )?(?:for )?free|start (?:your )?free trial|apply now|join now|explore(?: now)?)\s*[›»→>]?$/i;

function isCallToAction(el: Element, text: string): boolean {
  if (!CALL_TO_ACTION.test(text)) return false;
  return el.localName === 'a' || el.querySelector('a') !== null || /\b(?:btn|button|cta)\b/i.test(nameOf(el));
}

/** `summary`: a `<details>` toggle's own label ("Expand description") is a control, not content. */
const CHROME_TEXT_TAGS = new Set(['a', 'p', 'li', 'div', 'span', 'summary']);
const CHROME_TEXT_MAX_CHARS = 40;

/** Chrome matched by class or id is kept if it holds more than this share of the candidate's text. */
const MAX_CHROME_SHARE = 0.4;
/**
 * ...unless it is named as navigation and is a rail of links beside text of its own. Not "related":
 * a listing's own cards are often a `related-product` section of links.
 */
const NAVIGATION_NAME =
  /(?:^|[\s_-])(?:nav|navbar|navigation|menu|menubar|sidebar|sidenav|side-bar|toc|toctree-wrapper)(?:$|[\s_-])/i;
const RAIL_LINK_SHARE = 0.7;
const RAIL_MIN_REST_CHARS = 250;

/**
 * A sidebar of many links beside a short article outweighs it, yet is no more content than a small
 * one. A navigation-named list of links that is the page's content (a docs index's toctree) stands
 * nearly alone (under RAIL_MIN_REST_CHARS beside it: about the chain's 50 words), and is kept.
 */
function isLinkRail(size: number, linkChars: number, total: number): boolean {
  return linkChars >= RAIL_LINK_SHARE * size && total - size >= RAIL_MIN_REST_CHARS;
}

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
  const { chars, inCode } = tree;
  const removal = startRemoval(root, tree);
  let total = tree.rootChars;
  if (options.dropComments) total -= removeComments(removal);
  if (options.dropReviews) total -= removeReviews(removal);
  total = Math.max(1, total);
  forEachStanding(removal, (i, el) => {
    const name = nameOf(el);
    // A form inside content is a sign-up or enquiry box; a page wrapped in one form is kept by its share.
    const isForm = el.localName === 'form';
    if (
      !isForm &&
      (name.length < 2 || name.length > 300 || !(CHROME_NAME.test(name) || POST_CHROME_NAME.test(name)))
    )
      return;
    const size = chars[i] ?? 0;
    if (!isForm && CONTENT_NAME.test(name) && size > 0.1 * total) return;
    if (size <= MAX_CHROME_SHARE * total) return 'drop';
    return !isForm && NAVIGATION_NAME.test(name) && isLinkRail(size, tree.linkChars[i] ?? 0, total)
      ? 'drop'
      : undefined;
  });
  if (options.dropCommentThreads ?? options.dropComments) total -= removeCommentThreads(removal, total);
  removeTeaserBlocks(removal, total);
  removeLinkLists(removal, total);
  if (options.productPage) removeProductCards(removal, total);
  const bylines: number[] = [];
  forEachStanding(removal, (i, el) => {
    if (inCode[i]) return;
    const kind = articleChrome(el, chars[i] ?? 0, tree.linkChars[i] ?? 0);
    if (kind === 'byline') {
      bylines.push(i);
      return 'skip';
    }
    if (kind === 'chrome') return 'drop';
    if ((chars[i] ?? 0) > CHROME_TEXT_MAX_CHARS || !CHROME_TEXT_TAGS.has(el.localName)) return;
    const text = el.textContent ?? '';
    const trimmed = text.trim();
    // Post controls are often indented markup: their length is judged without the whitespace.
    if (
      (text.length < CHROME_TEXT_MAX_CHARS && CHROME_TEXT.test(trimmed)) ||
      isCallToAction(el, trimmed.replace(/\s+/g, ' ')) ||
      POST_CHROME_TEXT.test(trimmed.replace(/\s+/g, ' ')) ||
      isLetterAvatar(el, chars[i] ?? 0)
    )
      return 'drop';
    return;
  });
  if (bylines.length <= MAX_BYLINES) for (const i of bylines) removal.drop(i);
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
