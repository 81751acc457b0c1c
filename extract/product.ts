/**
 * Product pages: what sits around one product's name, description and specification is mostly other
 * products (variants, "customers also bought", bundles), each a small card with a price and a link.
 * This recognises a product page from its structured data and finds those card groups. Generic
 * vocabulary (schema.org, Open Graph) and structure only; no site names.
 */

/**
 * schema.org types of one product. Not ProductGroup: shops use it for category pages of variants as
 * often as for one product's page (measured on wcxb-dev).
 */
const PRODUCT_TYPE = /"@type"\s*:\s*\[?\s*"(?:Product|IndividualProduct|ProductModel)"/g;
/** A JSON-LD list of items: the page lists products rather than showing one. */
const ITEM_LIST_TYPE = /"@type"\s*:\s*\[?\s*"(?:ItemList|OfferCatalog|CollectionPage|SearchResultsPage)"/;
/** More Product nodes than this and the page is a catalogue. */
const MAX_PRODUCT_NODES = 2;

/**
 * Whether the page shows one product: its JSON-LD has one or two Product nodes and no item list, or its
 * primary type (JSON-LD, else og:type) is a product.
 */
export function isProductPage(jsonLdTexts: readonly string[], contentType: string): boolean {
  let products = 0;
  let list = false;
  for (const text of jsonLdTexts) {
    products += text.match(PRODUCT_TYPE)?.length ?? 0;
    if (!list && ITEM_LIST_TYPE.test(text)) list = true;
  }
  if (products > MAX_PRODUCT_NODES || list) return false;
  return products > 0 || /^(?:og:)?product(?:\.item)?$/.test(contentType);
}

/**
 * A shop's purchase control, as its visible label begins (labels carry extras: a keyboard shortcut,
 * a duplicated label for screen readers, a loading text).
 */
const BUY_LABEL = /^(?:add to (?:shopping )?(?:cart|bag|basket|trolley)|buy (?:it )?now)\b/i;
/** More purchase controls than this and the page lists products, each with its own button. */
const MAX_BUY_BUTTONS = 2;

/**
 * Whether the page sells one thing: one or two purchase buttons. Many shops publish no Product markup
 * (measured on wcxb-dev: 50 of 119 product pages), but every one of them has a button to buy. Weaker
 * than `isProductPage`: a service's pricing table has buy buttons too, so this only says that customer
 * reviews on the page are about something sold, not that priced cards around it are other products.
 */
export function sellsOneThing(doc: Document): boolean {
  let count = 0;
  for (const el of Array.from(doc.querySelectorAll('button, input[type="submit"], a[role="button"]'))) {
    const raw = el.localName === 'input' ? (el.getAttribute('value') ?? '') : (el.textContent ?? '');
    // Markup indents labels: normalise before judging the length, but skip whole panels early.
    if (raw.length > 400) continue;
    const label = raw.replace(/\s+/g, ' ').trim();
    if (label.length <= 60 && BUY_LABEL.test(label)) count++;
    if (count > MAX_BUY_BUTTONS) return false;
  }
  return count > 0;
}

/**
 * A price as shops print it: a currency sign or code next to digits (`$35.00`, `£ 675`, `12,99 €`,
 * `EUR 10`).
 */
export const PRICE =
  /(?:[$€£¥₹₩₽]|\b(?:USD|EUR|GBP|CAD|AUD|CHF|JPY|INR|SEK|NOK|DKK|PLN|Rs\.?|R\$|kr)\s?)\s?\d|\d(?:[\d.,\s]*\d)?\s?(?:[€£₹₽]|\b(?:USD|EUR|GBP|kr|zł|Kč)\b)/;
