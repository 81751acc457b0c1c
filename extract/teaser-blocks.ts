/**
 * Blocks of other pages' teasers: a heading such as "Related posts" or "Customers also viewed" with
 * the block it opens.
 */
import { forEachStanding, type Removal } from './removal-walk';

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
 * A heading such as "Customers also viewed" or "Related posts" with the block it opens: its nearest
 * ancestor that starts with it and is not too large of the content, else (a bare heading) the
 * link-heavy siblings that follow it up to the next heading.
 */
export function removeTeaserBlocks(removal: Removal, total: number): void {
  const { root, removed, tree } = removal;
  const { last, chars, linkChars } = tree;
  forEachStanding(removal, (i, el) => {
    const size = chars[i] ?? 0;
    if (size > 60 || size === 0) return;
    const isHeading = HEADING_TAGS.has(el.localName);
    // Outside headings, only a whole short text that is nothing but the teaser phrase counts.
    if (!isHeading && (size > 40 || !LABEL_TAGS.has(el.localName))) return;
    const heading = (el.textContent ?? '').replace(/\s+/g, ' ').trim();
    if (!((isHeading ? TEASER_HEADING : TEASER_LABEL).test(heading) || THREAD_TEASER_HEADING.test(heading)))
      return;
    let box = el;
    let boxIndex = i;
    for (;;) {
      const parent = box.parentElement;
      const p = parent ? removal.indexOf(parent) : undefined;
      if (parent === null || parent === root || p === undefined || removed[p]) break;
      if ((chars[p] ?? 0) > MAX_TEASER_SHARE * total) break;
      if (!(parent.textContent ?? '').trimStart().startsWith(heading.slice(0, 20))) break;
      box = parent;
      boxIndex = p;
    }
    if (box === el) {
      for (let sibling = el.nextElementSibling; sibling !== null; ) {
        const s = removal.indexOf(sibling);
        if (s === undefined || /^h[1-6]$/.test(sibling.localName)) break;
        const size = chars[s] ?? 0;
        if (size > 0 && (linkChars[s] ?? 0) < MIN_TEASER_LINK_SHARE * size) break;
        const next = sibling.nextElementSibling;
        if (!removed[s]) removal.drop(s);
        sibling = next;
      }
    }
    removal.drop(boxIndex);
    return last[boxIndex] ?? i;
  });
}
