/**
 * On a page of prose, blocks that are mostly links (menus, tag clouds, related-post rails, in-page
 * tables of contents) point elsewhere; on a page made of links they are the content.
 */
import { forEachStanding, type Removal } from './removal-walk';

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
export function removeLinkLists(removal: Removal, total: number): void {
  const { tree } = removal;
  const { chars, linkChars } = tree;
  if (tree.rootLinkChars > MAX_PAGE_LINK_SHARE * total) return;
  forEachStanding(removal, (i, el) => {
    const size = chars[i] ?? 0;
    if (size < MIN_LINK_LIST_CHARS || size > MAX_LINK_LIST_SHARE * total || tree.inCode[i]) return;
    if (!LINK_LIST_TAGS.has(el.localName)) return;
    if ((linkChars[i] ?? 0) < MIN_LINK_LIST_SHARE * size) return;
    // A documentation "See also" box is mostly links, and is content the author wrote; a gallery of
    // linked thumbnails shows pictures, not a menu, and keeps its alt text.
    if (!isInAdmonition(el) && el.getElementsByTagName('img').length === 0) return 'drop';
    return;
  });
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
