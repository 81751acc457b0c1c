/**
 * On a product page, groups of other products' priced cards around the one shown: variants, bundles,
 * "also bought" carousels.
 */
import { PRICE } from './product';
import { forEachStanding, type Removal } from './removal-walk';

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
export function removeProductCards(removal: Removal, total: number): void {
  const { removed, tree } = removal;
  const { els, last, chars, linkChars } = tree;
  forEachStanding(removal, (i) => {
    const end = last[i] ?? i;
    if (end - i < MIN_CARDS) return;
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
      for (const j of units) removal.drop(j);
    }
    return undefined;
  });
}

function firstClassOf(el: Element): string {
  const cls = el.getAttribute('class');
  return cls ? (cls.trim().split(/\s+/)[0] ?? '').replace(/\d+/g, '#') : '';
}
