/**
 * Other people's words around the content: readers' comments under an article (by container name,
 * or opened by a heading such as "12 Responses") and customers' reviews on a product page. Removed
 * whatever their share of the text, unless too little would be left outside them: then they are the
 * page.
 */
import { COMMENT_HEADING, COMMENTS_ON_POST } from './article-chrome';
import { nameOf } from './kept-elements';
import { forEachStanding, type Removal } from './removal-walk';

/**
 * Containers of reader comments under an article. Removed whatever their share of the text (a post with
 * 100 comments is still the post), unless removing them would leave almost nothing: then the comments
 * are the page. Only container names: a single `.comment` can be a forum's post.
 */
const COMMENTS_NAME =
  /(?:^|\s)(?:comments|comment-?list|commentlist|comments-?(?:area|section|wrapper|container|block)|comment-?respond|respond|disqus_thread|js-comments-container)(?:$|\s)/i;
/**
 * Text that must remain outside comment containers for them to be dropped: this share of it, or for
 * a thread that names its post or counts its comments this many characters (a post of 100 words under 1,000 words of
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

/**
 * Readers' comments opened by a heading ("12 Responses to …", "Leave a Reply") in containers whose
 * names say nothing: the heading's nearest ancestor that starts with it, else the siblings after it
 * up to the next heading of its rank. Like named comment containers they go whatever their share,
 * unless too little would be left outside them. Returns the characters removed.
 */
export function removeCommentThreads(removal: Removal, total: number): number {
  const { root, removed, tree } = removal;
  const { last, chars } = tree;
  let gone = 0;
  forEachStanding(removal, (i, el) => {
    const size = chars[i] ?? 0;
    if (size === 0 || size > 240 || !/^h[2-6]$/.test(el.localName)) return;
    const heading = (el.textContent ?? '').replace(/\s+/g, ' ').trim();
    if (!COMMENT_HEADING.test(heading)) return;
    const budget = commentBudget(total, COMMENTS_ON_POST.test(heading)) - gone;
    let box = i;
    for (let parent = el.parentElement; parent !== null && parent !== root; parent = parent.parentElement) {
      const p = removal.indexOf(parent);
      if (p === undefined || removed[p] || (chars[p] ?? 0) > budget) break;
      if (!(parent.textContent ?? '').trimStart().startsWith(heading.slice(0, 20))) break;
      box = p;
    }
    const group = [box];
    if (box === i) {
      const rank = Number(el.localName[1]);
      for (let sibling = el.nextElementSibling; sibling !== null; sibling = sibling.nextElementSibling) {
        if (/^h[1-6]$/.test(sibling.localName) && Number(sibling.localName[1]) <= rank) break;
        const s = removal.indexOf(sibling);
        if (s !== undefined && !removed[s]) group.push(s);
      }
    }
    const size_ = group.reduce((n, j) => n + (chars[j] ?? 0), 0);
    if (size_ > budget) return;
    for (const j of group) removal.drop(j);
    gone += size_;
    return last[box] ?? i;
  });
  return gone;
}

/** Returns the characters removed. Outermost containers only: nested matches go with their container. */
export function removeComments(removal: Removal): number {
  return removeOuterContainers(removal, (name) =>
    name.length > 1 && COMMENTS_NAME.test(name) ? 'drop' : undefined,
  );
}

/**
 * Drops the outermost elements `judge` marks 'drop' (a 'keep' shields its subtree), unless together
 * they hold nearly all the text: then they are the page. Returns the characters removed. It runs
 * before any other remover and judges every kept element, removed or not (reviews inside comments
 * count with the reviews), so it walks `els` itself rather than `forEachStanding`.
 */
function removeOuterContainers(
  removal: Removal,
  judge: (name: string) => 'drop' | 'keep' | undefined,
): number {
  const { tree } = removal;
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
  for (const i of outer) removal.drop(i);
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
export function removeReviews(removal: Removal): number {
  return removeOuterContainers(removal, (name) => {
    const kind = reviewKind(name);
    return kind === 'review' ? 'drop' : kind === 'testimonial' ? 'keep' : undefined;
  });
}
